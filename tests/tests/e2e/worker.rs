//! The worker end to end: every op over real gRPC, on a real worker driving real Chromium,
//! against pages the test serves on 127.0.0.1.

use std::time::Duration;

use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};

async fn eval(backend: &GrpcBackend, page: &str, js: &str) -> Value {
    let reply = backend
        .evaluate(EvaluateRequest {
            session: session(page),
            js: js.into(),
            arg_json: String::new(),
        })
        .await
        .expect("evaluate");
    serde_json::from_str(&reply.value_json).unwrap()
}

async fn navigate(backend: &GrpcBackend, page: &str, url: String) -> NavigateReply {
    backend
        .navigate(NavigateRequest {
            session: session(page),
            url,
            timeout_ms: 0,
        })
        .await
        .expect("navigate")
}

async fn settle(backend: &GrpcBackend, page: &str) {
    let reply = backend
        .settle(SettleRequest {
            session: session(page),
            timeout_ms: 10_000,
        })
        .await
        .expect("settle");
    assert!(reply.settled, "the page did not settle");
}

async fn tap(backend: &GrpcBackend, page: &str, x: f64, y: f64) {
    backend
        .tap(TapRequest {
            session: session(page),
            x,
            y,
            ..Default::default()
        })
        .await
        .expect("tap");
}

async fn state(backend: &GrpcBackend, page: &str) -> StateReply {
    backend
        .state(StateRequest {
            session: session(page),
        })
        .await
        .expect("state")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_op_works_over_grpc_on_a_desktop_page() {
    let (site, dir, worker) = site_and_worker().await;
    let b = &worker.backend;

    let opened = b.open(open_request("p1", false)).await.unwrap();
    let info = opened.page.unwrap();
    assert_eq!((info.width, info.height), (1280, 900));

    let reply = navigate(b, "p1", format!("http://{site}/page")).await;
    let info = reply.page.unwrap();
    assert_eq!(info.title, "Test page");
    assert_eq!(reply.status, 200);
    assert_eq!(
        eval(b, "p1", "() => [innerWidth, innerHeight]").await,
        json!([1280, 900])
    );

    // tap: a mouse click on the button's centre.
    tap(b, "p1", 110.0, 35.0).await;
    assert_eq!(
        eval(b, "p1", "() => document.getElementById('out').textContent").await,
        json!("clicked")
    );
    assert_eq!(
        eval(b, "p1", "() => window.seen").await,
        json!(["mousedown", "mouseup", "click"])
    );

    // type into the focused field, then Enter submits its form.
    tap(b, "p1", 100.0, 135.0).await;
    b.r#type(TypeRequest {
        session: session("p1"),
        text: "héllo wörld".into(),
    })
    .await
    .unwrap();
    assert_eq!(
        eval(b, "p1", "() => document.getElementById('q').value").await,
        json!("héllo wörld")
    );
    b.key(KeyRequest {
        session: session("p1"),
        key: "Enter".into(),
    })
    .await
    .unwrap();
    settle(b, "p1").await;
    let now = state(b, "p1").await;
    assert_eq!(now.title, "Submitted");
    assert!(now.url.contains("/submitted?q=h%C3%A9llo"), "{}", now.url);
    assert_eq!(now.host, "test-worker");
    assert!(!now.loading);

    // back returns to the form page.
    let back = b
        .back(BackRequest {
            session: session("p1"),
        })
        .await
        .unwrap();
    assert_eq!(back.page.unwrap().title, "Test page");

    // scroll moves the page by the wheel.
    b.scroll(ScrollRequest {
        session: session("p1"),
        dy: 600.0,
    })
    .await
    .unwrap();
    settle(b, "p1").await;
    assert_eq!(eval(b, "p1", "() => Math.round(scrollY)").await, json!(600));

    // screenshot: a JPEG of the viewport in CSS px.
    let shot = b
        .screenshot(ScreenshotRequest {
            session: session("p1"),
            quality: 60,
        })
        .await
        .unwrap();
    assert_eq!((shot.width, shot.height), (1280, 900));
    assert_eq!(jpeg_size(&shot.jpeg), (1280, 900));

    // a link click follows the link.
    b.scroll(ScrollRequest {
        session: session("p1"),
        dy: -600.0,
    })
    .await
    .unwrap();
    settle(b, "p1").await;
    tap(b, "p1", 50.0, 215.0).await;
    settle(b, "p1").await;
    assert_eq!(state(b, "p1").await.title, "Second");

    // close: the page is gone, its profile is not.
    b.close(CloseRequest {
        session: session("p1"),
    })
    .await
    .unwrap();
    let gone = b
        .state(StateRequest {
            session: session("p1"),
        })
        .await
        .unwrap_err();
    assert!(matches!(gone, BackendError::NotFound(_)), "{gone:?}");
    assert!(profile_dir(dir.path()).join("Default").exists());
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mobile_profile_taps_by_touch_and_screenshots_in_css_px() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("m", true)).await.unwrap();
    navigate(b, "m", format!("http://{site}/page")).await;
    assert_eq!(
        eval(b, "m", "() => [innerWidth, innerHeight]").await,
        json!([412, 915])
    );
    assert_eq!(
        eval(b, "m", "() => matchMedia('(pointer: coarse)').matches").await,
        json!(true)
    );
    assert_eq!(
        eval(b, "m", "() => /Android.*Mobile/.test(navigator.userAgent)").await,
        json!(true)
    );
    tap(b, "m", 110.0, 35.0).await;
    assert_eq!(
        eval(b, "m", "() => document.getElementById('out').textContent").await,
        json!("clicked")
    );
    let seen = eval(b, "m", "() => window.seen").await;
    assert_eq!(seen[0], json!("touchstart"), "{seen}");
    assert!(seen.as_array().unwrap().contains(&json!("click")), "{seen}");

    let shot = b
        .screenshot(ScreenshotRequest {
            session: session("m"),
            quality: 0,
        })
        .await
        .unwrap();
    assert_eq!((shot.width, shot.height), (412, 915));
    assert_eq!(jpeg_size(&shot.jpeg), (412, 915));
    worker.stop().await;
}

