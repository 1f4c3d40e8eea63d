//! Workers and where workspaces live. Workers register and heartbeat; one that stays silent
//! past the timeout is down. A workspace is placed once, on the least-loaded live worker, and
//! stays there (its profile lives on that worker's disk). Each worker carries at most
//! `capacity` actions at once; an action that finds its worker full waits in a bounded queue
//! until a deadline, then is refused with a clear error.
//!
//! Drain and scale-down: a worker going away asks to be drained ([`Scheduler::drain`]). It then
//! gets no new workspace and no new action; once the actions on it are done, the profile of
//! each workspace placed on it is exported to a tar in the controller's data folder ("parked")
//! and the worker is *drained*. The next action of a parked workspace moves it: the tar is
//! imported on the least-loaded live worker, which becomes its worker, and the reply says so.
//! A workspace whose worker is down, or was drained without its profile, waits for the worker
//! to come back, up to `worker_return_ms`, and the reply says it waited; past that the action
//! is refused with a clear error. A drained worker that comes back (a restart) keeps the
//! workspaces not moved yet: its disk has the same profiles, so their parked copies are dropped.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nanomuse_proto::hop::{InternalChannel, internal};
use nanomuse_proto::profile_transfer_client::ProfileTransferClient;
use nanomuse_proto::{
    Backend, BackendError, DrainReply, GrpcBackend, HopSecret, ProfileChunk, ProfileRef,
    WorkerStatus,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tonic::transport::Channel;

use crate::error::{ControllerError, Result};
use crate::store::{ParkedProfile, Store};

/// How often a waiting action looks again without being woken (a worker that comes back
/// after a silence only heartbeats).
const POLL: Duration = Duration::from_millis(200);
/// The bound of moving one parked profile to its new worker.
const IMPORT_BOUND: Duration = Duration::from_secs(60);
/// The pieces a parked profile is streamed in.
const CHUNK_BYTES: usize = 256 * 1024;
const GRPC_MESSAGE_MAX: usize = 64 * 1024 * 1024;

/// Where a worker is in its life, as far as its own word goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Serving,
    /// Finishing its actions while its profiles are exported, until `until` at the latest.
    Draining {
        until: Instant,
    },
    /// Gone after a drain, until it registers again.
    Drained,
}

/// What the controller knows of a worker now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerState {
    /// Takes actions and new workspaces.
    Live,
    Draining,
    Drained,
    /// Silent past the heartbeat timeout, or unknown (not registered since a restart).
    Down,
}

impl WorkerState {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerState::Live => "live",
            WorkerState::Draining => "draining",
            WorkerState::Drained => "drained",
            WorkerState::Down => "down",
        }
    }
}

pub struct WorkerEntry {
    pub name: String,
    pub address: String,
    pub capacity: usize,
    pub backend: Arc<dyn Backend>,
    /// Its `ProfileTransfer` service; none for an in-process worker.
    transfer: Option<ProfileTransferClient<InternalChannel>>,
    slots: Arc<Semaphore>,
    last_heartbeat: Mutex<Instant>,
    /// In the same process (the embedded `serve`): no heartbeats, never down.
    local: bool,
    phase: Mutex<Phase>,
}

impl WorkerEntry {
    fn state(&self, timeout: Duration) -> WorkerState {
        match *self.phase.lock().unwrap() {
            Phase::Drained => WorkerState::Drained,
            Phase::Draining { until } if Instant::now() < until => WorkerState::Draining,
            Phase::Draining { .. } => WorkerState::Drained,
            Phase::Serving
                if self.local || self.last_heartbeat.lock().unwrap().elapsed() < timeout =>
            {
                WorkerState::Live
            }
            Phase::Serving => WorkerState::Down,
        }
    }

    fn is_live(&self, timeout: Duration) -> bool {
        self.state(timeout) == WorkerState::Live
    }

    fn busy(&self) -> usize {
        self.capacity - self.slots.available_permits()
    }
}

