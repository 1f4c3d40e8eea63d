//! The SSRF list against a hosted-mode controller and its worker, real Chromium: every spelling
//! of an internal address, internal names and schemes through `navigate` and `fetch`; then
//! pages the policy allows that point at an internal server — an HTTP redirect, a JavaScript
//! redirect, subresources (an image, an iframe, `fetch()` from the page, a WebSocket), a link
//! click — and `fetch` following a redirect. A "victim" server on 127.0.0.1 counts every
//! connection it gets: none may arrive.
//!
//! No public address exists here, so the allowed ("attacker") pages are served on 127.0.0.2 and
//! the deployment lets exactly that address through with `allow_addresses = ["127.0.0.2/32"]`,
//! the operator's escape hatch; everything else on loopback stays refused.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;
use tokio::io::AsyncWriteExt;

/// A server on 127.0.0.1 that must never be reached: it counts every connection (whatever is
/// sent on it, TLS included) and answers plain HTTP with its secret.
struct Victim {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Victim {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")
                    .await;
            }
        });
        Self { port, connections }
    }

    fn reached(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
struct Attacker {
    /// The victim's loopback address, where every attack aims.
    victim: String,
    victim_port: u16,
    hits: Arc<AtomicUsize>,
}

/// Pages the policy allows (served on 127.0.0.2) that lead to the victim.
async fn serve_attacker(victim_port: u16) -> (SocketAddr, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let state = Attacker {
        victim: format!("http://127.0.0.1:{victim_port}"),
        victim_port,
        hits: hits.clone(),
    };
    let app = Router::new()
        .route(
            "/page",
            get(|| async { Html("<!doctype html><title>Attacker</title><p>hello</p>") }),
        )
        .route("/ok", get(|| async { "fine" }))
        .route("/redirect", get(redirect))
        .route("/redirect-https", get(redirect_https))
        .route("/redirect-name", get(redirect_name))
        .route("/redirect-decimal", get(redirect_decimal))
        .route("/js-redirect", get(js_redirect))
        .route("/subresources", get(subresources))
        .route("/link", get(link))
        .layer(axum::middleware::from_fn_with_state(state.clone(), count))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, hits)
}

async fn count(
    State(s): State<Attacker>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    s.hits.fetch_add(1, Ordering::SeqCst);
    next.run(request).await
}

async fn redirect(State(s): State<Attacker>) -> Redirect {
    Redirect::to(&format!("{}/secret", s.victim))
}

async fn redirect_https(State(s): State<Attacker>) -> Redirect {
    Redirect::to(&format!("https://127.0.0.1:{}/secret", s.victim_port))
}

async fn redirect_name(State(s): State<Attacker>) -> Redirect {
    Redirect::to(&format!("http://localhost:{}/secret", s.victim_port))
}

async fn redirect_decimal(State(s): State<Attacker>) -> Redirect {
    Redirect::to(&format!("http://2130706433:{}/secret", s.victim_port))
}

async fn js_redirect(State(s): State<Attacker>) -> Html<String> {
    Html(format!(
        "<!doctype html><title>JS redirect</title><script>\
         addEventListener('load', () => {{ location.href = '{}/secret'; }});</script>",
        s.victim
    ))
}

async fn subresources(State(s): State<Attacker>) -> Response {
    let v = &s.victim;
    let port = s.victim_port;
    let html = format!(
        "<!doctype html><title>Subresources</title>\
         <img src=\"/ok\"><img src=\"{v}/pixel.png\"><iframe src=\"{v}/frame\"></iframe>\
         <link rel=\"stylesheet\" href=\"http://[::ffff:127.0.0.1]:{port}/style.css\">\
         <script src=\"http://0x7f.1:{port}/script.js\"></script>\
         <script>\
           fetch('{v}/api', {{mode: 'no-cors'}}).catch(() => {{}});\
           try {{ new WebSocket('ws://127.0.0.1:{port}/socket'); }} catch (e) {{}}\
         </script>"
    );
    ([(header::CONTENT_TYPE, "text/html")], html).into_response()
}

