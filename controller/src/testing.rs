//! Fakes for the controller's unit tests (compiled for tests only): [`FakeBackend`], whose every
//! op answers as the test scripts it and records what it was asked; [`FakePage`], the page it
//! shows the listing scripts; [`Harness`], an action's [`Ctx`] over them and a temporary store
//! (sled's in-memory one: fast enough that no second store is needed); [`scheduler`]; and
//! [`FakeTransfer`], a worker's profile transfer for drains. With these the actions, their
//! dispatch and the scheduler are tested without Chromium, on tokio's paused clock where time
//! matters (the scheduler and the holds keep time with `tokio::time::Instant`).

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use serde_json::{Value, json};

use crate::actions::{self, Ctx, PendingFrame};
use crate::error::Result;
use crate::frames::FrameHub;
use crate::listing::{self, ListedElement, Listing};
pub use crate::store::Store;
use crate::store::{ProfileSetting, SledStore, ThreadRecord};

type Answer<R> = std::result::Result<<R as Op>::Reply, BackendError>;
type Responder<R> = Arc<dyn Fn(&R) -> Answer<R> + Send + Sync>;

/// What the test said each op answers; keyed by op name, the values are `Answer<R>` (queued)
/// and `Responder<R>` for that op's `R`.
#[derive(Default)]
struct Script {
    queued: HashMap<&'static str, VecDeque<Box<dyn Any + Send>>>,
    responders: HashMap<&'static str, Box<dyn Any + Send>>,
    delays: HashMap<&'static str, Duration>,
}

/// One op the backend was asked for.
struct Call {
    pub op: &'static str,
    request: Box<dyn Any + Send>,
}

/// A backend that answers each op with, in this order: the next answer queued for it
/// ([`reply`](Self::reply), [`fail`](Self::fail)), its responder ([`on`](Self::on)), or the
/// op's default reply. Every call is recorded as it arrives; its answer comes after the op's
/// delay ([`delay`](Self::delay), on tokio's clock).
#[derive(Default)]
pub struct FakeBackend {
    script: Mutex<Script>,
    calls: Mutex<Vec<Call>>,
    running: AtomicUsize,
    most_running: AtomicUsize,
}

impl FakeBackend {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A backend showing `page` to the listing scripts.
    pub fn showing(page: &FakePage) -> Arc<Self> {
        let backend = Self::new();
        backend.show(page);
        backend
    }

    /// Queues `reply` as the next answer of op `R`.
    pub fn reply<R: Op>(&self, reply: R::Reply) {
        self.queue::<R>(Ok(reply));
    }

    /// Queues `error` as the next answer of op `R`.
    pub fn fail<R: Op>(&self, error: BackendError) {
        self.queue::<R>(Err(error));
    }

    fn queue<R: Op>(&self, answer: Answer<R>) {
        self.script
            .lock()
            .unwrap()
            .queued
            .entry(R::NAME)
            .or_default()
            .push_back(Box::new(answer));
    }

    /// Answers op `R` with `respond` whenever nothing is queued for it.
    pub fn on<R: Op>(&self, respond: impl Fn(&R) -> Answer<R> + Send + Sync + 'static) {
        let respond: Responder<R> = Arc::new(respond);
        self.script
            .lock()
            .unwrap()
            .responders
            .insert(R::NAME, Box::new(respond));
    }

    /// Makes op `R` take `delay` before it answers.
    pub fn delay<R: Op>(&self, delay: Duration) {
        self.script.lock().unwrap().delays.insert(R::NAME, delay);
    }

    /// Answers `evaluate` of the listing scripts from `page`; other scripts answer `null`
    /// unless something is queued for them.
    pub fn show(&self, page: &FakePage) {
        let page = page.clone();
        self.on::<EvaluateRequest>(move |request| Ok(page.evaluate(request)));
        // A page that settles, as most do within the bound.
        self.on::<SettleRequest>(|_| {
            Ok(SettleReply {
                settled: true,
                ..Default::default()
            })
        });
    }

