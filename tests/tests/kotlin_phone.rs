//! The phone's own protocol code (Kotlin, `android/protocol`) against the real gateway: the
//! Kotlin client with a fake browser (`android/run-tests.sh --phone`) connects, says hello,
//! receives the ops sent through the gateway's gRPC service and answers them, and its take-over
//! reaches the controller's watch. Needs a JDK and npm (the script fetches kotlinc).

mod support;

use std::path::PathBuf;
use std::process::Stdio;

use nanomuse_device_gateway::GatewayConfig;
use nanomuse_proto::device_gateway_client::DeviceGatewayClient;
use nanomuse_proto::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "device-token-of-acme-0001";

/// The Kotlin phone's output, read line by line.
struct KotlinPhone {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl KotlinPhone {
    fn start(gateway: std::net::SocketAddr) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../android/run-tests.sh");
        let mut child = tokio::process::Command::new(script)
            .args([
                "--phone",
                &format!("ws://{gateway}/device"),
                "kotlin-phone",
                TOKEN,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("android/run-tests.sh starts (a JDK and npm are needed)");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, lines }
    }

    /// Reads lines until one starts with `prefix`.
    async fn until(&mut self, prefix: &str) -> String {
        while let Some(line) = self.lines.next_line().await.unwrap() {
            if line.starts_with(prefix) {
                return line;
            }
        }
        panic!("the Kotlin phone ended before saying {prefix:?}");
    }

    async fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }
}

#[tokio::test]
async fn the_kotlin_client_answers_ops_sent_through_the_real_gateway() {
    support::logs();
    let mut config = GatewayConfig::default();
    config.device_tokens.insert(TOKEN.into(), "acme".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let gateway = tokio::spawn(nanomuse_device_gateway::run(
        config,
        listener,
        shutdown.clone(),
    ));
    let channel = tonic::transport::Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let backend = GrpcBackend::new(channel.clone());
    let mut events = DeviceGatewayClient::new(channel)
        .watch_devices(WatchDevicesRequest {})
        .await
        .unwrap()
        .into_inner();

    let mut phone = KotlinPhone::start(address);
    phone.until("phone CONNECTED").await;
    let connected = events.message().await.unwrap().unwrap();
    assert_eq!(
        (connected.kind.as_str(), connected.device_id.as_str()),
        ("connected", "kotlin-phone")
    );

    let session = Some(Session::new("acme", "default", "thread-k"));
    let opened = backend
        .open(OpenRequest {
            session: session.clone(),
            mobile: true,
            width: 412,
            height: 915,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(opened.page.unwrap().width, 412);
    let url = "https://example.com/kotlin";
    let page = backend
        .navigate(NavigateRequest {
            session: session.clone(),
            url: url.into(),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    assert_eq!(page.status, 200);
    assert_eq!(page.page.unwrap().title, format!("Title of {url}"));
    assert!(phone.until("op navigate").await.contains(url));
    let evaluated = backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "(a) => a".into(),
            arg_json: r#"{"n":1}"#.into(),
        })
        .await
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&evaluated.value_json).unwrap();
    assert_eq!(value["arg"]["n"], 1, "{value}");
    let shot = backend
        .screenshot(ScreenshotRequest {
            session: session.clone(),
            quality: 70,
        })
        .await
        .unwrap();
    assert!(shot.jpeg.starts_with(&[0xFF, 0xD8]));
    let fetched = backend
        .fetch(FetchRequest {
            session: session.clone(),
            url: format!("{url}/api"),
            method: "POST".into(),
            body: b"12345".to_vec(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&fetched.body), "you sent 5 bytes");
    let error = backend
        .key(KeyRequest {
            session,
            key: "NoSuchKey".into(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::InvalidArgument(_)),
        "{error:?}"
    );

    phone.say("take_over signing in").await;
    let take_over = events.message().await.unwrap().unwrap();
    assert_eq!(
        (
            take_over.kind.as_str(),
            take_over.thread.as_str(),
            take_over.reason.as_str()
        ),
        ("take_over", "thread-k", "signing in")
    );

    drop(phone);
    shutdown.cancel();
    gateway.await.unwrap().unwrap();
}
