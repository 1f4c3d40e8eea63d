//! One running Chromium for one profile: launched on its persistent `--user-data-dir`, watched
//! for death (the first handler error means the connection is gone), and closed cleanly.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::target::{
    EventAttachedToTarget, EventTargetCrashed, EventTargetCreated, EventTargetDestroyed,
};
use chromiumoxide::handler::HandlerConfig;
use futures::StreamExt;
use nanomuse_proto::{UrlPolicy, WindowChange};
use serde_json::json;

use crate::cdp::{self, SideChannel};
use crate::chromium;
use crate::config::WorkerConfig;
use crate::cookies::{self, CookieSnapshots};
use crate::downloads::Downloads;
use crate::egress::Egress;
use crate::error::{Result, WorkerError};
use crate::page::{PageHandle, PageSpec};

/// Flags every browser gets. The network ones keep Chromium from calling home, which this
/// closed network refuses; the rest is in [`chromium`].
const CHROMIUM_FLAGS: &[&str] = &[
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-gpu",
    "--mute-audio",
    "--hide-scrollbars",
    "--no-default-browser-check",
    // `Page.captureScreenshot` copies a new surface instead of waiting for a forced redraw to
    // be presented: 10–15 ms less per frame, same picture (Playwright launches with it too).
    // It needs the page visible, which ours are: each emulates focus.
    "--enable-features=CDPScreenshotNewSurface",
    // A navigation reuses its frame's renderer-side objects (RenderFrame, widget, compositor)
    // instead of building new ones per document: 10–13% less CPU per navigate + listing +
    // frame over all of Chromium's processes, measured here with 16 agents and alone.
    "--disable-features=RenderDocument",
];

type PageIndex = Arc<Mutex<HashMap<String, Weak<PageHandle>>>>;

pub struct LiveBrowser {
    browser: Browser,
    /// The Chromium process (in a process group of its own; see [`chromium`]).
    process: tokio::process::Child,
    alive: Arc<AtomicBool>,
    pub side: Arc<SideChannel>,
    pub chrome_major: String,
    pub downloads: Arc<Downloads>,
    pub pages: HashMap<String, Arc<PageHandle>>,
    /// Target id → page, for the new-window watcher.
    page_index: PageIndex,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    pub cookies: Arc<CookieSnapshots>,
    /// The proxy every request of this browser goes through, and the URL policy it enforces.
    pub egress: Arc<Egress>,
    /// Targets to close once a page of ours exists: crashed pages, startup tabs not taken.
    /// Closing a browser's last window ends its session, and Chromium then drops the session
    /// cookies (restored ones too), so a browser never goes without a window while it runs.
    close_later: Vec<String>,
    /// The tab the browser started with, which becomes its first page.
    startup_tab: Option<chromiumoxide::Page>,
}

