//! Workers and where workspaces live. Workers register and heartbeat; one that stays silent
//! past the timeout is down. A workspace is placed once, on the least-loaded live worker, and
//! stays there (its profile lives on that worker's disk). Each worker carries at most
//! `capacity` actions at once; an action that finds its worker full waits in a bounded queue
//! until a deadline, then is refused with a clear error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use nanomuse_proto::{Backend, GrpcBackend, HopSecret};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::transport::Channel;

use crate::error::{ControllerError, Result};
use crate::store::Store;

pub struct WorkerEntry {
    pub name: String,
    pub address: String,
    pub capacity: usize,
    pub backend: Arc<dyn Backend>,
    slots: Arc<Semaphore>,
    last_heartbeat: Mutex<Instant>,
    /// In the same process (the embedded `serve`): no heartbeats, never down.
    local: bool,
}

impl WorkerEntry {
    fn is_live(&self, timeout: Duration) -> bool {
        self.local || self.last_heartbeat.lock().unwrap().elapsed() < timeout
    }

    fn busy(&self) -> usize {
        self.capacity - self.slots.available_permits()
    }
}

/// A worker slot held for one action; the slot frees when this drops.
pub struct Placed {
    pub worker: Arc<WorkerEntry>,
    _slot: OwnedSemaphorePermit,
}

pub struct Scheduler {
    workers: RwLock<HashMap<String, Arc<WorkerEntry>>>,
    store: Arc<dyn Store>,
    heartbeat_timeout: Duration,
    queue_deadline: Duration,
    queue_limit: usize,
    waiting: AtomicUsize,
    /// Serialises first placements, so two actions of a new workspace agree on its worker.
    placing: tokio::sync::Mutex<()>,
    /// Carried by every call to a worker.
    hop_secret: Option<HopSecret>,
}

impl Scheduler {
    pub fn new(
        store: Arc<dyn Store>,
        heartbeat_timeout: Duration,
        queue_deadline: Duration,
        queue_limit: usize,
        hop_secret: Option<HopSecret>,
    ) -> Self {
        Self {
            hop_secret,
            workers: RwLock::default(),
            store,
            heartbeat_timeout,
            queue_deadline,
            queue_limit,
            waiting: AtomicUsize::new(0),
            placing: tokio::sync::Mutex::new(()),
        }
    }

    /// Adds or replaces a worker. A worker that registers again with the same address keeps
    /// its slots, so actions in flight are still counted.
    pub fn register(&self, name: &str, address: &str, capacity: u32) -> Result<()> {
        if name.is_empty() || capacity == 0 {
            return Err(ControllerError::InvalidArgument(
                "a worker registers with a name and a capacity above 0".into(),
            ));
        }
        let channel = Channel::from_shared(address.to_string())
            .map_err(|e| {
                ControllerError::InvalidArgument(format!("bad worker address {address:?}: {e}"))
            })?
            .connect_lazy();
        let mut workers = self.workers.write().unwrap();
        if let Some(known) = workers.get(name)
            && known.address == address
            && known.capacity == capacity as usize
        {
            *known.last_heartbeat.lock().unwrap() = Instant::now();
            return Ok(());
        }
        tracing::info!(worker = name, address, capacity, "worker registered");
        workers.insert(
            name.to_string(),
            Arc::new(WorkerEntry {
                name: name.to_string(),
                address: address.to_string(),
                capacity: capacity as usize,
                backend: Arc::new(
                    GrpcBackend::with_hop_secret(channel, self.hop_secret.as_ref())
                        .named(format!("worker {name}")),
                ),
                slots: Arc::new(Semaphore::new(capacity as usize)),
                last_heartbeat: Mutex::new(Instant::now()),
                local: false,
            }),
        );
        Ok(())
    }

    /// Adds a backend that lives in this process (the embedded `serve`), reached without gRPC.
    pub fn register_local(&self, name: &str, capacity: u32, backend: Arc<dyn Backend>) {
        self.workers.write().unwrap().insert(
            name.to_string(),
            Arc::new(WorkerEntry {
                name: name.to_string(),
                address: "in-process".into(),
                capacity: capacity as usize,
                backend,
                slots: Arc::new(Semaphore::new(capacity as usize)),
                last_heartbeat: Mutex::new(Instant::now()),
                local: true,
            }),
        );
    }

