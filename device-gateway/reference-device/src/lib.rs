//! The reference device: a program that connects to the device gateway as a phone does and
//! carries out the fifteen ops on a headless Chromium (the worker's [`ChromiumBackend`]), so
//! the gateway's whole path is tested without a phone.
//!
//! Being the worker's own code, it proves nothing about the phone's: the parity and phone
//! tests run the phone's Kotlin code instead (`android/run-phone.sh`). This one stays for the
//! benchmark (no JVM start-up, the worker's browser code: the numbers are the gateway path's)
//! and the telemetry test (it exports its own spans).
//!
//! It behaves as the phone does (`PROTOCOL.md`, the spec, `android/`): one page, whatever
//! thread the controller acts for, made by `open` (until then ops answer `not_found`); the
//! take-over shows that page, making one with the phone's own profile (mobile, 412×915) when
//! none is open; `state` says `user_control` while the user has the page (a take-over, or a
//! hold the gateway opened) and `host` is the device id; events the user causes while the
//! device is disconnected go out after the next welcome. The backend saves the cookies after
//! every load and fetch, which is the phone's `CookieManager.flush()`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use nanomuse_common::check_name;
use nanomuse_proto::*;
use nanomuse_worker::{ChromiumBackend, WorkerConfig};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use nanomuse_device_gateway::ops::{self, DeviceOp};
use nanomuse_device_gateway::protocol::{
    self, DeviceEvent, DeviceRequest, DeviceResult, Hello, HoldNotice, Message,
};

/// What the device sends as `app` in its hello.
pub const APP: &str = "reference-device";
/// The waits between attempts to reach the gateway: doubling from the first to the last.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const LAST_BACKOFF: Duration = Duration::from_secs(5);
/// How long opening the socket may take before the attempt counts as failed.
const CONNECT_WITHIN: Duration = Duration::from_secs(10);
/// Take-overs and hand-backs kept while disconnected (the phone's number); older ones go.
const QUEUED_EVENTS: usize = 16;

/// How the reference device reaches the gateway and runs its browser.
#[derive(Clone)]
pub struct ReferenceConfig {
    /// The gateway's phone endpoint, `ws://host:port/device`.
    pub gateway: String,
    /// 1–128 of `A-Z a-z 0-9 . _ -`; also the `host` in `state` and the profile's folder.
    pub device_id: String,
    /// The device token the gateway maps to a tenant.
    pub token: String,
    /// The browser profile lives at `<profiles_root>/device/<device_id>/browser-profile/`.
    pub profiles_root: PathBuf,
    /// The Chromium binary; `None`: the worker's default (`/usr/bin/chromium`).
    pub chromium: Option<PathBuf>,
    /// The bound of a navigation, a back and a settle when the request gives none.
    pub timeout_ms: u64,
}

impl Default for ReferenceConfig {
    fn default() -> Self {
        Self {
            gateway: "ws://127.0.0.1:50071/device".into(),
            device_id: "reference-device".into(),
            token: String::new(),
            profiles_root: PathBuf::from("data/reference-device"),
            chromium: None,
            timeout_ms: 30_000,
        }
    }
}

impl std::fmt::Debug for ReferenceConfig {
    /// Everything but the token, which is a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReferenceConfig")
            .field("gateway", &self.gateway)
            .field("device_id", &self.device_id)
            .field("profiles_root", &self.profiles_root)
            .field("chromium", &self.chromium)
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

impl ReferenceConfig {
    /// Checks what can be checked before connecting; the message names the setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.gateway.starts_with("wss://") {
            return Err(format!(
                "gateway {:?}: the reference device speaks plain ws:// only (it is built \
                 without TLS); reach the gateway on its own port or through a local tunnel",
                self.gateway
            ));
        }
        if !self.gateway.starts_with("ws://") {
            return Err(format!(
                "gateway {:?} is not a WebSocket URL; give one like ws://127.0.0.1:50071/device",
                self.gateway
            ));
        }
        check_name("device id", &self.device_id)?;
        if self.token.is_empty() {
            return Err("the device token must not be empty".into());
        }
        self.worker_config().validate()
    }

    /// The worker configuration of the device's browser: named after the device, so `state`
    /// reports the device id as its `host`.
    fn worker_config(&self) -> WorkerConfig {
        let defaults = WorkerConfig::default();
        WorkerConfig {
            name: self.device_id.clone(),
            chromium: self.chromium.clone().unwrap_or(defaults.chromium.clone()),
            profiles_root: self.profiles_root.clone(),
            timeout_ms: self.timeout_ms,
            // A phone has one browser.
            warm_browsers: 0,
            ..defaults
        }
    }
}

