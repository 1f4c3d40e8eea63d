//! Placement: a workspace is placed once, on the least-loaded live worker, and stays there;
//! an action that finds its worker full waits in a bounded queue until a deadline.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::{Scheduler, WorkerEntry, WorkerState};
use crate::error::{ControllerError, Result};

/// How often a waiting action looks again without being woken (a worker that comes back
/// after a silence only heartbeats).
const POLL: Duration = Duration::from_millis(200);

/// A worker slot held for one action; the slot frees when this drops.
pub struct Placed {
    pub worker: Arc<WorkerEntry>,
    /// What the action's reply says first: its workspace moved here, or its worker was
    /// waited for.
    pub note: Option<String>,
    _slot: OwnedSemaphorePermit,
}

impl Scheduler {
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
    pub(super) async fn worker_for(
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
    pub(super) fn least_loaded(&self, except: Option<&str>) -> Result<Option<Arc<WorkerEntry>>> {
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
    pub(super) async fn place(&self, tenant: &str, workspace: &str) -> Result<Arc<WorkerEntry>> {
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
}
