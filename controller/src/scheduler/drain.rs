//! Drain and scale-down: a draining worker's profiles are exported and parked here, and a
//! parked workspace's next action moves it to another worker with its profile.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nanomuse_common::hop::InternalChannel;
use nanomuse_proto::profile_transfer_client::ProfileTransferClient;
use nanomuse_proto::{BackendError, DrainReply, ProfileChunk, ProfileRef};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

use super::registry::Phase;
use super::{Scheduler, WorkerEntry, WorkerState};
use crate::error::{ControllerError, Result};
use crate::store::ParkedProfile;

/// The bound of moving one parked profile to its new worker.
const IMPORT_BOUND: Duration = Duration::from_secs(60);
/// The pieces a parked profile is streamed in.
const CHUNK_BYTES: usize = 256 * 1024;

impl Scheduler {
    pub(super) fn parked_file(&self, tenant: &str, workspace: &str) -> PathBuf {
        self.parked_dir
            .join(tenant)
            .join(format!("{workspace}.tar"))
    }

    /// Drops the parked copy of a workspace whose worker (`name`) is back with the profile.
    pub(super) async fn drop_parked_if_on(
        &self,
        tenant: &str,
        workspace: &str,
        name: &str,
    ) -> Result<()> {
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
    pub(super) async fn move_parked(
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
    pub(super) async fn export(
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
        let fetched =
            tokio::time::timeout_at(until, fetch_profile(client, tenant, workspace, &partial))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeBackend, FakeTransfer, scheduler, serve_transfer};

    fn state_of(s: &Scheduler, name: &str) -> String {
        let statuses = s.statuses().unwrap();
        statuses.into_iter().find(|w| w.name == name).unwrap().state
    }

    #[tokio::test(start_paused = true)]
    async fn a_draining_worker_gets_no_new_workspace_and_waits_for_its_actions() {
        let s = scheduler(8);
        s.register_local("w1", 2, FakeBackend::new());
        s.register_local("w2", 2, FakeBackend::new());
        let on_w1 = s.acquire("t", "a").await.unwrap();
        assert_eq!(on_w1.worker.name, "w1");
        let drain = s.drain("w1", "", 0, Duration::from_secs(10));
        tokio::pin!(drain);
        assert!(futures::poll!(drain.as_mut()).is_pending());
        assert_eq!(state_of(&s, "w1"), "draining");
        // Less loaded, but draining: new workspaces go elsewhere.
        for workspace in ["b", "c"] {
            assert_eq!(s.acquire("t", workspace).await.unwrap().worker.name, "w2");
        }
        // The drain waits for the action under way, then ends; an in-process worker keeps its
        // profiles, so its workspace is left there.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(futures::poll!(drain.as_mut()).is_pending());
        let started = Instant::now();
        drop(on_w1);
        let drained = drain.await.unwrap();
        assert!(started.elapsed() < Duration::from_millis(100));
        assert_eq!((drained.exported, drained.left), (0, 1));
        assert_eq!(state_of(&s, "w1"), "drained");
        assert_eq!(s.acquire("t", "d").await.unwrap().worker.name, "w2");
    }

    #[tokio::test(start_paused = true)]
    async fn a_workspace_left_on_a_drained_worker_waits_for_it_then_is_refused() {
        let s = scheduler(8);
        s.register_local("w1", 2, FakeBackend::new());
        s.register_local("w2", 2, FakeBackend::new());
        drop(s.acquire("t", "a").await.unwrap());
        s.drain("w1", "", 0, Duration::from_secs(10)).await.unwrap();
        // Its profile is on w1's disk: it is not placed afresh on w2.
        let started = Instant::now();
        let refused = s.acquire("t", "a").await.err().unwrap();
        assert!(started.elapsed() >= Duration::from_secs(2));
        assert!(
            matches!(&refused, ControllerError::Unavailable(m) if m.starts_with(
                "workspace \"a\" lives on worker w1, which was drained without its profile \
                 moving off it; waited 2 s"
            )),
            "{refused:?}"
        );
        // Back within the wait (a restart), the worker has it again, and the reply says so.
        let waiting = s.acquire("t", "a");
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        tokio::time::sleep(Duration::from_millis(500)).await;
        s.register_local("w1", 2, FakeBackend::new());
        let placed = waiting.await.unwrap();
        assert_eq!(placed.worker.name, "w1");
        let note = placed.note.clone().unwrap();
        assert!(
            note.starts_with("(Waited 0.")
                && note
                    .ends_with("for worker w1, which has this workspace's profile, to come back.)"),
            "{note}"
        );
    }

    #[tokio::test]
    async fn an_unknown_worker_with_nothing_placed_drains_at_once() {
        let s = scheduler(8);
        let drained = s.drain("w9", "", 0, Duration::from_secs(10)).await.unwrap();
        assert_eq!((drained.exported, drained.left), (0, 0));
        assert!(s.statuses().unwrap().is_empty());
    }

    /// Workers w1 (holding the profile of workspace "a", 600 KiB) and w2 (none) behind fake
    /// transfer services, and a scheduler parking profiles in a temporary folder. Real time:
    /// the transfers go over sockets.
    async fn two_workers() -> (Scheduler, FakeTransfer, FakeTransfer, tempfile::TempDir) {
        let parked = tempfile::tempdir().unwrap();
        let s = Scheduler::new(
            Arc::new(crate::store::SledStore::temporary().unwrap()),
            Duration::from_secs(30),
            Duration::from_secs(5),
            8,
            None,
            Duration::from_secs(5),
            parked.path().to_path_buf(),
        );
        let (w1, w2) = (FakeTransfer::default(), FakeTransfer::default());
        let tar: Vec<u8> = (0..600 * 1024).map(|i| (i % 251) as u8).collect();
        w1.profiles
            .lock()
            .unwrap()
            .insert(("t".into(), "a".into()), tar);
        s.register("w1", &serve_transfer(w1.clone()).await, 2)
            .unwrap();
        // "b" is placed on w1 too, but w1 has no profile for it.
        for workspace in ["a", "b"] {
            assert_eq!(s.acquire("t", workspace).await.unwrap().worker.name, "w1");
        }
        s.register("w2", &serve_transfer(w2.clone()).await, 2)
            .unwrap();
        (s, w1, w2, parked)
    }

    #[tokio::test]
    async fn a_drained_workers_profiles_are_parked_and_move_with_their_next_action() {
        let (s, w1, w2, parked) = two_workers().await;
        let drained = s.drain("w1", "", 0, Duration::from_secs(10)).await.unwrap();
        assert_eq!((drained.exported, drained.left), (1, 0));
        assert_eq!(state_of(&s, "w1"), "drained");
        let record = s.store.parked("t", "a").unwrap().unwrap();
        assert_eq!((record.from.as_str(), record.bytes), ("w1", 600 * 1024));
        let file = parked.path().join("t").join("a.tar");
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 600 * 1024);
        // Nothing to move for "b": it is placed afresh on its next action.
        assert!(s.store.placement("t", "b").unwrap().is_none());
        let moved = s.acquire("t", "a").await.unwrap();
        assert_eq!(moved.worker.name, "w2");
        assert!(
            moved.note.as_deref().unwrap().starts_with(
                "This workspace moved from worker w1 (drained) to worker w2 with its profile"
            ),
            "{:?}",
            moved.note
        );
        let key = ("t".to_string(), "a".to_string());
        assert_eq!(
            w2.profiles.lock().unwrap().get(&key),
            w1.profiles.lock().unwrap().get(&key)
        );
        assert_eq!(s.store.placement("t", "a").unwrap().as_deref(), Some("w2"));
        assert!(s.store.parked("t", "a").unwrap().is_none());
        assert!(!file.exists());
        // Moved once: its next action finds it there, saying nothing.
        drop(moved);
        let again = s.acquire("t", "a").await.unwrap();
        assert_eq!(
            (again.worker.name.as_str(), again.note.as_deref()),
            ("w2", None)
        );
        assert_eq!(s.acquire("t", "b").await.unwrap().worker.name, "w2");
    }

    #[tokio::test]
    async fn a_drained_worker_that_comes_back_keeps_the_workspaces_not_moved() {
        let (s, _w1, w2, parked) = two_workers().await;
        s.drain("w1", "", 0, Duration::from_secs(10)).await.unwrap();
        let address = s.statuses().unwrap()[0].address.clone();
        // Back after a restart: its disk has the profile, so the parked copy is stale.
        assert!(s.register("w1", &address, 2).unwrap());
        s.drop_parked_of("w1").await.unwrap();
        assert!(s.store.parked("t", "a").unwrap().is_none());
        assert!(!parked.path().join("t").join("a.tar").exists());
        let placed = s.acquire("t", "a").await.unwrap();
        assert_eq!(
            (placed.worker.name.as_str(), placed.note.as_deref()),
            ("w1", None)
        );
        assert!(w2.profiles.lock().unwrap().is_empty());
    }
}
