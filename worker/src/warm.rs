//! Browsers launched ahead on fresh profile folders, so that a workspace's first action does
//! not wait for Chromium to start: a workspace with no profile yet is handed one of them.
//!
//! A browser launched ahead lives in `<profiles_root>/+warm/<id>/` (`+` is in no tenant's
//! name, so the folder is nobody's). Handing it over writes the owner into the folder, then
//! links `<profiles_root>/<tenant>/<workspace>` to it: from then on every path of the
//! workspace (its browser profile, downloads, cookie snapshot, export) goes through the link,
//! which is the record of whose the folder is. A folder left by an earlier run that no link
//! names is removed when the worker starts. The pool refills in the background after each
//! hand-over; its size is `warm_browsers` (zero: none).
//!
//! The pool yields to a launch someone waits for (an existing profile's): while one runs, the
//! browsers ready here are stopped and none starts, since on a worker of a few cores a browser
//! just launched ahead still spends a second or more of CPU finishing its start.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::browser::LiveBrowser;
use crate::config::WorkerConfig;
use crate::error::Result;
use crate::profiles::ProfileKey;

/// The folder of the browsers launched ahead, under the profiles' root.
pub const WARM_DIR: &str = "+warm";
/// The file in a handed-over folder naming its workspace (`tenant/workspace`).
const OWNER_FILE: &str = "owner";

struct Ready {
    live: LiveBrowser,
    folder: PathBuf,
}

#[derive(Default)]
struct State {
    ready: Vec<Ready>,
    /// Launches someone waits for, under way (see [`WarmBrowsers::yield_to_launch`]).
    foreground: usize,
}

pub struct WarmBrowsers {
    config: Arc<WorkerConfig>,
    state: Mutex<State>,
    /// Launches under way, counted with the ready ones against the pool's size.
    launching: AtomicUsize,
    /// Set on shutdown: what finishes launching then is closed, not kept.
    closed: AtomicBool,
    /// Told each time a launch ends, ready or failed.
    launched: tokio::sync::Notify,
    /// This run's prefix of folder names (`<pid>-<start µs>-`), told apart from an earlier
    /// run's (a container's worker is always pid 1).
    run: String,
    next: AtomicU64,
}