/// A running reference device; see [`start`].
pub struct ReferenceDevice {
    device: Arc<Device>,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// Starts the device: it connects, says hello and serves the gateway's requests, connecting
/// again after a drop, until `shutdown` is cancelled or the gateway refuses it.
pub fn start(config: ReferenceConfig, shutdown: CancellationToken) -> ReferenceDevice {
    let shutdown = shutdown.child_token();
    let device = Arc::new(Device {
        backend: ChromiumBackend::new(Arc::new(config.worker_config())),
        session: Session::new("device", config.device_id.as_str(), "phone"),
        config,
        link: Mutex::default(),
        control: Mutex::default(),
        connected: watch::Sender::new(false),
        holds: watch::Sender::new(None),
        ended: watch::Sender::new(None),
        ops: TaskTracker::new(),
    });
    let task = tokio::spawn(keep_connected(device.clone(), shutdown.clone()));
    ReferenceDevice {
        device,
        shutdown,
        task,
    }
}

impl ReferenceDevice {
    /// The user takes the page (the app slides it up as a sheet, making a mobile page when none
    /// is open): the gateway is told, and `state` answers `user_control: true` until
    /// [`hand_back`](Self::hand_back). Nothing is sent when the user has the page already.
    pub async fn take_over(&self, reason: &str) {
        if let Err(error) = self.device.show_page().await {
            tracing::warn!(%error, "no page to show for the take-over");
        }
        let taken = self
            .device
            .control(|control| !std::mem::replace(&mut control.user, true));
        if taken {
            self.device.send_event(DeviceEvent {
                event: "take_over".into(),
                reason: Some(reason.to_string()).filter(|reason| !reason.trim().is_empty()),
                trace: None,
            });
        }
    }

    /// The user presses Done: the gateway is told (it closes its hold), and the page is the
    /// agent's again. Nothing is sent when the user does not have the page.
    pub async fn hand_back(&self) {
        let handed = self.device.control(|control| {
            control.hold = None;
            std::mem::replace(&mut control.user, false)
        });
        if handed {
            self.device.send_event(DeviceEvent {
                event: "handed_back".into(),
                reason: None,
                trace: None,
            });
        }
    }

    /// The last `hold` message the gateway sent (`None` before the first).
    pub fn holds(&self) -> watch::Receiver<Option<HoldNotice>> {
        self.device.holds.subscribe()
    }

    /// True from the gateway's welcome until the connection drops.
    pub fn connected(&self) -> watch::Receiver<bool> {
        self.device.connected.subscribe()
    }

    /// The device's browser and the session of its one page: what a test uses to act as the
    /// user on the page while they have it.
    pub fn browser(&self) -> (&ChromiumBackend, Session) {
        (&self.device.backend, self.device.session.clone())
    }

    /// Waits until the device has stopped for good: `Ok` after shutdown, or the reason the
    /// gateway gave when it refused the device (a bad token or hello, or another connection
    /// with the same id), which trying again would not change.
    pub async fn ended(&self) -> Result<(), String> {
        let mut ended = self.device.ended.subscribe();
        let outcome = ended.wait_for(Option::is_some).await;
        match outcome.as_deref() {
            Ok(Some(outcome)) => outcome.clone(),
            _ => Err("the device's connection task is gone".into()),
        }
    }

