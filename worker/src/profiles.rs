//! The worker's profiles: one browser per tenant + workspace, launched on first use,
//! relaunched after a crash, closed when idle. Pages are remembered by key with their settings
//! and last URL, so a relaunched browser brings them back where they were. A profile is
//! exported (its browser closed, its folder streamed away) when the worker is drained, and
//! imported on the worker the workspace moves to.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nanomuse_proto::{Session, UrlPolicy};

use crate::browser::LiveBrowser;
use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::page::{PageHandle, PageSpec};
use crate::warm::WarmBrowsers;

/// A workspace's folder holds its browser profile and its downloads under these names.
pub const BROWSER_PROFILE: &str = "browser-profile";
pub const DOWNLOADS: &str = "downloads";

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProfileKey {
    pub tenant: String,
    pub workspace: String,
}

fn checked_name<'a>(what: &str, value: &'a str) -> Result<&'a str> {
    nanomuse_common::check_name(&format!("session {what}"), value)
        .map(|()| value)
        .map_err(WorkerError::InvalidArgument)
}

/// The profile of `tenant` + `workspace`, both checked as folder names.
pub fn profile_key(tenant: &str, workspace: &str) -> Result<ProfileKey> {
    Ok(ProfileKey {
        tenant: checked_name("tenant", tenant)?.to_string(),
        workspace: checked_name("workspace", workspace)?.to_string(),
    })
}

/// The profile and page key named by a request's session.
pub fn parse_session(session: Option<&Session>) -> Result<(ProfileKey, String)> {
    let session = session.ok_or_else(|| WorkerError::invalid("the request has no session"))?;
    let key = ProfileKey {
        tenant: checked_name("tenant", &session.tenant)?.to_string(),
        workspace: checked_name("workspace", &session.workspace)?.to_string(),
    };
    let page = checked_name("page", &session.page)?.to_string();
    Ok((key, page))
}

#[derive(Default)]
struct ProfileState {
    live: Option<LiveBrowser>,
    specs: HashMap<String, PageSpec>,
}

pub struct Profile {
    pub key: ProfileKey,
    /// `<profiles_root>/<tenant>/<workspace>`: the browser profile and the downloads.
    root: PathBuf,
    dir: PathBuf,
    downloads_dir: PathBuf,
    state: tokio::sync::Mutex<ProfileState>,
    last_used: Mutex<Instant>,
    in_flight: AtomicUsize,
    /// Exported for a move: no op runs on it here until it is imported here again.
    moved: AtomicBool,
}

impl Profile {
    fn refuse_if_moved(&self) -> Result<()> {
        if self.moved.load(Ordering::SeqCst) {
            return Err(WorkerError::Moved(format!(
                "workspace {:?} was moved off this worker (it is draining); the controller \
                 sends its actions to the worker that has its profile now",
                self.key.workspace
            )));
        }
        Ok(())
    }
}

/// Marks a profile busy for the life of an op, so the idle reaper leaves it alone.
pub struct InUse(Arc<Profile>);