/// A worker slot held for one action; the slot frees when this drops.
pub struct Placed {
    pub worker: Arc<WorkerEntry>,
    /// What the action's reply says first: its workspace moved here, or its worker was
    /// waited for.
    pub note: Option<String>,
    _slot: OwnedSemaphorePermit,
}

pub struct Scheduler {
    workers: RwLock<HashMap<String, Arc<WorkerEntry>>>,
    store: Arc<dyn Store>,
    heartbeat_timeout: Duration,
    queue_deadline: Duration,
    queue_limit: usize,
    waiting: AtomicUsize,
    /// Serialises placements, moves and the start of drains, so two actions of a workspace
    /// agree on its worker and no workspace lands on a worker that started draining.
    placing: tokio::sync::Mutex<()>,
    /// Carried by every call to a worker.
    hop_secret: Option<HopSecret>,
    /// How long an action waits for its workspace's worker to come back.
    worker_return: Duration,
    /// Where parked profiles' tars are kept: `<parked>/<tenant>/<workspace>.tar`.
    parked_dir: PathBuf,
    /// Woken when a worker's state, a placement or a parked profile changes.
    changed: Notify,
}

impl Scheduler {
    pub fn new(
        store: Arc<dyn Store>,
        heartbeat_timeout: Duration,
        queue_deadline: Duration,
        queue_limit: usize,
        hop_secret: Option<HopSecret>,
        worker_return: Duration,
        parked_dir: PathBuf,
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
            worker_return,
            parked_dir,
            changed: Notify::new(),
        }
    }

    /// Adds or replaces a worker; true when it is new (or back after a drain or with a new
    /// address), false for the one already known. A worker that registers again with the same
    /// address keeps its slots, so actions in flight are still counted.
    pub fn register(&self, name: &str, address: &str, capacity: u32) -> Result<bool> {
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
            && *known.phase.lock().unwrap() == Phase::Serving
        {
            *known.last_heartbeat.lock().unwrap() = Instant::now();
            return Ok(false);
        }
        tracing::info!(worker = name, address, capacity, "worker registered");
        let transfer =
            ProfileTransferClient::new(internal(channel.clone(), self.hop_secret.as_ref()))
                .max_decoding_message_size(GRPC_MESSAGE_MAX)
                .max_encoding_message_size(GRPC_MESSAGE_MAX);
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
                transfer: Some(transfer),
                slots: Arc::new(Semaphore::new(capacity as usize)),
                last_heartbeat: Mutex::new(Instant::now()),
                local: false,
                phase: Mutex::new(Phase::Serving),
            }),
        );
        drop(workers);
        self.changed.notify_waiters();
        Ok(true)
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
                transfer: None,
                slots: Arc::new(Semaphore::new(capacity as usize)),
                last_heartbeat: Mutex::new(Instant::now()),
                local: true,
                phase: Mutex::new(Phase::Serving),
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

    fn state_of(&self, name: &str) -> (Option<Arc<WorkerEntry>>, WorkerState) {
        let worker = self.workers.read().unwrap().get(name).cloned();
        let state = worker
            .as_ref()
            .map_or(WorkerState::Down, |w| w.state(self.heartbeat_timeout));
        (worker, state)
    }

    /// Every registered worker as the controller sees it, by name.
    pub fn statuses(&self) -> Result<Vec<WorkerStatus>> {
        let counts = self.store.placement_counts()?;
        let mut statuses: Vec<_> = self
            .workers
            .read()
            .unwrap()
            .values()
            .map(|w| {
                let state = w.state(self.heartbeat_timeout);
                WorkerStatus {
                    name: w.name.clone(),
                    address: w.address.clone(),
                    capacity: w.capacity as u32,
                    live: state == WorkerState::Live,
                    busy: w.busy() as u32,
                    workspaces: counts.get(&w.name).copied().unwrap_or(0) as u32,
                    state: state.as_str().into(),
                }
            })
            .collect();
        statuses.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(statuses)
    }

    /// Actions waiting for a worker slot now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// The worker of `workspace` (placing or moving it first when needed), with a slot for one
    /// action.
    pub async fn acquire(&self, tenant: &str, workspace: &str) -> Result<Placed> {
        let mut note = None;
        loop {
            let (worker, told) = self.worker_for(tenant, workspace).await?;
            note = told.or(note);
            let started = Instant::now();
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
            let Ok(Ok(slot)) = slot else {
                crate::metrics::metrics().queue_rejections.inc();
                return Err(ControllerError::ResourceExhausted(format!(
                    "every browser slot of worker {} is busy and none freed within {} ms; try \
                     again shortly",
                    worker.name,
                    self.queue_deadline.as_millis()
                )));
            };
            // A worker that started draining while this action waited for its slot gets no
            // new action: look again (the workspace waits for its profile to move).
            if worker.is_live(self.heartbeat_timeout) {
                return Ok(Placed {
                    worker,
                    note,
                    _slot: slot,
                });
            }
        }
    }

    /// Where the workspace's next action runs, and what its reply should say about it.
    async fn worker_for(
        &self,
        tenant: &str,
        workspace: &str,
    ) -> Result<(Arc<WorkerEntry>, Option<String>)> {
        let started = Instant::now();
        let mut waited_for: Option<String> = None;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let Some(name) = self.store.placement(tenant, workspace)? else {
                return Ok((self.place(tenant, workspace).await?, None));
            };
            let (worker, state) = self.state_of(&name);
            if let (Some(worker), WorkerState::Live) = (worker, state) {
                if self.store.parked(tenant, workspace)?.is_some() {
                    self.drop_parked_if_on(tenant, workspace, &name).await?;
                }
                let note = waited_for.map(|name| {
                    format!(
                        "(Waited {:.1} s for worker {name}, which has this workspace's profile, \
                         to come back.)",
                        started.elapsed().as_secs_f64()
                    )
                });
                return Ok((worker, note));
            }
            if self.store.parked(tenant, workspace)?.is_some() {
                if let Some(moved) = self.move_parked(tenant, workspace, &name).await? {
                    return Ok(moved);
                }
                continue;
            }
            // A draining worker is waited for until its drain ends (the profile may be on its
            // way here); one that is down or was drained without the profile, for a while.
            if state != WorkerState::Draining && started.elapsed() >= self.worker_return {
                let what = match state {
                    WorkerState::Drained => "which was drained without its profile moving off it",
                    _ => "which is down",
                };
                return Err(ControllerError::Unavailable(format!(
                    "workspace {workspace:?} lives on worker {name}, {what}; waited {:.0} s for \
                     it to come back. Its logins are on that worker's disk, so try again when \
                     it is back",
                    started.elapsed().as_secs_f64()
                )));
            }
            if waited_for.is_none() {
                tracing::info!(workspace, worker = %name, state = state.as_str(),
                    "waiting for the workspace's worker");
            }
            waited_for = Some(name);
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// The least-loaded live worker, `except` one.
    fn least_loaded(&self, except: Option<&str>) -> Result<Option<Arc<WorkerEntry>>> {
        let counts = self.store.placement_counts()?;
        Ok(self
            .live_workers()
            .into_iter()
            .filter(|w| Some(w.name.as_str()) != except)
            .min_by(|a, b| {
                let load = |w: &WorkerEntry| {
                    let placed = counts.get(&w.name).copied().unwrap_or(0) as f64;
                    (placed / w.capacity as f64, w.busy(), w.name.clone())
                };
                let (la, lb) = (load(a), load(b));
                la.0.total_cmp(&lb.0)
                    .then(la.1.cmp(&lb.1))
                    .then(la.2.cmp(&lb.2))
            }))
    }

    /// Places a new workspace on the least-loaded live worker.
    async fn place(&self, tenant: &str, workspace: &str) -> Result<Arc<WorkerEntry>> {
        let _placing = self.placing.lock().await;
        if let Some(name) = self.store.placement(tenant, workspace)? {
            // Placed meanwhile by another action of the workspace.
            if let (Some(worker), WorkerState::Live) = self.state_of(&name) {
                return Ok(worker);
            }
        }
        let Some(chosen) = self.least_loaded(None)? else {
            return Err(ControllerError::Unavailable(
                "no browser worker is running; start one (or use `nanomuse-browser serve`)".into(),
            ));
        };
        self.store.put_placement(tenant, workspace, &chosen.name)?;
        self.store.flush().await?;
        tracing::info!(workspace, worker = %chosen.name, "workspace placed");
        Ok(chosen)
    }

    fn parked_file(&self, tenant: &str, workspace: &str) -> PathBuf {
        self.parked_dir
            .join(tenant)
            .join(format!("{workspace}.tar"))
    }

    /// Drops the parked copy of a workspace whose worker (`name`) is back with the profile.
    async fn drop_parked_if_on(&self, tenant: &str, workspace: &str, name: &str) -> Result<()> {
        let _placing = self.placing.lock().await;
        if self.store.placement(tenant, workspace)?.as_deref() != Some(name)
            || self.state_of(name).1 != WorkerState::Live
        {
            return Ok(());
        }
        self.store.remove_parked(tenant, workspace)?;
        self.store.flush().await?;
        let _ = tokio::fs::remove_file(self.parked_file(tenant, workspace)).await;
        tracing::info!(
            workspace,
            worker = name,
            "worker back with the profile; parked copy dropped"
        );
        Ok(())
    }

    /// A worker registered anew: the workspaces still placed on it are on its disk, so their
    /// parked copies (from a drain before a restart) are stale.
    pub async fn drop_parked_of(&self, name: &str) -> Result<()> {
        for (tenant, workspace) in self.store.placements_on(name)? {
            if self.store.parked(&tenant, &workspace)?.is_some() {
                self.drop_parked_if_on(&tenant, &workspace, name).await?;
            }
        }
        Ok(())
    }

    /// Moves a parked workspace from `from` to the least-loaded live worker; `None` when
    /// something changed meanwhile (look again).
    async fn move_parked(
        &self,
        tenant: &str,
        workspace: &str,
        from: &str,
    ) -> Result<Option<(Arc<WorkerEntry>, Option<String>)>> {
        let _placing = self.placing.lock().await;
        if self.store.placement(tenant, workspace)?.as_deref() != Some(from)
            || self.store.parked(tenant, workspace)?.is_none()
            || self.state_of(from).1 == WorkerState::Live
        {
            return Ok(None);
        }
        let Some(to) = self.least_loaded(Some(from))? else {
            return Err(ControllerError::Unavailable(format!(
                "workspace {workspace:?} left worker {from} (drained) and its profile waits \
                 here for another worker, but none is live; try again when one is"
            )));
        };
        let file = self.parked_file(tenant, workspace);
        let bytes = tokio::time::timeout(IMPORT_BOUND, import(&to, tenant, workspace, &file))
            .await
            .unwrap_or_else(|_| {
                Err(ControllerError::Unavailable(format!(
                    "moving workspace {workspace:?}'s profile to worker {} took over {} s; try \
                     again",
                    to.name,
                    IMPORT_BOUND.as_secs()
                )))
            })?;
        self.store.put_placement(tenant, workspace, &to.name)?;
        self.store.remove_parked(tenant, workspace)?;
        self.store.flush().await?;
        let _ = tokio::fs::remove_file(&file).await;
        self.changed.notify_waiters();
        tracing::info!(workspace, from, to = %to.name, bytes, "workspace moved with its profile");
        let note = format!(
            "This workspace moved from worker {from} (drained) to worker {} with its profile: \
             its cookies and logins came along, so you are still logged in where you were. Its \
             pages start blank there.",
            to.name
        );
        Ok(Some((to, Some(note))))
    }

    /// Drains worker `name` within `budget`: no new workspace or action goes to it, the
    /// actions on it get up to half the budget to finish, then the profile of each workspace
    /// placed on it is exported and parked here. The worker is drained at the end. A worker
    /// this controller does not know (it restarted since the worker's last heartbeat) but that
    /// holds placements is taken on at `address` for the drain, so its profiles move all the
    /// same.
    pub async fn drain(
        &self,
        name: &str,
        address: &str,
        capacity: u32,
        budget: Duration,
    ) -> Result<DrainReply> {
        let started = Instant::now();
        let until = started + budget;
        let known = self.workers.read().unwrap().get(name).cloned();
        let worker = match known {
            Some(worker) => worker,
            None => {
                let placed = self.store.placements_on(name)?.len() as u32;
                if placed == 0 || address.is_empty() || capacity == 0 {
                    tracing::warn!(
                        worker = name,
                        placed,
                        "an unknown worker asked to be drained"
                    );
                    return Ok(DrainReply {
                        exported: 0,
                        left: placed,
                    });
                }
                tracing::info!(
                    worker = name,
                    address,
                    placed,
                    "a worker unknown since the restart asked to be drained; taking it on"
                );
                self.register(name, address, capacity)?;
                self.workers
                    .read()
                    .unwrap()
                    .get(name)
                    .cloned()
                    .expect("just registered")
            }
        };
        {
            let _placing = self.placing.lock().await;
            *worker.phase.lock().unwrap() = Phase::Draining { until };
        }
        self.changed.notify_waiters();
        tracing::info!(
            worker = name,
            busy = worker.busy(),
            budget_ms = budget.as_millis() as u64,
            "worker draining"
        );
        let actions_until = started + budget / 2;
        while worker.busy() > 0 && Instant::now() < actions_until {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        if worker.busy() > 0 {
            tracing::warn!(
                worker = name,
                busy = worker.busy(),
                "actions still under way on a draining worker; its profiles go anyway"
            );
        }
        let mut exported = 0;
        let mut left = 0;
        for (tenant, workspace) in self.store.placements_on(name)? {
            if until.saturating_duration_since(Instant::now()) < Duration::from_millis(500) {
                left += 1;
                continue;
            }
            match self.export(&worker, &tenant, &workspace, until).await {
                Ok(true) => exported += 1,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(worker = name, workspace, %error,
                        "profile not exported; it stays on the worker");
                    left += 1;
                }
            }
            self.changed.notify_waiters();
        }
        *worker.phase.lock().unwrap() = Phase::Drained;
        self.changed.notify_waiters();
        tracing::info!(
            worker = name,
            exported,
            left,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "worker drained"
        );
        Ok(DrainReply { exported, left })
    }

    /// Exports one workspace's profile from `worker` and parks it; false when the worker has
    /// no profile for it (nothing to move: the workspace is placed afresh on its next action).
    async fn export(
        &self,
        worker: &WorkerEntry,
        tenant: &str,
        workspace: &str,
        until: Instant,
    ) -> Result<bool> {
        let Some(client) = worker.transfer.clone() else {
            return Err(ControllerError::Unavailable(
                "an in-process worker keeps its profiles".into(),
            ));
        };
        let file = self.parked_file(tenant, workspace);
        let partial = file.with_extension("tar.partial");
        let io = |e: std::io::Error| ControllerError::Store(format!("parking a profile: {e}"));
        tokio::fs::create_dir_all(file.parent().expect("a tenant folder"))
            .await
            .map_err(io)?;
        let fetched = tokio::time::timeout_at(
            until.into(),
            fetch_profile(client, tenant, workspace, &partial),
        )
        .await
        .unwrap_or_else(|_| {
            Err(ControllerError::Unavailable(
                "the drain's time ran out".into(),
            ))
        });
        let bytes = match fetched {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                let _ = tokio::fs::remove_file(&partial).await;
                self.store.remove_placement(tenant, workspace)?;
                self.store.flush().await?;
                return Ok(false);
            }
            Err(error) => {
                let _ = tokio::fs::remove_file(&partial).await;
                return Err(error);
            }
        };
        tokio::fs::rename(&partial, &file).await.map_err(io)?;
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let parked = ParkedProfile {
            from: worker.name.clone(),
            bytes,
            at_ms,
        };
        self.store.put_parked(tenant, workspace, &parked)?;
        self.store.flush().await?;
        tracing::info!(worker = %worker.name, workspace, bytes, "profile parked");
        Ok(true)
    }
}