impl LiveBrowser {
    /// Launches Chromium on `profile_dir`, restoring the cookies a crashed predecessor left.
    /// Its requests go through a proxy of its own enforcing `policy` (the session's) under
    /// the worker's floor.
    pub async fn launch(
        config: &WorkerConfig,
        profile_dir: &Path,
        downloads_dir: &Path,
        policy: Option<&UrlPolicy>,
    ) -> Result<Self> {
        tokio::fs::create_dir_all(profile_dir).await?;
        tokio::fs::create_dir_all(downloads_dir).await?;
        // The real folder, not a path through the workspace's link to a folder launched
        // ahead (see `warm`): the orphan check below finds a browser by its command line.
        let profile_dir = &tokio::fs::canonicalize(profile_dir).await?;
        let downloads_dir = &tokio::fs::canonicalize(downloads_dir).await?;
        clear_stale_locks(profile_dir).await;
        // A previous browser's uploads: no page of this one can need them.
        let _ = tokio::fs::remove_dir_all(downloads_dir.with_file_name("uploads")).await;

        let egress =
            Arc::new(Egress::start(config.url_policy.clone(), policy, config.timeout()).await?);
        let proxy_server = format!("--proxy-server=http://{}", egress.proxy_address());
        let mut args: Vec<&str> = CHROMIUM_FLAGS.to_vec();
        args.extend([
            proxy_server.as_str(),
            // Chromium sends loopback straight out, proxy or not, unless told otherwise.
            "--proxy-bypass-list=<-loopback>",
            // WebRTC's UDP would not pass the proxy: only proxied (TCP) connections for it.
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        ]);
        if running_as_root() {
            args.push("--no-sandbox");
        }
        args.extend(config.chromium_args.iter().map(String::as_str));
        // The startup tab opens blank, not on whatever Chromium would restore after a crash
        // (its new-tab page): it becomes the profile's first page.
        args.push("about:blank");
        // How long a command may go unanswered, on chromiumoxide's connection and on ours.
        let command_timeout = config.timeout() + Duration::from_secs(5);
        // Where a launch's time goes, against Chromium's own start (its DevTools line).
        let clock = std::time::Instant::now();
        let started =
            chromium::start(&chromium::real_binary(&config.chromium), profile_dir, &args).await?;
        let devtools_ms = clock.elapsed().as_millis() as u64;
        let mut process = started.child;
        let handler_config = HandlerConfig {
            // chromiumoxide's default tells every page to take any certificate: a network
            // that impersonates a site would be handed the logins typed into it.
            ignore_https_errors: false,
            viewport: None,
            request_timeout: command_timeout,
            ..HandlerConfig::default()
        };
        // Chromium answers a connection only once its start-up lets it, so the two wait
        // together.
        let (connected, side) = tokio::join!(
            Browser::connect_with_config(started.websocket.clone(), handler_config),
            SideChannel::connect(&started.websocket, command_timeout),
        );
        let (browser, mut handler, side) = match (connected, side) {
            (Ok((browser, handler)), Ok(side)) => (browser, handler, Arc::new(side)),
            (Err(error), _) => {
                let _ = process.kill().await;
                return Err(WorkerError::Launch(error.to_string()));
            }
            (_, Err(error)) => {
                let _ = process.kill().await;
                return Err(error);
            }
        };

        let connected_ms = clock.elapsed().as_millis() as u64;
        let alive = Arc::new(AtomicBool::new(true));
        let handler_alive = alive.clone();
        let page_index = PageIndex::default();
        let handler_pages = page_index.clone();
        let handler_task = tokio::spawn(async move {
            // The first error means the socket is gone (a killed browser); polling on would
            // leave in-flight commands hanging, so the handler is dropped.
            while let Some(event) = handler.next().await {
                if let Err(error) = event {
                    tracing::warn!(%error, "chromium connection lost");
                    break;
                }
            }
            handler_alive.store(false, Ordering::SeqCst);
            // The ops in flight on its pages fail now, not at their timeouts.
            let pages: Vec<_> = handler_pages
                .lock()
                .unwrap()
                .values()
                .filter_map(Weak::upgrade)
                .collect();
            for page in pages {
                page.mark_lost(
                    "Chromium stopped (it crashed or was killed); the next action relaunches it \
                     on the same profile, with the page back at its last URL",
                );
            }
        });

        let cookie_snapshot = cookies::snapshot_path(profile_dir);
        // Each a round trip or a few, none needing another: asked for together.
        let set_up = async {
            tokio::try_join!(
                async {
                    let version = browser.version().await?;
                    Ok(version
                        .product
                        .split('/')
                        .nth(1)
                        .and_then(|v| v.split('.').next())
                        .unwrap_or("156")
                        .to_string())
                },
                async {
                    cdp::call_browser(
                        &browser,
                        "Browser.setDownloadBehavior",
                        json!({"behavior": "allow", "downloadPath": downloads_dir,
                            "eventsEnabled": true}),
                    )
                    .await?;
                    Downloads::watch(&browser, downloads_dir).await
                },
                async {
                    let restored = cookies::restore(&browser, &cookie_snapshot).await?;
                    if restored > 0 {
                        tracing::info!(
                            restored,
                            "cookies restored from the profile's snapshot (after an unclean stop \
                             or a move)"
                        );
                    }
                    Ok(())
                },
                async {
                    Ok(
                        watch_new_windows(&browser, side.clone(), page_index.clone())
                            .await
                            .ok(),
                    )
                },
                watch_crashes(&browser, page_index.clone()),
            )
        };
        // The startup tab is taken up meanwhile: its renderer starts on Chromium's own time,
        // and nothing of the set-up needs it.
        let (set_up, (startup_tab, close_later)) =
            tokio::join!(set_up, startup_tabs(&browser, &side));
        let (chrome_major, (downloads, downloads_task), (), new_windows, crashes) = match set_up {
            Ok(parts) => parts,
            Err(error) => {
                let _ = process.kill().await;
                return Err(error);
            }
        };
        tracing::debug!(
            devtools_ms,
            connected_ms,
            set_up_ms = clock.elapsed().as_millis() as u64,
            "chromium started, connected, set up"
        );
        let mut tasks = vec![handler_task, downloads_task, crashes];
        tasks.extend(new_windows);
        Ok(Self {
            browser,
            process,
            alive,
            side: side.clone(),
            chrome_major,
            downloads,
            pages: HashMap::new(),
            page_index,
            tasks,
            cookies: Arc::new(CookieSnapshots::new(side.clone(), cookie_snapshot)),
            egress,
            close_later,
            startup_tab,
        })
    }

