//! Watches one page's network, navigations and loads, so `settle` knows when the page is
//! quiet, navigations know when their document has loaded (and its status), a relaunched
//! browser knows where each page was, and the URL policy's refusals (made by the browser's
//! proxy, which serves every page of the browser) reach the page that asked.
//!
//! Its events come from the page's session on our own CDP connection ([`crate::cdp::SideChannel`]),
//! handed over by the connection's reader before it reads on: a reply to any later command on
//! that session (the settle's look at the page, say) finds every event the page sent before it
//! already counted. (On chromiumoxide's connection they came beside our replies, in no
//! order with them: a request a click started could be counted after the settle had found the
//! page quiet.)
//!
//! Two kinds of traffic keep a page busy a while after they end, because what follows them
//! comes after a gap with nothing in flight:
//! - A WebSocket's: apps that draw from a socket (Streamlit's page, a notebook cell's output)
//!   get their content over it after the action, with gaps while the server works. A socket
//!   that spoke within [`SOCKET_LINGER`] keeps the page busy.
//! - A request the page made (not the browser for it: a navigation) that ends after the
//!   document's load: an app that builds itself after its load (Gradio fetches its config,
//!   then its layout module, works on them, then asks for its components, 80–130 ms after the
//!   last of those ended on an idle machine) is not done when its network first goes quiet.
//!   Such a request keeps the page busy for [`LOAD_LINGER`].
//!
//! Only what happens within [`WINDOW`] of an action (or a load) counts, so a socket that never
//! stops (a ticker) or a page that polls delays an action by at most about that much.
//!
//! What the browser asks for its own use of the page (its icon) is no traffic of the page's.
//!
//! A request in flight since well before the action began ([`HELD_OPEN`]) is not the action's:
//! a long poll (a dev server's live reload, a chat's) or an event stream the page keeps open
//! would otherwise hold every action to the settle's bound.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;

/// How many hosts a page remembers having asked for between two reports of refusals.
const REQUESTED_KEPT: usize = 512;
/// How many of its latest main-frame documents a page remembers (their loads and statuses).
const DOCUMENTS_KEPT: usize = 8;
/// How long a page stays busy after its WebSocket spoke: longer than the pause of a server
/// that answers a page's message in parts (Streamlit's session, then its script's output,
/// 200 ms apart on a trivial script).
const SOCKET_LINGER: Duration = Duration::from_millis(500);
/// How long a page stays busy after a request of its document ended after the document's load.
const LOAD_LINGER: Duration = Duration::from_millis(250);
/// How long after an action (or a load) lingering traffic still counts as what the action
/// started.
const WINDOW: Duration = Duration::from_millis(1500);
/// How long a request begun before an action must have been in flight for the action's settle
/// not to wait for it.
const HELD_OPEN: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
struct Requests {
    /// Each request in flight: whether the page itself made it (its parser or its scripts)
    /// rather than the browser for it (a navigation it was told to make), and when it began.
    in_flight: HashMap<String, (bool, Instant)>,
    /// A request whose end came before its start (the browser and the renderer report parts of
    /// one request each, and their messages may cross).
    finished_early: HashSet<String>,
    /// Requests the browser makes for its own use of the page (see [`is_the_browsers_own`]),
    /// whose ends are no activity either.
    browsers_own: HashSet<String>,
}

/// What [`NetworkTracker`] knows of a page right now.
#[derive(Debug, Clone, Copy)]
pub struct NetworkSnapshot {
    /// Requests in flight, and one more while traffic lingers (see the module's header).
    pub in_flight: usize,
    pub last_activity: Instant,
    /// Until when lingering traffic keeps the page busy, if it does now.
    pub lingering_until: Option<Instant>,
}

/// How far the page's main frame has come: counts that only grow, so a waiter compares them
/// with those it took before it acted.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Progress {
    /// New documents committed.
    pub committed: u64,
    /// Navigations within the document (a #fragment, `history.pushState`).
    pub same_document: u64,
    /// Documents loaded (`load` fired).
    pub loads: u64,
}

/// One main-frame document, by its loader.
#[derive(Debug)]
struct Document {
    loader: String,
    status: u32,
    loaded: bool,
    /// Shown in the main frame once. One shown and then replaced by another before its load
    /// (a script that moved on as it loaded, `location.href = …` on `load`) may never have its
    /// load told by Chromium; one never shown was cancelled, and is not done.
    committed: bool,
    /// Why the egress proxy could not reach the site, when the document is its error page
    /// ([`crate::egress::UNREACHABLE_HEADER`]).
    unreachable: Option<String>,
    /// Its URL once shown, without a fragment.
    url: Option<String>,
    /// The URL of the document shown before it, which it replaced.
    replaced_url: Option<String>,
    /// The address of the script (or document) whose navigation asked for it, when a script
    /// or the parser did, without a fragment.
    initiator: Option<String>,
    /// Replaced before its load by a navigation the document *it* replaced had asked for (see
    /// [`NetworkTracker::lost_to_the_document_it_replaced`]); told when that one commits, as
    /// the documents it takes are the latest then.
    taken_over: bool,
    /// Its request failed (or was cancelled) before it was shown.
    failed: bool,
}