async fn link(State(s): State<Attacker>) -> Html<String> {
    Html(format!(
        "<!doctype html><title>Link</title>\
         <a href=\"{}/secret\" style=\"display:block;width:200px;height:40px\">Steal the secret</a>",
        s.victim
    ))
}

/// A hosted-mode controller (the escape hatch for 127.0.0.2 only) and a worker whose own floor
/// is not hosted: what the worker enforces here comes from the controller's sessions.
async fn hosted_fleet(dir: &std::path::Path) -> (ControllerProcess, Worker) {
    controller_with_worker(dir, |config| {
        config.controller.url_policy.hosted = Some(true);
        config.controller.url_policy.allow_addresses = vec!["127.0.0.2/32".into()];
    })
    .await
}

fn navigate_to(url: &str) -> Action {
    Action::Navigate(NavigateAction { url: url.into() })
}

fn fetch_of(url: &str) -> Action {
    Action::Fetch(FetchAction {
        url: url.into(),
        ..Default::default()
    })
}

/// What the model reads after `action`: the reply's text, or the error's message.
async fn outcome(tool: &mut Tool, thread: &str, action: Action) -> (Option<tonic::Code>, String) {
    match tool.act(act(thread, action)).await {
        Ok(reply) => (None, reply.into_inner().text),
        Err(status) => (Some(status.code()), status.message().to_string()),
    }
}

/// The SSRF list of issue 8, each with the words its refusal must say.
fn ssrf_list(victim: u16) -> Vec<(String, tonic::Code, &'static str)> {
    use tonic::Code::{InvalidArgument as Bad, PermissionDenied as Denied};
    [
        (
            format!("http://127.0.0.1:{victim}/"),
            Denied,
            "127.0.0.1 is a loopback address",
        ),
        (
            format!("http://2130706433:{victim}/"),
            Denied,
            "127.0.0.1 is a loopback address",
        ),
        (
            format!("http://0177.0.0.1:{victim}/"),
            Denied,
            "127.0.0.1 is a loopback address",
        ),
        (
            format!("http://0x7f.0.0.1:{victim}/"),
            Denied,
            "127.0.0.1 is a loopback address",
        ),
        (
            format!("http://127.1:{victim}/"),
            Denied,
            "127.0.0.1 is a loopback address",
        ),
        (
            format!("http://0.0.0.0:{victim}/"),
            Denied,
            "0.0.0.0 is an unspecified",
        ),
        (
            format!("http://[::1]:{victim}/"),
            Denied,
            "::1 is the loopback address",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{victim}/"),
            Denied,
            "an IPv4-mapped address of 127.0.0.1, a loopback address",
        ),
        (
            format!("http://localhost:{victim}/"),
            Denied,
            "localhost is a name of the machine itself",
        ),
        (
            "http://10.0.0.1/".into(),
            Denied,
            "10.0.0.1 is a private address (RFC 1918)",
        ),
        (
            "http://172.16.0.1/".into(),
            Denied,
            "a private address (RFC 1918)",
        ),
        (
            "http://192.168.0.1/".into(),
            Denied,
            "a private address (RFC 1918)",
        ),
        ("http://100.64.0.1/".into(), Denied, "carrier-grade NAT"),
        (
            "http://169.254.169.254/latest/meta-data/".into(),
            Denied,
            "169.254.169.254 is the cloud metadata address",
        ),
        (
            "http://metadata.google.internal/computeMetadata/v1/".into(),
            Denied,
            "metadata.google.internal is the cloud metadata service's name",
        ),
        (
            "http://[fd00::1]/".into(),
            Denied,
            "a unique local address (IPv6 ULA",
        ),
        (
            "http://[fe80::1]/".into(),
            Denied,
            "fe80::1 is a link-local address",
        ),
        (
            "http://[64:ff9b::7f00:1]/".into(),
            Denied,
            "a NAT64 address of 127.0.0.1",
        ),
        (
            "http://[2002:7f00:1::]/".into(),
            Denied,
            "a 6to4 address of 127.0.0.1",
        ),
        (
            "file:///etc/passwd".into(),
            Bad,
            "file: URLs are not allowed",
        ),
        (
            "javascript:alert(1)".into(),
            Bad,
            "javascript: URLs are not allowed",
        ),
        ("data:text/html,x".into(), Bad, "data: URLs are not allowed"),
        ("ftp://x/".into(), Bad, "ftp: URLs are not allowed"),
        ("/relative".into(), Bad, "not an absolute URL"),
    ]
    .into_iter()
    .collect()
}

