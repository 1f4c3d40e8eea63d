//! [`Controller`]: the browser tool behind the gRPC adapters — threads, their order, their
//! backend and the actions on it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nanomuse_common::check_name;
use nanomuse_common::metrics::outcome_of;
use nanomuse_proto::{ActReply, ActRequest, Coded as _, Frame};
use tokio::sync::broadcast;
use tracing::Instrument;

use crate::actions::{self, Ctx, PendingFrame};
use crate::config::{BackendChoice, Config, ProfileChoice};
use crate::devices::Devices;
use crate::error::{ControllerError, Result};
use crate::frames::FrameHub;
use crate::holds::Holds;
use crate::metrics::metrics;
use crate::observed::Observed;
use crate::scheduler::{Placed, Scheduler};
use crate::store::{ProfileSetting, Store, ThreadRecord};
use crate::url_policy::UrlPolicies;
use nanomuse_proto::act_request::Action;

type ThreadKey = (String, String);

/// Where one action runs; the worker slot or the phone's turn is held until this drops.
pub(crate) struct Route {
    pub backend: Arc<dyn nanomuse_proto::Backend>,
    /// "worker:<name>" or "device:<id>", as replies name their backend.
    pub name: String,
    /// What the reply says first about where the action ran (a workspace moved off a
    /// drained worker, or a worker waited for).
    pub note: Option<String>,
    /// Where the page's live view is watched: the worker's screencast, or the phone's gateway.
    pub screencast: Option<Arc<dyn nanomuse_proto::screencast::Screencast>>,
    _worker_slot: Option<Placed>,
    _phone_turn: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Route {
    fn on_phone(&self) -> bool {
        self._phone_turn.is_some()
    }
}

pub struct Controller {
    config: Arc<Config>,
    store: Arc<dyn Store>,
    pub scheduler: Arc<Scheduler>,
    frames: Arc<FrameHub>,
    pub holds: Holds,
    pub devices: Devices,
    /// Sent on every call to workers and gateways.
    hop_secret: Option<nanomuse_common::HopSecret>,
    pub(crate) url_policies: UrlPolicies,
    /// Work that outlives a reply (frame captures), waited for on shutdown.
    background: tokio_util::task::TaskTracker,
    /// One lock per thread: a thread's actions run in order, threads run concurrently.
    thread_locks: Mutex<HashMap<ThreadKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Each tenant's actions under way, for its quota.
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

/// One action of a tenant counted as under way until this drops.
struct InFlight {
    counts: Arc<Mutex<HashMap<String, usize>>>,
    tenant: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap();
        if let Some(n) = counts.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.tenant);
            }
        }
    }
}

/// The longest key name `key` takes, in bytes ("Control+Shift+ArrowLeft" and the like).
const KEY_MAX_BYTES: usize = 64;

/// A key as the agent or the user names it: short plain text, no NUL or control character.
pub fn check_key(key: &str) -> Result<()> {
    nanomuse_common::names::check_text("key", key, KEY_MAX_BYTES)
        .map_err(ControllerError::InvalidArgument)
}

/// The texts of `action` that name something (a key, a hold's reason), checked before anything
/// is created, so a bad one changes nothing.
fn check_texts(action: &Action) -> Result<()> {
    match action {
        Action::Key(key) => check_key(&key.key),
        Action::HandOver(hand_over) => crate::holds::check_reason(&hand_over.reason),
        Action::Upload(upload) => actions::upload::check(upload),
        _ => Ok(()),
    }
}

/// Thread and workspace ids name records and profile folders (see [`check_name`]).
pub fn check_id(what: &str, value: &str) -> Result<()> {
    check_name(what, value).map_err(ControllerError::InvalidArgument)
}

impl Controller {
    pub fn new(config: Arc<Config>, store: Arc<dyn Store>) -> Result<Self> {
        let holds = Holds::load(store.clone(), config.hold_timeout())?
            .with_quota(config.controller.quotas.open_holds);
        let hop_secret = config
            .hop_secret()
            .map_err(ControllerError::InvalidArgument)?;
        let scheduler = Arc::new(Scheduler::new(
            store.clone(),
            config.heartbeat_timeout(),
            config.queue_deadline(),
            config.controller.queue_limit,
            hop_secret.clone(),
            config.worker_return(),
            config.controller.data_dir.join("parked"),
        ));
        Ok(Self {
            frames: Arc::new(
                FrameHub::new(store.clone()).with_recording(config.controller.recording.clone()),
            ),
            holds,
            devices: Devices::default(),
            hop_secret,
            url_policies: UrlPolicies::new(config.controller.url_policy.clone()),
            config,
            store,
            scheduler,
            thread_locks: Mutex::default(),
            in_flight: Arc::default(),
            background: tokio_util::task::TaskTracker::new(),
        })
    }