    /// Records a heartbeat; false when the worker is unknown (it should register again).
    pub fn heartbeat(&self, name: &str) -> bool {
        match self.workers.read().unwrap().get(name) {
            Some(worker) => {
                *worker.last_heartbeat.lock().unwrap() = Instant::now();
                true
            }
            None => false,
        }
    }

    fn live_workers(&self) -> Vec<Arc<WorkerEntry>> {
        self.workers
            .read()
            .unwrap()
            .values()
            .filter(|w| w.is_live(self.heartbeat_timeout))
            .cloned()
            .collect()
    }

    /// Every registered worker as the controller sees it, by name.
    pub fn statuses(&self) -> Result<Vec<nanomuse_proto::WorkerStatus>> {
        let counts = self.store.placement_counts()?;
        let mut statuses: Vec<_> = self
            .workers
            .read()
            .unwrap()
            .values()
            .map(|w| nanomuse_proto::WorkerStatus {
                name: w.name.clone(),
                address: w.address.clone(),
                capacity: w.capacity as u32,
                live: w.is_live(self.heartbeat_timeout),
                busy: w.busy() as u32,
                workspaces: counts.get(&w.name).copied().unwrap_or(0) as u32,
            })
            .collect();
        statuses.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(statuses)
    }

    /// Actions waiting for a worker slot now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// The worker of `workspace` (placing it first if new), with a slot for one action.
    pub async fn acquire(&self, tenant: &str, workspace: &str) -> Result<Placed> {
        let started = Instant::now();
        let worker = self.worker_for(tenant, workspace).await?;
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue_limit {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            crate::metrics::metrics().queue_rejections.inc();
            return Err(ControllerError::ResourceExhausted(format!(
                "too many actions are waiting for a browser ({}); try again shortly",
                self.queue_limit
            )));
        }
        let remaining = self.queue_deadline.saturating_sub(started.elapsed());
        let slot = tokio::time::timeout(remaining, worker.slots.clone().acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        match slot {
            Ok(Ok(slot)) => Ok(Placed {
                worker,
                _slot: slot,
            }),
            _ => Err({
                crate::metrics::metrics().queue_rejections.inc();
                ControllerError::ResourceExhausted(format!(
                    "every browser slot of worker {} is busy and none freed within {} ms; try again \
                 shortly",
                    worker.name,
                    self.queue_deadline.as_millis()
                ))
            }),
        }
    }

    async fn worker_for(&self, tenant: &str, workspace: &str) -> Result<Arc<WorkerEntry>> {
        if let Some(name) = self.store.placement(tenant, workspace)? {
            return self.placed_worker(workspace, &name);
        }
        let _placing = self.placing.lock().await;
        if let Some(name) = self.store.placement(tenant, workspace)? {
            return self.placed_worker(workspace, &name);
        }
        let live = self.live_workers();
        if live.is_empty() {
            return Err(ControllerError::Unavailable(
                "no browser worker is running; start one (or use `nanomuse-browser serve`)".into(),
            ));
        }
        let counts = self.store.placement_counts()?;
        let chosen = live
            .into_iter()
            .min_by(|a, b| {
                let load = |w: &WorkerEntry| {
                    let placed = counts.get(&w.name).copied().unwrap_or(0) as f64;
                    (placed / w.capacity as f64, w.busy(), w.name.clone())
                };
                let (la, lb) = (load(a), load(b));
                la.0.total_cmp(&lb.0)
                    .then(la.1.cmp(&lb.1))
                    .then(la.2.cmp(&lb.2))
            })
            .expect("not empty");
        self.store.put_placement(tenant, workspace, &chosen.name)?;
        self.store.flush().await?;
        tracing::info!(workspace, worker = %chosen.name, "workspace placed");
        Ok(chosen)
    }

    fn placed_worker(&self, workspace: &str, name: &str) -> Result<Arc<WorkerEntry>> {
        match self.workers.read().unwrap().get(name) {
            Some(worker) if worker.is_live(self.heartbeat_timeout) => Ok(worker.clone()),
            _ => Err(ControllerError::Unavailable(format!(
                "workspace {workspace:?} lives on worker {name}, which is down; its logins are \
                 there, so try again when it is back"
            ))),
        }
    }
}