async fn post(controller: &ControllerProcess, path: &str, body: &str) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(format!("http://{}{path}", controller.address))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or_default())
}

async fn threads(controller: &ControllerProcess) -> Vec<String> {
    let url = format!("http://{}/api/state", controller.address);
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    let state: serde_json::Value = serde_json::from_str(&text).unwrap();
    state["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_spelling_of_an_internal_address_is_refused_by_navigate_and_fetch() {
    logs();
    let victim = Victim::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = hosted_fleet(dir.path()).await;
    let mut tool = controller.tool().await;

    for (url, code, says) in ssrf_list(victim.port) {
        for (what, action) in [("navigate", navigate_to(&url)), ("fetch", fetch_of(&url))] {
            let (got, message) = outcome(&mut tool, "refused", action).await;
            assert_eq!(got, Some(code), "{what} {url}: {message}");
            assert!(
                message.starts_with("Refused by the URL policy: ") && message.contains(says),
                "{what} {url}: {message}"
            );
        }
    }
    // Nothing changed: no thread was created, so no page was ever opened for it.
    assert!(!threads(&controller).await.contains(&"refused".to_string()));
    assert_eq!(victim.reached(), 0, "a refused URL reached the victim");
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn redirects_javascript_subresources_links_and_fetch_hops_are_refused_on_the_worker() {
    logs();
    let victim = Victim::start().await;
    let (attacker, attacker_hits) = serve_attacker(victim.port).await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = hosted_fleet(dir.path()).await;
    let mut tool = controller.tool().await;
    let page = |path: &str| format!("http://{attacker}{path}");

    // The allowed page loads, through the worker's proxy.
    let reply = tool
        .act(act("t", navigate_to(&page("/page"))))
        .await
        .expect("an allowed page loads")
        .into_inner();
    assert_eq!(reply.title, "Attacker");
    assert!(!reply.text.contains("Refused"), "{}", reply.text);

    // An HTTP redirect to the victim (plain, https, by name, by a decimal address): the page
    // shows the refusal and the reply says which rule.
    for (path, says) in [
        ("/redirect", "127.0.0.1 is a loopback address"),
        ("/redirect-https", "127.0.0.1 is a loopback address"),
        (
            "/redirect-name",
            "localhost is a name of the machine itself",
        ),
        ("/redirect-decimal", "127.0.0.1 is a loopback address"),
    ] {
        let (code, text) = outcome(&mut tool, "t", navigate_to(&page(path))).await;
        assert!(
            text.contains("Refused by the URL policy: ") && text.contains(says),
            "{path} ({code:?}): {text}"
        );
    }

    // A JavaScript redirect once the page has loaded.
    let (code, text) = outcome(&mut tool, "t", navigate_to(&page("/js-redirect"))).await;
    assert!(
        text.contains("Refused by the URL policy: 127.0.0.1 is a loopback address"),
        "js redirect ({code:?}): {text}"
    );

    // Subresources: an image, an iframe, a stylesheet, a script, fetch() and a WebSocket. The
    // page stays; its allowed image loaded; the reply names what was refused.
    let before = attacker_hits.load(Ordering::SeqCst);
    let reply = tool
        .act(act("t", navigate_to(&page("/subresources"))))
        .await
        .expect("the page itself is allowed")
        .into_inner();
    assert_eq!(reply.title, "Subresources");
    assert!(
        reply
            .text
            .contains("Refused by the URL policy: 127.0.0.1 is a loopback address")
            && reply.text.contains("IPv4-mapped address of 127.0.0.1"),
        "{}",
        reply.text
    );
    assert!(
        attacker_hits.load(Ordering::SeqCst) >= before + 2,
        "the allowed image loads"
    );

    // A link the agent clicks.
    let reply = tool
        .act(act("t", navigate_to(&page("/link"))))
        .await
        .unwrap()
        .into_inner();
    let n = reply
        .elements
        .iter()
        .find(|e| e.label == "Steal the secret")
        .expect("the link is listed")
        .n as i64;
    let (code, text) = outcome(
        &mut tool,
        "t",
        Action::Click(ClickAction {
            n,
            ..Default::default()
        }),
    )
    .await;
    assert!(
        text.contains("Refused by the URL policy: 127.0.0.1 is a loopback address"),
        "click ({code:?}): {text}"
    );

    // fetch follows redirects by hand: the hop to the victim is refused before it is sent.
    for path in [
        "/redirect",
        "/redirect-name",
        "/redirect-decimal",
        "/redirect-https",
    ] {
        let (code, text) = outcome(&mut tool, "t", fetch_of(&page(path))).await;
        assert_eq!(
            code,
            Some(tonic::Code::PermissionDenied),
            "fetch {path}: {text}"
        );
        assert!(
            text.starts_with("Refused by the URL policy: "),
            "fetch {path}: {text}"
        );
    }
    let fetched = tool
        .act(act("t", fetch_of(&page("/ok"))))
        .await
        .expect("an allowed fetch")
        .into_inner();
    assert_eq!(fetched.fetch.unwrap().body, "fine");

    // The user's own Open URL on the card, during a take-over, passes the same check.
    let (status, _) = post(
        &controller,
        "/api/browser/t/control",
        r#"{"action":"take_over"}"#,
    )
    .await;
    assert_eq!(status, 200);
    let body = format!(r#"{{"url":"http://127.0.0.1:{}/"}}"#, victim.port);
    let (status, answer) = post(&controller, "/api/browser/t/open", &body).await;
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("loopback"),
        "{answer}"
    );
    let body = format!(r#"{{"url":"{}"}}"#, page("/page"));
    let (status, answer) = post(&controller, "/api/browser/t/open", &body).await;
    assert_eq!(status, 200, "{answer}");

    assert_eq!(victim.reached(), 0, "a request reached the victim");
    controller.stop().await;
    worker.stop().await;
}

/// A worker's own floor holds without any controller: `hosted = true` in its configuration
/// refuses what a session without a policy — or with a looser one — would let through.
#[tokio::test(flavor = "multi_thread")]
async fn the_worker_floor_refuses_even_when_a_request_carries_a_looser_policy() {
    logs();
    let victim = Victim::start().await;
    let (attacker, _) = serve_attacker(victim.port).await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.url_policy = UrlPolicy {
        hosted: true,
        allow_addresses: vec!["127.0.0.2/32".into()],
        ..UrlPolicy::default()
    };
    let worker = Worker::start(config).await;
    let b = &worker.backend;
    let loose = Session {
        url_policy: Some(UrlPolicy {
            hosted: false,
            allow_addresses: vec!["0.0.0.0/0".into()],
            ..UrlPolicy::default()
        }),
        ..Session::new("tenant-a", "work", "p")
    };
    for session in [session("p"), Some(loose)] {
        b.open(OpenRequest {
            session: session.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
        let error = b
            .navigate(NavigateRequest {
                session: session.clone(),
                url: format!("http://127.0.0.1:{}/", victim.port),
                timeout_ms: 0,
            })
            .await
            .unwrap_err();
        assert!(
            matches!(&error, BackendError::PermissionDenied(m) if m.contains("loopback")),
            "{error:?}"
        );
        let reply = b
            .navigate(NavigateRequest {
                session: session.clone(),
                url: format!("http://{attacker}/redirect"),
                timeout_ms: 0,
            })
            .await
            .unwrap();
        assert_eq!(reply.status, 403);
        assert!(
            reply
                .refused
                .iter()
                .any(|r| r.contains("127.0.0.1 is a loopback address")),
            "{reply:?}"
        );
        let error = b
            .fetch(FetchRequest {
                session: session.clone(),
                url: format!("http://{attacker}/redirect"),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(
            matches!(error, BackendError::PermissionDenied(_)),
            "{error:?}"
        );
    }
    assert_eq!(victim.reached(), 0);
    worker.stop().await;
}