impl WarmBrowsers {
    pub fn new(config: Arc<WorkerConfig>) -> Self {
        Self {
            config,
            state: Mutex::default(),
            launching: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            launched: tokio::sync::Notify::new(),
            run: format!(
                "{}-{}-",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros())
            ),
            next: AtomicU64::new(0),
        }
    }

    fn dir(&self) -> PathBuf {
        self.config.profiles_root.join(WARM_DIR)
    }

    /// Fills the pool, and removes in the background what an earlier run launched ahead and
    /// never handed over. The launches start before this returns, so a request that comes
    /// right after finds one under way (see [`WarmBrowsers::take`]).
    pub fn start(self: &Arc<Self>) {
        self.refill();
        let warm = self.clone();
        tokio::spawn(async move {
            if let Err(error) = warm.clear_leftovers().await {
                tracing::warn!(%error, "could not clear the folders of browsers launched ahead");
            }
        });
    }

    async fn clear_leftovers(&self) -> std::io::Result<()> {
        let mut entries = match tokio::fs::read_dir(self.dir()).await {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        while let Some(entry) = entries.next_entry().await? {
            let folder = entry.path();
            let this_run = entry.file_name().to_string_lossy().starts_with(&self.run);
            if !this_run && !self.is_owned(&folder).await {
                tracing::debug!(folder = %folder.display(), "removing a browser folder nobody took");
                // One that will not go (its browser of a killed run still exiting) is left
                // for the next start; the others go now.
                if let Err(error) = tokio::fs::remove_dir_all(&folder).await {
                    tracing::warn!(folder = %folder.display(), %error,
                        "could not remove a browser folder nobody took");
                }
            }
        }
        Ok(())
    }

    /// Whether `folder` was handed over and its workspace's link still names it.
    async fn is_owned(&self, folder: &Path) -> bool {
        let Ok(owner) = tokio::fs::read_to_string(folder.join(OWNER_FILE)).await else {
            return false;
        };
        let link = self.config.profiles_root.join(owner.trim());
        match (
            tokio::fs::canonicalize(&link).await,
            tokio::fs::canonicalize(folder).await,
        ) {
            (Ok(linked), Ok(folder)) => linked == folder,
            _ => false,
        }
    }

    /// Launches in the background until the pool has its size (ready + launching).
    pub fn refill(self: &Arc<Self>) {
        let size = self.config.warm_browsers;
        loop {
            if self.closed.load(Ordering::SeqCst) {
                return;
            }
            let (ready, foreground) = {
                let state = self.state.lock().unwrap();
                (state.ready.len(), state.foreground)
            };
            if foreground > 0 {
                // Started when the last of them ends.
                return;
            }
            let launching = self.launching.load(Ordering::SeqCst);
            if ready + launching >= size {
                return;
            }
            if self
                .launching
                .compare_exchange(launching, launching + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                continue;
            }
            let warm = self.clone();
            tokio::spawn(async move {
                if let Err(error) = warm.launch_one().await {
                    tracing::warn!(%error, "launching a browser ahead failed");
                }
                warm.launching.fetch_sub(1, Ordering::SeqCst);
                warm.launched.notify_waiters();
            });
        }
    }

    async fn launch_one(&self) -> Result<()> {
        let started = Instant::now();
        let folder = self.dir().join(format!(
            "{}{}",
            self.run,
            self.next.fetch_add(1, Ordering::Relaxed)
        ));
        let launched = LiveBrowser::launch(
            &self.config,
            &folder.join(crate::profiles::BROWSER_PROFILE),
            &folder.join(crate::profiles::DOWNLOADS),
            None,
        )
        .await;
        let live = match launched {
            Ok(live) => live,
            Err(error) => {
                let _ = tokio::fs::remove_dir_all(&folder).await;
                return Err(error);
            }
        };
        crate::metrics::metrics().launches.inc();
        if self.closed.load(Ordering::SeqCst) {
            discard(Ready { live, folder }).await;
            return Ok(());
        }
        tracing::info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "chromium launched ahead"
        );
        let mut state = self.state.lock().unwrap();
        if state.foreground > 0 {
            live.set_paused(true);
        }
        state.ready.push(Ready { live, folder });
        Ok(())
    }

    /// A browser launched ahead, its folder made `root` (the workspace of `owner`, which has no
    /// folder yet); `None` when none is ready. When none is ready but one is launching, it is
    /// waited for once: it started before this request, so it is ready before a launch made
    /// now would be. The pool refills behind it.
    pub async fn take(self: &Arc<Self>, owner: &ProfileKey, root: &Path) -> Option<LiveBrowser> {
        let mut waited = false;
        let taken = loop {
            // Made before the look, so a launch that ends in between still wakes it.
            let launched = self.launched.notified();
            let next = self.state.lock().unwrap().ready.pop();
            let Some(mut ready) = next else {
                if waited || self.launching.load(Ordering::SeqCst) == 0 {
                    break None;
                }
                waited = true;
                launched.await;
                continue;
            };
            ready.live.set_paused(false);
            if !ready.live.is_alive() {
                tracing::warn!("a browser launched ahead died; discarded");
                ready.live.kill().await;
                let _ = tokio::fs::remove_dir_all(&ready.folder).await;
                continue;
            }
            match hand_over(&ready.folder, owner, root).await {
                Ok(()) => break Some(ready.live),
                Err(error) => {
                    tracing::warn!(%error, "handing a browser launched ahead over failed");
                    discard(ready).await;
                    break None;
                }
            }
        };
        self.refill();
        taken
    }

    /// How many are ready.
    pub fn ready(&self) -> usize {
        self.state.lock().unwrap().ready.len()
    }

    /// Held through a launch someone waits for: until the last such launch ends, the browsers
    /// ready here are stopped and no launch ahead starts (the refill resumes after).
    pub fn yield_to_launch(self: &Arc<Self>) -> Yielding {
        let mut state = self.state.lock().unwrap();
        state.foreground += 1;
        if state.foreground == 1 {
            for ready in &state.ready {
                ready.live.set_paused(true);
            }
        }
        Yielding(self.clone())
    }

    /// Closes the ready ones and removes their folders; nothing is launched after.
    pub async fn close_all(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let ready: Vec<Ready> = std::mem::take(&mut self.state.lock().unwrap().ready);
        futures::future::join_all(ready.into_iter().map(discard)).await;
    }
}

/// See [`WarmBrowsers::yield_to_launch`].
pub struct Yielding(Arc<WarmBrowsers>);