    /// Closes the connection, lets the ops in flight stop and closes the browser cleanly.
    pub async fn stop(self) {
        self.shutdown.cancel();
        if let Err(error) = self.task.await {
            tracing::error!(%error, "the device's connection task failed");
        }
        // Ops watch the same token, so this is quick; no op can relaunch the browser after.
        self.device.ops.close();
        self.device.ops.wait().await;
        self.device.backend.pool.close_all().await;
        tracing::info!(device = %self.device.config.device_id, "reference device stopped");
    }
}

/// What the connection loop, the op tasks and the handle share.
struct Device {
    config: ReferenceConfig,
    backend: ChromiumBackend,
    /// The phone has one page, whatever thread the controller acts for.
    session: Session,
    link: Mutex<Link>,
    control: Mutex<Control>,
    connected: watch::Sender<bool>,
    holds: watch::Sender<Option<HoldNotice>>,
    /// How the connection loop ended, once it has.
    ended: watch::Sender<Option<Result<(), String>>>,
    ops: TaskTracker,
}

/// `Device::run_named`: one arm per op of the seam.
macro_rules! dispatch {
    ([] $($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
        impl Device {
            async fn run_named(&self, op: &str, args: &Value) -> Result<Value, BackendError> {
                match op {
                    $($name => self.run_op::<$request>(args).await,)*
                    other => Err(BackendError::InvalidArgument(format!(
                        "unknown browser op {other:?}; the ops are {}",
                        OP_NAMES.join(", ")
                    ))),
                }
            }
        }
    };
}
nanomuse_proto::for_each_op!(dispatch);

/// The way out to the gateway.
#[derive(Default)]
struct Link {
    /// The live connection's queue of outgoing JSON texts; `None` while disconnected.
    /// Unbounded: the gateway bounds the requests pending, and events are the user's pace.
    outbox: Option<mpsc::UnboundedSender<String>>,
    /// Events waiting for the next welcome.
    queued: VecDeque<String>,
}

/// Who has the page.
#[derive(Default)]
struct Control {
    /// The user has it: a take-over, or a hold the gateway opened.
    user: bool,
    /// The hold whose sheet is up, if the gateway opened one.
    hold: Option<String>,
}

/// Why a connection ended.
enum Ended {
    /// The device is stopping.
    Shutdown,
    /// The gateway refused or replaced the device: the loop stops.
    Refused(String),
    /// The socket dropped or never opened: the loop tries again.
    Lost { welcomed: bool, why: String },
}

/// Close codes after which connecting again is pointless: a malformed hello or an unknown
/// token is refused again, and a replaced device would only replace its replacement.
fn is_final(code: u16) -> bool {
    matches!(
        code,
        protocol::CLOSE_BAD_HELLO | protocol::CLOSE_UNAUTHORIZED | protocol::CLOSE_REPLACED
    )
}

async fn keep_connected(device: Arc<Device>, shutdown: CancellationToken) {
    let mut backoff = FIRST_BACKOFF;
    let outcome = loop {
        let why = match connection(&device, &shutdown).await {
            Ended::Shutdown => break Ok(()),
            Ended::Refused(why) => {
                tracing::error!(%why, "the gateway refused the device; not trying again");
                break Err(why);
            }
            Ended::Lost { welcomed, why } => {
                if welcomed {
                    backoff = FIRST_BACKOFF;
                }
                why
            }
        };
        tracing::warn!(%why, retry_ms = backoff.as_millis() as u64, "not connected to the gateway");
        tokio::select! {
            _ = shutdown.cancelled() => break Ok(()),
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(LAST_BACKOFF);
    };
    device.ended.send_replace(Some(outcome));
}

/// Marks the device connected for as long as it lives, sending first the events the user
/// caused while it was not.
struct Connected<'a>(&'a Device);

impl<'a> Connected<'a> {
    fn new(device: &'a Device, outbox: mpsc::UnboundedSender<String>) -> Self {
        let mut link = device.link.lock().unwrap();
        for event in link.queued.drain(..) {
            let _ = outbox.send(event);
        }
        link.outbox = Some(outbox);
        device.connected.send_replace(true);
        Self(device)
    }
}

impl Drop for Connected<'_> {
    fn drop(&mut self) {
        self.0.link.lock().unwrap().outbox = None;
        self.0.connected.send_replace(false);
    }
}

/// One connection: the hello, the welcome, then requests in and results out until it ends.
async fn connection(device: &Arc<Device>, shutdown: &CancellationToken) -> Ended {
    let lost = |why: String| Ended::Lost {
        welcomed: false,
        why,
    };
    let limits = WebSocketConfig::default()
        .max_message_size(Some(protocol::MAX_MESSAGE_BYTES))
        .max_frame_size(Some(protocol::MAX_MESSAGE_BYTES));
    let gateway = &device.config.gateway;
    let connecting = tokio::time::timeout(
        CONNECT_WITHIN,
        tokio_tungstenite::connect_async_with_config(gateway.as_str(), Some(limits), true),
    );
    let socket = tokio::select! {
        _ = shutdown.cancelled() => return Ended::Shutdown,
        socket = connecting => match socket {
            Ok(Ok((socket, _))) => socket,
            Ok(Err(error)) => return lost(format!("cannot connect to {gateway}: {error}")),
            Err(_) => return lost(format!("connecting to {gateway} took over {CONNECT_WITHIN:?}")),
        },
    };
    let (mut sink, mut stream) = socket.split();

    let hello = Message::Device(Hello {
        device_id: device.config.device_id.clone(),
        token: device.config.token.clone(),
        browser: true,
        app: APP.into(),
        protocol: protocol::PROTOCOL_VERSION,
    });
    if let Err(error) = sink.send(Frame::text(hello.to_json())).await {
        return lost(format!("the hello could not be sent: {error}"));
    }
    let welcomed = tokio::time::timeout(
        Duration::from_millis(protocol::HELLO_WITHIN_MS),
        welcome(&mut stream),
    );
    tokio::select! {
        _ = shutdown.cancelled() => return Ended::Shutdown,
        welcome = welcomed => match welcome {
            Ok(Ok(welcome)) => tracing::info!(gateway, device = %welcome.device_id,
                max_message_bytes = welcome.max_message_bytes, "connected to the gateway"),
            Ok(Err(ended)) => return ended,
            Err(_) => return lost(format!(
                "no welcome within {} ms of the hello", protocol::HELLO_WITHIN_MS)),
        },
    }

    let (outbox, mut outgoing) = mpsc::unbounded_channel();
    let _connected = Connected::new(device, outbox.clone());
    let lost = |why: String| Ended::Lost {
        welcomed: true,
        why,
    };
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => {
                let goodbye = CloseFrame {
                    code: 1001.into(),
                    reason: "the device is stopping".into(),
                };
                let _ = sink.send(Frame::Close(Some(goodbye))).await;
                return Ended::Shutdown;
            }
            Some(text) = outgoing.recv() => {
                if let Err(error) = sink.send(Frame::text(text)).await {
                    return lost(format!("sending to the gateway failed: {error}"));
                }
            }
            // Reading on is also what answers the gateway's pings: tungstenite queues the pong
            // and sends it on the next read.
            frame = stream.next() => match frame {
                Some(Ok(Frame::Text(text))) => device.received(&text, &outbox, shutdown),
                Some(Ok(Frame::Binary(_))) => {
                    tracing::warn!("the gateway sent a binary message; the protocol has none");
                }
                Some(Ok(Frame::Close(frame))) => return closed(frame, true),
                Some(Ok(_)) => {}
                Some(Err(error)) => return lost(format!("the connection failed: {error}")),
                None => return lost("the gateway closed the connection".into()),
            },
        }
    }
}