/// Decodes a JPEG in the page itself: its size and the colour near its bottom right corner.
const JPEG_CORNER_JS: &str = "async (bytes) => {
  const bitmap = await createImageBitmap(new Blob([new Uint8Array(bytes)], {type: 'image/jpeg'}));
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext('2d');
  context.drawImage(bitmap, 0, 0);
  const [r, g, b] = context.getImageData(bitmap.width - 20, bitmap.height - 20, 1, 1).data;
  return [bitmap.width, bitmap.height, r, g, b];
}";

#[tokio::test(flavor = "multi_thread")]
async fn a_screenshot_shows_the_page_as_it_is_right_after_a_change() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    let colours = [[255, 0, 0], [0, 160, 0], [0, 0, 255]];
    for (page, mobile, size) in [("d", false, [1280, 900]), ("m", true, [412, 915])] {
        b.open(open_request(page, mobile)).await.unwrap();
        navigate(b, page, format!("http://{site}/page")).await;
        for round in 0..6 {
            // The second half on a scrolled page: the picture follows the viewport.
            let scroll = if round < 3 { 0 } else { 2000 };
            let [r, g, bl] = colours[round % 3];
            eval(
                b,
                page,
                &format!(
                    "() => {{ document.body.style.background = 'rgb({r},{g},{bl})'; \
                     scrollTo(0, {scroll}); }}"
                ),
            )
            .await;
            let shot = b
                .screenshot(ScreenshotRequest {
                    session: session(page),
                    quality: 0,
                })
                .await
                .unwrap();
            let seen: Vec<i64> = serde_json::from_str(
                &b.evaluate(EvaluateRequest {
                    session: session(page),
                    js: JPEG_CORNER_JS.into(),
                    arg_json: json!(shot.jpeg).to_string(),
                })
                .await
                .unwrap()
                .value_json,
            )
            .unwrap();
            assert_eq!(seen[..2], size, "{page} round {round}");
            let near = seen[2..]
                .iter()
                .zip([r, g, bl])
                .all(|(seen, want)| (seen - want).abs() < 40);
            assert!(
                near,
                "{page} round {round}: {seen:?}, not rgb({r},{g},{bl})"
            );
        }
    }
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn profile_switch_changes_user_agent_and_viewport_as_the_page_sees_them() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("p", false)).await.unwrap();
    navigate(b, "p", format!("http://{site}/page")).await;
    assert_eq!(eval(b, "p", "() => innerWidth").await, json!(1280));

    b.profile(ProfileRequest {
        session: session("p"),
        user_agent: "NanoTestAgent/1.0 (Mobile)".into(),
        width: 400,
        height: 800,
        mobile: true,
    })
    .await
    .unwrap();
    assert_eq!(
        eval(b, "p", "() => [innerWidth, innerHeight]").await,
        json!([400, 800])
    );
    assert_eq!(
        eval(b, "p", "() => navigator.userAgent").await,
        json!("NanoTestAgent/1.0 (Mobile)")
    );
    let echoed = navigate(b, "p", format!("http://{site}/echo-ua")).await;
    assert_eq!(echoed.status, 200);
    assert_eq!(
        eval(b, "p", "() => document.body.innerText").await,
        json!("NanoTestAgent/1.0 (Mobile)")
    );

    b.profile(ProfileRequest {
        session: session("p"),
        mobile: false,
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(
        eval(b, "p", "() => [innerWidth, innerHeight]").await,
        json!([1280, 900])
    );
    assert_eq!(
        eval(b, "p", "() => /X11; Linux/.test(navigator.userAgent)").await,
        json!(true)
    );

    let bad = b
        .profile(ProfileRequest {
            session: session("p"),
            width: 100_000,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(bad, BackendError::InvalidArgument(ref m) if m.contains("width")),
        "{bad:?}"
    );
    assert_eq!(eval(b, "p", "() => innerWidth").await, json!(1280));
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_updates_react_and_vue_state() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("f", false)).await.unwrap();
    for fixture in ["react.html", "vue.html"] {
        navigate(b, "f", format!("http://{site}/fixtures/{fixture}")).await;
        settle(b, "f").await;
        let rect = eval(
            b,
            "f",
            "() => { const r = document.getElementById('name').getBoundingClientRect(); \
             return [r.x + r.width / 2, r.y + r.height / 2]; }",
        )
        .await;
        tap(b, "f", rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap()).await;
        b.r#type(TypeRequest {
            session: session("f"),
            text: "Ada Lovelace".into(),
        })
        .await
        .unwrap();
        settle(b, "f").await;
        assert_eq!(
            eval(b, "f", "() => document.getElementById('echo').textContent").await,
            json!("state:Ada Lovelace"),
            "{fixture}"
        );
    }
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_falls_back_to_trusted_input_where_the_page_breaks_the_setter_path() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("f", false)).await.unwrap();
    navigate(b, "f", format!("http://{site}/typing-patched")).await;
    settle(b, "f").await;
    tap(b, "f", 110.0, 25.0).await;
    b.r#type(TypeRequest {
        session: session("f"),
        text: "Ada".into(),
    })
    .await
    .expect("type on a page that patches what the setter path uses");
    // The old text typed over, by input the browser itself sent.
    assert_eq!(
        eval(b, "f", "() => document.getElementById('echo').textContent").await,
        json!("Ada (trusted)")
    );
    assert_eq!(
        eval(b, "f", "() => document.getElementById('field').value").await,
        json!("Ada")
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn persistent_cookie_survives_a_worker_restart_and_a_session_cookie_does_not() {
    let (site, dir, worker) = site_and_worker().await;
    worker.backend.open(open_request("c", false)).await.unwrap();
    navigate(&worker.backend, "c", format!("http://{site}/set-cookies")).await;
    assert_eq!(
        eval(&worker.backend, "c", "() => document.cookie").await,
        json!("persistent=kept; session=gone")
    );
    worker.stop().await;

    let worker = Worker::start(test_config(dir.path())).await;
    worker.backend.open(open_request("c", false)).await.unwrap();
    navigate(&worker.backend, "c", format!("http://{site}/echo-cookies")).await;
    let sent = eval(&worker.backend, "c", "() => document.body.innerText").await;
    assert_eq!(sent, json!("persistent=kept"));
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fetch_carries_the_login_session_and_stores_cookies_it_sets() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("l", false)).await.unwrap();
    navigate(b, "l", format!("http://{site}/login")).await;
    for (field, text) in [("user", "ada"), ("password", "s3cret")] {
        let at = eval(
            b,
            "l",
            &format!(
                "() => {{ const r = document.getElementById('{field}').getBoundingClientRect(); \
                 return [r.x + 5, r.y + r.height / 2]; }}"
            ),
        )
        .await;
        tap(b, "l", at[0].as_f64().unwrap(), at[1].as_f64().unwrap()).await;
        b.r#type(TypeRequest {
            session: session("l"),
            text: text.into(),
        })
        .await
        .unwrap();
    }
    b.key(KeyRequest {
        session: session("l"),
        key: "Enter".into(),
    })
    .await
    .unwrap();
    settle(b, "l").await;
    assert_eq!(
        eval(b, "l", "() => document.getElementById('who').textContent").await,
        json!("ada")
    );
    // The session cookie is HttpOnly: the page cannot see it, fetch must still send it.
    assert_eq!(eval(b, "l", "() => document.cookie").await, json!(""));

    let fetched = b
        .fetch(FetchRequest {
            session: session("l"),
            url: format!("http://{site}/api/whoami"),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(fetched.status, 200);
    assert_eq!(
        String::from_utf8(fetched.body).unwrap(),
        r#"{"user":"ada"}"#
    );
    assert!(
        fetched
            .headers
            .iter()
            .any(|h| h.name == "content-type" && h.value == "application/json")
    );
    // The cookie the response set is now the page's too.
    assert_eq!(
        eval(b, "l", "() => document.cookie").await,
        json!("seen=yes")
    );

    // Redirects are followed and the cookies of every hop kept.
    let redirected = b
        .fetch(FetchRequest {
            session: session("l"),
            url: format!("http://{site}/redirect-set"),
            method: "GET".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        redirected.url.ends_with("/echo-cookies"),
        "{}",
        redirected.url
    );
    let sent = String::from_utf8(redirected.body).unwrap();
    for cookie in ["sid=ada-session", "seen=yes", "hop=one"] {
        assert!(sent.contains(cookie), "{cookie} missing from {sent}");
    }
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fetch_refuses_a_body_over_the_cap() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let config = nanomuse_worker::WorkerConfig {
        fetch_max_bytes: 100_000,
        ..test_config(dir.path())
    };
    let worker = Worker::start(config).await;
    let b = &worker.backend;
    b.open(open_request("big", false)).await.unwrap();
    let error = b
        .fetch(FetchRequest {
            session: session("big"),
            url: format!("http://{site}/big"),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::ResourceExhausted(ref m) if m.contains("larger than 100000 bytes")),
        "{error:?}"
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_chromium_is_relaunched_by_the_next_op_with_its_cookies() {
    let (site, dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("k", false)).await.unwrap();
    navigate(b, "k", format!("http://{site}/set-cookies")).await;
    let profile = profile_dir(dir.path());
    let pid = chromium_pid(&profile).expect("chromium runs");
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(eventually(Duration::from_secs(10), || process_ended(pid)).await);

    // The next op brings the browser and the page back, where it was.
    let now = state(b, "k").await;
    assert!(now.url.ends_with("/set-cookies"), "{}", now.url);
    let relaunched = chromium_pid(&profile).expect("chromium relaunched");
    assert_ne!(relaunched, pid);
    navigate(b, "k", format!("http://{site}/echo-cookies")).await;
    let sent = eval(b, "k", "() => document.body.innerText").await;
    assert_eq!(
        sent,
        json!("persistent=kept; session=gone"),
        "cookies lost in the crash"
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cookies_a_fetch_set_survive_a_chromium_killed_right_after_its_reply() {
    let (site, dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("f", false)).await.unwrap();
    navigate(b, "f", format!("http://{site}/page")).await;
    let fetched = b
        .fetch(FetchRequest {
            session: session("f"),
            url: format!("http://{site}/set-cookies"),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(fetched.status, 200);
    let pid = chromium_pid(&profile_dir(dir.path())).expect("chromium runs");
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(eventually(Duration::from_secs(10), || process_ended(pid)).await);

    navigate(b, "f", format!("http://{site}/echo-cookies")).await;
    let sent = eval(b, "f", "() => document.body.innerText").await;
    assert_eq!(
        sent,
        json!("persistent=kept; session=gone"),
        "the fetch's cookies were lost in the crash"
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_the_only_page_keeps_the_workspace_session_cookies() {
    // A browser left without a window ends its session and drops session cookies: closing a
    // workspace's last page must not log it out of anything.
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("only", false)).await.unwrap();
    navigate(b, "only", format!("http://{site}/set-cookies")).await;
    b.close(CloseRequest {
        session: session("only"),
    })
    .await
    .unwrap();
    b.open(open_request("next", false)).await.unwrap();
    navigate(b, "next", format!("http://{site}/echo-cookies")).await;
    let sent = eval(b, "next", "() => document.body.innerText").await;
    assert_eq!(sent, json!("persistent=kept; session=gone"));
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn new_windows_open_in_the_same_page() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("w", false)).await.unwrap();
    navigate(b, "w", format!("http://{site}/popups")).await;
    tap(b, "w", 50.0, 25.0).await;
    settle(b, "w").await;
    assert!(state(b, "w").await.url.ends_with("/second"));

    navigate(b, "w", format!("http://{site}/popups")).await;
    tap(b, "w", 50.0, 75.0).await;
    settle(b, "w").await;
    assert!(state(b, "w").await.url.ends_with("/second?via=open"));
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_download_lands_in_the_workspace_downloads_folder() {
    let (site, dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    b.open(open_request("d", false)).await.unwrap();
    navigate(b, "d", format!("http://{site}/page")).await;
    let reply = navigate(b, "d", format!("http://{site}/download")).await;
    assert_eq!(reply.download, "report.txt");
    assert!(
        reply.page.unwrap().url.ends_with("/page"),
        "the page stays where it was"
    );
    let file = downloads_dir(dir.path()).join("report.txt");
    assert_eq!(
        std::fs::read_to_string(file).unwrap(),
        "quarterly numbers\n"
    );
    // The page still navigates afterwards.
    navigate(b, "d", format!("http://{site}/second")).await;
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;

    let error = b
        .state(StateRequest {
            session: session("never-opened"),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::NotFound(ref m) if m.contains("not open")),
        "{error:?}"
    );
    let error = b
        .open(OpenRequest {
            session: Some(Session::new("../etc", "w", "p")),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::InvalidArgument(_)),
        "{error:?}"
    );

    b.open(open_request("x", false)).await.unwrap();
    navigate(b, "x", format!("http://{site}/page")).await;
    for url in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "/relative",
        "data:text/html,hi",
    ] {
        let error = b
            .navigate(NavigateRequest {
                session: session("x"),
                url: url.into(),
                timeout_ms: 0,
            })
            .await
            .unwrap_err();
        assert!(
            matches!(error, BackendError::InvalidArgument(_)),
            "{url}: {error:?}"
        );
    }
    let error = b
        .tap(TapRequest {
            session: session("x"),
            x: 1280.0,
            y: 10.0,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::InvalidArgument(ref m) if m.contains("outside")),
        "{error:?}"
    );
    let error = b
        .key(KeyRequest {
            session: session("x"),
            key: "Hyper".into(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::InvalidArgument(ref m) if m.contains("unknown key")),
        "{error:?}"
    );
    let error = b
        .scroll(ScrollRequest {
            session: session("x"),
            dy: 1e12,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::InvalidArgument(_)),
        "{error:?}"
    );
    let error = b
        .r#type(TypeRequest {
            session: session("x"),
            text: "lost".into(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::FailedPrecondition(ref m) if m.contains("nothing is focused")),
        "{error:?}"
    );
    let error = b
        .navigate(NavigateRequest {
            session: session("x"),
            url: format!("http://{site}/no-content"),
            timeout_ms: 0,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::FailedPrecondition(ref m) if m.contains("no page")),
        "{error:?}"
    );
    // A site that asks for its own password (HTTP authentication) says so in words.
    let error = b
        .navigate(NavigateRequest {
            session: session("x"),
            url: format!("http://{site}/basic-auth"),
            timeout_ms: 0,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::FailedPrecondition(ref m)
            if m.contains("asks for a user name and password of its own")),
        "{error:?}"
    );
    let error = b
        .navigate(NavigateRequest {
            session: session("x"),
            url: format!("http://{site}/never"),
            timeout_ms: 500,
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error, BackendError::Timeout(ref m) if m.contains("timed out after 500 ms")),
        "{error:?}"
    );
    // After all that the page is where it was and still answers.
    navigate(b, "x", format!("http://{site}/second")).await;
    assert_eq!(state(b, "x").await.title, "Second");
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_browser_is_closed_and_its_profile_kept() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let config = nanomuse_worker::WorkerConfig {
        idle_timeout_ms: 300,
        ..test_config(dir.path())
    };
    let worker = Worker::start(config).await;
    let b = &worker.backend;
    b.open(open_request("i", false)).await.unwrap();
    navigate(b, "i", format!("http://{site}/set-cookies")).await;
    navigate(b, "i", format!("http://{site}/second")).await;
    let profile = profile_dir(dir.path());
    assert!(chromium_pid(&profile).is_some());
    assert!(eventually(Duration::from_secs(15), || chromium_pid(&profile).is_none()).await);
    assert!(profile.join("Default").exists());
    // The next op opens it again, the page back where it was, the persistent cookie still there.
    assert!(state(b, "i").await.url.ends_with("/second"));
    navigate(b, "i", format!("http://{site}/echo-cookies")).await;
    assert_eq!(
        eval(b, "i", "() => document.body.innerText").await,
        json!("persistent=kept")
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worker_reports_serving_on_grpc_health() {
    let dir = tempfile::tempdir().unwrap();
    let worker = Worker::start(test_config(dir.path())).await;
    let channel = tonic::transport::Channel::from_shared(format!("http://{}", worker.address))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let reply = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "nanomuse.browser.v1.BrowserBackend".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        reply.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    worker.stop().await;
}