impl Drop for Yielding {
    fn drop(&mut self) {
        {
            let mut state = self.0.state.lock().unwrap();
            state.foreground -= 1;
            if state.foreground == 0 {
                for ready in &state.ready {
                    ready.live.set_paused(false);
                }
            }
        }
        self.0.refill();
    }
}

async fn discard(ready: Ready) {
    // A stopped browser would not close itself.
    ready.live.set_paused(false);
    ready.live.close().await;
    let _ = tokio::fs::remove_dir_all(&ready.folder).await;
}

/// Records `owner` in `folder`, then links `root` to it. The owner file comes first: a link
/// without it would make the folder look abandoned at the next start.
async fn hand_over(folder: &Path, owner: &ProfileKey, root: &Path) -> std::io::Result<()> {
    tokio::fs::write(
        folder.join(OWNER_FILE),
        format!("{}/{}", owner.tenant, owner.workspace),
    )
    .await?;
    if let Some(parent) = root.parent() {
        tokio::fs::create_dir_all(parent).await?;
    }
    // Relative (`../+warm/<id>`), so the profiles' root can be moved as a whole.
    let name = folder.file_name().expect("a folder of its own");
    let target = Path::new("..").join(WARM_DIR).join(name);
    tokio::fs::symlink(target, root).await
}

/// The folder a link made by a hand-over names, if `root` is one.
pub async fn linked_folder(root: &Path) -> Option<PathBuf> {
    let target = tokio::fs::read_link(root).await.ok()?;
    Some(root.parent()?.join(target))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tenant: &str, workspace: &str) -> ProfileKey {
        ProfileKey {
            tenant: tenant.into(),
            workspace: workspace.into(),
        }
    }

    fn warm(root: &Path) -> WarmBrowsers {
        WarmBrowsers::new(Arc::new(WorkerConfig {
            profiles_root: root.to_path_buf(),
            ..WorkerConfig::default()
        }))
    }

    #[tokio::test]
    async fn a_handed_over_folder_is_linked_and_kept_and_one_nobody_took_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let pool = warm(dir.path());
        let taken = pool.dir().join("1-0-1");
        let untaken = pool.dir().join("1-1-1");
        let unlinked = pool.dir().join("1-2-1");
        for folder in [&taken, &untaken, &unlinked] {
            tokio::fs::create_dir_all(folder.join("browser-profile"))
                .await
                .unwrap();
        }
        let root = dir.path().join("acme").join("research");
        hand_over(&taken, &key("acme", "research"), &root)
            .await
            .unwrap();
        // Owned on paper, but its link went (the workspace was replaced by an import).
        tokio::fs::write(unlinked.join(OWNER_FILE), "acme/gone")
            .await
            .unwrap();

        assert!(root.join("browser-profile").is_dir());
        assert_eq!(
            linked_folder(&root).await.unwrap(),
            root.parent().unwrap().join("../+warm/1-0-1")
        );
        pool.clear_leftovers().await.unwrap();
        assert!(taken.is_dir(), "the taken folder stays");
        assert!(!untaken.exists(), "a folder nobody took is removed");
        assert!(!unlinked.exists(), "a folder no link names is removed");
        assert!(root.join("browser-profile").is_dir());
    }

    #[tokio::test]
    async fn no_browser_is_launched_ahead_while_a_launch_someone_waits_for_runs() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Arc::new(WarmBrowsers::new(Arc::new(WorkerConfig {
            profiles_root: dir.path().to_path_buf(),
            warm_browsers: 1,
            // Every launch fails at once; only whether one starts counts here.
            chromium: dir.path().join("no-chromium"),
            ..WorkerConfig::default()
        })));
        let first = pool.yield_to_launch();
        let second = pool.yield_to_launch();
        pool.refill();
        assert_eq!(pool.launching.load(Ordering::SeqCst), 0);
        drop(first);
        assert_eq!(
            pool.launching.load(Ordering::SeqCst),
            0,
            "one launch still runs"
        );
        // The last one ends: the refill starts (its task runs once this test yields).
        drop(second);
        assert_eq!(pool.launching.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_workspace_folder_that_is_no_link_names_no_warm_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("acme").join("research");
        tokio::fs::create_dir_all(&root).await.unwrap();
        assert_eq!(linked_folder(&root).await, None);
    }
}