    /// The ops called so far, in order.
    pub fn ops(&self) -> Vec<&'static str> {
        self.calls.lock().unwrap().iter().map(|c| c.op).collect()
    }

    /// The requests of op `R` so far, in order.
    pub fn requests<R: Op + Clone>(&self) -> Vec<R> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter_map(|c| c.request.downcast_ref::<R>().cloned())
            .collect()
    }

    /// Forgets the calls so far (to assert on what comes next).
    pub fn forget_calls(&self) {
        self.calls.lock().unwrap().clear();
    }

    /// The most ops that were under way at once.
    pub fn most_at_once(&self) -> usize {
        self.most_running.load(Ordering::SeqCst)
    }

    async fn answer<R: Op + Clone>(&self, request: R) -> Answer<R>
    where
        R::Reply: Default,
    {
        self.calls.lock().unwrap().push(Call {
            op: R::NAME,
            request: Box::new(request.clone()),
        });
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_running.fetch_max(now, Ordering::SeqCst);
        let delay = self.script.lock().unwrap().delays.get(R::NAME).copied();
        if let Some(delay) = delay {
            tokio::time::sleep(delay).await;
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        let (queued, respond) = {
            let mut script = self.script.lock().unwrap();
            let queued = script.queued.get_mut(R::NAME).and_then(VecDeque::pop_front);
            let respond = script
                .responders
                .get(R::NAME)
                .and_then(|r| r.downcast_ref::<Responder<R>>())
                .cloned();
            (queued, respond)
        };
        if let Some(queued) = queued {
            return *queued
                .downcast::<Answer<R>>()
                .expect("queued for this op's reply type");
        }
        match respond {
            Some(respond) => respond(&request),
            None => Ok(R::Reply::default()),
        }
    }
}

nanomuse_proto::backend_through!(FakeBackend, answer);

/// A page as the listing scripts see it: its address, title and interactive elements. Shared:
/// a test changes it (from a responder, say a tap's) and the next listing shows the change.
#[derive(Clone, Default)]
pub struct FakePage(Arc<Mutex<PageState>>);

#[derive(Default)]
struct PageState {
    url: String,
    title: String,
    elements: Vec<ListedElement>,
    /// The listing id the page was last listed with (what `RESOLVE_JS` checks).
    listed: Option<String>,
    /// Its selects are dropdowns it draws itself, not `<select>`s.
    draws_selects: bool,
    /// What its dialogs said, for its next listing to take.
    said: Vec<Value>,
    /// How far down it is scrolled.
    scrolled: f64,
    /// Which document it is (`performance.timeOrigin`).
    document: f64,
    /// Which element has the focus, as the listing says it (see `Listing::focused`).
    focused: i64,
}

impl FakePage {
    /// A page whose elements are `(kind, label)`, numbered from 1.
    pub fn new(url: &str, title: &str, elements: &[(&str, &str)]) -> Self {
        let page = Self::default();
        page.set(url, title, elements);
        page.0.lock().unwrap().document = 1.0;
        page
    }

    /// It is loaded again at its address: another document, the same URL and title.
    pub fn load_again(&self) {
        self.0.lock().unwrap().document += 1.0;
    }

    /// Element `n` takes the focus (0: nothing does, -1: something not listed).
    pub fn focus(&self, n: i64) {
        self.0.lock().unwrap().focused = n;
    }

    /// Its selects become dropdowns it draws itself (Quasar's, MUI's), not `<select>`s.
    pub fn draw_selects(&self) {
        self.0.lock().unwrap().draws_selects = true;
    }

    /// One of its dialogs said `message` and was answered `answer` (its next listing tells).
    pub fn say(&self, kind: &str, message: &str, answer: &str) {
        let said = json!({"kind": kind, "message": message, "answer": answer});
        self.0.lock().unwrap().said.push(said);
    }

    /// Scrolls by `dy`, within 0..=`end`.
    pub fn scroll_by(&self, dy: f64, end: f64) {
        let mut page = self.0.lock().unwrap();
        page.scrolled = (page.scrolled + dy).clamp(0.0, end);
    }

    /// Element `n` is listed with `state` from now on (`(expanded)`, say).
    pub fn mark(&self, n: u32, state: &str) {
        let mut page = self.0.lock().unwrap();
        if let Some(element) = page.elements.iter_mut().find(|e| e.n == n) {
            element.state = state.into();
        }
    }

