//! The device gateway over real sockets. Where a phone must misbehave — answer out of turn,
//! disconnect mid-op, not answer, fail, send garbage or too much, a bad token — it is played by
//! the test on a raw WebSocket (the phone's own code never does these things). A reconnect and
//! the phones coming and going are the phone's own Kotlin program (`android/run-phone.sh`).

use std::net::SocketAddr;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use nanomuse_device_gateway::GatewayConfig;
use nanomuse_proto::device_gateway_client::DeviceGatewayClient;
use nanomuse_proto::*;
use nanomuse_tests::phone::KotlinPhone;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "device-token-of-acme-0001";

struct Gateway {
    address: SocketAddr,
    backend: GrpcBackend,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Gateway {
    async fn start(tune: impl FnOnce(&mut GatewayConfig)) -> Self {
        nanomuse_tests::logs();
        let mut config = GatewayConfig::default();
        config.device_tokens.insert(TOKEN.into(), "acme".into());
        tune(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(nanomuse_device_gateway::run(
            config,
            listener,
            shutdown.clone(),
        ));
        let backend = GrpcBackend::connect(format!("http://{address}"))
            .await
            .unwrap();
        Self {
            address,
            backend,
            shutdown,
            task,
        }
    }

    async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }
}

fn session() -> Option<Session> {
    Some(Session::new("acme", "default", "thread-1"))
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A phone played by the test.
struct Phone {
    socket: Socket,
}

impl Phone {
    /// Connects and says hello; returns the phone and the gateway's first answer.
    async fn connect(gateway: &Gateway, device_id: &str, token: &str) -> (Self, Value) {
        let url = format!("ws://{}/device", gateway.address);
        let (socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let mut phone = Self { socket };
        phone
            .send(
                json!({"kind": "device", "device_id": device_id, "token": token,
                         "browser": true, "app": "test"}),
            )
            .await;
        let first = phone.next().await;
        (phone, first)
    }

    async fn welcomed(gateway: &Gateway, device_id: &str) -> Self {
        let (phone, welcome) = Self::connect(gateway, device_id, TOKEN).await;
        assert_eq!(welcome["kind"], "welcome", "{welcome}");
        phone
    }

    async fn send(&mut self, message: Value) {
        self.send_text(message.to_string()).await;
    }

    async fn send_text(&mut self, text: String) {
        self.socket.send(Frame::text(text)).await.unwrap();
    }

    /// The next JSON message (pings are answered by the socket).
    async fn next(&mut self) -> Value {
        loop {
            match self.socket.next().await {
                Some(Ok(Frame::Text(text))) => return serde_json::from_str(&text).unwrap(),
                Some(Ok(Frame::Ping(_) | Frame::Pong(_))) => continue,
                other => panic!("expected a message, got {other:?}"),
            }
        }
    }

    /// The close frame's code, once the gateway closes the socket.
    async fn closed_with(&mut self) -> u16 {
        loop {
            match self.socket.next().await {
                Some(Ok(Frame::Close(Some(frame)))) => return frame.code.into(),
                Some(Ok(Frame::Close(None))) | None | Some(Err(_)) => return 0,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// Waits for the next request and answers it with `result`.
    async fn answer(&mut self, op: &str, result: Value) -> Value {
        let request = self.next().await;
        assert_eq!(request["kind"], "device_request", "{request}");
        assert_eq!(request["op"], "browser");
        assert_eq!(request["browser_op"], op, "{request}");
        self.send(
            json!({"kind": "device_result", "id": request["id"], "ok": true,
                         "result": result}),
        )
        .await;
        request
    }
}

fn navigate(url: &str) -> NavigateRequest {
    NavigateRequest {
        session: session(),
        url: url.into(),
        timeout_ms: 0,
    }
}

#[tokio::test]
async fn ops_reach_the_phone_and_answers_come_back_by_id() {
    let gateway = Gateway::start(|_| {}).await;
    let mut phone = Phone::welcomed(&gateway, "pixel").await;

    let backend = gateway.backend.clone();
    let first = tokio::spawn(async move { backend.navigate(navigate("https://a.example/")).await });
    let backend = gateway.backend.clone();
    let request_a = phone.next().await;
    let second =
        tokio::spawn(async move { backend.state(StateRequest { session: session() }).await });
    let request_b = phone.next().await;
    assert_eq!(request_a["args"]["url"], "https://a.example/");
    assert_eq!(request_b["browser_op"], "state");
    // Answered in the other order: matched by id, not by turn.
    phone
        .send(
            json!({"kind": "device_result", "id": request_b["id"], "ok": true,
                     "result": {"url": "https://a.example/", "title": "A", "width": 412,
                                "height": 915, "user_control": true, "host": "pixel"}}),
        )
        .await;
    phone
        .send(
            json!({"kind": "device_result", "id": request_a["id"], "ok": true,
                     "result": {"url": "https://a.example/", "title": "A", "status": 200}}),
        )
        .await;
    let state = second.await.unwrap().unwrap();
    assert_eq!((state.host.as_str(), state.user_control), ("pixel", true));
    let page = first.await.unwrap().unwrap();
    assert_eq!(page.status, 200);
    assert_eq!(page.page.unwrap().title, "A");

    // A failure is the phone's sentence, with its code.
    let backend = gateway.backend.clone();
    let tap = tokio::spawn(async move {
        backend
            .tap(TapRequest {
                session: session(),
                x: 1.0,
                y: 2.0,
                ..Default::default()
            })
            .await
    });
    let request = phone.next().await;
    phone
        .send(
            json!({"kind": "device_result", "id": request["id"], "ok": false,
                     "error": "unknown browser op \"tap\"", "code": "invalid_argument"}),
        )
        .await;
    let error = tap.await.unwrap().unwrap_err();
    assert!(
        matches!(&error, BackendError::InvalidArgument(m) if m.contains("unknown browser op")),
        "{error:?}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_phone_that_disconnects_fails_its_pending_requests_at_once() {
    let gateway = Gateway::start(|c| c.op_timeout_ms = 600_000).await;
    let mut phone = Phone::welcomed(&gateway, "pixel").await;
    let backend = gateway.backend.clone();
    let pending =
        tokio::spawn(async move { backend.navigate(navigate("https://a.example/")).await });
    phone.next().await;
    drop(phone);
    let error = tokio::time::timeout(Duration::from_secs(10), pending)
        .await
        .expect("the op waited for its deadline instead of failing at once")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&error, BackendError::Unavailable(m) if m.contains("disconnected")),
        "{error:?}"
    );
    // With no phone left, ops say so.
    let error = gateway
        .backend
        .state(StateRequest { session: session() })
        .await
        .unwrap_err();
    assert!(
        matches!(&error, BackendError::Unavailable(m) if m.contains("no phone")),
        "{error:?}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn a_phone_that_does_not_answer_fails_the_op_at_its_deadline() {
    let gateway = Gateway::start(|c| c.op_timeout_ms = 300).await;
    let mut phone = Phone::welcomed(&gateway, "pixel").await;
    let backend = gateway.backend.clone();
    let pending =
        tokio::spawn(async move { backend.state(StateRequest { session: session() }).await });
    let request = phone.next().await;
    let error = pending.await.unwrap().unwrap_err();
    assert!(
        matches!(&error, BackendError::Timeout(m) if m.contains("did not answer state")),
        "{error:?}"
    );
    // The late answer is refused, and the phone stays connected.
    phone
        .send(json!({"kind": "device_result", "id": request["id"], "ok": true, "result": {}}))
        .await;
    let refused = phone.next().await;
    assert_eq!(refused["kind"], "error");
    assert!(
        refused["error"].as_str().unwrap().contains("too late"),
        "{refused}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn malformed_messages_are_answered_with_an_error_and_the_phone_stays_connected() {
    let gateway = Gateway::start(|_| {}).await;
    let mut phone = Phone::welcomed(&gateway, "pixel").await;
    for (bad, says) in [
        ("{".to_string(), "not JSON"),
        ("{}".to_string(), "kind"),
        (json!({"kind": "fly"}).to_string(), "fly"),
        (json!({"kind": "device_result", "ok": true}).to_string(), "id"),
        (json!({"kind": "device_event", "event": "dance"}).to_string(), "dance"),
        (json!({"kind": "welcome", "device_id": "x", "max_message_bytes": 1, "ping_interval_ms": 1}).to_string(), "does not send"),
    ] {
        phone.send_text(bad.clone()).await;
        let answer = phone.next().await;
        assert_eq!(answer["kind"], "error", "{bad}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(says), "{bad}: {answer}");
    }
    phone
        .socket
        .send(Frame::binary(vec![1, 2, 3]))
        .await
        .unwrap();
    assert_eq!(phone.next().await["kind"], "error");
    phone.send(json!({"kind": "ping"})).await;
    assert_eq!(phone.next().await, json!({"kind": "pong"}));

    let backend = gateway.backend.clone();
    let state =
        tokio::spawn(async move { backend.state(StateRequest { session: session() }).await });
    phone
        .answer("state", json!({"url": "u", "host": "pixel"}))
        .await;
    assert_eq!(state.await.unwrap().unwrap().url, "u");
    gateway.stop().await;
}

#[tokio::test]
async fn an_oversized_message_closes_the_connection_and_fails_what_was_pending() {
    let gateway = Gateway::start(|c| c.max_message_bytes = 64 * 1024).await;
    let mut phone = Phone::welcomed(&gateway, "pixel").await;
    let backend = gateway.backend.clone();
    let pending = tokio::spawn(async move {
        backend
            .screenshot(ScreenshotRequest {
                session: session(),
                quality: 0,
            })
            .await
    });
    let request = phone.next().await;
    let huge = "A".repeat(100 * 1024);
    phone
        .send(
            json!({"kind": "device_result", "id": request["id"], "ok": true,
                     "result": {"jpeg": huge}}),
        )
        .await;
    assert_eq!(phone.closed_with().await, 1009);
    let error = pending.await.unwrap().unwrap_err();
    assert!(matches!(&error, BackendError::Unavailable(_)), "{error:?}");
    gateway.stop().await;
}

#[tokio::test]
async fn a_bad_token_or_hello_is_refused_with_a_reason() {
    let gateway = Gateway::start(|_| {}).await;
    let (mut phone, answer) = Phone::connect(&gateway, "pixel", "not-a-known-token-000").await;
    assert_eq!(answer["kind"], "error");
    assert!(
        answer["error"].as_str().unwrap().contains("token"),
        "{answer}"
    );
    assert_eq!(phone.closed_with().await, 4001);

    let (mut phone, answer) = Phone::connect(&gateway, "../etc", TOKEN).await;
    assert!(
        answer["error"].as_str().unwrap().contains("device_id"),
        "{answer}"
    );
    assert_eq!(phone.closed_with().await, 4000);
    gateway.stop().await;
}

#[tokio::test]
async fn a_reconnect_takes_over_and_the_controller_sees_phones_come_and_go() {
    let gateway = Gateway::start(|_| {}).await;
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", gateway.address))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut watcher = DeviceGatewayClient::new(channel)
        .watch_devices(WatchDevicesRequest {})
        .await
        .unwrap()
        .into_inner();

    let mut old = KotlinPhone::connect(gateway.address, "pixel", TOKEN).await;
    let event = watcher.message().await.unwrap().unwrap();
    assert_eq!(
        (
            event.kind.as_str(),
            event.tenant.as_str(),
            event.device_id.as_str(),
            event.browser
        ),
        ("connected", "acme", "pixel", true)
    );
    // The same phone again (the app restarted): the new connection wins, and the old one,
    // told so with 4002, stays off instead of taking it back.
    let mut new = KotlinPhone::connect(gateway.address, "pixel", TOKEN).await;
    assert!(old.until("phone REPLACED").await.contains("4002"));
    assert_eq!(watcher.message().await.unwrap().unwrap().kind, "connected");

    // Ops reach the new phone.
    gateway
        .backend
        .open(OpenRequest {
            session: session(),
            mobile: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let state = gateway
        .backend
        .state(StateRequest { session: session() })
        .await
        .unwrap();
    assert_eq!((state.host.as_str(), state.user_control), ("pixel", false));

    // The user takes over on the phone: the event names the thread its page belongs to.
    new.take_over("signing in").await;
    let event = watcher.message().await.unwrap().unwrap();
    assert_eq!(
        (
            event.kind.as_str(),
            event.thread.as_str(),
            event.reason.as_str()
        ),
        ("take_over", "thread-1", "signing in")
    );
    let state = gateway
        .backend
        .state(StateRequest { session: session() })
        .await
        .unwrap();
    assert!(state.user_control, "the phone says the user has the page");
    new.stop().await;
    let event = watcher.message().await.unwrap().unwrap();
    assert_eq!(
        (event.kind.as_str(), event.device_id.as_str()),
        ("left", "pixel")
    );
    old.stop().await;
    gateway.stop().await;
}

#[tokio::test]
async fn the_phones_live_view_sends_a_picture_when_the_page_changes_and_none_while_still() {
    use nanomuse_proto::screencast::{GrpcScreencast, Screencast};
    let site = nanomuse_tests::serve_site().await;
    let gateway = Gateway::start(|_| {}).await;
    let phone = KotlinPhone::connect(gateway.address, "pixel", TOKEN).await;
    gateway
        .backend
        .open(OpenRequest {
            session: session(),
            mobile: true,
            ..Default::default()
        })
        .await
        .unwrap();
    gateway
        .backend
        .navigate(navigate(&format!("http://{site}/second")))
        .await
        .unwrap();
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", gateway.address))
        .unwrap()
        .connect_lazy();
    let live = GrpcScreencast::new(nanomuse_common::hop::internal(channel, None));
    let mut frames = live
        .watch(WatchScreenRequest {
            session: session(),
            ..Default::default()
        })
        .await
        .unwrap();
    let first = frames.next().await.unwrap().unwrap();
    assert_eq!(
        (first.width, first.height),
        (412, 915),
        "the phone's viewport"
    );
    assert_eq!(nanomuse_tests::jpeg_size(&first.jpeg), (412, 915));
    // A still page: the same picture again and again, sent once.
    let more = tokio::time::timeout(Duration::from_secs(1), frames.next()).await;
    assert!(more.is_err(), "a still page sent {more:?}");
    // The page changes: its picture comes.
    gateway
        .backend
        .evaluate(EvaluateRequest {
            session: session(),
            js: "() => { document.body.style.background = '#c33'; }".into(),
            arg_json: "null".into(),
        })
        .await
        .unwrap();
    let changed = tokio::time::timeout(Duration::from_secs(10), frames.next())
        .await
        .expect("the changed page's picture came")
        .unwrap()
        .unwrap();
    assert_ne!(changed.jpeg, first.jpeg);
    drop(frames);
    phone.stop().await;
    gateway.stop().await;
}