/// A document kept remembered (see [`NetworkTracker::pin`]) until this is dropped.
pub struct Pinned<'a> {
    tracker: &'a NetworkTracker,
    loader: String,
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        let mut pinned = self.tracker.pinned.lock().unwrap();
        if let Some(at) = pinned.iter().position(|loader| *loader == self.loader) {
            pinned.remove(at);
        }
    }
}

#[derive(Debug)]
pub struct NetworkTracker {
    requests: Mutex<Requests>,
    last_activity: Mutex<Instant>,
    /// Until when traffic that lingers (see the module's header) keeps the page busy.
    lingering_until: Mutex<Option<Instant>>,
    /// When the main frame's current document loaded, once it has.
    loaded_at: Mutex<Option<Instant>>,
    /// When the page's latest action began (an input), or its latest document loaded.
    action_mark: Mutex<Instant>,
    /// The main frame's URL after its last committed navigation.
    last_url: Arc<Mutex<Option<String>>>,
    /// The `host:port`s the page requested since its refusals were last taken.
    requested: Mutex<HashSet<String>>,
    progress: Mutex<Progress>,
    documents: Mutex<VecDeque<Document>>,
    /// Documents a navigation waits for: kept however many come after them (a page that moves
    /// itself on endlessly commits dozens while a loaded machine runs the waiter).
    pinned: Mutex<Vec<String>>,
    /// The loader of the main frame's latest committed document.
    current_loader: Mutex<Option<String>>,
    /// Bumped on every event, so waiters wake without polling.
    changes: watch::Sender<u64>,
    main_frame: String,
}

impl NetworkTracker {
    /// A tracker of the page whose main frame is `main_frame`; it learns what
    /// [`Self::on_event`] is given.
    pub fn new(main_frame: String, last_url: Arc<Mutex<Option<String>>>) -> Self {
        Self {
            requests: Mutex::default(),
            last_activity: Mutex::new(Instant::now()),
            lingering_until: Mutex::default(),
            loaded_at: Mutex::default(),
            action_mark: Mutex::new(Instant::now()),
            last_url,
            requested: Mutex::default(),
            progress: Mutex::default(),
            documents: Mutex::default(),
            pinned: Mutex::default(),
            current_loader: Mutex::default(),
            changes: watch::channel(0).0,
            main_frame,
        }
    }

    /// The commands that make a session send the events this tracker reads.
    pub fn enabling() -> [(&'static str, Value); 3] {
        [
            ("Network.enable", json!({})),
            ("Page.enable", json!({})),
            ("Page.setLifecycleEventsEnabled", json!({"enabled": true})),
        ]
    }

    /// Takes one event of the page's session into account.
    pub fn on_event(&self, method: &str, params: &Value) {
        let text = |pointer: &str| params.pointer(pointer).and_then(Value::as_str);
        let in_main_frame = || text("/frameId") == Some(self.main_frame.as_str());
        match method {
            "Network.requestWillBeSent" => {
                if let Some(url) = text("/request/url") {
                    self.on_requested(url);
                }
                // A dedicated worker's own script (its document is itself) is asked for here,
                // but its end is told to the worker's target, never to this session: counted, it
                // would keep the page busy to every settle's bound.
                let workers_script = text("/type") == Some("Script")
                    && text("/documentURL").is_some()
                    && text("/documentURL") == text("/request/url");
                if let (Some(id), false) = (text("/requestId"), workers_script) {
                    if is_the_browsers_own(params) {
                        self.requests
                            .lock()
                            .unwrap()
                            .browsers_own
                            .insert(id.to_string());
                    } else {
                        self.on_start(id, text("/initiator/type") != Some("other"));
                    }
                }
                if text("/type") == Some("Document")
                    && in_main_frame()
                    && let Some(loader) = text("/loaderId")
                {
                    let initiator = text("/initiator/url")
                        .or_else(|| text("/initiator/stack/callFrames/0/url"))
                        .map(without_fragment);
                    self.document(loader, |document| document.initiator = initiator);
                }
            }
            "Network.webSocketCreated" => {
                if let Some(url) = text("/url") {
                    self.on_requested(url);
                }
                self.on_socket_spoke();
            }
            "Network.webSocketWillSendHandshakeRequest"
            | "Network.webSocketHandshakeResponseReceived"
            | "Network.webSocketFrameSent"
            | "Network.webSocketFrameReceived" => self.on_socket_spoke(),
            "Network.loadingFinished" | "Network.loadingFailed" => {
                if let Some(id) = text("/requestId") {
                    self.on_end(id);
                    // A document's request is its loader's: one that failed (cancelled) will
                    // never be shown.
                    if method == "Network.loadingFailed" {
                        self.known_document(id, |document| document.failed = true);
                    }
                }
            }
            "Network.responseReceived" if text("/type") == Some("Document") && in_main_frame() => {
                let status = params
                    .pointer("/response/status")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0) as u32;
                let unreachable = params
                    .pointer("/response/headers")
                    .and_then(Value::as_object)
                    .and_then(|headers| {
                        headers.iter().find(|(name, _)| {
                            name.eq_ignore_ascii_case(crate::egress::UNREACHABLE_HEADER)
                        })
                    })
                    .and_then(|(_, why)| why.as_str())
                    .map(str::to_string);
                if let Some(loader) = text("/loaderId") {
                    self.document(loader, |document| {
                        document.status = status;
                        document.unreachable = unreachable;
                    });
                }
                self.notify();
            }
            "Page.frameNavigated" if params.pointer("/frame/parentId").is_none() => {
                self.on_main_frame_navigated(
                    text("/frame/url").unwrap_or_default(),
                    text("/frame/loaderId"),
                );
            }
            "Page.navigatedWithinDocument" if in_main_frame() => {
                self.progress.lock().unwrap().same_document += 1;
                self.notify();
            }
            // Lifecycle events wake waiters but are no network activity: `networkIdle` itself
            // arrives half a second after the last request.
            "Page.lifecycleEvent" => {
                if text("/name") == Some("load") && in_main_frame() {
                    self.on_main_frame_loaded(text("/loaderId").unwrap_or_default());
                }
                self.notify();
            }
            _ => {}
        }
    }