    /// Becomes another page (a navigation: earlier listings are stale).
    pub fn set(&self, url: &str, title: &str, elements: &[(&str, &str)]) {
        let mut state = self.0.lock().unwrap();
        state.url = url.into();
        state.title = title.into();
        state.elements = listed(elements);
        state.listed = None;
    }

    /// What the page answers `evaluate` with: the listing scripts' answers, `null` to others.
    pub fn evaluate(&self, request: &EvaluateRequest) -> EvaluateReply {
        let arg: Value = serde_json::from_str(&request.arg_json).unwrap_or(Value::Null);
        let mut state = self.0.lock().unwrap();
        let value = if request.js == listing::LIST_JS {
            state.listed = arg["listing_id"].as_str().map(str::to_string);
            json!({
                "url": state.url,
                "title": state.title,
                "elements": state.elements,
                "above": 0,
                "below": 0,
                "said": std::mem::take(&mut state.said),
                "scrolled": state.scrolled,
                "document": state.document,
                "focused": state.focused,
            })
        } else if request.js == listing::RESOLVE_JS {
            let n = arg["n"].as_u64().unwrap_or(0);
            if state.listed.as_deref() != arg["listing_id"].as_str() {
                json!({"error": "stale"})
            } else {
                match state.elements.iter().find(|e| u64::from(e.n) == n) {
                    // Element n sits at (10n, 20n): a tap's coordinates say which it was.
                    // A select names two sizes of its three (as if the rest were past the
                    // page's cap); one the page draws names none.
                    Some(e) => {
                        let native = e.kind == "select" && !state.draws_selects;
                        json!({
                            "x": 10.0 * n as f64, "y": 20.0 * n as f64,
                            "label": e.label, "kind": e.kind, "url": state.url,
                            "options": if native { json!(["Small", "Large"]) } else { json!([]) },
                            "optionCount": if native { 3 } else { 0 },
                            "drawn": e.kind == "select" && state.draws_selects,
                        })
                    }
                    None => json!({"error": "missing", "count": state.elements.len()}),
                }
            }
        } else {
            Value::Null
        };
        EvaluateReply {
            value_json: value.to_string(),
        }
    }
}

/// Elements `(kind, label)`, numbered from 1.
pub fn listed(elements: &[(&str, &str)]) -> Vec<ListedElement> {
    elements
        .iter()
        .zip(1..)
        .map(|(&(kind, label), n)| ListedElement {
            n,
            label: label.into(),
            kind: kind.into(),
            href: String::new(),
            state: String::new(),
        })
        .collect()
}

/// A listing of https://x/ with elements `(kind, label)`, numbered from 1.
pub fn listing_of(elements: &[(&str, &str)]) -> Listing {
    Listing {
        id: "l".into(),
        url: "https://x/".into(),
        title: "X".into(),
        elements: listed(elements),
        above: 0,
        below: 0,
        past_max: 0,
        trail: Vec::new(),
        steps_in_tab: None,
        opener: None,
        said: Vec::new(),
        scrolled: 0.0,
        document: 0.0,
        focused: 0,
        dialog: None,
        alerts: Vec::new(),
    }
}

/// An evaluate reply of `value`.
pub fn evaluated(value: Value) -> EvaluateReply {
    EvaluateReply {
        value_json: value.to_string(),
    }
}

/// A scheduler over a temporary store: workers silent for 3 s are down, a slot is waited for
/// 1 s, at most `queue_limit` actions wait, a down worker is waited for 2 s.
pub fn scheduler(queue_limit: usize) -> crate::scheduler::Scheduler {
    crate::scheduler::Scheduler::new(
        Arc::new(SledStore::temporary().unwrap()),
        Duration::from_secs(3),
        Duration::from_secs(1),
        queue_limit,
        None,
        Duration::from_secs(2),
        "/nonexistent/parked".into(),
    )
}

/// The tenant and thread a [`Harness`] acts on.
pub const TENANT: &str = "tenant-a";
pub const THREAD: &str = "thread-1";