    /// What the connection's watcher last saw, without asking the process.
    pub fn is_alive_now(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// False once the connection dropped or the process exited (whichever is seen first).
    pub fn is_alive(&mut self) -> bool {
        self.alive.load(Ordering::SeqCst) && matches!(self.process.try_wait(), Ok(None))
    }

    /// Stops or continues the browser's processes (see [`chromium::set_paused`]).
    pub fn set_paused(&self, paused: bool) {
        chromium::set_paused(&self.process, paused);
    }

    /// Makes the page of `key`: the startup tab or a new one, set up with `spec`'s settings.
    /// A tab whose renderer crashes while it is set up (one placed in a renderer process that
    /// was just killed, as Chromium keeps one started ahead) would answer nothing, so it is
    /// left and another opened, a few times.
    pub async fn create_page(&mut self, key: &str, spec: &PageSpec) -> Result<Arc<PageHandle>> {
        let mut crashes = self.browser.event_listener::<EventTargetCrashed>().await?;
        let mut attempt = 1;
        let page = loop {
            let tab = match self.startup_tab.take() {
                Some(tab) => tab,
                None => self.open_tab().await?,
            };
            let target = tab.target_id().inner().clone();
            let set_up = PageHandle::create(
                tab,
                self.side.clone(),
                self.downloads.clone(),
                self.cookies.clone(),
                self.egress.clone(),
                spec,
                &self.chrome_major,
                0,
            );
            let crashed = async {
                while let Some(event) = crashes.next().await {
                    if event.target_id.inner() == &target {
                        return event;
                    }
                }
                std::future::pending().await
            };
            tokio::select! {
                page = set_up => break page?,
                event = crashed => {
                    tracing::warn!(status = %event.status, attempt,
                        "a new tab's renderer crashed while it was set up");
                    self.close_later.push(target);
                    if attempt == NEW_TAB_ATTEMPTS {
                        return Err(WorkerError::BrowserGone(format!(
                            "the renderer of each of {NEW_TAB_ATTEMPTS} new tabs crashed as it \
                             opened ({}); try again",
                            event.status
                        )));
                    }
                    attempt += 1;
                }
            }
        };
        self.page_index
            .lock()
            .unwrap()
            .insert(page.target_id.clone(), Arc::downgrade(&page));
        self.pages.insert(key.to_string(), page.clone());
        for target in std::mem::take(&mut self.close_later) {
            let closing = self
                .side
                .call(None, "Target.closeTarget", json!({"targetId": target}));
            match tokio::time::timeout(Duration::from_secs(5), closing).await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::debug!(%error, "a page not ours did not close"),
                Err(_) => tracing::warn!("a page not ours did not close in time"),
            }
        }
        Ok(page)
    }