fn backend_error(status: tonic::Status) -> ControllerError {
    ControllerError::Backend(BackendError::from(status))
}

/// Streams a workspace's profile from a worker into `partial` (synced); `None` when the
/// worker has no such profile.
async fn fetch_profile(
    mut client: ProfileTransferClient<InternalChannel>,
    tenant: &str,
    workspace: &str,
    partial: &std::path::Path,
) -> Result<Option<u64>> {
    let io = |e: std::io::Error| ControllerError::Store(format!("parking a profile: {e}"));
    let request = ProfileRef {
        tenant: tenant.into(),
        workspace: workspace.into(),
    };
    let mut stream = match client.export_profile(request).await {
        Ok(stream) => stream.into_inner(),
        Err(status) if status.code() == tonic::Code::NotFound => return Ok(None),
        Err(status) => return Err(backend_error(status)),
    };
    let mut out = tokio::fs::File::create(partial).await.map_err(io)?;
    let mut bytes = 0;
    while let Some(chunk) = stream.message().await.map_err(backend_error)? {
        out.write_all(&chunk.data).await.map_err(io)?;
        bytes += chunk.data.len() as u64;
    }
    out.sync_all().await.map_err(io)?;
    Ok(Some(bytes))
}

/// Streams the parked tar `file` into worker `to`'s `ImportProfile`; the tar's size.
async fn import(
    to: &WorkerEntry,
    tenant: &str,
    workspace: &str,
    file: &std::path::Path,
) -> Result<u64> {
    let Some(mut client) = to.transfer.clone() else {
        return Err(ControllerError::Unavailable(
            "an in-process worker takes no profiles".into(),
        ));
    };
    let io = |e: std::io::Error| ControllerError::Store(format!("reading a parked profile: {e}"));
    let mut tar = tokio::fs::File::open(file).await.map_err(io)?;
    let size = tar.metadata().await.map_err(io)?.len();
    // Read here, sent by tonic: a read error ends the stream short, which the worker
    // refuses (the first chunk says the size).
    let (sender, receiver) = tokio::sync::mpsc::channel::<ProfileChunk>(4);
    let mut first = Some(ProfileRef {
        tenant: tenant.into(),
        workspace: workspace.into(),
    });
    let reading = tokio::spawn(async move {
        loop {
            let mut data = vec![0; CHUNK_BYTES];
            let mut filled = 0;
            while filled < CHUNK_BYTES {
                match tar.read(&mut data[filled..]).await? {
                    0 => break,
                    n => filled += n,
                }
            }
            data.truncate(filled);
            let profile = first.take();
            if filled == 0 && profile.is_none() {
                return Ok::<_, std::io::Error>(());
            }
            let chunk = ProfileChunk {
                size: if profile.is_some() { size } else { 0 },
                profile,
                data,
            };
            if sender.send(chunk).await.is_err() || filled < CHUNK_BYTES {
                return Ok(());
            }
        }
    });
    let reply = client
        .import_profile(tokio_stream::wrappers::ReceiverStream::new(receiver))
        .await;
    let read = reading
        .await
        .map_err(|e| ControllerError::Store(format!("reading a parked profile: {e}")))?;
    read.map_err(io)?;
    Ok(reply.map_err(backend_error)?.into_inner().bytes)
}