/// The session every op of a [`Harness`]'s thread carries.
pub fn session() -> Option<Session> {
    Some(Session {
        url_policy: Some(UrlPolicy::default()),
        ..Session::new(TENANT, "ws", THREAD)
    })
}

/// The page info a backend reports for `url` and `title`.
pub fn page_info(url: &str, title: &str) -> Option<PageInfo> {
    Some(PageInfo {
        url: url.into(),
        title: title.into(),
        ..Default::default()
    })
}

/// What an action runs with, over a [`FakeBackend`] and a temporary store.
pub struct Harness {
    pub backend: Arc<FakeBackend>,
    pub store: Arc<SledStore>,
    pub frames: FrameHub,
    pub record: ThreadRecord,
    /// Whether actions picture a page found quiet at once while they list it (as on a
    /// worker); off by default, so that the ops a test sees come in one order.
    pub frame_beside_listing: bool,
}

impl Harness {
    /// A thread of workspace "ws" on `backend`, with the desktop profile.
    pub fn new(backend: Arc<FakeBackend>) -> Self {
        let store = Arc::new(SledStore::temporary().unwrap());
        let record = ThreadRecord {
            workspace: "ws".into(),
            backend: crate::config::BackendChoice::Chromium,
            profile: ProfileSetting::desktop(),
        };
        store.put_thread(TENANT, THREAD, &record).unwrap();
        Self {
            backend,
            frames: FrameHub::new(store.clone()),
            store,
            record,
            frame_beside_listing: false,
        }
    }

    /// A harness whose backend shows `page`.
    pub fn showing(page: &FakePage) -> Self {
        Self::new(FakeBackend::showing(page))
    }

    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            backend: self.backend.clone(),
            backend_name: "worker:fake".into(),
            store: self.store.as_ref(),
            frames: &self.frames,
            tenant: TENANT,
            thread: THREAD,
            record: self.record.clone(),
            settle_ms: 1_000,
            navigate_ms: 30_000,
            pending_frame: None,
            url_policy: UrlPolicy::default(),
            refused: Default::default(),
            downloaded: Default::default(),
            said: Default::default(),
            reopened: Default::default(),
            frame_beside_listing: self.frame_beside_listing,
            early_shot: Default::default(),
            window: Default::default(),
            going_back: None,
        }
    }

    /// Runs `action` as the controller would; the reply and the frame it promised.
    pub async fn act(&self, action: Action) -> (Result<ActReply>, Option<PendingFrame>) {
        let mut ctx = self.ctx();
        let reply = actions::run(&mut ctx, action).await;
        (reply, ctx.pending_frame.take())
    }

    /// Runs `action`, which must succeed: its reply and the frame it promised.
    pub async fn ok(&self, action: Action) -> (ActReply, Option<PendingFrame>) {
        let (reply, frame) = self.act(action).await;
        (reply.expect("the action succeeds"), frame)
    }

    /// Lists the page as `navigate` would have (so element numbers are known).
    pub async fn list_first(&self) {
        self.ok(Action::Screenshot(ScreenshotAction {})).await;
        self.backend.forget_calls();
    }

    /// The thread's stored listing's URL, if any.
    pub fn listed_url(&self) -> Option<String> {
        self.store.listing(TENANT, THREAD).unwrap().map(|l| l.url)
    }
}

/// A worker's `ProfileTransfer` over a map of tars, by (tenant, workspace): what a drain
/// exports and a move imports, without Chromium.
#[derive(Clone, Default)]
pub struct FakeTransfer {
    pub profiles: Arc<Mutex<Tars>>,
}

/// Profile tars by (tenant, workspace).
pub type Tars = HashMap<(String, String), Vec<u8>>;

type ChunkStream = std::pin::Pin<
    Box<dyn futures::Stream<Item = std::result::Result<ProfileChunk, tonic::Status>> + Send>,
>;

#[tonic::async_trait]
impl profile_transfer_server::ProfileTransfer for FakeTransfer {
    type ExportProfileStream = ChunkStream;

