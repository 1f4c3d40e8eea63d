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
//!
//! By concern: [`registry`] (workers, their heartbeats and states), [`placement`] (where a
//! workspace's action runs, and the queue for a slot), [`drain`] (draining a worker and moving
//! its parked profiles).

mod drain;
mod placement;
mod registry;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use nanomuse_common::HopSecret;
use tokio::sync::Notify;

pub use placement::Placed;
pub use registry::{WorkerEntry, WorkerState};

use crate::store::Store;

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

    /// Actions waiting for a worker slot now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}