/// Reads until the welcome; an error or a close before it is a refusal.
async fn welcome<S>(stream: &mut S) -> Result<protocol::Welcome, Ended>
where
    S: futures::Stream<Item = Result<Frame, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let text = match stream.next().await {
            Some(Ok(Frame::Text(text))) => text,
            Some(Ok(Frame::Close(frame))) => return Err(closed(frame, false)),
            Some(Ok(_)) => continue,
            Some(Err(error)) => {
                return Err(Ended::Lost {
                    welcomed: false,
                    why: format!("the connection failed before the welcome: {error}"),
                });
            }
            None => {
                return Err(Ended::Lost {
                    welcomed: false,
                    why: "the gateway closed the connection before the welcome".into(),
                });
            }
        };
        match protocol::parse(&text) {
            Ok(Message::Welcome(welcome)) => return Ok(welcome),
            // The only error the gateway answers a hello with is its refusal; the close
            // (4000 or 4001) follows.
            Ok(Message::Error(error)) => return Err(Ended::Refused(error.error)),
            Ok(other) => tracing::warn!(?other, "a message before the welcome; ignored"),
            Err(error) => tracing::warn!(%error, "an unreadable message before the welcome"),
        }
    }
}

/// How a close frame from the gateway ends the connection.
fn closed(frame: Option<CloseFrame>, welcomed: bool) -> Ended {
    let (code, reason) = frame.map_or((1005, String::new()), |frame| {
        (u16::from(frame.code), frame.reason.to_string())
    });
    let why = format!("the gateway closed the connection ({code} {reason})");
    if is_final(code) {
        Ended::Refused(why)
    } else {
        Ended::Lost { welcomed, why }
    }
}

impl Device {
    fn control<T>(&self, change: impl FnOnce(&mut Control) -> T) -> T {
        change(&mut self.control.lock().unwrap())
    }

    /// Handles one message from the gateway. Requests run in tasks of their own, so a slow op
    /// holds up neither the others nor the pongs.
    fn received(
        self: &Arc<Self>,
        text: &str,
        outbox: &mpsc::UnboundedSender<String>,
        shutdown: &CancellationToken,
    ) {
        match protocol::parse(text) {
            Ok(Message::DeviceRequest(request)) => self.spawn_op(request, outbox, shutdown),
            Ok(Message::Hold(notice)) => self.hold(notice),
            Ok(Message::Ping) => {
                let _ = outbox.send(Message::Pong.to_json());
            }
            Ok(Message::Error(error)) => {
                tracing::warn!(error = %error.error, id = ?error.id, "the gateway reported an error")
            }
            Ok(Message::Pong | Message::Welcome(_)) => {}
            // Answering with an error could start the two sides arguing; a log is enough.
            Ok(other) => tracing::warn!(?other, "a message a device does not expect; ignored"),
            Err(error) => tracing::warn!(%error, "an unreadable message from the gateway"),
        }
    }

    /// A hold opened puts the page in the user's hands (the app shows its sheet); closing that
    /// hold takes the sheet down. The close of an older hold leaves the sheet up.
    fn hold(&self, notice: HoldNotice) {
        tracing::info!(hold = %notice.hold_id, state = %notice.state, "hold");
        self.control(|control| {
            if notice.state == "open" {
                control.hold = Some(notice.hold_id.clone());
                control.user = true;
            } else if control
                .hold
                .as_ref()
                .is_none_or(|shown| *shown == notice.hold_id)
            {
                control.hold = None;
                control.user = false;
            }
        });
        self.holds.send_replace(Some(notice));
    }