impl Drop for InUse {
    fn drop(&mut self) {
        *self.0.last_used.lock().unwrap() = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long the browsers launched ahead stay stopped after a launch someone waited for ended:
/// about the first action on the new browser (its page, a navigation, the listing, a frame).
const YIELD_AFTER_LAUNCH: Duration = Duration::from_secs(1);

pub struct Pool {
    config: Arc<WorkerConfig>,
    profiles: Mutex<HashMap<ProfileKey, Arc<Profile>>>,
    /// Browsers launched ahead for workspaces that have no profile yet.
    pub warm: Arc<WarmBrowsers>,
}

impl Pool {
    pub fn new(config: Arc<WorkerConfig>) -> Self {
        Self {
            warm: Arc::new(WarmBrowsers::new(config.clone())),
            config,
            profiles: Mutex::default(),
        }
    }

    fn profile(&self, key: &ProfileKey) -> Arc<Profile> {
        let mut profiles = self.profiles.lock().unwrap();
        profiles
            .entry(key.clone())
            .or_insert_with(|| {
                let root = self
                    .config
                    .profiles_root
                    .join(&key.tenant)
                    .join(&key.workspace);
                Arc::new(Profile {
                    key: key.clone(),
                    dir: root.join(BROWSER_PROFILE),
                    downloads_dir: root.join(DOWNLOADS),
                    root,
                    state: tokio::sync::Mutex::default(),
                    last_used: Mutex::new(Instant::now()),
                    in_flight: AtomicUsize::new(0),
                    moved: AtomicBool::new(false),
                })
            })
            .clone()
    }

    fn in_use(profile: &Arc<Profile>) -> InUse {
        profile.in_flight.fetch_add(1, Ordering::SeqCst);
        InUse(profile.clone())
    }

    /// The profile's running browser, launched or relaunched as needed, enforcing `session`'s
    /// URL policy from now on (every op carries it; the latest one counts).
    async fn live<'a>(
        &self,
        profile: &Profile,
        slot: &'a mut Option<LiveBrowser>,
        session: Option<&Session>,
    ) -> Result<&'a mut LiveBrowser> {
        let policy = session.and_then(|s| s.url_policy.as_ref());
        if slot.as_mut().is_some_and(|live| !live.is_alive()) {
            tracing::warn!(tenant = %profile.key.tenant, workspace = %profile.key.workspace,
                "chromium died; relaunching on the same profile");
            if let Some(dead) = slot.take() {
                dead.kill().await;
            }
        }
        if slot.is_none() {
            *slot = Some(self.launch(profile, policy).await?);
        }
        let live = slot.as_mut().expect("just launched");
        live.egress.set_policy(policy);
        Ok(live)
    }

    /// A browser for `profile`: one launched ahead when the workspace has no folder yet (the
    /// browser's folder becomes the workspace's), else Chromium started on its profile.
    async fn launch(&self, profile: &Profile, policy: Option<&UrlPolicy>) -> Result<LiveBrowser> {
        let fresh = matches!(tokio::fs::symlink_metadata(&profile.root).await,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound);
        if fresh && let Some(live) = self.warm.take(&profile.key, &profile.root).await {
            tracing::info!(tenant = %profile.key.tenant, workspace = %profile.key.workspace,
                "a browser launched ahead handed over");
            return Ok(live);
        }
        let started = Instant::now();
        let yielding = self.warm.yield_to_launch();
        let live =
            LiveBrowser::launch(&self.config, &profile.dir, &profile.downloads_dir, policy).await?;
        // The action that asked for the browser goes on with its page, navigation and listing:
        // the pool yields through that too.
        tokio::spawn(async move {
            tokio::time::sleep(YIELD_AFTER_LAUNCH).await;
            drop(yielding);
        });
        tracing::info!(tenant = %profile.key.tenant, workspace = %profile.key.workspace,
            elapsed_ms = started.elapsed().as_millis() as u64, "chromium launched");
        crate::metrics::metrics().launches.inc();
        Ok(live)
    }

    /// Opens (or re-profiles) the page of `session`; with `must_exist`, only an open page.
    pub async fn open(
        &self,
        session: Option<&Session>,
        must_exist: bool,
        settings: impl FnOnce(&str) -> Result<crate::emulation::PageSettings>,
    ) -> Result<(Arc<PageHandle>, InUse)> {
        let (key, page_key) = parse_session(session)?;
        let profile = self.profile(&key);
        let in_use = Self::in_use(&profile);
        let mut state = profile.state.lock().await;
        profile.refuse_if_moved()?;
        let state = &mut *state;
        if must_exist && !state.specs.contains_key(&page_key) {
            return Err(WorkerError::NotFound(format!(
                "page {page_key:?} of workspace {:?} is not open; open it first",
                key.workspace
            )));
        }
        let live = self.live(&profile, &mut state.live, session).await?;
        let settings = settings(&live.chrome_major)?;
        Self::drop_lost_page(live, &page_key).await;
        if must_exist && !live.pages.contains_key(&page_key) {
            let spec = state.specs.get(&page_key).cloned().expect("checked above");
            self.bring_back(live, &page_key, &spec).await?;
        }
        if let Some(page) = live.front(&page_key).await {
            // A popup open on it is re-profiled with it: the thread comes back to its opener.
            for window in live.windows(&page_key) {
                crate::emulation::apply(&window, &settings, &live.chrome_major).await?;
                *window.settings.lock().unwrap() = settings.clone();
            }
            if let Some(spec) = state.specs.get_mut(&page_key) {
                spec.settings = settings;
            }
            return Ok((page, in_use));
        }
        let spec = PageSpec {
            settings,
            last_url: Arc::default(),
        };
        let page = live.create_page(&page_key, &spec).await?;
        state.specs.insert(page_key, spec);
        Ok((page, in_use))
    }