    /// The page the thread of `key` acts on: its own, or the popup it opened (or the popup that
    /// one opened, …) while that is open, made a page of ours here on first use (see
    /// [`crate::page::Windows`]).
    pub async fn front(&mut self, key: &str) -> Option<Arc<PageHandle>> {
        let mut front = self.pages.get(key)?.clone();
        loop {
            let (opened, popup) = {
                let mut windows = front.windows.lock().unwrap();
                if windows
                    .popup
                    .as_ref()
                    .is_some_and(|popup| popup.lost().is_some())
                {
                    windows.popup = None;
                    *front.arrival.lock().unwrap() = WindowChange::Closed;
                }
                (windows.opened.take(), windows.popup.clone())
            };
            if let Some(popup) = popup {
                front = popup;
                continue;
            }
            let Some(target) = opened else {
                return Some(front);
            };
            // The page's mark of the popup it asked for has done its part (see one_tab.js): a
            // settle on it no longer waits for the popup.
            let unmarked = front.evaluate(
                "() => { delete window.__nanomusePopupAt; }",
                &serde_json::Value::Null,
            );
            if let Err(error) = unmarked.await {
                tracing::debug!(%error, "the popup's mark stayed");
            }
            match self.adopt_window(&front, &target).await {
                Ok(popup) => {
                    *popup.arrival.lock().unwrap() = WindowChange::Opened;
                    front.windows.lock().unwrap().popup = Some(popup.clone());
                    front = popup;
                }
                Err(error) => {
                    tracing::info!(%error, "a window the page opened did not become a page");
                    return Some(front);
                }
            }
        }
    }

    /// The page of `key` and the popups open on it, the front last.
    pub fn windows(&self, key: &str) -> Vec<Arc<PageHandle>> {
        let mut windows: Vec<_> = self.pages.get(key).cloned().into_iter().collect();
        while let Some(popup) = windows.last().and_then(|page| {
            let popup = page.windows.lock().unwrap().popup.clone();
            popup.filter(|popup| popup.lost().is_none())
        }) {
            windows.push(popup);
        }
        windows
    }

    /// Makes `target`, a window `opener` opened, a page of ours with the opener's settings.
    async fn adopt_window(&self, opener: &PageHandle, target: &str) -> Result<Arc<PageHandle>> {
        let mut attached = self
            .browser
            .event_listener::<EventAttachedToTarget>()
            .await?;
        let mut destroyed = self
            .browser
            .event_listener::<EventTargetDestroyed>()
            .await?;
        let deadline = tokio::time::Instant::now() + TAB_TAKE_UP_WAIT;
        let targets = [target.to_string()];
        let taking_up = taken_up(&self.browser, &mut attached, &targets, deadline);
        // A window that closes at once (its page was done with it) is not waited for: gone
        // already, or gone while it is taken up.
        let gone = self
            .side
            .call(None, "Target.getTargetInfo", json!({"targetId": target}))
            .await
            .is_err();
        let closing = async {
            if gone {
                return;
            }
            while let Some(event) = destroyed.next().await {
                if event.target_id.inner() == target {
                    return;
                }
            }
            std::future::pending().await
        };
        let pages = tokio::select! {
            pages = taking_up => pages,
            () = closing => Vec::new(),
        };
        let Some(tab) = pages
            .into_iter()
            .find(|page| page.target_id().inner() == target)
        else {
            return Err(WorkerError::BrowserGone(
                "the window closed before it became a page".into(),
            ));
        };
        let spec = PageSpec {
            settings: opener.settings(),
            // Its own: a page brought back after a relaunch is the opener, at its address.
            last_url: Arc::default(),
        };
        let popup = PageHandle::create(
            tab,
            self.side.clone(),
            self.downloads.clone(),
            self.cookies.clone(),
            self.egress.clone(),
            &spec,
            &self.chrome_major,
            opener.popup_depth + 1,
        )
        .await?;
        self.page_index
            .lock()
            .unwrap()
            .insert(popup.target_id.clone(), Arc::downgrade(&popup));
        tracing::info!("a popup the page opened is the thread's page until it closes");
        Ok(popup)
    }

