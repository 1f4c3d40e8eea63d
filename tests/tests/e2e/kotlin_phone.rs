//! The phone's own code (Kotlin, `android/protocol`) against the real gateway: the phone
//! program (`android/run-phone.sh`: the client, its Dispatcher and page scripts, a headless
//! Chromium over CDP for the WebView) connects, says hello, carries out the ops sent through
//! the gateway's gRPC service on real pages and answers them, and its take-over reaches the
//! controller's watch. Needs a JDK and npm (the script fetches kotlinc) and Chromium.

use nanomuse_device_gateway::GatewayConfig;
use nanomuse_proto::device_gateway_client::DeviceGatewayClient;
use nanomuse_proto::*;
use nanomuse_tests::phone::KotlinPhone;
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "device-token-of-acme-0001";

#[tokio::test]
async fn the_kotlin_phone_carries_out_ops_sent_through_the_real_gateway_on_a_real_page() {
    nanomuse_tests::logs();
    let site = nanomuse_tests::serve_site().await;
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

    let mut phone = KotlinPhone::connect(address, "kotlin-phone", TOKEN).await;
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
    let url = format!("http://{site}/page");
    let page = backend
        .navigate(NavigateRequest {
            session: session.clone(),
            url: url.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    assert_eq!(page.status, 200);
    let page = page.page.unwrap();
    assert_eq!(
        (page.url.as_str(), page.title.as_str()),
        (url.as_str(), "Test page")
    );
    let evaluated = backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "async (a) => ({n: a.n + 1, dpr: devicePixelRatio, width: innerWidth})".into(),
            arg_json: r#"{"n":1}"#.into(),
        })
        .await
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&evaluated.value_json).unwrap();
    // The page's own answer, awaited, at the phone's density and the profile's CSS width.
    assert_eq!(
        value,
        serde_json::json!({"n": 2, "dpr": 2.625, "width": 412})
    );
    // A tap at CSS px reaches the page as a finger's: touch events, then the click.
    backend
        .tap(TapRequest {
            session: session.clone(),
            x: 100.0,
            y: 30.0,
            ..Default::default()
        })
        .await
        .unwrap();
    let seen = backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "() => [window.seen, document.getElementById('out').textContent]".into(),
            arg_json: "null".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        seen.value_json,
        r#"[["touchstart","touchend","mousedown","mouseup","click"],"clicked"]"#
    );
    // A settle whose look at the page is cut short by the page loading another document (a
    // transition it waits for, then a script's navigation) looks again at the new one: the
    // old document's answer never comes.
    backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "() => { document.getElementById('out').animate([{opacity: 1}, {opacity: 0.5}], 900); \
                 setTimeout(() => { location.href = '/second'; }, 300); }"
                .into(),
            arg_json: "null".into(),
        })
        .await
        .unwrap();
    let settled = backend
        .settle(SettleRequest {
            session: session.clone(),
            timeout_ms: 8_000,
        })
        .await
        .unwrap();
    assert!(settled.settled, "{settled:?}");
    let state = backend
        .state(StateRequest {
            session: session.clone(),
        })
        .await
        .unwrap();
    assert!(
        state.url.ends_with("/second"),
        "the script's navigation took place"
    );
    // A double tap: the page's dblclick, as a finger's two taps in a row give it.
    backend
        .navigate(NavigateRequest {
            session: session.clone(),
            url: format!("http://{site}/fixtures/files.html"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    let centre = backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "() => { const r = document.querySelector('.file').getBoundingClientRect(); \
                 return [r.x + r.width / 2, r.y + r.height / 2]; }"
                .into(),
            arg_json: "null".into(),
        })
        .await
        .unwrap();
    let [x, y]: [f64; 2] = serde_json::from_str(&centre.value_json).unwrap();
    backend
        .tap(TapRequest {
            session: session.clone(),
            x,
            y,
            count: 2,
        })
        .await
        .unwrap();
    let status = backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "() => document.getElementById('status').textContent".into(),
            arg_json: "null".into(),
        })
        .await
        .unwrap();
    assert_eq!(status.value_json, r#""Opened report.pdf.""#);
    let shot = backend
        .screenshot(ScreenshotRequest {
            session: session.clone(),
            quality: 70,
        })
        .await
        .unwrap();
    assert!(shot.jpeg.starts_with(&[0xFF, 0xD8]));
    assert_eq!((shot.width, shot.height), (412, 915));
    // The JPEG itself is the viewport in CSS px.
    assert_eq!(nanomuse_tests::jpeg_size(&shot.jpeg), (412, 915));
    // A site whose certificate no authority vouches for is not loaded (the controller says
    // what the code means, see `net_errors`).
    let impostor = nanomuse_tests::serve_self_signed("<title>Impostor</title>").await;
    let refused = backend
        .navigate(NavigateRequest {
            session: session.clone(),
            url: format!("https://{impostor}/"),
            timeout_ms: 0,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(refused, BackendError::FailedPrecondition(ref m) if m.contains("net::ERR_CERT_")),
        "{refused:?}"
    );
    // A fetch sends the cookies a page set, HttpOnly ones too, and keeps those it is sent.
    backend
        .navigate(NavigateRequest {
            session: session.clone(),
            url: format!("http://{site}/set-cookies"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    let fetched = backend
        .fetch(FetchRequest {
            session: session.clone(),
            url: format!("http://{site}/echo-cookies"),
            ..Default::default()
        })
        .await
        .unwrap();
    let cookies = String::from_utf8_lossy(&fetched.body).to_string();
    assert!(
        cookies.contains("persistent=kept") && cookies.contains("session=gone"),
        "{cookies}"
    );
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

    phone.stop().await;
    shutdown.cancel();
    gateway.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_kotlin_phone_keeps_one_tab_fetches_downloads_itself_and_keeps_its_cookies_when_killed()
{
    nanomuse_tests::logs();
    let site = nanomuse_tests::serve_site().await;
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
    let backend = GrpcBackend::connect(format!("http://{address}"))
        .await
        .unwrap();
    let state = tempfile::tempdir().unwrap();
    let phone = KotlinPhone::connect_in(address, "kotlin-phone", TOKEN, Some(state.path())).await;
    let session = Some(Session::new("acme", "default", "thread-k"));
    backend
        .open(OpenRequest {
            session: session.clone(),
            mobile: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let navigate = |path: &str| NavigateRequest {
        session: session.clone(),
        url: format!("http://{site}{path}"),
        timeout_ms: 0,
    };

    // One tab: a target=_blank link and window.open load in the page itself.
    for ((x, y), lands_on) in [
        ((50.0, 25.0), "/second"),
        ((50.0, 75.0), "/second?via=open"),
    ] {
        backend.navigate(navigate("/popups")).await.unwrap();
        backend
            .tap(TapRequest {
                session: session.clone(),
                x,
                y,
                ..Default::default()
            })
            .await
            .unwrap();
        let settled = backend
            .settle(SettleRequest {
                session: session.clone(),
                timeout_ms: 10_000,
            })
            .await
            .unwrap();
        assert!(settled.settled);
        let page = backend
            .state(StateRequest {
                session: session.clone(),
            })
            .await
            .unwrap();
        assert_eq!(page.url, format!("http://{site}{lands_on}"));
    }

    // A navigation that is a file: the phone fetches it itself into its downloads.
    let download = backend.navigate(navigate("/download")).await.unwrap();
    assert_eq!(download.download, "report.txt");
    let saved = std::fs::read_to_string(state.path().join("downloads/report.txt")).unwrap();
    assert_eq!(saved, "quarterly numbers\n");

    // Cookies a page set are flushed after its load: a phone killed right after keeps the
    // persistent one (the session cookie goes with the app, as on a phone).
    backend.navigate(navigate("/set-cookies")).await.unwrap();
    phone.kill().await;
    let phone = KotlinPhone::connect_in(address, "kotlin-phone", TOKEN, Some(state.path())).await;
    let fetched = backend
        .fetch(FetchRequest {
            session: session.clone(),
            url: format!("http://{site}/echo-cookies"),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&fetched.body), "persistent=kept");

    phone.stop().await;
    shutdown.cancel();
    gateway.await.unwrap().unwrap();
}