    fn spawn_op(
        self: &Arc<Self>,
        request: DeviceRequest,
        outbox: &mpsc::UnboundedSender<String>,
        shutdown: &CancellationToken,
    ) {
        let device = self.clone();
        let outbox = outbox.clone();
        let shutdown = shutdown.clone();
        let span = tracing::info_span!(
            "device op",
            otel.name = format!("device {}", request.browser_op),
            otel.kind = "server",
            rpc.system = "nanomuse-device",
            rpc.method = %request.browser_op,
            id = %request.id,
        );
        // The gateway's op span is the parent, from the message's W3C context.
        if let Some(trace) = &request.trace {
            nanomuse_common::telemetry::set_remote_parent(&span, &trace.traceparent);
        }
        let op = async move {
            let started = std::time::Instant::now();
            let outcome = tokio::select! {
                _ = shutdown.cancelled() => return,
                outcome = device.carry_out(&request) => outcome,
            };
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let answer = |outcome: Result<Value, BackendError>| {
                let mut result = match outcome {
                    Ok(result) => DeviceResult::ok(request.id.clone(), result),
                    Err(error) => DeviceResult::failed(
                        request.id.clone(),
                        error.to_string(),
                        ops::code_of(&error),
                    ),
                };
                result.trace = request.trace.clone();
                Message::DeviceResult(result).to_json()
            };
            if let Err(error) = &outcome {
                tracing::info!(elapsed_ms, %error, "failed");
            } else {
                tracing::debug!(elapsed_ms, "done");
            }
            let mut text = answer(outcome);
            if text.len() > protocol::MAX_MESSAGE_BYTES {
                // The gateway would close the connection on it, failing every other request.
                text = answer(Err(BackendError::ResourceExhausted(format!(
                    "the result is larger than the gateway's {} bytes a message",
                    protocol::MAX_MESSAGE_BYTES
                ))));
            }
            if outbox.send(text).is_err() {
                // The gateway failed the request when the connection dropped.
                tracing::info!("the connection the request came on is gone; result dropped");
            }
        };
        self.ops.spawn(op.instrument(span));
    }

    /// Carries out one request: its result, or the error to answer with.
    async fn carry_out(&self, request: &DeviceRequest) -> Result<Value, BackendError> {
        if request.op != "browser" {
            return Err(BackendError::InvalidArgument(format!(
                "this device carries out only \"browser\" ops, not {:?}",
                request.op
            )));
        }
        self.run_named(&request.browser_op, &request.args).await
    }

    /// Reads `args` as `Req`, runs it on the one page and writes its reply as the `result`.
    async fn run_op<Req: DeviceOp>(&self, args: &Value) -> Result<Value, BackendError> {
        let mut request = Req::from_args(args).map_err(BackendError::InvalidArgument)?;
        request.set_session(self.session.clone());
        let reply = request.run(&self.backend).await?;
        let mut result = Req::reply_to_result(&reply);
        if Req::NAME == StateRequest::NAME {
            // A worker's page is never under a person's hand; the phone's is while they have it.
            result["user_control"] = json!(self.control(|control| control.user));
        }
        Ok(result)
    }

    /// The page for the take-over sheet: the open one, or a new one with the phone's own
    /// profile.
    async fn show_page(&self) -> Result<(), BackendError> {
        let session = Some(self.session.clone());
        match self
            .backend
            .state(StateRequest {
                session: session.clone(),
            })
            .await
        {
            Err(BackendError::NotFound(_)) => {
                let mobile = OpenRequest {
                    session,
                    user_agent: String::new(),
                    width: 0,
                    height: 0,
                    mobile: true,
                };
                self.backend.open(mobile).await.map(drop)
            }
            other => other.map(drop),
        }
    }