    async fn export_profile(
        &self,
        request: tonic::Request<ProfileRef>,
    ) -> std::result::Result<tonic::Response<ChunkStream>, tonic::Status> {
        let ProfileRef { tenant, workspace } = request.into_inner();
        let Some(tar) = self
            .profiles
            .lock()
            .unwrap()
            .get(&(tenant, workspace))
            .cloned()
        else {
            return Err(tonic::Status::not_found("no such profile on this worker"));
        };
        let chunks: Vec<_> = tar
            .chunks(64 * 1024)
            .map(|data| {
                Ok(ProfileChunk {
                    profile: None,
                    data: data.to_vec(),
                    size: 0,
                })
            })
            .collect();
        Ok(tonic::Response::new(Box::pin(futures::stream::iter(
            chunks,
        ))))
    }

    async fn import_profile(
        &self,
        request: tonic::Request<tonic::Streaming<ProfileChunk>>,
    ) -> std::result::Result<tonic::Response<ImportProfileReply>, tonic::Status> {
        let mut stream = request.into_inner();
        let (mut profile, mut size, mut tar) = (None, 0, Vec::new());
        while let Some(chunk) = stream.message().await? {
            if let Some(named) = chunk.profile {
                profile = Some(named);
                size = chunk.size;
            }
            tar.extend(chunk.data);
        }
        let Some(ProfileRef { tenant, workspace }) = profile else {
            return Err(tonic::Status::invalid_argument(
                "no chunk named the profile",
            ));
        };
        if tar.len() as u64 != size {
            return Err(tonic::Status::invalid_argument("the tar is cut short"));
        }
        let bytes = tar.len() as u64;
        self.profiles
            .lock()
            .unwrap()
            .insert((tenant, workspace), tar);
        Ok(tonic::Response::new(ImportProfileReply { bytes }))
    }
}

/// Serves `transfer` on 127.0.0.1 for as long as the test's runtime runs; its address, for
/// [`crate::scheduler::Scheduler::register`].
pub async fn serve_transfer(transfer: FakeTransfer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(profile_transfer_server::ProfileTransferServer::new(
                transfer,
            ))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    address
}

/// A worker's live views: each watch gets the frames [`show`](Self::show)n from then on, and
/// the test sees how many frames its watchers took off their streams ([`taken`](Self::taken)).
#[derive(Default)]
pub struct FakeScreencast {
    watcher: Mutex<Option<tokio::sync::mpsc::UnboundedSender<ScreenFrame>>>,
    taken: Arc<AtomicUsize>,
    taken_changed: Arc<tokio::sync::Notify>,
}

impl FakeScreencast {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A frame of the page (a `width`×`height` viewport) whose JPEG is `jpeg`, to the watcher.
    pub fn show(&self, jpeg: &[u8], (width, height): (u32, u32)) {
        let watcher = self.watcher.lock().unwrap();
        let watcher = watcher.as_ref().expect("the page is watched");
        let _ = watcher.send(ScreenFrame {
            jpeg: jpeg.to_vec(),
            width,
            height,
            ..Default::default()
        });
    }

    /// Waits until the watchers took `count` frames in all.
    pub async fn taken(&self, count: usize) {
        loop {
            let changed = self.taken_changed.notified();
            if self.taken.load(Ordering::SeqCst) >= count {
                return;
            }
            changed.await;
        }
    }

    /// Whether a watch is open.
    pub fn watched(&self) -> bool {
        self.watcher
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|w| !w.is_closed())
    }
}

#[tonic::async_trait]
impl nanomuse_proto::screencast::Screencast for FakeScreencast {
    async fn watch(
        &self,
        _request: WatchScreenRequest,
    ) -> std::result::Result<nanomuse_proto::screencast::FrameStream, BackendError> {
        let (sender, frames) = tokio::sync::mpsc::unbounded_channel();
        *self.watcher.lock().unwrap() = Some(sender);
        use futures::StreamExt as _;
        let (taken, changed) = (self.taken.clone(), self.taken_changed.clone());
        let frames = tokio_stream::wrappers::UnboundedReceiverStream::new(frames).map(move |f| {
            taken.fetch_add(1, Ordering::SeqCst);
            changed.notify_waiters();
            Ok(f)
        });
        Ok(Box::pin(frames))
    }
}