    /// The open page of `session`. A page whose browser was closed or crashed is brought back
    /// with its settings at its last URL.
    pub async fn page(&self, session: Option<&Session>) -> Result<(Arc<PageHandle>, InUse)> {
        let (key, page_key) = parse_session(session)?;
        let profile = self.profile(&key);
        let in_use = Self::in_use(&profile);
        let mut state = profile.state.lock().await;
        profile.refuse_if_moved()?;
        let state = &mut *state;
        let Some(spec) = state.specs.get(&page_key).cloned() else {
            return Err(WorkerError::NotFound(format!(
                "page {page_key:?} of workspace {:?} is not open; open it first",
                key.workspace
            )));
        };
        let live = self.live(&profile, &mut state.live, session).await?;
        Self::drop_lost_page(live, &page_key).await;
        if let Some(page) = live.front(&page_key).await {
            return Ok((page, in_use));
        }
        let page = self.bring_back(live, &page_key, &spec).await?;
        Ok((page, in_use))
    }

    /// Closes the page of `key` if its renderer crashed, so the caller makes a new one.
    async fn drop_lost_page(live: &mut LiveBrowser, key: &str) {
        let Some(why) = live.pages.get(key).and_then(|page| page.lost()) else {
            return;
        };
        tracing::warn!(page = key, why, "replacing a crashed page");
        live.drop_crashed_page(key);
    }