    /// A new blank tab. Opened on our own connection, then waited for until chromiumoxide has
    /// attached to it: chromiumoxide's own `new_page` waits, without a bound, for the blank
    /// document's load, which a tab whose renderer crashed as it opened never has (right after
    /// a renderer was killed, 1 in 5 such tabs hung there for good under load).
    async fn open_tab(&self) -> Result<chromiumoxide::Page> {
        let mut attached = self
            .browser
            .event_listener::<EventAttachedToTarget>()
            .await?;
        let reply = self
            .side
            .call(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await?;
        let target = reply["targetId"]
            .as_str()
            .ok_or_else(|| WorkerError::BrowserGone("Chromium opened no tab".into()))?
            .to_string();
        let deadline = tokio::time::Instant::now() + TAB_TAKE_UP_WAIT;
        let mut pages = taken_up(
            &self.browser,
            &mut attached,
            std::slice::from_ref(&target),
            deadline,
        )
        .await;
        match pages
            .iter()
            .position(|page| page.target_id().inner() == &target)
        {
            Some(at) => Ok(pages.swap_remove(at)),
            None => {
                let _ = self
                    .side
                    .call(None, "Target.closeTarget", json!({"targetId": target}))
                    .await;
                Err(WorkerError::BrowserGone(format!(
                    "Chromium opened a tab that did not become a page within {} s",
                    TAB_TAKE_UP_WAIT.as_secs()
                )))
            }
        }
    }

    /// Whether `key` is the only page of ours open: closing it would close the last window.
    pub fn is_last_page(&self, key: &str) -> bool {
        self.pages.len() == 1 && self.pages.contains_key(key)
    }

    pub async fn close_page(&mut self, key: &str) -> Result<()> {
        if let Some(page) = self.pages.remove(key) {
            self.page_index.lock().unwrap().remove(&page.target_id);
            page.close().await?;
        }
        Ok(())
    }

    /// Forgets the page of `key` whose renderer crashed; its target is closed from the browser
    /// side (the page itself, with no renderer, would not answer `Page.close`) once its
    /// replacement is open.
    pub fn drop_crashed_page(&mut self, key: &str) {
        let Some(page) = self.pages.remove(key) else {
            return;
        };
        self.page_index.lock().unwrap().remove(&page.target_id);
        self.close_later.push(page.target_id.clone());
    }

    /// Closes Chromium cleanly (it writes its cookie database; session cookies end), or kills
    /// it when it does not answer.
    pub async fn close(self) {
        self.close_and(false).await;
    }

    /// Closes Chromium with the session going on: the cookie snapshot is written first and
    /// kept, so the next launch of the profile (on this worker or the one it moves to)
    /// restores every cookie, session ones too.
    pub async fn close_keeping_session(self) {
        if let Err(error) = self.cookies.save().await {
            tracing::warn!(%error, "cookie snapshot before the close failed");
        }
        self.close_and(true).await;
    }

    async fn close_and(mut self, keep_cookie_snapshot: bool) {
        for task in &self.tasks[1..] {
            task.abort();
        }
        self.pages.clear();
        let closed = tokio::time::timeout(Duration::from_secs(10), async {
            self.browser.close().await.ok()?;
            self.process.wait().await.ok()
        })
        .await;
        let clean = matches!(closed, Ok(Some(status)) if status.success());
        if !clean {
            tracing::warn!(
                "chromium did not close cleanly; its cookie snapshot stays for the next launch"
            );
            let _ = self.process.kill().await;
        }
        // Only after a clean close has Chromium written every cookie itself: otherwise the
        // snapshot may be the only copy of a fresh login.
        if clean && !keep_cookie_snapshot {
            self.cookies.discard().await;
        }
        let _ = tokio::fs::remove_dir_all(self.downloads.uploads_dir()).await;
        self.tasks[0].abort();
        self.egress.stop();
    }

    /// Kills a browser whose connection is gone; its cookie snapshot stays for the relaunch.
    pub async fn kill(mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.pages.clear();
        let _ = self.process.kill().await;
        self.egress.stop();
    }
}

/// How many new tabs a page is tried in when their renderers crash as they open.
const NEW_TAB_ATTEMPTS: u32 = 3;

/// How long a tab may take to become a page of chromiumoxide's (attached to, set up).
const TAB_TAKE_UP_WAIT: Duration = Duration::from_secs(5);

/// The tab the browser started with (blank), which becomes its first page, and the targets of
/// any other tab, which are not ours and close once one of ours is open. Chromium has its tabs
/// from the start (asked on our own connection); chromiumoxide makes a page of each once it has
/// attached to it, which is waited for (within a bound: a tab it does not take up in time is
/// left, and the first page opened anew).
async fn startup_tabs(
    browser: &Browser,
    side: &SideChannel,
) -> (Option<chromiumoxide::Page>, Vec<String>) {
    let Ok(mut attached) = browser.event_listener::<EventAttachedToTarget>().await else {
        return (None, Vec::new());
    };
    // Each tab's URL as the browser tells it: chromiumoxide's `Page::url` would wait for its
    // own set-up of the page (ten round trips one after another), which nothing here needs.
    let targets: Vec<(String, bool)> = match side.call(None, "Target.getTargets", json!({})).await {
        Ok(reply) => reply["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|target| target["type"] == "page")
            .filter_map(|target| {
                let id = target["targetId"].as_str()?.to_string();
                Some((id, target["url"] == "about:blank"))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let tabs: Vec<String> = targets.iter().map(|(id, _)| id.clone()).collect();
    let deadline = tokio::time::Instant::now() + TAB_TAKE_UP_WAIT;
    let pages = taken_up(browser, &mut attached, &tabs, deadline).await;
    let mut startup_tab = None;
    let mut close_later = Vec::new();
    for page in pages {
        let blank = targets
            .iter()
            .any(|(id, blank)| *blank && id == page.target_id().inner());
        if blank && startup_tab.is_none() {
            startup_tab = Some(page);
        } else {
            close_later.push(page.target_id().inner().clone());
        }
    }
    (startup_tab, close_later)
}

/// chromiumoxide's pages once it has taken up every one of `targets` (attached to it), or at
/// `deadline` those it has; `attached` was subscribed to before the targets were asked for, so
/// no attach is missed between the two.
async fn taken_up(
    browser: &Browser,
    attached: &mut chromiumoxide::listeners::EventStream<EventAttachedToTarget>,
    targets: &[String],
    deadline: tokio::time::Instant,
) -> Vec<chromiumoxide::Page> {
    loop {
        let pages = browser.pages().await.unwrap_or_default();
        let all_taken_up = targets
            .iter()
            .all(|target| pages.iter().any(|page| page.target_id().inner() == target));
        if all_taken_up
            || !matches!(
                tokio::time::timeout_at(deadline, attached.next()).await,
                Ok(Some(_))
            )
        {
            return pages;
        }
    }
}

/// A window a page of ours opened: a popup that can reach its opener becomes the thread's
/// page while it is open (see [`crate::page::Windows`]); any other (a link that opened a window
/// anyway, a second popup) is closed and its URL loaded in the opener. A popup that closes
/// hands the thread back to its opener.
async fn watch_new_windows(
    browser: &Browser,
    side: Arc<SideChannel>,
    pages: PageIndex,
) -> Result<tokio::task::JoinHandle<()>> {
    let mut created = browser.event_listener::<EventTargetCreated>().await?;
    let mut destroyed = browser.event_listener::<EventTargetDestroyed>().await?;
    Ok(tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                Some(event) = created.next() => event,
                Some(event) = destroyed.next() => {
                    let closed = event.target_id.inner();
                    let open: Vec<_> = pages.lock().unwrap().values().filter_map(Weak::upgrade).collect();
                    for page in open {
                        if page.target_id == *closed && page.is_popup() {
                            page.mark_closed();
                        }
                        // One that closed before it became a page is not waited for.
                        page.forget_window(closed);
                    }
                    continue;
                }
                else => break,
            };
            let info = &event.target_info;
            let Some(opener) = info.opener_id.as_ref() else {
                continue;
            };
            let Some(page) = pages
                .lock()
                .unwrap()
                .get(opener.inner())
                .and_then(Weak::upgrade)
            else {
                continue;
            };
            if info.can_access_opener && page.take_window(info.target_id.inner()) {
                continue;
            }
            let url = info.url.clone();
            let _ = side
                .call(
                    None,
                    "Target.closeTarget",
                    json!({"targetId": info.target_id.inner()}),
                )
                .await;
            if url.starts_with("http://") || url.starts_with("https://") {
                tracing::debug!(%url, "new window loaded in its opener instead");
                let _ = page.cdp("Page.navigate", json!({"url": url})).await;
            }
        }
    }))
}

/// A page whose renderer crashed (killed, out of memory, `Page.crash`) is marked lost: the op
/// in flight on it fails at once with the reason, and the next op replaces it at its last URL.
async fn watch_crashes(browser: &Browser, pages: PageIndex) -> Result<tokio::task::JoinHandle<()>> {
    let mut crashed = browser.event_listener::<EventTargetCrashed>().await?;
    Ok(tokio::spawn(async move {
        while let Some(event) = crashed.next().await {
            let page = pages
                .lock()
                .unwrap()
                .get(event.target_id.inner())
                .and_then(Weak::upgrade);
            if let Some(page) = page {
                tracing::warn!(status = %event.status, code = event.error_code, "page crashed");
                page.mark_lost(format!(
                    "the page crashed (its renderer {}, code {}); the next action reloads it at \
                     its last URL",
                    event.status, event.error_code
                ));
            }
        }
    }))
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// A Chromium killed with its profile open leaves `Singleton*` files naming its pid; an
/// orphaned Chromium of a killed worker may even still hold the profile. Both are ours to end.
async fn clear_stale_locks(profile_dir: &Path) {
    let lock = profile_dir.join("SingletonLock");
    if let Ok(target) = tokio::fs::read_link(&lock).await {
        let target = target.to_string_lossy().to_string();
        if let Some(pid) = target
            .rsplit('-')
            .next()
            .and_then(|p| p.parse::<u32>().ok())
        {
            let cmdline = tokio::fs::read(format!("/proc/{pid}/cmdline"))
                .await
                .unwrap_or_default();
            let needle = profile_dir.to_string_lossy().to_string();
            if String::from_utf8_lossy(&cmdline).contains(&needle) {
                tracing::warn!(
                    pid,
                    "ending an orphaned chromium that still holds the profile"
                );
                let _ = tokio::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status()
                    .await;
                for _ in 0..50 {
                    if tokio::fs::metadata(format!("/proc/{pid}")).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
    for name in ["SingletonLock", "SingletonSocket", "SingletonCookie"] {
        let _ = tokio::fs::remove_file(profile_dir.join(name)).await;
    }
}
