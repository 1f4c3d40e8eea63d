//! The worker registry: workers register and heartbeat; one silent past the timeout is down.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanomuse_common::hop::{InternalChannel, internal};
use nanomuse_proto::downloads::{Downloads, GrpcDownloads};
use nanomuse_proto::profile_transfer_client::ProfileTransferClient;
use nanomuse_proto::screencast::{GrpcScreencast, Screencast};
use nanomuse_proto::{Backend, GrpcBackend, WorkerStatus};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tonic::transport::Channel;

use super::Scheduler;
use crate::error::{ControllerError, Result};

const GRPC_MESSAGE_MAX: usize = 64 * 1024 * 1024;

/// Where a worker is in its life, as far as its own word goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
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
    pub(super) transfer: Option<ProfileTransferClient<InternalChannel>>,
    /// Where its workspaces' downloaded files are read: its `WorkerDownloads` service, or
    /// the in-process worker's folder; none for an in-process backend without one.
    pub downloads: Option<Arc<dyn Downloads>>,
    /// Where its pages' live views are watched: its `WorkerScreencast` service, or the
    /// in-process worker's; none for an in-process backend without one.
    pub screencast: Option<Arc<dyn Screencast>>,
    pub(super) slots: Arc<Semaphore>,
    pub(super) last_heartbeat: Mutex<Instant>,
    /// In the same process (the embedded `serve`): no heartbeats, never down.
    pub(super) local: bool,
    pub(super) phase: Mutex<Phase>,
}

impl WorkerEntry {
    pub(super) fn state(&self, timeout: Duration) -> WorkerState {
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

    pub(super) fn is_live(&self, timeout: Duration) -> bool {
        self.state(timeout) == WorkerState::Live
    }

    pub(super) fn busy(&self) -> usize {
        self.capacity - self.slots.available_permits()
    }
}

impl Scheduler {
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
        let downloads: Arc<dyn Downloads> = Arc::new(GrpcDownloads::new(internal(
            channel.clone(),
            self.hop_secret.as_ref(),
        )));
        let screencast: Arc<dyn Screencast> = Arc::new(GrpcScreencast::new(internal(
            channel.clone(),
            self.hop_secret.as_ref(),
        )));
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
                downloads: Some(downloads),
                screencast: Some(screencast),
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
        self.register_local_with(name, capacity, backend, None, None);
    }

    /// [`Scheduler::register_local`], with the worker's downloads read and its live views
    /// watched in-process.
    pub fn register_local_with(
        &self,
        name: &str,
        capacity: u32,
        backend: Arc<dyn Backend>,
        downloads: Option<Arc<dyn Downloads>>,
        screencast: Option<Arc<dyn Screencast>>,
    ) {
        self.workers.write().unwrap().insert(
            name.to_string(),
            Arc::new(WorkerEntry {
                name: name.to_string(),
                address: "in-process".into(),
                capacity: capacity as usize,
                backend,
                transfer: None,
                downloads,
                screencast,
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

    pub(super) fn live_workers(&self) -> Vec<Arc<WorkerEntry>> {
        self.workers
            .read()
            .unwrap()
            .values()
            .filter(|w| w.is_live(self.heartbeat_timeout))
            .cloned()
            .collect()
    }

    pub(super) fn state_of(&self, name: &str) -> (Option<Arc<WorkerEntry>>, WorkerState) {
        let worker = self.workers.read().unwrap().get(name).cloned();
        let state = worker
            .as_ref()
            .map_or(WorkerState::Down, |w| w.state(self.heartbeat_timeout));
        (worker, state)
    }

    /// Where the workspace's downloaded files are read, and its worker's name; none when it
    /// was never placed (it never had a browser, so it has no files). Not waited for: a
    /// workspace whose worker is away, or whose profile is parked, is said so at once.
    pub fn downloads_of(
        &self,
        tenant: &str,
        workspace: &str,
    ) -> Result<Option<(String, Arc<dyn Downloads>)>> {
        let Some(name) = self.store.placement(tenant, workspace)? else {
            return Ok(None);
        };
        if self.store.parked(tenant, workspace)?.is_some() {
            return Err(ControllerError::Unavailable(format!(
                "workspace {workspace:?}'s profile, downloads included, was taken off worker                  {name} when it was drained; its next browser action moves it to a live worker,                  then its downloads can be listed"
            )));
        }
        match self.state_of(&name) {
            (Some(worker), WorkerState::Live | WorkerState::Draining) => {
                match worker.downloads.clone() {
                    Some(downloads) => Ok(Some((name, downloads))),
                    None => Err(ControllerError::Unavailable(format!(
                        "worker {name} does not serve its downloads"
                    ))),
                }
            }
            _ => Err(ControllerError::Unavailable(format!(
                "workspace {workspace:?} lives on worker {name}, which is down; its downloads                  are on that worker's disk, so try again when it is back"
            ))),
        }
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
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::testing::{FakeBackend, scheduler};

    fn state_of(scheduler: &Scheduler, name: &str) -> String {
        let statuses = scheduler.statuses().unwrap();
        let status = statuses.iter().find(|s| s.name == name).unwrap();
        assert_eq!(status.live, status.state == "live");
        status.state.clone()
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_worker_goes_down_after_the_heartbeat_timeout() {
        let s = scheduler(8);
        assert!(s.register("w1", "http://127.0.0.1:9", 2).unwrap());
        s.register_local("local", 2, FakeBackend::new());
        assert_eq!(state_of(&s, "w1"), "live");
        tokio::time::advance(Duration::from_millis(2_900)).await;
        assert!(s.heartbeat("w1"));
        tokio::time::advance(Duration::from_millis(2_900)).await;
        assert_eq!(state_of(&s, "w1"), "live");
        tokio::time::advance(Duration::from_millis(200)).await;
        assert_eq!(state_of(&s, "w1"), "down");
        assert!(s.live_workers().iter().all(|w| w.name == "local"));
        // Its next heartbeat brings it back; an in-process worker never goes down.
        assert!(s.heartbeat("w1"));
        assert_eq!(state_of(&s, "w1"), "live");
        tokio::time::advance(Duration::from_secs(3_600)).await;
        assert_eq!(state_of(&s, "local"), "live");
        // A worker this controller does not know is told to register again.
        assert!(!s.heartbeat("w9"));
    }

    #[tokio::test]
    async fn registering_again_is_not_new_and_bad_registrations_change_nothing() {
        let s = scheduler(8);
        assert!(s.register("w1", "http://127.0.0.1:9", 2).unwrap());
        assert!(!s.register("w1", "http://127.0.0.1:9", 2).unwrap());
        assert!(s.register("w1", "http://127.0.0.1:10", 2).unwrap());
        for (name, address, capacity) in [
            ("", "http://127.0.0.1:9", 2),
            ("w2", "http://127.0.0.1:9", 0),
            ("w2", "not a uri", 2),
        ] {
            assert!(
                matches!(
                    s.register(name, address, capacity),
                    Err(ControllerError::InvalidArgument(_))
                ),
                "{name:?} {address:?} {capacity}"
            );
        }
        let statuses = s.statuses().unwrap();
        assert_eq!(statuses.len(), 1);
        assert_eq!(
            (statuses[0].address.as_str(), statuses[0].capacity),
            ("http://127.0.0.1:10", 2)
        );
    }
}