    /// Waits for the frame captures still under way (on shutdown).
    pub async fn drain(&self) {
        self.background.close();
        self.background.wait().await;
    }

    /// The secret the controller's calls to workers and gateways carry.
    pub fn hop_secret(&self) -> Option<&nanomuse_common::HopSecret> {
        self.hop_secret.as_ref()
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn frames(&self) -> &FrameHub {
        &self.frames
    }

    /// Where `record`'s next op runs: the tenant's phone (`device`, or `auto` with a phone
    /// connected), else the workspace's worker; with a turn on the phone or a worker slot.
    pub(crate) async fn route(&self, tenant: &str, record: &ThreadRecord) -> Result<Route> {
        let phone = match record.backend {
            BackendChoice::Chromium => None,
            BackendChoice::Device => Some(self.devices.browser_of(tenant).ok_or_else(|| {
                ControllerError::Unavailable(
                    "this thread uses the phone's browser, and no phone with a browser is \
                     connected: open the nanoMuse app on the phone, or switch the thread to \
                     the server's browser"
                        .into(),
                )
            })?),
            BackendChoice::Auto => self.devices.browser_of(tenant),
        };
        if let Some(phone) = phone {
            let deadline = self.config.queue_deadline();
            let turn = tokio::time::timeout(deadline, phone.turn.clone().acquire_owned())
                .await
                .ok()
                .and_then(|turn| turn.ok())
                .ok_or_else(|| {
                    ControllerError::ResourceExhausted(format!(
                        "the phone {} is busy with other actions; try again shortly",
                        phone.device_id
                    ))
                })?;
            return Ok(Route {
                backend: Observed::wrap(phone.backend.clone(), "device"),
                name: format!("device:{}", phone.device_id),
                note: None,
                screencast: phone.screencast.clone(),
                _worker_slot: None,
                _phone_turn: Some(turn),
            });
        }
        let mut placed = self.scheduler.acquire(tenant, &record.workspace).await?;
        Ok(Route {
            backend: Observed::wrap(placed.worker.backend.clone(), "worker"),
            name: format!("worker:{}", placed.worker.name),
            note: placed.note.take(),
            screencast: placed.worker.screencast.clone(),
            _worker_slot: Some(placed),
            _phone_turn: None,
        })
    }

    /// What an op on `record`'s page works with, on `route`.
    pub(crate) fn ctx<'a>(
        &'a self,
        tenant: &'a str,
        thread: &'a str,
        record: ThreadRecord,
        route: &Route,
    ) -> Ctx<'a> {
        Ctx {
            backend: route.backend.clone(),
            backend_name: route.name.clone(),
            store: self.store.as_ref(),
            frames: &self.frames,
            tenant,
            thread,
            record,
            settle_ms: self.config.controller.settle_ms as u32,
            navigate_ms: self.config.browser.timeout_ms as u32,
            pending_frame: None,
            url_policy: self.url_policies.for_tenant(tenant),
            refused: Default::default(),
            downloaded: Default::default(),
            said: Default::default(),
            reopened: Default::default(),
            frame_beside_listing: !route.on_phone(),
            early_shot: Default::default(),
            window: Default::default(),
            going_back: None,
        }
    }

    /// A thread that exists already (the card's API never creates one).
    pub fn known_thread(&self, tenant: &str, thread: &str) -> Result<ThreadRecord> {
        check_id("thread", thread)?;
        self.store.thread(tenant, thread)?.ok_or_else(|| {
            ControllerError::NotFound(format!(
                "there is no thread {thread:?}: a thread starts with its first browser action"
            ))
        })
    }

    fn thread_lock(&self, key: &ThreadKey) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.thread_locks.lock().unwrap();
        // Forget the locks nobody holds, so the map does not grow with every thread ever seen.
        locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        locks.entry(key.clone()).or_default().clone()
    }

    /// The thread's record, created on its first action (on `backend`, or the configuration's).
    async fn thread(
        &self,
        tenant: &str,
        thread: &str,
        workspace: &str,
        backend: &str,
    ) -> Result<ThreadRecord> {
        if let Some(record) = self.store.thread(tenant, thread)? {
            if !workspace.is_empty() && record.workspace != workspace {
                return Err(ControllerError::InvalidArgument(format!(
                    "thread {thread:?} uses workspace {:?}; a thread keeps its workspace",
                    record.workspace
                )));
            }
            return Ok(record);
        }
        let workspace = if workspace.is_empty() {
            "default"
        } else {
            workspace
        };
        check_id("workspace", workspace)?;
        self.check_thread_quotas(tenant, workspace)?;
        let backend = match backend {
            "" => self.config.browser.backend,
            named => parse_backend(named)?,
        };
        // The backend's own profile: a phone's is mobile, a worker's desktop.
        let on_phone = match backend {
            BackendChoice::Device => true,
            BackendChoice::Auto => self.devices.browser_of(tenant).is_some(),
            BackendChoice::Chromium => false,
        };
        let record = ThreadRecord {
            workspace: workspace.to_string(),
            backend,
            profile: match self.config.browser.profile {
                ProfileChoice::Mobile => ProfileSetting::mobile(),
                ProfileChoice::Own if on_phone => ProfileSetting::mobile(),
                _ => ProfileSetting::desktop(),
            },
        };
        self.store.put_thread(tenant, thread, &record)?;
        self.store.flush().await?;
        Ok(record)
    }

    /// Refuses a new thread of `tenant` (in `workspace`) past its quotas of threads and of
    /// profiles (distinct workspaces, each a browser profile on a worker).
    fn check_thread_quotas(&self, tenant: &str, workspace: &str) -> Result<()> {
        let quotas = &self.config.controller.quotas;
        let threads = self.store.threads(tenant)?;
        if threads.len() >= quotas.threads {
            return Err(ControllerError::ResourceExhausted(format!(
                "this tenant has {} threads, the most it may have (controller.quotas.threads): \
                 go on in one of them",
                threads.len()
            )));
        }
        let mut workspaces: std::collections::HashSet<&str> =
            threads.iter().map(|(_, r)| r.workspace.as_str()).collect();
        if !workspaces.contains(workspace) {
            workspaces.insert(workspace);
            if workspaces.len() > quotas.profiles {
                return Err(ControllerError::ResourceExhausted(format!(
                    "this tenant has {} workspaces (browser profiles), the most it may have \
                     (controller.quotas.profiles): use one of them for this thread",
                    workspaces.len() - 1
                )));
            }
        }
        Ok(())
    }

    /// Counts one action of `tenant` as under way, refused past its quota.
    fn start_action(&self, tenant: &str) -> Result<InFlight> {
        let limit = self.config.controller.quotas.actions_in_flight;
        let mut counts = self.in_flight.lock().unwrap();
        let count = counts.entry(tenant.to_string()).or_default();
        if *count >= limit {
            return Err(ControllerError::ResourceExhausted(format!(
                "this tenant has {count} actions under way, the most it may have at once \
                 (controller.quotas.actions_in_flight): wait for one to finish"
            )));
        }
        *count += 1;
        Ok(InFlight {
            counts: self.in_flight.clone(),
            tenant: tenant.to_string(),
        })
    }

    /// Moves `thread` to another backend: "auto" (the phone when one is connected),
    /// "chromium" (the workers; the spec's "playwright") or "device" (the phone). Its next
    /// action runs there.
    pub async fn set_backend(
        &self,
        tenant: &str,
        thread: &str,
        backend: &str,
    ) -> Result<ThreadRecord> {
        let backend = parse_backend(backend)?;
        // No thread lock: an action waiting for the user holds it, and the next action reads
        // the record afresh anyway.
        let mut record = self.known_thread(tenant, thread)?;
        record.backend = backend;
        self.store.put_thread(tenant, thread, &record)?;
        self.store.flush().await?;
        Ok(record)
    }

    /// Carries out one agent action: one span (child of the caller's trace), counted and timed
    /// by action and outcome.
    pub async fn act(&self, tenant: &str, request: ActRequest) -> Result<ActReply> {
        let name = request.action.as_ref().map_or("none", actions::name_of);
        let span = tracing::info_span!(
            "action",
            otel.name = format!("action {name}"),
            action = name,
            thread = %request.thread,
            backend = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let started = Instant::now();
        let reply = self
            .act_in_order(tenant, request)
            .instrument(span.clone())
            .await;
        let outcome = match &reply {
            Ok(_) => "ok",
            Err(error) => {
                span.record("otel.status_code", "ERROR");
                outcome_of(error.code().grpc())
            }
        };
        metrics().action_done(name, outcome, started.elapsed());
        reply
    }

    async fn act_in_order(&self, tenant: &str, request: ActRequest) -> Result<ActReply> {
        if !self.config.browser.enabled {
            return Err(ControllerError::Unavailable(
                "the browser tool is switched off (browser.enabled = false)".into(),
            ));
        }
        check_id("thread", &request.thread)?;
        let Some(action) = request.action else {
            return Err(ControllerError::InvalidArgument(
                "no action given: navigate, extract, click, type, key, scroll, back, wait, \
                 screenshot, fetch, profile, close, hand_over, state, downloads or upload"
                    .into(),
            ));
        };
        // Before anything is created or opened: a refused URL or text changes nothing.
        check_texts(&action)?;
        self.url_policies.check_action(tenant, &action).await?;
        // An upload names an element of the thread's last listing: on a thread that does not
        // exist yet there is none, and the thread is not made for a call that cannot succeed.
        if matches!(action, Action::Upload(_))
            && self.store.thread(tenant, &request.thread)?.is_none()
        {
            return Err(actions::no_listing());
        }
        let _in_flight = self.start_action(tenant)?;
        let key = (tenant.to_string(), request.thread.clone());
        let in_order = self.thread_lock(&key).lock_owned().await;
        let record = self
            .thread(
                tenant,
                &request.thread,
                &request.workspace,
                &request.backend,
            )
            .await?;
        if let Action::HandOver(hand_over) = &action {
            return actions::hand_over::run(&self.holds, tenant, &request.thread, hand_over).await;
        }
        // The workspace's files, not the page: no hold to wait for, no backend slot.
        if let Action::Downloads(_) = &action {
            return actions::downloads::run(self, tenant, &record).await;
        }
        let mut action = action;
        // The workspace's files an upload names are read before its hold or slot: a missing
        // one changes nothing.
        if let Action::Upload(upload) = &mut action {
            self.upload_files(tenant, &record.workspace, upload).await?;
        }
        let waiting_since = Instant::now();
        let waited = self.holds.wait_released(tenant, &request.thread).await?;
        if waited.is_some() {
            metrics().hold_waited(waiting_since.elapsed());
        }
        let route = self.route(tenant, &record).await?;
        tracing::Span::current().record("backend", route.name.as_str());
        let mut ctx = self.ctx(tenant, &request.thread, record, &route);
        let name = actions::name_of(&action);
        let mut reply = crate::frames::acting(name, actions::run(&mut ctx, action)).await;
        if let (Some(note), Ok(reply)) = (&route.note, &mut reply) {
            reply.text = format!("{note}\n{}", reply.text);
        }
        // How the user's turn ended goes with the first reply that succeeds after it: this
        // one's when it waited for the user, or came after Done; a later one's when this one
        // failed (its listing went stale while the user had the page).
        if let Ok(reply) = &mut reply
            && let Some(untold) = self.holds.take_untold(tenant, &request.thread)
        {
            reply.text = format!("{}\n{}", untold.told(self.holds.timeout()), reply.text);
        }
        if let Some(pending) = ctx.pending_frame.take() {
            let session = ctx.session();
            let backend = ctx.backend.clone();
            let frames = self.frames.clone();
            let (tenant, thread) = key;
            // The thread's lock and the worker's slot go with the capture: the next action of
            // the thread starts only once its picture is taken. The tenant's count of actions
            // in flight does not: the action is answered, and an agent's next action (waiting
            // for this picture behind the lock) is not a second one of its own.
            // Its picture belongs to the action's trace, though taken after the reply.
            self.background.spawn(
                crate::frames::acting(name, async move {
                    let _in_order = in_order;
                    let _slot = route;
                    capture_frame(backend, frames, &tenant, &thread, session, pending).await;
                })
                .instrument(tracing::Span::current()),
            );
        }
        reply
    }

    pub fn watch_frames(&self, tenant: &str, thread: &str) -> Result<broadcast::Receiver<Frame>> {
        check_id("thread", thread)?;
        Ok(self.frames.watch(tenant, thread))
    }

    /// A frame of the thread, or its latest. A frame still being captured is waited for (not
    /// the thread's lock, which an action waiting for the user holds).
    pub async fn frame(&self, tenant: &str, thread: &str, frame_id: &str) -> Result<Frame> {
        check_id("thread", thread)?;
        self.frames.captured(tenant, thread, frame_id).await;
        let frame = if frame_id.is_empty() {
            self.store.latest_frame(tenant, thread)?
        } else {
            self.store.frame(tenant, thread, frame_id)?
        };
        frame.ok_or_else(|| {
            ControllerError::NotFound(if frame_id.is_empty() {
                format!("thread {thread:?} has no frame yet")
            } else {
                format!(
                    "no frame {frame_id:?} of thread {thread:?}: a thread keeps its last 12 (all of them \
                     while it records), and \
                     a picture still being taken when the controller stopped was never made \
                     (take a screenshot for a new one)"
                )
            })
        })
    }
}