    /// Sends a take-over or hand-back to the gateway, or keeps it for the next welcome.
    fn send_event(&self, event: DeviceEvent) {
        let name = event.event.clone();
        let text = Message::DeviceEvent(event).to_json();
        let mut link = self.link.lock().unwrap();
        let text = match &link.outbox {
            Some(outbox) => match outbox.send(text) {
                Ok(()) => return tracing::info!(event = %name, "told the gateway"),
                Err(unsent) => unsent.0,
            },
            None => text,
        };
        tracing::info!(event = %name, "not connected; it goes after the next welcome");
        if link.queued.len() == QUEUED_EVENTS {
            link.queued.pop_front();
        }
        link.queued.push_back(text);
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::path::Path;

    use axum::response::Html;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use tokio::net::{TcpListener, TcpStream};
    use tokio_tungstenite::WebSocketStream;

    use super::*;
    use nanomuse_device_gateway::protocol::{ErrorMessage, Trace, Welcome};

    /// How long a test waits for the device before it fails instead of hanging.
    const PATIENCE: Duration = Duration::from_secs(60);

    /// A gateway for one test: the test speaks for it, message by message.
    struct Gateway {
        listener: TcpListener,
        url: String,
    }

    impl Gateway {
        async fn start() -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("ws://{}/device", listener.local_addr().unwrap());
            Self { listener, url }
        }

        /// The device's next connection, and the hello it opens with.
        async fn accept(&self) -> (Phone, Hello) {
            let (stream, _) = tokio::time::timeout(PATIENCE, self.listener.accept())
                .await
                .expect("the device did not connect")
                .unwrap();
            let socket = tokio_tungstenite::accept_async(stream).await.unwrap();
            let mut phone = Phone { socket, asked: 0 };
            let Message::Device(hello) = phone.next().await else {
                panic!("the first message must be the hello");
            };
            (phone, hello)
        }
    }

    /// The gateway's end of one connection.
    struct Phone {
        socket: WebSocketStream<TcpStream>,
        asked: u32,
    }

    impl Phone {
        async fn send(&mut self, message: Message) {
            self.socket
                .send(Frame::text(message.to_json()))
                .await
                .unwrap();
        }

        async fn welcome(&mut self) {
            self.send(Message::Welcome(Welcome {
                device_id: "pixel-test".into(),
                max_message_bytes: protocol::MAX_MESSAGE_BYTES,
                ping_interval_ms: protocol::PING_INTERVAL_MS,
            }))
            .await;
        }

        /// The device's next frame, whatever it is.
        async fn frame(&mut self) -> Frame {
            tokio::time::timeout(PATIENCE, self.socket.next())
                .await
                .expect("the device went quiet")
                .expect("the device closed the connection")
                .unwrap()
        }

        /// The device's next message (the socket's own pings and pongs are not messages).
        async fn next(&mut self) -> Message {
            loop {
                match self.frame().await {
                    Frame::Text(text) => return protocol::parse(&text).unwrap(),
                    Frame::Close(frame) => panic!("the device closed the connection: {frame:?}"),
                    _ => {}
                }
            }
        }

        /// Sends one request of `op` and waits for its result, which must echo the trace.
        async fn request(&mut self, op: &str, browser_op: &str, args: Value) -> DeviceResult {
            self.asked += 1;
            let id = self.asked.to_string();
            let trace = Trace {
                traceparent: format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{:016x}-01", self.asked),
                tracestate: String::new(),
            };
            self.send(Message::DeviceRequest(DeviceRequest {
                id: id.clone(),
                op: op.into(),
                browser_op: browser_op.into(),
                args,
                timeout_ms: 30_000,
                trace: Some(trace.clone()),
            }))
            .await;
            match self.next().await {
                Message::DeviceResult(result) if result.id == id => {
                    assert_eq!(result.trace, Some(trace), "the trace comes back");
                    result
                }
                other => panic!("expected the result of request {id}, got {other:?}"),
            }
        }

        async fn ask(&mut self, browser_op: &str, args: Value) -> DeviceResult {
            self.request("browser", browser_op, args).await
        }

        /// The result of an op that must succeed.
        async fn ok(&mut self, browser_op: &str, args: Value) -> Value {
            let answer = self.ask(browser_op, args).await;
            assert!(answer.ok, "{browser_op} failed: {:?}", answer.error);
            answer.result.expect("an ok result has a result")
        }

        /// The error of an op that must fail: (code, message).
        async fn failed(&mut self, browser_op: &str, args: Value) -> (String, String) {
            let answer = self.ask(browser_op, args).await;
            assert!(!answer.ok, "{browser_op} should fail: {:?}", answer.result);
            (answer.code.unwrap(), answer.error.unwrap())
        }

        async fn event(&mut self) -> DeviceEvent {
            match self.next().await {
                Message::DeviceEvent(event) => event,
                other => panic!("expected a device event, got {other:?}"),
            }
        }
    }

    fn config(gateway: &Gateway, profiles: &Path) -> ReferenceConfig {
        ReferenceConfig {
            gateway: gateway.url.clone(),
            device_id: "pixel-test".into(),
            token: "secret".into(),
            profiles_root: profiles.to_path_buf(),
            chromium: None,
            timeout_ms: 15_000,
        }
    }

    /// A device whose browser cannot start: for what must be answered without one.
    fn browserless(gateway: &Gateway, profiles: &Path) -> ReferenceDevice {
        let config = ReferenceConfig {
            chromium: Some(profiles.join("no-chromium-here")),
            ..config(gateway, profiles)
        };
        start(config, CancellationToken::new())
    }