    /// Makes the page of `key` anew (after a relaunch or a crash), at its last URL, loaded —
    /// waiting at most a few seconds, as the profile's other pages wait meanwhile: a page that
    /// does not load by then is the op's to find.
    async fn bring_back(
        &self,
        live: &mut LiveBrowser,
        key: &str,
        spec: &PageSpec,
    ) -> Result<Arc<PageHandle>> {
        let page = live.create_page(key, spec).await?;
        let last_url = spec.last_url.lock().unwrap().clone();
        if let Some(url) =
            last_url.filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        {
            tracing::info!(%url, "page brought back");
            let loading = async {
                let reply = page
                    .cdp("Page.navigate", serde_json::json!({"url": url}))
                    .await?;
                if let Some(loader) = reply.get("loaderId").and_then(|l| l.as_str()) {
                    page.tracker.loaded(loader).await;
                }
                Ok::<_, WorkerError>(())
            };
            let bound = self.config.timeout().min(std::time::Duration::from_secs(5));
            match tokio::time::timeout(bound, loading).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!(%error, "the page did not come back"),
                Err(_) => tracing::warn!("the page did not load again in time"),
            }
        }
        Ok(page)
    }

    /// Closes the page of `session`; the profile and its cookies stay.
    pub async fn close(&self, session: Option<&Session>) -> Result<()> {
        let (key, page_key) = parse_session(session)?;
        let profile = self.profile(&key);
        let _in_use = Self::in_use(&profile);
        let mut state = profile.state.lock().await;
        profile.refuse_if_moved()?;
        if state.specs.remove(&page_key).is_none() {
            return Err(WorkerError::NotFound(format!(
                "page {page_key:?} of workspace {:?} is not open",
                key.workspace
            )));
        }
        if state
            .live
            .as_ref()
            .is_some_and(|live| live.is_last_page(&page_key))
        {
            // Its last window closing would end the browser's session and drop the session
            // cookies: the browser closes instead, keeping them for its next launch.
            let live = state.live.take().expect("checked above");
            live.close_keeping_session().await;
        } else if let Some(live) = state.live.as_mut().filter(|live| live.is_alive_now()) {
            live.close_page(&page_key).await?;
            live.cookies.save().await?;
        }
        Ok(())
    }

    /// Closes the browsers that have had no op for the idle timeout; profiles stay on disk.
    pub async fn close_idle(&self) {
        let idle = self.config.idle_timeout();
        let profiles: Vec<_> = self.profiles.lock().unwrap().values().cloned().collect();
        for profile in profiles {
            let quiet = profile.in_flight.load(Ordering::SeqCst) == 0
                && profile.last_used.lock().unwrap().elapsed() >= idle;
            if !quiet {
                continue;
            }
            let Ok(mut state) = profile.state.try_lock() else {
                continue;
            };
            if let Some(live) = state.live.take() {
                tracing::info!(tenant = %profile.key.tenant, workspace = %profile.key.workspace,
                    "closing idle chromium");
                live.close().await;
            }
        }
    }

    /// How many browsers and pages are live (a profile busy launching is not waited for).
    pub fn counts(&self) -> (usize, usize) {
        let profiles: Vec<_> = self.profiles.lock().unwrap().values().cloned().collect();
        let mut browsers = 0;
        let mut pages = 0;
        for profile in profiles {
            let Ok(state) = profile.state.try_lock() else {
                continue;
            };
            if let Some(live) = &state.live {
                browsers += 1;
                pages += live.pages.len();
            }
        }
        (browsers, pages)
    }

    /// Closes every browser cleanly (on shutdown), all at once: each close is bounded, so
    /// this takes as long as the slowest one.
    pub async fn close_all(&self) {
        let profiles: Vec<_> = self.profiles.lock().unwrap().values().cloned().collect();
        let workspaces =
            futures::future::join_all(profiles.into_iter().map(|profile| async move {
                if let Some(live) = profile.state.lock().await.live.take() {
                    live.close().await;
                }
            }));
        futures::future::join(workspaces, self.warm.close_all()).await;
    }

    /// Readies the profile of `key` to leave this worker: from now on its ops are refused,
    /// the ones under way get a few seconds to end, and its browser is closed with every
    /// cookie kept in the profile's snapshot (see [`LiveBrowser::close_keeping_session`]). Returns
    /// the workspace's folder, whose contents are then the whole profile. NOT_FOUND when this
    /// worker has no such profile on disk.
    pub async fn export(&self, key: &ProfileKey) -> Result<PathBuf> {
        let profile = self.profile(key);
        if !tokio::fs::try_exists(&profile.dir).await.unwrap_or(false) {
            return Err(WorkerError::NotFound(format!(
                "workspace {:?} of tenant {:?} has no profile on this worker",
                key.workspace, key.tenant
            )));
        }
        profile.moved.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + OPS_TO_END;
        while profile.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut state = profile.state.lock().await;
        state.specs.clear();
        if let Some(live) = state.live.take() {
            live.close_keeping_session().await;
        }
        tracing::info!(tenant = %key.tenant, workspace = %key.workspace, "profile exported");
        Ok(profile.root.clone())
    }

    /// A new folder beside the workspace's, for a profile being imported.
    pub fn staging_dir(&self, key: &ProfileKey) -> PathBuf {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        self.config.profiles_root.join(&key.tenant).join(format!(
            ".incoming-{}-{}-{}",
            key.workspace,
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Makes `unpacked` (a folder from [`Pool::staging_dir`]) the profile of `key`, in place
    /// of whatever this worker had for it; the next op launches its browser there.
    pub async fn install(&self, key: &ProfileKey, unpacked: &Path) -> Result<()> {
        let profile = self.profile(key);
        let mut state = profile.state.lock().await;
        state.specs.clear();
        if let Some(live) = state.live.take() {
            live.close().await;
        }
        let old = profile.root.with_file_name(format!(
            ".replaced-{}-{}",
            key.workspace,
            std::process::id()
        ));
        // A folder handed over by the warm pool goes with the link that names it.
        let linked = crate::warm::linked_folder(&profile.root).await;
        if tokio::fs::symlink_metadata(&profile.root).await.is_ok() {
            let _ = tokio::fs::remove_dir_all(&old).await;
            tokio::fs::rename(&profile.root, &old).await?;
        }
        tokio::fs::rename(unpacked, &profile.root).await?;
        let _ = tokio::fs::remove_dir_all(&old).await;
        if let Some(linked) = linked {
            let _ = tokio::fs::remove_dir_all(&linked).await;
        }
        profile.moved.store(false, Ordering::SeqCst);
        tracing::info!(tenant = %key.tenant, workspace = %key.workspace, "profile imported");
        Ok(())
    }
}

/// How long an export waits for the ops already under way on the profile.
const OPS_TO_END: Duration = Duration::from_secs(5);