fn parse_backend(backend: &str) -> Result<BackendChoice> {
    backend.parse().map_err(ControllerError::InvalidArgument)
}

/// Takes the picture an action promised and publishes it.
async fn capture_frame(
    backend: Arc<dyn nanomuse_proto::Backend>,
    frames: Arc<FrameHub>,
    tenant: &str,
    thread: &str,
    session: Option<nanomuse_proto::Session>,
    mut pending: PendingFrame,
) {
    let early = match pending.early.take() {
        Some(shot) => shot.await.ok().and_then(|shot| shot.ok()),
        None => None,
    };
    let shot = match early {
        Some(shot) => Ok(shot),
        // Not asked for beside the listing, or lost on the way: taken now.
        None => {
            backend
                .screenshot(nanomuse_proto::ScreenshotRequest {
                    session,
                    quality: 0,
                })
                .await
        }
    };
    let published = match shot {
        Err(error) => {
            frames.abandon(tenant, thread, &pending.id);
            Err(error.into())
        }
        Ok(shot) => {
            let meta = crate::frames::FrameMeta {
                caption: pending.caption,
                url: &pending.url,
                title: &pending.title,
            };
            frames
                .publish(tenant, thread, pending.id, shot, meta)
                .await
                .map(|_| ())
        }
    };
    if let Err(error) = published {
        tracing::warn!(thread, %error, "frame not captured");
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use nanomuse_proto::*;
    use tokio::time::Instant;

    use super::*;
    use crate::store::SledStore;
    use crate::testing::{FakeBackend, FakePage, page_info};

    const TENANT: &str = "tenant-a";

    struct Setup {
        controller: Controller,
        backend: Arc<FakeBackend>,
    }

    /// A controller with one in-process worker "w1" of `capacity` on a fake backend.
    fn setup(capacity: u32, configure: impl FnOnce(&mut Config)) -> Setup {
        let mut config = Config::default();
        config.controller.url_policy.hosted = Some(false);
        config.controller.settle_ms = 1_000;
        configure(&mut config);
        let store = Arc::new(SledStore::temporary().unwrap());
        let controller = Controller::new(Arc::new(config), store).unwrap();
        let backend =
            FakeBackend::showing(&FakePage::new("https://x.example/", "X", &[("link", "A")]));
        controller
            .scheduler
            .register_local("w1", capacity, backend.clone());
        Setup {
            controller,
            backend,
        }
    }

    fn request(thread: &str, action: Action) -> ActRequest {
        ActRequest {
            thread: thread.into(),
            action: Some(action),
            ..Default::default()
        }
    }

    fn navigate(url: &str) -> Action {
        Action::Navigate(NavigateAction { url: url.into() })
    }

    #[tokio::test]
    async fn each_action_reaches_its_handler_on_the_workspace_worker() {
        let Setup {
            controller,
            backend,
        } = setup(4, |_| {});
        backend.reply::<NavigateRequest>(NavigateReply {
            page: page_info("https://x.example/", "X"),
            ..Default::default()
        });
        let reply = controller
            .act(TENANT, request("t1", navigate("https://x.example/")))
            .await
            .unwrap();
        assert_eq!(reply.backend, "worker:w1");
        let record = controller.known_thread(TENANT, "t1").unwrap();
        assert_eq!(
            (record.workspace.as_str(), record.backend.as_str()),
            ("default", "auto")
        );
        // The promised frame is captured after the reply, by the same worker.
        controller.drain().await;
        assert_eq!(
            backend.ops(),
            ["navigate", "settle", "evaluate", "screenshot"]
        );
        let frame = reply.frame.unwrap();
        let stored = controller.frame(TENANT, "t1", &frame.id).await.unwrap();
        assert_eq!(stored.caption, "Opened https://x.example/");
        for (action, first_op) in [
            (Action::Extract(ExtractAction {}), "evaluate"),
            (Action::Key(KeyAction { key: "Tab".into() }), "key"),
            (Action::Scroll(ScrollAction { dy: 100.0 }), "scroll"),
            (Action::Back(BackAction {}), "back"),
            (
                Action::Wait(WaitAction {
                    seconds: 0.01,
                    text: String::new(),
                }),
                "settle",
            ),
            (
                Action::Fetch(FetchAction {
                    url: "https://x.example/api".into(),
                    ..Default::default()
                }),
                "fetch",
            ),
            (
                Action::Profile(ProfileAction {
                    kind: Some(profile_action::Kind::Mobile(true)),
                }),
                "profile",
            ),
            (Action::State(StateAction {}), "state"),
            (Action::Close(CloseAction {}), "close"),
        ] {
            // The last action's frame is captured first.
            controller.drain().await;
            backend.forget_calls();
            let name = actions::name_of(&action);
            let reply = controller.act(TENANT, request("t1", action)).await.unwrap();
            assert_eq!(reply.backend, "worker:w1", "{name}");
            assert_eq!(backend.ops()[0], first_op, "{name}");
        }
    }

    #[tokio::test]
    async fn threads_of_another_tenant_or_never_started_are_not_found() {
        let Setup { controller, .. } = setup(4, |_| {});
        controller
            .act(TENANT, request("t1", Action::State(StateAction {})))
            .await
            .unwrap();
        let not_found = |result: Result<ThreadRecord>| {
            assert!(
                matches!(result, Err(ControllerError::NotFound(ref m)) if m.contains("there is no thread")),
                "{result:?}"
            )
        };
        not_found(controller.known_thread("tenant-b", "t1"));
        not_found(controller.known_thread(TENANT, "t2"));
        not_found(controller.set_backend(TENANT, "t2", "device").await);
        assert!(matches!(
            controller.frame("tenant-b", "t1", "").await,
            Err(ControllerError::NotFound(_))
        ));
        assert!(matches!(
            controller.frame(TENANT, "t1", "f-none").await,
            Err(ControllerError::NotFound(_))
        ));
        assert!(controller.store().threads("tenant-b").unwrap().is_empty());
    }

    #[tokio::test]
    async fn bad_requests_change_nothing() {
        let Setup {
            controller,
            backend,
        } = setup(4, |_| {});
        let bad = [
            ActRequest {
                thread: "t1".into(),
                ..Default::default()
            },
            request("../t1", Action::State(StateAction {})),
            ActRequest {
                backend: "chrome".into(),
                ..request("t1", Action::State(StateAction {}))
            },
            ActRequest {
                workspace: "a/b".into(),
                ..request("t1", Action::State(StateAction {}))
            },
            request(
                "t1",
                Action::Key(KeyAction {
                    key: "Enter\u{7}".into(),
                }),
            ),
            request(
                "t1",
                Action::HandOver(HandOverAction { reason: " ".into() }),
            ),
            request("t1", navigate("javascript:alert(1)")),
            request(
                "t1",
                Action::Fetch(FetchAction {
                    url: "file:///etc/passwd".into(),
                    ..Default::default()
                }),
            ),
        ];
        for request in bad {
            let described = format!("{request:?}");
            let reply = controller.act(TENANT, request).await;
            assert!(
                matches!(reply, Err(ControllerError::InvalidArgument(_))),
                "{described}: {reply:?}"
            );
        }
        assert!(backend.ops().is_empty());
        assert!(controller.store().threads(TENANT).unwrap().is_empty());
        assert!(controller.holds.open_holds(TENANT).is_empty());
        assert!(
            controller
                .store()
                .placement(TENANT, "default")
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn the_browser_switched_off_does_nothing() {
        let Setup {
            controller,
            backend,
        } = setup(4, |config| config.browser.enabled = false);
        let reply = controller
            .act(TENANT, request("t1", navigate("https://x.example/")))
            .await;
        assert!(matches!(reply, Err(ControllerError::Unavailable(_))));
        assert!(backend.ops().is_empty());
    }

    #[tokio::test]
    async fn a_thread_keeps_its_workspace() {
        let Setup { controller, .. } = setup(4, |_| {});
        let first = ActRequest {
            workspace: "shop".into(),
            ..request("t1", Action::State(StateAction {}))
        };
        controller.act(TENANT, first).await.unwrap();
        let moved = ActRequest {
            workspace: "bank".into(),
            ..request("t1", Action::State(StateAction {}))
        };
        let reply = controller.act(TENANT, moved).await;
        assert!(
            matches!(reply, Err(ControllerError::InvalidArgument(ref m)) if m.contains("a thread keeps its workspace")),
            "{reply:?}"
        );
        assert_eq!(
            controller.known_thread(TENANT, "t1").unwrap().workspace,
            "shop"
        );
    }

    #[tokio::test]
    async fn an_action_on_a_thread_handed_over_waits_for_done() {
        let Setup {
            controller,
            backend,
        } = setup(4, |_| {});
        let handed = controller
            .act(
                TENANT,
                request(
                    "t1",
                    Action::HandOver(HandOverAction {
                        reason: "sign in".into(),
                    }),
                ),
            )
            .await
            .unwrap();
        assert!(handed.text.starts_with("The page is with the user now"));
        assert!(backend.ops().is_empty());
        let next = controller.act(TENANT, request("t1", Action::State(StateAction {})));
        tokio::pin!(next);
        // Other threads go on meanwhile.
        controller
            .act(TENANT, request("t2", Action::State(StateAction {})))
            .await
            .unwrap();
        backend.forget_calls();
        for _ in 0..10 {
            assert!(futures::poll!(next.as_mut()).is_pending());
            tokio::task::yield_now().await;
        }
        assert!(backend.ops().is_empty());
        let hold = controller.holds.open_hold(TENANT, "t1").unwrap();
        controller.holds.done(TENANT, &hold.id).await.unwrap();
        let reply = next.await.unwrap();
        assert!(
            reply
                .text
                .starts_with("The user handed the page back (they had it to: sign in)"),
            "{}",
            reply.text
        );
        assert_eq!(backend.ops(), ["state"]);
        // Told once.
        let after = controller
            .act(TENANT, request("t1", Action::State(StateAction {})))
            .await
            .unwrap();
        assert!(
            !after.text.contains("handed the page back"),
            "{}",
            after.text
        );
    }

    #[tokio::test]
    async fn the_hand_back_is_told_by_the_first_reply_that_succeeds_after_done() {
        let Setup { controller, .. } = setup(4, |_| {});
        let hand_over = |thread: &str| {
            request(
                thread,
                Action::HandOver(HandOverAction {
                    reason: "sign in".into(),
                }),
            )
        };
        // Done before the agent's next action.
        controller.act(TENANT, hand_over("t1")).await.unwrap();
        let hold = controller.holds.open_hold(TENANT, "t1").unwrap();
        controller.holds.done(TENANT, &hold.id).await.unwrap();
        let reply = controller
            .act(TENANT, request("t1", Action::State(StateAction {})))
            .await
            .unwrap();
        assert!(
            reply
                .text
                .starts_with("The user handed the page back (they had it to: sign in)"),
            "{}",
            reply.text
        );
        // The action that waited fails (no listing to click in): the next reply tells it.
        controller.act(TENANT, hand_over("t2")).await.unwrap();
        let waiting = controller.act(
            TENANT,
            request(
                "t2",
                Action::Click(ClickAction {
                    n: 1,
                    ..Default::default()
                }),
            ),
        );
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        controller.holds.hand_back(TENANT, "t2").await.unwrap();
        assert!(waiting.await.is_err());
        let reply = controller
            .act(TENANT, request("t2", Action::State(StateAction {})))
            .await
            .unwrap();
        assert!(
            reply.text.starts_with("The user handed the page back"),
            "{}",
            reply.text
        );
    }

    #[tokio::test(start_paused = true)]
    async fn actions_past_a_full_worker_queue_then_are_refused_past_the_deadline() {
        let Setup {
            controller,
            backend,
        } = setup(1, |config| config.controller.queue_deadline_ms = 1_000);
        // Within the deadline: the second action waits for the slot, then runs.
        backend.delay::<StateRequest>(Duration::from_millis(600));
        let started = Instant::now();
        let (a, b) = tokio::join!(
            controller.act(TENANT, request("t1", Action::State(StateAction {}))),
            controller.act(TENANT, request("t2", Action::State(StateAction {}))),
        );
        a.unwrap();
        b.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(1_200));
        assert_eq!(backend.most_at_once(), 1);
        // Past it: refused, saying why.
        backend.delay::<StateRequest>(Duration::from_secs(5));
        let (a, b) = tokio::join!(
            controller.act(TENANT, request("t1", Action::State(StateAction {}))),
            controller.act(TENANT, request("t2", Action::State(StateAction {}))),
        );
        let refused = match (a, b) {
            (Ok(_), Err(error)) | (Err(error), Ok(_)) => error,
            other => panic!("{other:?}"),
        };
        assert!(
            matches!(&refused, ControllerError::ResourceExhausted(m)
                if m == "every browser slot of worker w1 is busy and none freed within 1000 ms; \
                         try again shortly"),
            "{refused:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_worker_slot_is_held_until_the_promised_frame_is_taken() {
        let Setup {
            controller,
            backend,
        } = setup(1, |_| {});
        backend.delay::<ScreenshotRequest>(Duration::from_secs(2));
        let started = Instant::now();
        let reply = controller
            .act(
                TENANT,
                request("t1", Action::Key(KeyAction { key: "Tab".into() })),
            )
            .await
            .unwrap();
        // The reply does not wait for the picture…
        assert!(started.elapsed() < Duration::from_secs(1));
        let frame_id = reply.frame.unwrap().id;
        // …but asking for it does, and so does the worker's next action.
        let frame = controller.frame(TENANT, "t1", &frame_id).await.unwrap();
        assert!(started.elapsed() >= Duration::from_secs(2));
        assert_eq!(frame.caption, "Pressed Tab");
        let started = Instant::now();
        backend.delay::<ScreenshotRequest>(Duration::from_secs(2));
        controller
            .act(
                TENANT,
                request("t1", Action::Key(KeyAction { key: "Tab".into() })),
            )
            .await
            .unwrap();
        controller
            .act(TENANT, request("t2", Action::State(StateAction {})))
            .await
            .unwrap();
        assert!(started.elapsed() >= Duration::from_secs(2));
        assert_eq!(backend.most_at_once(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_action_on_a_hold_never_handed_back_goes_on_after_the_hold_timeout() {
        let Setup {
            controller,
            backend,
        } = setup(4, |config| config.controller.hold_timeout_ms = 120_000);
        let hand_over = Action::HandOver(HandOverAction {
            reason: "solve the CAPTCHA".into(),
        });
        controller
            .act(TENANT, request("t1", hand_over))
            .await
            .unwrap();
        let started = Instant::now();
        let reply = controller
            .act(TENANT, request("t1", Action::State(StateAction {})))
            .await
            .unwrap();
        assert!(started.elapsed() >= Duration::from_secs(120));
        assert!(
            reply.text.starts_with(
                "The user did not come back within 2 minutes (they had the page to: solve the \
                 CAPTCHA); going on with the page as it is."
            ),
            "{}",
            reply.text
        );
        assert_eq!(backend.ops(), ["state"]);
        assert!(controller.holds.open_holds(TENANT).is_empty());
    }

    #[tokio::test]
    async fn quotas_refuse_new_threads_workspaces_and_actions_and_change_nothing() {
        let Setup {
            controller,
            backend,
        } = setup(4, |config| {
            config.controller.quotas.threads = 2;
            config.controller.quotas.profiles = 1;
        });
        let state = || Action::State(StateAction {});
        controller
            .act(TENANT, request("t1", state()))
            .await
            .unwrap();
        let other_workspace = ActRequest {
            workspace: "bank".into(),
            ..request("t2", state())
        };
        let refused = controller.act(TENANT, other_workspace).await;
        assert!(
            matches!(&refused, Err(ControllerError::ResourceExhausted(m)) if m.contains("controller.quotas.profiles")),
            "{refused:?}"
        );
        controller
            .act(TENANT, request("t2", state()))
            .await
            .unwrap();
        let refused = controller.act(TENANT, request("t3", state())).await;
        assert!(
            matches!(&refused, Err(ControllerError::ResourceExhausted(m)) if m.contains("controller.quotas.threads")),
            "{refused:?}"
        );
        // Another tenant has quotas of its own.
        controller
            .act("tenant-b", request("t3", state()))
            .await
            .unwrap();
        assert_eq!(controller.store().threads(TENANT).unwrap().len(), 2);
        assert_eq!(backend.ops(), ["state", "state", "state"]);
    }

    #[tokio::test(start_paused = true)]
    async fn actions_past_the_in_flight_quota_are_refused_at_once() {
        let Setup {
            controller,
            backend,
        } = setup(4, |config| config.controller.quotas.actions_in_flight = 1);
        backend.delay::<StateRequest>(Duration::from_secs(1));
        let first = controller.act(TENANT, request("t1", Action::State(StateAction {})));
        tokio::pin!(first);
        while backend.ops().is_empty() {
            assert!(futures::poll!(first.as_mut()).is_pending());
            tokio::task::yield_now().await;
        }
        let refused = controller
            .act(TENANT, request("t2", Action::State(StateAction {})))
            .await;
        assert!(
            matches!(&refused, Err(ControllerError::ResourceExhausted(m)) if m.contains("actions_in_flight")),
            "{refused:?}"
        );
        first.await.unwrap();
        assert_eq!(backend.ops(), ["state"]);
        assert!(controller.known_thread(TENANT, "t2").is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn an_agents_next_action_waiting_for_its_last_picture_is_not_counted_twice() {
        let Setup {
            controller,
            backend,
        } = setup(4, |config| config.controller.quotas.actions_in_flight = 1);
        // The picture after the reply takes a while; the agent acts again meanwhile.
        backend.delay::<ScreenshotRequest>(Duration::from_secs(2));
        controller
            .act(TENANT, request("t1", navigate("https://x.example/")))
            .await
            .unwrap();
        let next = controller
            .act(TENANT, request("t1", navigate("https://x.example/")))
            .await;
        assert!(next.is_ok(), "{next:?}");
        assert_eq!(backend.requests::<ScreenshotRequest>().len(), 1);
    }

    #[tokio::test]
    async fn a_thread_on_the_phone_with_no_phone_connected_is_unavailable() {
        let Setup {
            controller,
            backend,
        } = setup(4, |_| {});
        let on_phone = ActRequest {
            backend: "device".into(),
            ..request("t1", Action::State(StateAction {}))
        };
        let refused = controller.act(TENANT, on_phone).await;
        assert!(
            matches!(&refused, Err(ControllerError::Unavailable(m)) if m.contains("no phone with a browser is connected")),
            "{refused:?}"
        );
        assert!(backend.ops().is_empty());
        // Moved back to the workers, it runs there; a backend that does not exist is refused.
        controller
            .set_backend(TENANT, "t1", "playwright")
            .await
            .unwrap();
        controller
            .act(TENANT, request("t1", Action::State(StateAction {})))
            .await
            .unwrap();
        assert!(matches!(
            controller.set_backend(TENANT, "t1", "chrome").await,
            Err(ControllerError::InvalidArgument(_))
        ));
        assert_eq!(
            controller.known_thread(TENANT, "t1").unwrap().backend,
            crate::config::BackendChoice::Chromium
        );
    }
}