    /// Marks the start of an action on the page: requests before it are not the action's.
    pub fn mark_action(&self) {
        *self.action_mark.lock().unwrap() = Instant::now();
    }

    /// Whether no request is in flight and none started or ended since the latest
    /// [`Self::mark_action`] or load: what the action did then needed no response, not even
    /// one that ended before a settle began (whose script may not have run yet).
    pub fn quiet_since_action(&self) -> bool {
        self.snapshot().in_flight == 0
            && *self.last_activity.lock().unwrap() <= *self.action_mark.lock().unwrap()
    }

    pub fn progress(&self) -> Progress {
        *self.progress.lock().unwrap()
    }

    /// Waits until `check` finds what it looks for in the tracker. (Bounded by the caller:
    /// a page whose browser died sends nothing more.)
    pub async fn until<T>(&self, mut check: impl FnMut(&Self) -> Option<T>) -> T {
        let mut changes = self.subscribe();
        loop {
            changes.borrow_and_update();
            if let Some(found) = check(self) {
                return found;
            }
            // The sender is this tracker's own: it outlives the borrow of `self`.
            let _ = changes.changed().await;
        }
    }

    /// Waits until the document of `loader` has loaded, or another has replaced it; its HTTP
    /// status (0 when none came, as for a `data:` URL), and why the site could not be reached
    /// when the document is the egress proxy's page saying so.
    pub async fn loaded(&self, loader: &str) -> (u32, Option<String>) {
        self.until(|tracker| {
            let shown_now = tracker.current_loader.lock().unwrap().clone();
            let replaced = |document: &Document| {
                document.committed && shown_now.as_deref() != Some(document.loader.as_str())
            };
            let documents = tracker.documents.lock().unwrap();
            documents
                .iter()
                .find(|document| {
                    document.loader == loader && (document.loaded || replaced(document))
                })
                .map(|document| (document.status, document.unreachable.clone()))
        })
        .await
    }

    /// Whether the document of `loader` was replaced, before its load, by a navigation the
    /// document it replaced had asked for: that document's script ran on while ours committed
    /// over it (Chromium lets its `location.replace` through after our commit). Ours then lost
    /// to the page it left, not to a navigation of its own (a script that moves on as it loads).
    pub fn lost_to_the_document_it_replaced(&self, loader: &str) -> bool {
        let documents = self.documents.lock().unwrap();
        documents
            .iter()
            .any(|document| document.loader == loader && document.taken_over && !document.loaded)
    }

    /// Whether the document of `loader` (ours, loaded) has a navigation coming after it that
    /// the page it replaced had asked for: that page's script asked as ours committed, and
    /// Chromium, on a loaded machine, let the request through even after our load. Left
    /// alone, it would replace ours with the page's next step a moment after the reply.
    pub fn left_pages_navigation_follows(&self, loader: &str) -> bool {
        let documents = self.documents.lock().unwrap();
        let Some(at) = documents
            .iter()
            .position(|document| document.loader == loader)
        else {
            return false;
        };
        let ours = &documents[at];
        let Some(left) = ours
            .replaced_url
            .as_ref()
            .filter(|left| ours.url.as_ref() != Some(left))
        else {
            return false;
        };
        documents.iter().skip(at + 1).any(|document| {
            !document.committed && !document.failed && document.initiator.as_ref() == Some(left)
        })
    }