    async fn serve_site() -> SocketAddr {
        const PAGE: &str = r#"<!doctype html><html><head><title>Phone page</title>
            <meta name="viewport" content="width=device-width"></head>
            <body><p>on the phone</p></body></html>"#;
        let app = axum::Router::new().route("/page", axum::routing::get(async || Html(PAGE)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        address
    }

    /// The width and height a JPEG declares in its frame header.
    fn jpeg_size(jpeg: &[u8]) -> (u32, u32) {
        assert_eq!(&jpeg[..2], &[0xFF, 0xD8], "not a JPEG");
        let mut at = 2;
        while at + 9 < jpeg.len() {
            let marker = jpeg[at + 1];
            if matches!(marker, 0xC0..=0xC2) {
                let height = u16::from_be_bytes([jpeg[at + 5], jpeg[at + 6]]);
                let width = u16::from_be_bytes([jpeg[at + 7], jpeg[at + 8]]);
                return (width.into(), height.into());
            }
            at += 2 + u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]) as usize;
        }
        panic!("no JPEG frame header");
    }

    async fn user_control(phone: &mut Phone) -> bool {
        phone.ok("state", json!({})).await["user_control"]
            .as_bool()
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_device_lends_its_one_page_and_says_when_the_user_has_it() {
        let site = serve_site().await;
        let gateway = Gateway::start().await;
        let profiles = tempfile::tempdir().unwrap();
        let device = start(config(&gateway, profiles.path()), CancellationToken::new());
        let (mut phone, hello) = gateway.accept().await;
        assert_eq!(
            hello,
            Hello {
                device_id: "pixel-test".into(),
                token: "secret".into(),
                browser: true,
                app: APP.into(),
                protocol: 1,
            }
        );
        phone.welcome().await;
        device.connected().wait_for(|up| *up).await.unwrap();

        // As on the phone, there is no page until one is opened; the controller opens it when
        // it reads "is not open".
        let url = format!("http://{site}/page");
        let (code, error) = phone.failed("navigate", json!({"url": url})).await;
        assert_eq!(code, "not_found");
        assert!(error.contains("is not open"), "{error}");

        // The user takes over first: the sheet shows a page with the phone's own profile, and
        // the user's input (played here on the device's browser) is what the agent finds.
        device.take_over("signing in").await;
        let event = phone.event().await;
        assert_eq!(
            (event.event.as_str(), event.reason.as_deref()),
            ("take_over", Some("signing in"))
        );
        let state = phone.ok("state", json!({})).await;
        assert_eq!(state["user_control"], true);
        assert_eq!(state["host"], "pixel-test");
        assert_eq!(
            (&state["width"], &state["height"]),
            (&json!(412), &json!(915))
        );
        let (browser, session) = device.browser();
        let user_went = NavigateRequest {
            session: Some(session),
            url: url.clone(),
            timeout_ms: 0,
        };
        browser.navigate(user_went).await.unwrap();
        device.take_over("again").await; // the user has it already: nothing is sent
        device.hand_back().await;
        assert_eq!(phone.event().await.event, "handed_back");
        let state = phone.ok("state", json!({})).await;
        assert_eq!(
            (&state["url"], &state["user_control"]),
            (&json!(url), &json!(false))
        );

        let page = phone.ok("navigate", json!({"url": url})).await;
        assert_eq!(page["title"], "Phone page");
        assert_eq!(page["status"], 200);
        let shot = phone.ok("screenshot", json!({"quality": 60})).await;
        let jpeg = BASE64.decode(shot["jpeg"].as_str().unwrap()).unwrap();
        assert_eq!(jpeg_size(&jpeg), (412, 915));
        assert_eq!(
            (&shot["width"], &shot["height"]),
            (&json!(412), &json!(915))
        );
        let touch = phone
            .ok(
                "evaluate",
                json!({"js": "(n) => navigator.maxTouchPoints + n", "arg": 0}),
            )
            .await;
        assert_eq!(touch, json!({"value": "5", "encoded": "json"}));

        // A hold the gateway opens puts the page in the user's hands, as the app's sheet does;
        // the close of another hold leaves it there. The device reads its messages in order,
        // so the state asked after a notice sees it.
        let mut holds = device.holds();
        for (state, hold_id, held) in [
            ("open", "h2", true),
            ("closed", "h1", true),
            ("closed", "h2", false),
        ] {
            phone
                .send(Message::Hold(HoldNotice {
                    state: state.into(),
                    hold_id: hold_id.into(),
                    reason: Some("sign in".into()),
                }))
                .await;
            assert_eq!(
                user_control(&mut phone).await,
                held,
                "hold {hold_id} {state}"
            );
            let notice = holds.wait_for(|notice| notice.is_some()).await.unwrap();
            assert_eq!(notice.as_ref().unwrap().hold_id, hold_id);
        }

        // An explicit profile is honoured; after a close there is no page again.
        let desktop = phone.ok("open", json!({"mobile": false})).await;
        assert_eq!(
            (&desktop["width"], &desktop["height"]),
            (&json!(1280), &json!(900))
        );
        assert_eq!(desktop["url"], url);
        assert_eq!(phone.ok("close", json!({})).await, json!({}));
        assert_eq!(phone.failed("state", json!({})).await.0, "not_found");
        device.stop().await;
    }

    #[tokio::test]
    async fn bad_requests_are_answered_with_what_is_wrong() {
        let gateway = Gateway::start().await;
        let profiles = tempfile::tempdir().unwrap();
        let device = browserless(&gateway, profiles.path());
        let (mut phone, _) = gateway.accept().await;
        phone.welcome().await;

        let (code, error) = phone.failed("fly", json!({})).await;
        assert_eq!(code, "invalid_argument");
        assert_eq!(
            error,
            format!(
                "unknown browser op \"fly\"; the ops are {}",
                OP_NAMES.join(", ")
            )
        );
        let camera = phone.request("camera", "snap", json!({})).await;
        assert!(!camera.ok && camera.error.unwrap().contains("\"camera\""));
        let (code, error) = phone.failed("navigate", json!({})).await;
        assert_eq!(
            (code.as_str(), error.as_str()),
            ("invalid_argument", "navigate needs url (a string)")
        );
        let (code, error) = phone.failed("tap", json!({"x": "1", "y": 2})).await;
        assert_eq!(
            (code.as_str(), error.as_str()),
            ("invalid_argument", "tap needs x (a number)")
        );
        let (_, error) = phone
            .failed("fetch", json!({"url": "http://127.0.0.1/", "body": "!!"}))
            .await;
        assert!(error.contains("body is not base64"), "{error}");

        // A browser that cannot start is reported as such.
        let (code, error) = phone.failed("open", json!({"mobile": true})).await;
        assert_eq!(code, "unavailable");
        assert!(error.starts_with("could not start Chromium"), "{error}");

        // Both kinds of ping are answered.
        phone.send(Message::Ping).await;
        assert_eq!(phone.next().await, Message::Pong);
        phone.socket.send(Frame::Ping("beat".into())).await.unwrap();
        match phone.frame().await {
            Frame::Pong(payload) => assert_eq!(&payload[..], b"beat"),
            other => panic!("expected the pong, got {other:?}"),
        }
        device.stop().await;
    }

    #[tokio::test]
    async fn a_refused_token_stops_the_device() {
        let gateway = Gateway::start().await;
        let profiles = tempfile::tempdir().unwrap();
        let device = browserless(&gateway, profiles.path());
        let (mut phone, _) = gateway.accept().await;
        phone
            .send(Message::Error(ErrorMessage {
                error: "the device token is not known; pair the phone again".into(),
                id: None,
            }))
            .await;
        let refusal = CloseFrame {
            code: protocol::CLOSE_UNAUTHORIZED.into(),
            reason: "unauthorized".into(),
        };
        let _ = phone.socket.send(Frame::Close(Some(refusal))).await;
        let ended = device.ended().await.unwrap_err();
        assert!(ended.contains("the device token is not known"), "{ended}");
        assert!(!*device.connected().borrow());
        device.stop().await;
    }

    #[tokio::test]
    async fn a_dropped_connection_is_made_again_until_the_device_is_replaced() {
        let gateway = Gateway::start().await;
        let profiles = tempfile::tempdir().unwrap();
        let device = browserless(&gateway, profiles.path());
        let mut connected = device.connected();
        let (mut phone, _) = gateway.accept().await;
        phone.welcome().await;
        connected.wait_for(|up| *up).await.unwrap();

        drop(phone);
        connected.wait_for(|up| !*up).await.unwrap();
        // What the user does meanwhile reaches the gateway right after the next welcome.
        device.take_over("offline").await;
        let (mut phone, hello) = gateway.accept().await;
        assert_eq!(hello.device_id, "pixel-test");
        phone.welcome().await;
        connected.wait_for(|up| *up).await.unwrap();
        let event = phone.event().await;
        assert_eq!(
            (event.event.as_str(), event.reason.as_deref()),
            ("take_over", Some("offline"))
        );

        // Another connection with the same id took over: connecting again would only fight it.
        let replaced = CloseFrame {
            code: protocol::CLOSE_REPLACED.into(),
            reason: "replaced by a new connection".into(),
        };
        phone
            .socket
            .send(Frame::Close(Some(replaced)))
            .await
            .unwrap();
        let ended = device.ended().await.unwrap_err();
        assert!(
            ended.contains("4002 replaced by a new connection"),
            "{ended}"
        );
        device.stop().await;
    }
}
