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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeBackend, scheduler};

    async fn worker_of(s: &Scheduler, workspace: &str) -> String {
        s.acquire("t", workspace).await.unwrap().worker.name.clone()
    }

    #[tokio::test]
    async fn a_new_workspace_goes_to_the_least_loaded_live_worker_and_stays() {
        let s = scheduler(8);
        s.register_local("w1", 2, FakeBackend::new());
        s.register_local("w2", 4, FakeBackend::new());
        // Load is workspaces per slot; ties go to the less busy, then by name.
        let mut placed = Vec::new();
        for workspace in ["a", "b", "c", "d"] {
            placed.push(worker_of(&s, workspace).await);
        }
        assert_eq!(placed, ["w1", "w2", "w2", "w1"]);
        assert_eq!(s.store.placement("t", "c").unwrap().as_deref(), Some("w2"));
        // w1 is the more loaded now (2 of 2), yet its workspaces stay on it.
        assert_eq!(worker_of(&s, "a").await, "w1");
        assert_eq!(worker_of(&s, "e").await, "w2");
        // A busy worker counts as more loaded at equal placements.
        let s = scheduler(8);
        s.register_local("w1", 2, FakeBackend::new());
        s.register_local("w2", 2, FakeBackend::new());
        let _busy = s.acquire("t", "a").await.unwrap();
        s.store.remove_placement("t", "a").unwrap();
        assert_eq!(worker_of(&s, "b").await, "w2");
    }

    #[tokio::test(start_paused = true)]
    async fn a_down_worker_gets_no_new_workspace_and_none_live_is_unavailable() {
        let s = scheduler(8);
        s.register("w1", "http://127.0.0.1:9", 8).unwrap();
        tokio::time::advance(Duration::from_secs(4)).await;
        let refused = s.acquire("t", "a").await.err().unwrap();
        assert!(
            matches!(&refused, ControllerError::Unavailable(m) if m.starts_with("no browser worker is running")),
            "{refused:?}"
        );
        assert!(s.store.placement("t", "a").unwrap().is_none());
        s.register_local("w2", 1, FakeBackend::new());
        assert_eq!(worker_of(&s, "a").await, "w2");
    }

    #[tokio::test(start_paused = true)]
    async fn an_action_waits_for_a_slot_until_the_queue_deadline() {
        let s = scheduler(8);
        s.register_local("w1", 1, FakeBackend::new());
        let first = s.acquire("t", "a").await.unwrap();
        // Within the deadline, the slot freed is the waiting action's.
        let second = s.acquire("t", "a");
        tokio::pin!(second);
        assert!(futures::poll!(second.as_mut()).is_pending());
        assert_eq!(s.waiting(), 1);
        tokio::time::sleep(Duration::from_millis(900)).await;
        drop(first);
        let second = second.await.unwrap();
        assert_eq!(s.waiting(), 0);
        // Past it, the action is refused, saying why.
        let started = Instant::now();
        let refused = s.acquire("t", "a").await.err().unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(1));
        assert_eq!(
            refused.to_string(),
            "every browser slot of worker w1 is busy and none freed within 1000 ms; try again \
             shortly"
        );
        assert!(matches!(refused, ControllerError::ResourceExhausted(_)));
        assert_eq!(s.waiting(), 0);
        drop(second);
    }

    #[tokio::test]
    async fn a_full_queue_refuses_at_once() {
        let s = scheduler(1);
        s.register_local("w1", 1, FakeBackend::new());
        let _slot = s.acquire("t", "a").await.unwrap();
        let waiting = s.acquire("t", "a");
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        let refused = s.acquire("t", "a").await.err().unwrap();
        assert_eq!(
            refused.to_string(),
            "too many actions are waiting for a browser (1); try again shortly"
        );
        assert_eq!(s.waiting(), 1);
    }
}