    /// Whether the main frame shows the document of `loader`.
    pub fn shows(&self, loader: &str) -> bool {
        self.current_loader.lock().unwrap().as_deref() == Some(loader)
    }

    /// Keeps the document of `loader` remembered while the guard lives (see [`Self::pinned`]).
    pub fn pin(&self, loader: &str) -> Pinned<'_> {
        self.pinned.lock().unwrap().push(loader.to_string());
        Pinned {
            tracker: self,
            loader: loader.to_string(),
        }
    }

    /// The HTTP status of the document the main frame shows now; 0 when no response was seen
    /// for it.
    pub fn current_status(&self) -> u32 {
        let Some(loader) = self.current_loader.lock().unwrap().clone() else {
            return 0;
        };
        self.status_of(&loader)
    }

    /// The HTTP status the document of `loader` was answered with; 0 when none was seen.
    pub fn status_of(&self, loader: &str) -> u32 {
        let documents = self.documents.lock().unwrap();
        documents
            .iter()
            .find(|document| document.loader == loader)
            .map_or(0, |document| document.status)
    }

    /// Waits until a document loads after `seen` had (see [`Progress::loads`]).
    pub async fn next_load(&self, seen: &Progress) {
        self.until(|tracker| (tracker.progress().loads > seen.loads).then_some(()))
            .await
    }

    fn notify(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn touch(&self) {
        *self.last_activity.lock().unwrap() = Instant::now();
        self.notify();
    }

    fn on_start(&self, id: &str, by_the_page: bool) {
        {
            let mut requests = self.requests.lock().unwrap();
            if !requests.finished_early.remove(id) {
                requests
                    .in_flight
                    .insert(id.to_string(), (by_the_page, Instant::now()));
            }
        }
        self.touch();
    }

    fn on_end(&self, id: &str) {
        let by_the_page = {
            let mut requests = self.requests.lock().unwrap();
            if requests.browsers_own.remove(id) {
                return;
            }
            let started = requests.in_flight.remove(id);
            if started.is_none() {
                requests.finished_early.insert(id.to_string());
            }
            started.is_some_and(|(by_the_page, _)| by_the_page)
        };
        let loaded_at = *self.loaded_at.lock().unwrap();
        if by_the_page && loaded_at.is_some_and(|loaded| loaded.elapsed() <= WINDOW) {
            self.linger(LOAD_LINGER);
        }
        self.touch();
    }

    fn on_socket_spoke(&self) {
        if self.action_mark.lock().unwrap().elapsed() > WINDOW {
            return;
        }
        self.linger(SOCKET_LINGER);
        self.touch();
    }

    /// Keeps the page busy for `how_long` from now, or longer if it already is.
    fn linger(&self, how_long: Duration) {
        let until = Instant::now() + how_long;
        let mut lingering = self.lingering_until.lock().unwrap();
        *lingering = Some(lingering.map_or(until, |already| already.max(until)));
    }

    /// Every hop of a redirect is a request of its own here, with its URL.
    fn on_requested(&self, url: &str) {
        let Some(origin) = url::Url::parse(url)
            .ok()
            .as_ref()
            .and_then(crate::egress::origin_of_url)
        else {
            return;
        };
        let mut requested = self.requested.lock().unwrap();
        if requested.len() < REQUESTED_KEPT {
            requested.insert(origin);
        }
    }

    /// The hosts requested since the last call.
    pub fn take_requested(&self) -> HashSet<String> {
        std::mem::take(&mut *self.requested.lock().unwrap())
    }

    fn on_main_frame_navigated(&self, url: &str, loader: Option<&str>) {
        // A new document: requests of the old one that were cancelled never report an end.
        // The new document's own request has already finished by the time it commits.
        *self.requests.lock().unwrap() = Requests::default();
        // Nor does the old document's traffic linger: its sockets closed with it.
        *self.lingering_until.lock().unwrap() = None;
        *self.loaded_at.lock().unwrap() = None;
        *self.last_url.lock().unwrap() = Some(url.to_string());
        let shown_before = self.current_loader.lock().unwrap().clone();
        if let Some(loader) = loader {
            let mut initiator = None;
            self.document(loader, |document| {
                document.committed = true;
                document.url = Some(without_fragment(url));
                initiator = document.initiator.clone();
            });
            // The page it left took the navigation of the document it replaces over when that
            // one had replaced the page, whose script asked for this one.
            let mut replaced_url = None;
            if let Some(before) = &shown_before {
                self.known_document(before, |document| {
                    replaced_url = document.url.clone();
                    document.taken_over = !document.loaded
                        && initiator.is_some()
                        && initiator == document.replaced_url
                        && initiator != document.url;
                });
            }
            self.known_document(loader, |document| document.replaced_url = replaced_url);
        }
        *self.current_loader.lock().unwrap() = loader.map(str::to_string);
        self.progress.lock().unwrap().committed += 1;
        self.touch();
    }

    /// The requests before a document's load are its own, so its load marks the start of
    /// what a settle after it looks at, as an action does.
    fn on_main_frame_loaded(&self, loader: &str) {
        self.mark_action();
        *self.loaded_at.lock().unwrap() = Some(Instant::now());
        self.document(loader, |document| document.loaded = true);
        self.progress.lock().unwrap().loads += 1;
    }

    /// Changes the remembered document of `loader`, if it is one.
    fn known_document(&self, loader: &str, change: impl FnOnce(&mut Document)) {
        let mut documents = self.documents.lock().unwrap();
        if let Some(document) = documents
            .iter_mut()
            .find(|document| document.loader == loader)
        {
            change(document);
        }
    }

    /// Changes the remembered document of `loader`, remembering it first if it is new.
    fn document(&self, loader: &str, change: impl FnOnce(&mut Document)) {
        let mut documents = self.documents.lock().unwrap();
        if !documents.iter().any(|document| document.loader == loader) {
            if documents.len() >= DOCUMENTS_KEPT {
                let pinned = self.pinned.lock().unwrap();
                let oldest = documents
                    .iter()
                    .position(|document| !pinned.contains(&document.loader));
                if let Some(oldest) = oldest {
                    documents.remove(oldest);
                }
            }
            documents.push_back(Document {
                loader: loader.to_string(),
                status: 0,
                loaded: false,
                committed: false,
                unreachable: None,
                url: None,
                replaced_url: None,
                initiator: None,
                taken_over: false,
                failed: false,
            });
        }
        if let Some(document) = documents
            .iter_mut()
            .find(|document| document.loader == loader)
        {
            change(document);
        }
    }

    pub fn snapshot(&self) -> NetworkSnapshot {
        let lingering_until = self
            .lingering_until
            .lock()
            .unwrap()
            .filter(|until| *until > Instant::now());
        let action = *self.action_mark.lock().unwrap();
        let of_the_action = self
            .requests
            .lock()
            .unwrap()
            .in_flight
            .values()
            .filter(|(_, began)| *began >= action || action.duration_since(*began) < HELD_OPEN)
            .count();
        NetworkSnapshot {
            in_flight: of_the_action + usize::from(lingering_until.is_some()),
            last_activity: *self.last_activity.lock().unwrap(),
            lingering_until,
        }
    }

    /// A receiver that wakes on the next change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

/// Whether a request is one the browser makes for its own use of the page, not the page's:
/// its icon, asked for after the document's load (of type `Other`, by no one in the page).
/// Nothing in the page waits for it, so neither does a settle: counted, it made every
/// navigate's settle look twice.
fn is_the_browsers_own(request: &Value) -> bool {
    request.pointer("/type").and_then(Value::as_str) == Some("Other")
        && request.pointer("/initiator/type").and_then(Value::as_str) == Some("other")
}

fn without_fragment(url: &str) -> String {
    url.split('#').next().unwrap_or(url).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> NetworkTracker {
        NetworkTracker::new("main".into(), Arc::default())
    }

    #[test]
    fn a_request_held_open_since_well_before_the_action_does_not_keep_it_busy() {
        let tracker = tracker();
        let page_request = |id: &str| {
            json!({"requestId": id, "type": "Fetch", "documentURL": "http://a.test/",
                "request": {"url": "http://a.test/livereload"}})
        };
        tracker.on_event("Network.requestWillBeSent", &page_request("poll"));
        // Begun after the last action began: that action's.
        assert_eq!(tracker.snapshot().in_flight, 1);
        // Begun just before an action: it may be what the action started.
        tracker.mark_action();
        assert_eq!(tracker.snapshot().in_flight, 1);
        // In flight since long before it: a long poll the page keeps open.
        tracker
            .requests
            .lock()
            .unwrap()
            .in_flight
            .get_mut("poll")
            .unwrap()
            .1 -= HELD_OPEN;
        assert_eq!(tracker.snapshot().in_flight, 0);
        // What the action asks for is waited for all the same.
        tracker.on_event("Network.requestWillBeSent", &page_request("search"));
        assert_eq!(tracker.snapshot().in_flight, 1);
    }

    #[test]
    fn a_workers_own_script_is_not_counted_in_flight_its_end_comes_elsewhere() {
        let tracker = tracker();
        tracker.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "w", "type": "Script", "loaderId": "",
                "documentURL": "http://a.test/worker.js",
                "request": {"url": "http://a.test/worker.js"}, "initiator": {"type": "other"}}),
        );
        assert_eq!(tracker.snapshot().in_flight, 0);
        // A page's own script, though, is.
        tracker.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "s", "type": "Script", "documentURL": "http://a.test/",
                "request": {"url": "http://a.test/app.js"}}),
        );
        assert_eq!(tracker.snapshot().in_flight, 1);
    }

    #[test]
    fn the_browsers_request_for_the_pages_icon_is_no_activity_of_the_page() {
        let tracker = tracker();
        let before = tracker.snapshot().last_activity;
        std::thread::sleep(std::time::Duration::from_millis(2));
        tracker.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "icon", "type": "Other", "documentURL": "http://a.test/",
                "request": {"url": "http://a.test/favicon.ico"}, "initiator": {"type": "other"}}),
        );
        assert_eq!(tracker.snapshot().in_flight, 0);
        tracker.on_event("Network.loadingFinished", &json!({"requestId": "icon"}));
        assert_eq!(tracker.snapshot().last_activity, before);
        // A request of the page's own script of the same type is the page's.
        tracker.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "ping", "type": "Other", "documentURL": "http://a.test/",
                "request": {"url": "http://a.test/ping"}, "initiator": {"type": "script"}}),
        );
        assert_eq!(tracker.snapshot().in_flight, 1);
        assert!(tracker.snapshot().last_activity > before);
    }

    #[test]
    fn a_request_that_ended_after_the_action_began_means_the_page_was_not_quiet_since() {
        let tracker = tracker();
        tracker.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "request": {"url": "http://a.test/x"}}),
        );
        tracker.mark_action();
        assert!(!tracker.quiet_since_action(), "in flight across the mark");
        std::thread::sleep(std::time::Duration::from_millis(2));
        tracker.on_event("Network.loadingFinished", &json!({"requestId": "1"}));
        assert!(
            !tracker.quiet_since_action(),
            "it ended after the mark, though nothing is in flight"
        );
        assert_eq!(tracker.snapshot().in_flight, 0);
        tracker.mark_action();
        assert!(
            tracker.quiet_since_action(),
            "nothing since the next action"
        );
        assert_eq!(
            tracker.take_requested(),
            HashSet::from(["a.test:80".to_string()])
        );
    }

    #[test]
    fn a_websocket_that_spoke_after_an_action_keeps_the_page_busy_for_a_while() {
        let tracker = tracker();
        tracker.mark_action();
        let frame = json!({"requestId": "ws", "timestamp": 1.0, "response": {"payloadData": "x"}});
        tracker.on_event("Network.webSocketFrameReceived", &frame);
        let now = tracker.snapshot();
        assert_eq!(now.in_flight, 1, "a socket that just spoke is busy");
        assert!(now.lingering_until.unwrap() > Instant::now());
        assert!(!tracker.quiet_since_action());

        // Its last word long enough ago: quiet again, though it did speak since the action.
        *tracker.lingering_until.lock().unwrap() = Some(Instant::now());
        assert_eq!(tracker.snapshot().in_flight, 0);
        assert_eq!(tracker.snapshot().lingering_until, None);

        // Long after the action, what a socket says is no longer the action's doing.
        *tracker.action_mark.lock().unwrap() = Instant::now() - WINDOW * 2;
        let before = tracker.snapshot().last_activity;
        tracker.on_event("Network.webSocketFrameSent", &frame);
        assert_eq!(
            tracker.snapshot().in_flight,
            0,
            "a ticker does not hold the page"
        );
        assert_eq!(tracker.snapshot().last_activity, before);
    }

    #[test]
    fn a_request_that_ends_soon_after_the_load_keeps_the_page_busy_for_a_while() {
        let tracker = tracker();
        let request_by = |id: &str, initiator: &str| {
            tracker.on_event(
                "Network.requestWillBeSent",
                &json!({"requestId": id, "request": {"url": "http://a.test/x"},
                        "initiator": {"type": initiator}}),
            );
            tracker.on_event("Network.loadingFinished", &json!({"requestId": id}));
        };
        let request = |id: &str| request_by(id, "script");
        tracker.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "main", "url": "http://a.test/", "loaderId": "L"}}),
        );
        request("before the load");
        assert_eq!(
            tracker.snapshot().lingering_until,
            None,
            "the document's own"
        );
        tracker.on_event(
            "Page.lifecycleEvent",
            &json!({"frameId": "main", "loaderId": "L", "name": "load"}),
        );
        request_by("a navigation the browser was told to make", "other");
        assert_eq!(
            tracker.snapshot().lingering_until,
            None,
            "the browser's, not the page's"
        );
        request("after the load");
        let now = tracker.snapshot();
        assert_eq!(now.in_flight, 1, "the app may ask for more after it");
        assert!(now.lingering_until.unwrap() > Instant::now() + LOAD_LINGER / 2);

        // Long after the load, a request is the page's polling, not its building.
        *tracker.lingering_until.lock().unwrap() = None;
        *tracker.loaded_at.lock().unwrap() = Some(Instant::now() - WINDOW * 2);
        request("long after");
        assert_eq!(tracker.snapshot().in_flight, 0);

        // A new document starts with nothing lingering.
        *tracker.loaded_at.lock().unwrap() = Some(Instant::now());
        request("after the load again");
        tracker.on_event(
            "Page.frameNavigated",
            &json!({"frame": {"id": "main", "url": "http://a.test/next", "loaderId": "M"}}),
        );
        assert_eq!(tracker.snapshot().lingering_until, None);
    }

    #[tokio::test]
    async fn a_documents_load_is_waited_for_by_its_loader_with_its_status_and_marks_an_action() {
        let tracker = Arc::new(tracker());
        let seen = tracker.progress();
        let waiter = {
            let tracker = tracker.clone();
            tokio::spawn(async move { tracker.loaded("L2").await })
        };
        let document = |loader: &str, status: u32| {
            tracker.on_event(
                "Network.responseReceived",
                &json!({"type": "Document", "frameId": "main", "loaderId": loader,
                        "response": {"status": status}}),
            );
            tracker.on_event(
                "Page.frameNavigated",
                &json!({"frame": {"id": "main", "url": format!("http://a.test/{loader}"),
                                  "loaderId": loader}}),
            );
        };
        let load = |frame: &str, loader: &str| {
            tracker.on_event(
                "Page.lifecycleEvent",
                &json!({"frameId": frame, "loaderId": loader, "name": "load"}),
            );
        };
        assert_eq!(tracker.current_status(), 0, "no document yet");
        document("L1", 200);
        load("main", "L1");
        assert_eq!(tracker.current_status(), 200);
        // A subframe's load is not the page's.
        load("child", "L2");
        tracker.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "r", "request": {"url": "http://a.test/r"}}),
        );
        tracker.on_event("Network.loadingFinished", &json!({"requestId": "r"}));
        assert!(!waiter.is_finished(), "L2 has not loaded");
        document("L2", 404);
        load("main", "L2");
        assert_eq!(waiter.await.unwrap(), (404, None));
        assert_eq!(tracker.current_status(), 404, "the page shows L2 now");
        assert!(tracker.quiet_since_action(), "the load marks an action");
        let now = tracker.progress();
        assert_eq!((now.committed, now.loads), (2, 2));
        tracker.next_load(&seen).await;
        assert_eq!(
            tracker.last_url.lock().unwrap().as_deref(),
            Some("http://a.test/L2")
        );
        // The egress proxy's page for a site it could not reach says why.
        tracker.on_event(
            "Network.responseReceived",
            &json!({"type": "Document", "frameId": "main", "loaderId": "L3",
                    "response": {"status": 502,
                                 "headers": {"X-Nanomuse-Unreachable": "no.test could not be resolved"}}}),
        );
        load("main", "L3");
        assert_eq!(
            tracker.loaded("L3").await,
            (502, Some("no.test could not be resolved".into()))
        );
    }

    #[tokio::test]
    async fn a_document_replaced_before_its_load_ends_the_wait_for_it() {
        let tracker = Arc::new(tracker());
        let navigated = |loader: &str| {
            tracker.on_event(
                "Network.responseReceived",
                &json!({"type": "Document", "frameId": "main", "loaderId": loader,
                        "response": {"status": 200}}),
            );
            tracker.on_event(
                "Page.frameNavigated",
                &json!({"frame": {"id": "main", "url": format!("http://a.test/{loader}"),
                                  "loaderId": loader}}),
            );
        };
        navigated("L1");
        let waiter = {
            let tracker = tracker.clone();
            tokio::spawn(async move { tracker.loaded("L1").await })
        };
        tokio::task::yield_now().await;
        assert!(
            !waiter.is_finished(),
            "L1 has neither loaded nor been replaced"
        );
        // Its script moved on as it loaded: L2 commits, and L1's load is never told.
        navigated("L2");
        let waited = tokio::time::timeout(Duration::from_secs(5), waiter).await;
        assert_eq!(waited.expect("the wait ended").unwrap(), (200, None));
        // A document answered but never shown was cancelled (by the page's own navigation,
        // which then commits): it is still waited for, to the caller's bound.
        tracker.on_event(
            "Network.responseReceived",
            &json!({"type": "Document", "frameId": "main", "loaderId": "L3",
                    "response": {"status": 200}}),
        );
        let cancelled = {
            let tracker = tracker.clone();
            tokio::spawn(async move { tracker.loaded("L3").await })
        };
        navigated("L4");
        tokio::task::yield_now().await;
        assert!(!cancelled.is_finished(), "L3 was never shown");
        cancelled.abort();
    }

    #[test]
    fn a_navigation_the_left_document_asked_for_is_told_from_one_of_our_own() {
        let tracker = tracker();
        // (loader, its URL, the URL of the script that asked for it)
        let navigated = |loader: &str, path: &str, asked_by: Option<&str>| {
            let initiator = match asked_by {
                Some(by) => json!({"type": "script", "stack": {"callFrames": [
                    {"url": format!("http://a.test{by}"), "lineNumber": 0}]}}),
                None => json!({"type": "other"}),
            };
            tracker.on_event(
                "Network.requestWillBeSent",
                &json!({"requestId": loader, "loaderId": loader, "type": "Document",
                        "frameId": "main", "initiator": initiator,
                        "request": {"url": format!("http://a.test{path}")}}),
            );
            tracker.on_event(
                "Page.frameNavigated",
                &json!({"frame": {"id": "main", "url": format!("http://a.test{path}"),
                                  "loaderId": loader}}),
            );
        };
        // A page that moves itself on endlessly, hop 1 asking for hop 2; ours commits over
        // hop 1, and hop 1's `location.replace` then replaces ours.
        navigated("H1", "/hop/1", Some("/hop/0"));
        navigated("OURS", "/plain", None);
        navigated("H2", "/hop/2", Some("/hop/1#x"));
        assert!(tracker.lost_to_the_document_it_replaced("OURS"));
        // A page whose own script moves on as it loads: that is where the navigation led.
        navigated("OURS2", "/plain", None);
        navigated("NEXT", "/next", Some("/plain"));
        assert!(!tracker.lost_to_the_document_it_replaced("OURS2"));
        // Its external script did it: not the page it left either.
        navigated("OURS3", "/plain", None);
        navigated("NEXT3", "/next", Some("/static/app.js"));
        assert!(!tracker.lost_to_the_document_it_replaced("OURS3"));
        // Loaded, it was not taken over, whatever came after.
        navigated("OURS4", "/plain", None);
        tracker.on_event(
            "Page.lifecycleEvent",
            &json!({"name": "load", "frameId": "main", "loaderId": "OURS4"}),
        );
        navigated("H5", "/hop/5", Some("/next"));
        assert!(!tracker.lost_to_the_document_it_replaced("OURS4"));

        // The page moves on endlessly from the hop that took ours over, while the navigation's
        // waiter has yet to look: what it waits for is still there to tell, pinned.
        navigated("J1", "/hop/11", Some("/hop/10"));
        let kept = tracker.pin("OURS5");
        navigated("OURS5", "/plain", None);
        for hop in 12..12 + 3 * DOCUMENTS_KEPT {
            navigated(
                &format!("J{hop}"),
                &format!("/hop/{hop}"),
                Some(&format!("/hop/{}", hop - 1)),
            );
        }
        assert!(tracker.lost_to_the_document_it_replaced("OURS5"));
        drop(kept);
        navigated("LAST", "/hop/last", None);
        navigated("LATER", "/hop/later", None);
        assert!(
            !tracker.lost_to_the_document_it_replaced("OURS5"),
            "forgotten once no one waits for it"
        );

        // Ours loads, and only then does the request the page left had asked for come: it
        // follows ours. One ours asks for itself does not.
        let requested = |loader: &str, path: &str, by: &str| {
            tracker.on_event(
                "Network.requestWillBeSent",
                &json!({"requestId": loader, "loaderId": loader, "type": "Document",
                        "frameId": "main", "initiator": {"type": "script", "url": format!("http://a.test{by}")},
                        "request": {"url": format!("http://a.test{path}")}}),
            );
        };
        navigated("K1", "/hop/21", Some("/hop/20"));
        navigated("OURS6", "/plain", None);
        tracker.on_event(
            "Page.lifecycleEvent",
            &json!({"name": "load", "frameId": "main", "loaderId": "OURS6"}),
        );
        assert!(!tracker.left_pages_navigation_follows("OURS6"));
        requested("OWN", "/elsewhere", "/plain");
        assert!(!tracker.left_pages_navigation_follows("OURS6"));
        requested("K2", "/hop/22", "/hop/21");
        assert!(tracker.left_pages_navigation_follows("OURS6"));
        assert!(tracker.shows("OURS6"));
        // Stopped: it will never be shown.
        tracker.on_event(
            "Network.loadingFailed",
            &json!({"requestId": "K2", "canceled": true}),
        );
        assert!(!tracker.left_pages_navigation_follows("OURS6"));
    }
}
