//! What an attacker found (issue 16), each finding against the real binaries' libraries over
//! real sockets, with real Chromium where a browser is involved:
//!
//! - `fetch` cookies: a response from one host (an attacker on 127.0.0.2) cannot plant a cookie
//!   for another (`localhost`, the victim's site), and a public-suffix `Domain` is refused;
//! - the embedded server refuses a foreign `Host` and `Origin` and a state change without a
//!   JSON body, sends the card with its CSP and `nosniff`, names holds and frames with ids
//!   nobody can guess, and takes gRPC over HTTP/2 only (a page's fetch is HTTP/1);
//! - one tenant's 1 MiB URL leaves another tenant's action on the same worker untouched, and a
//!   URL over 2 MiB is refused before any backend;
//! - an imported profile whose tar holds a symlink out of the profile is refused whole;
//! - quotas per tenant answer RESOURCE_EXHAUSTED / 429, `/api/state` comes in pages, NUL is
//!   refused in a key and a hold's reason, and an oversized body is 413.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::header;
use axum::response::{AppendHeaders, Html, IntoResponse};
use axum::routing::get;
use nanomuse_common::tokens::token_digest;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::profile_transfer_client::ProfileTransferClient;
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};
use tonic::transport::Channel;

const TOKEN_A: &str = "token-of-tenant-a-0123456789";
const TOKEN_B: &str = "token-of-tenant-b-0123456789";

// ---------------------------------------------------------------------------------------------
// Calls.

/// An HTTP call of the controller's API with the given extra headers; the status, the
/// response's headers and its body as JSON when it is.
async fn http(
    base: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let client = reqwest::Client::new();
    let url = format!("http://{base}{path}");
    let mut request = match method {
        "GET" => client.get(url),
        "POST" => client.post(url),
        other => panic!("no {other} in this test"),
    };
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.body(body);
    }
    let response = tokio::time::timeout(Duration::from_secs(60), request.send())
        .await
        .unwrap_or_else(|_| panic!("{method} {path} did not answer"))
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"not json": String::from_utf8_lossy(&bytes)}));
    (status, headers, value)
}

const JSON: (&str, &str) = ("content-type", "application/json");

/// `action` on `thread` in `workspace`, as the tenant of `token` (none: no token); a call
/// that hangs fails the test instead.
async fn act_as(
    tool: &mut Tool,
    token: Option<&str>,
    thread: &str,
    workspace: &str,
    action: Action,
) -> Result<ActReply, tonic::Status> {
    let request = act_in(thread, workspace, action);
    tokio::time::timeout(Duration::from_secs(60), tool.act(bearer(request, token)))
        .await
        .unwrap_or_else(|_| panic!("an action on {thread} did not answer"))
        .map(tonic::Response::into_inner)
}

fn hand_over(reason: &str) -> Action {
    Action::HandOver(HandOverAction {
        reason: reason.into(),
    })
}

fn thread_names(state: &Value) -> Vec<String> {
    state["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_str().unwrap().to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// 1. Cookies of `fetch`.

/// The attacker's site on 127.0.0.2: `/toss` sets a cookie of its own and one for the victim's
/// host (`localhost`) and its public suffix; `/echo` says which cookies came.
async fn serve_attacker() -> SocketAddr {
    let app = Router::new()
        .route(
            "/toss",
            get(|| async {
                (
                    AppendHeaders([
                        (header::SET_COOKIE, "own=mine; Path=/"),
                        (header::SET_COOKIE, "tossed=T1; Domain=localhost; Path=/"),
                        (header::SET_COOKIE, "dotted=T2; Domain=.localhost; Path=/"),
                    ]),
                    Html("<p>tossed</p>"),
                )
                    .into_response()
            }),
        )
        .route(
            "/echo",
            get(|headers: axum::http::HeaderMap| async move {
                headers
                    .get(header::COOKIE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

async fn fetched_body(worker: &Worker, url: String) -> String {
    let reply = worker
        .backend
        .fetch(FetchRequest {
            session: session("p"),
            url,
            ..Default::default()
        })
        .await
        .unwrap();
    String::from_utf8(reply.body).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fetch_response_cannot_plant_a_cookie_for_another_host() {
    let (site, _dir, worker) = site_and_worker().await;
    let attacker = serve_attacker().await;
    worker.backend.open(open_request("p", false)).await.unwrap();

    fetched_body(&worker, format!("http://{attacker}/toss")).await;
    // The attacker's own cookie is kept, as a browser keeps it…
    let own = fetched_body(&worker, format!("http://{attacker}/echo")).await;
    assert!(own.contains("own=mine"), "the host's own cookie: {own:?}");
    // …and the victim's site gets none of the attacker's, by fetch or by a page of it.
    let victim = format!("http://localhost:{}/echo-cookies", site.port());
    let sent = fetched_body(&worker, victim.clone()).await;
    assert!(
        !sent.contains("tossed") && !sent.contains("dotted") && !sent.contains("own"),
        "cookies planted for localhost by 127.0.0.2: {sent:?}"
    );
    worker
        .backend
        .navigate(NavigateRequest {
            session: session("p"),
            url: victim,
            ..Default::default()
        })
        .await
        .unwrap();
    let page = worker
        .backend
        .evaluate(EvaluateRequest {
            session: session("p"),
            js: "() => document.body.innerText".into(),
            arg_json: String::new(),
        })
        .await
        .unwrap();
    assert!(
        !page.value_json.contains("tossed"),
        "the victim's page was sent a planted cookie: {}",
        page.value_json
    );
    worker.stop().await;
}

#[test]
fn a_public_suffix_domain_is_refused_and_a_matching_one_kept() {
    use nanomuse_worker::set_cookie::{Ignored, accept, is_public_suffix};
    let url = |u: &str| url::Url::parse(u).unwrap();
    for suffix in ["com", "co.uk", "github.io", "test"] {
        assert!(is_public_suffix(suffix), "{suffix}");
    }
    assert_eq!(
        accept("s=1; Domain=github.io", &url("https://me.github.io/")),
        Err(Ignored::PublicSuffix)
    );
    assert_eq!(
        accept("s=1; Domain=co.uk", &url("https://bank.co.uk/")),
        Err(Ignored::PublicSuffix)
    );
    assert_eq!(
        accept("s=1; Domain=bank.test", &url("http://evil.test/")),
        Err(Ignored::ForeignDomain)
    );
    let kept = accept(
        "s=1; Domain=example.co.uk",
        &url("https://www.example.co.uk/"),
    )
    .unwrap();
    assert_eq!(kept["domain"], ".example.co.uk");
}

// ---------------------------------------------------------------------------------------------
// 2. The embedded server and web pages.

#[tokio::test(flavor = "multi_thread")]
async fn the_server_refuses_foreign_hosts_origins_and_blind_state_changes() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), |_| {}).await;
    let base = controller.address;
    let own_host = format!("127.0.0.1:{}", base.port());
    let mut tool = controller.tool().await;
    let reply = act_as(
        &mut tool,
        None,
        "t",
        "",
        navigate(format!("http://{site}/page")),
    )
    .await
    .unwrap();
    let frame = reply.frame.unwrap().id;
    let hold = act_as(&mut tool, None, "t", "", hand_over("sign in"))
        .await
        .unwrap();
    let hold_id = {
        let (_, _, state) = http(base, "GET", "/api/state", &[], None).await;
        state["holds"][0]["id"].as_str().unwrap().to_string()
    };
    assert!(hold.text.contains("sign in"), "{}", hold.text);

    // Ids nobody can guess: 128 random bits, not a counter.
    for id in [&frame, &hold_id] {
        let hex: String = id.chars().filter(char::is_ascii_hexdigit).collect();
        assert!(hex.len() >= 32, "a guessable id: {id}");
    }

    // A foreign Host (a rebound name) and a foreign Origin: refused on every kind of route.
    for path in [
        "/api/state".to_string(),
        "/browser/t".into(),
        format!("/api/browser/t/frames/{frame}"),
        "/api/browser/t/events".into(),
    ] {
        let (status, _, body) = http(base, "GET", &path, &[("host", "evil.example")], None).await;
        assert_eq!(status, 403, "{path} with Host evil.example: {body}");
        let (status, _, body) = http(
            base,
            "GET",
            &path,
            &[("host", "localhost.evil.example")],
            None,
        )
        .await;
        assert_eq!(status, 403, "{path}: {body}");
        let (status, _, body) = http(
            base,
            "GET",
            &path,
            &[("origin", "http://evil.example")],
            None,
        )
        .await;
        assert_eq!(status, 403, "{path} from Origin evil.example: {body}");
    }
    let (status, _, _) = http(
        base,
        "GET",
        "/api/state",
        &[("host", &format!("localhost:{}", base.port()))],
        None,
    )
    .await;
    assert_eq!(status, 200, "localhost with the port is ours");

    // Blind state changes (a form post, a bodiless POST) change nothing.
    let done = format!("/api/holds/{hold_id}/done");
    for headers in [
        vec![],
        vec![("content-type", "text/plain")],
        vec![("content-type", "application/x-www-form-urlencoded")],
    ] {
        let (status, _, body) = http(base, "POST", &done, &headers, Some("{}".into())).await;
        assert_eq!(status, 415, "Done with {headers:?}: {body}");
        let (status, _, body) = http(
            base,
            "POST",
            "/api/browser/t/back",
            &headers,
            Some(String::new()),
        )
        .await;
        assert_eq!(status, 415, "back with {headers:?}: {body}");
    }
    let (status, _, _) = http(
        base,
        "POST",
        &done,
        &[JSON, ("origin", "http://evil.example")],
        Some("{}".into()),
    )
    .await;
    assert_eq!(status, 403, "a JSON Done from another origin");
    let (_, _, state) = http(base, "GET", "/api/state", &[], None).await;
    assert_eq!(
        state["holds"][0]["id"],
        json!(hold_id),
        "the hold is still open"
    );

    // The card: framed by its own pages only, its own script only, never sniffed.
    let (status, headers, _) = http(base, "GET", "/browser/t", &[("host", &own_host)], None).await;
    assert_eq!(status, 200);
    let policy = headers
        .get("content-security-policy")
        .expect("the card's CSP")
        .to_str()
        .unwrap();
    assert!(policy.contains("frame-ancestors 'self'"), "{policy}");
    assert!(policy.contains("script-src 'self' 'sha256-"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert_eq!(headers.get("x-content-type-options").unwrap(), "nosniff");

    // The same page's own JSON Done works.
    let (status, _, body) = http(
        base,
        "POST",
        &done,
        &[JSON, ("origin", &format!("http://{own_host}"))],
        Some("{}".into()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grpc_call_over_http1_is_refused_so_a_rebound_page_cannot_act() {
    use prost::Message as _;
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), |_| {}).await;
    // What a page's fetch can send once its name resolves to 127.0.0.1: HTTP/1.1, a gRPC
    // content type, a framed ActRequest.
    let request = act("rebound", navigate(format!("http://{site}/page")));
    let message = request.encode_to_vec();
    let mut body = vec![0u8];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(&message);
    let host = format!("127.0.0.1:{}", controller.address.port());
    let response = reqwest::Client::new()
        .post(format!(
            "http://{}/nanomuse.browser.v1.BrowserTool/Act",
            controller.address
        ))
        .header("host", &host)
        .header("content-type", "application/grpc")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    assert_eq!(response.status(), 403, "gRPC over HTTP/1 answered");
    let (_, _, state) = http(controller.address, "GET", "/api/state", &[], None).await;
    assert!(thread_names(&state).is_empty(), "the page acted: {state}");
    // gRPC itself, over HTTP/2, is served as ever.
    let mut tool = controller.tool().await;
    act_as(
        &mut tool,
        None,
        "t",
        "",
        navigate(format!("http://{site}/page")),
    )
    .await
    .unwrap();
    controller.stop().await;
    worker.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 3. One tenant's huge URL and another tenant's action.

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_url_of_one_tenant_leaves_another_tenants_running_action_untouched() {
    logs();
    // A page that answers only once told to: tenant A's navigation is in flight on the worker
    // while tenant B's huge URL fails there.
    let (arrived_tx, arrived) = tokio::sync::mpsc::channel::<()>(1);
    let release = Arc::new(tokio::sync::Notify::new());
    let held = release.clone();
    let app = Router::new().route(
        "/slow",
        get(move || {
            let arrived_tx = arrived_tx.clone();
            let held = held.clone();
            async move {
                let _ = arrived_tx.send(()).await;
                held.notified().await;
                Html("<!doctype html><title>Slow</title><p>finally</p>")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let slow = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let site = serve_site().await;

    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), |config| {
        config.controller.tokens = HashMap::from([
            (token_digest(TOKEN_A), "tenant-a".to_string()),
            (token_digest(TOKEN_B), "tenant-b".to_string()),
        ]);
        config.controller.queue_deadline_ms = 10_000;
    })
    .await;
    let mut tool_a = controller.tool().await;
    let mut tool_b = controller.tool().await;
    // Both tenants' browsers up on the one worker.
    act_as(
        &mut tool_a,
        Some(TOKEN_A),
        "a",
        "",
        navigate(format!("http://{site}/page")),
    )
    .await
    .unwrap();
    act_as(
        &mut tool_b,
        Some(TOKEN_B),
        "b",
        "",
        navigate(format!("http://{site}/page")),
    )
    .await
    .unwrap();

    let running = tokio::spawn(async move {
        act_as(
            &mut tool_a,
            Some(TOKEN_A),
            "a",
            "",
            navigate(format!("http://{slow}/slow")),
        )
        .await
    });
    let mut arrived = arrived;
    tokio::time::timeout(Duration::from_secs(30), arrived.recv())
        .await
        .expect("tenant A's navigation reached the page");

    let huge = format!("http://{site}/page?q={}", "x".repeat(1024 * 1024));
    let error = act_as(&mut tool_b, Some(TOKEN_B), "b", "", navigate(huge))
        .await
        .map(|reply| reply.text)
        .err();
    release.notify_waiters();
    let reply = running.await.unwrap().expect("tenant A's action went on");
    assert!(reply.text.contains("Slow"), "{}", reply.text);
    if let Some(error) = &error {
        assert!(
            error.message().len() < 16 * 1024,
            "the error echoes the URL: {} bytes",
            error.message().len()
        );
        assert!(
            !error.message().contains("stopped answering"),
            "one op's failure taken for the worker's: {}",
            error.message()
        );
    }

    // Past the browser's own limit, refused before any backend: no thread is made.
    let over = format!("http://{site}/page?q={}", "x".repeat(2 * 1024 * 1024 + 1));
    let refused = act_as(&mut tool_b, Some(TOKEN_B), "new-b", "", navigate(over))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("at most"),
        "{}",
        refused.message()
    );
    let (_, _, state) = http(
        controller.address,
        "GET",
        "/api/state",
        &[("authorization", &format!("Bearer {TOKEN_B}"))],
        None,
    )
    .await;
    assert_eq!(thread_names(&state), ["b"], "the refused URL made a thread");
    controller.stop().await;
    worker.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 4. Profile import.

/// A tar of a profile: a folder, a cookie file, and `extra` appended by the caller.
fn profile_tar(extra: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    let mut dir = tar::Header::new_gnu();
    dir.set_entry_type(tar::EntryType::Directory);
    dir.set_mode(0o755);
    dir.set_size(0);
    builder
        .append_data(&mut dir, "browser-profile", std::io::empty())
        .unwrap();
    let mut file = tar::Header::new_gnu();
    file.set_mode(0o600);
    file.set_size(7);
    builder
        .append_data(&mut file, "browser-profile/Cookies", &b"cookies"[..])
        .unwrap();
    extra(&mut builder);
    builder.into_inner().unwrap()
}

async fn import(worker: &Worker, workspace: &str, tar: Vec<u8>) -> Result<u64, tonic::Status> {
    let channel = Channel::from_shared(format!("http://{}", worker.address))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = ProfileTransferClient::new(channel);
    let chunk = ProfileChunk {
        profile: Some(ProfileRef {
            tenant: "tenant-a".into(),
            workspace: workspace.into(),
        }),
        size: tar.len() as u64,
        data: tar,
    };
    client
        .import_profile(futures::stream::iter([chunk]))
        .await
        .map(|reply| reply.into_inner().bytes)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_imported_tar_with_an_outward_symlink_is_refused_whole() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let worker = Worker::start(test_config(&dir.path().join("profiles"))).await;

    let plain = profile_tar(|_| {});
    import(&worker, "fine", plain)
        .await
        .expect("a plain profile");
    let fine = worker
        .profiles
        .join("tenant-a/fine/browser-profile/Cookies");
    assert_eq!(std::fs::read(&fine).unwrap(), b"cookies");

    let target = outside.path().to_str().unwrap().to_string();
    for (name, link, kind) in [
        ("downloads", target.as_str(), tar::EntryType::Symlink),
        (
            "browser-profile/Default",
            "../../..",
            tar::EntryType::Symlink,
        ),
        ("browser-profile/inner", "Cookies", tar::EntryType::Symlink),
        (
            "browser-profile/hard",
            "browser-profile/Cookies",
            tar::EntryType::Link,
        ),
    ] {
        let tar = profile_tar(|builder| {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(kind);
            header.set_size(0);
            header.set_mode(0o777);
            builder.append_link(&mut header, name, link).unwrap();
            // Written through the link, were it kept.
            let mut file = tar::Header::new_gnu();
            file.set_mode(0o644);
            file.set_size(5);
            builder
                .append_data(&mut file, format!("{name}/x"), &b"owned"[..])
                .ok();
        });
        let refused = import(&worker, "evil", tar).await.unwrap_err();
        assert_eq!(
            refused.code(),
            tonic::Code::InvalidArgument,
            "{name} -> {link}: {refused:?}"
        );
        assert!(
            refused.message().contains("refused whole"),
            "{}",
            refused.message()
        );
        assert!(
            !worker.profiles.join("tenant-a/evil").exists(),
            "{name}: part of a refused tar was installed"
        );
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "{name}: written outside the profiles"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(worker.profiles.join("tenant-a"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["fine"], "staging folders left behind");
    worker.stop().await;
}

// ---------------------------------------------------------------------------------------------
// 5. Quotas, paging, NUL, oversized bodies.

#[tokio::test(flavor = "multi_thread")]
async fn quotas_paging_nul_and_oversized_bodies_get_their_clear_errors() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let mut config = controller_config(dir.path());
    config.controller.quotas.threads = 3;
    config.controller.quotas.profiles = 2;
    config.controller.quotas.open_holds = 2;
    config.controller.quotas.actions_in_flight = 2;
    // No worker: hand_over needs none, and what would need one is refused before.
    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
    let base = controller.address;
    let mut tool = controller.tool().await;
    let exhausted = |result: Result<ActReply, tonic::Status>, quota: &str| {
        let status = result.unwrap_err();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
        assert!(status.message().contains(quota), "{}", status.message());
    };

    act_as(&mut tool, None, "t1", "a", hand_over("one"))
        .await
        .unwrap();
    act_as(&mut tool, None, "t2", "b", hand_over("two"))
        .await
        .unwrap();
    // A third workspace is a third profile.
    exhausted(
        act_as(&mut tool, None, "t3", "c", hand_over("three")).await,
        "controller.quotas.profiles",
    );
    // A third open hold.
    exhausted(
        act_as(&mut tool, None, "t3", "a", hand_over("three")).await,
        "controller.quotas.open_holds",
    );
    let (status, _, body) = http(
        base,
        "POST",
        "/api/holds",
        &[JSON],
        Some(json!({"thread": "t3", "reason": "three"}).to_string()),
    )
    .await;
    assert_eq!(status, 429, "{body}");
    assert!(body["error"].as_str().unwrap().contains("open_holds"));
    // A fourth thread.
    exhausted(
        act_as(&mut tool, None, "t4", "a", hand_over("four")).await,
        "controller.quotas.threads",
    );

    // Actions under way: t1's and t2's wait for their holds, so a third may not start.
    let waiting: Vec<_> = ["t1", "t2"]
        .into_iter()
        .map(|thread| {
            let address = controller.address;
            tokio::spawn(async move {
                let mut tool = BrowserToolClient::new(
                    Channel::from_shared(format!("http://{address}"))
                        .unwrap()
                        .connect()
                        .await
                        .unwrap(),
                );
                // The probe below is an action too: while it runs, one of these may be
                // refused by the same quota; it asks again.
                loop {
                    let answer = act_as(
                        &mut tool,
                        None,
                        thread,
                        "",
                        Action::Extract(ExtractAction {}),
                    )
                    .await;
                    match &answer {
                        Err(status) if status.message().contains("actions_in_flight") => {
                            tokio::time::sleep(Duration::from_millis(20)).await
                        }
                        _ => return answer,
                    }
                }
            })
        })
        .collect();
    // Nothing tells when both wait: ask until the quota answers, with a bound.
    let mut refused = None;
    let mut last = None;
    for _ in 0..250 {
        match act_as(&mut tool, None, "t3", "", hand_over("three")).await {
            Err(status)
                if status.code() == tonic::Code::ResourceExhausted
                    && status.message().contains("actions_in_flight") =>
            {
                refused = Some(status);
                break;
            }
            other => last = Some(other),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let refused = refused
        .unwrap_or_else(|| panic!("the in-flight quota never answered; the last answer: {last:?}"));
    assert!(refused.message().contains("wait for one to finish"));

    // NUL and control characters where text is a key or a reason: refused, nothing made.
    let status = act_as(
        &mut tool,
        None,
        "t9",
        "a",
        Action::Key(KeyAction {
            key: "Ent\0er".into(),
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let (status, _, body) = http(
        base,
        "POST",
        "/api/holds",
        &[JSON],
        Some(json!({"thread": "t1", "reason": "sign\u{0}in"}).to_string()),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, _, body) = http(
        base,
        "POST",
        "/api/browser/t1/key",
        &[JSON],
        Some(json!({"key": "Enter\u{0}"}).to_string()),
    )
    .await;
    assert_eq!(status, 400, "{body}");

    // An oversized body is 413.
    let big = json!({"text": "x".repeat(3 * 1024 * 1024)}).to_string();
    let (status, _, body) = http(base, "POST", "/api/browser/t1/type", &[JSON], Some(big)).await;
    assert_eq!(status, 413, "{body}");

    // /api/state in pages.
    let (status, _, page) = http(base, "GET", "/api/state?limit=2", &[], None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        thread_names(&page),
        ["t1", "t2"],
        "no t9: the bad key made nothing"
    );
    let next = page["next"].as_str().expect("a next page").to_string();
    let (_, _, rest) = http(
        base,
        "GET",
        &format!("/api/state?limit=2&after={next}"),
        &[],
        None,
    )
    .await;
    assert_eq!(thread_names(&rest), ["t3"]);
    assert!(rest.get("next").is_none(), "{rest}");
    let (status, _, _) = http(base, "GET", "/api/state?limit=100000", &[], None).await;
    assert_eq!(status, 400, "a page is bounded");

    // The waiting actions go on once the holds close.
    for hold in page["holds"].as_array().unwrap() {
        let id = hold["id"].as_str().unwrap();
        let (status, _, body) = http(
            base,
            "POST",
            &format!("/api/holds/{id}/done"),
            &[JSON],
            Some("{}".into()),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    for waiter in waiting {
        // No worker is registered: they fail, but they end.
        let _ = waiter.await.unwrap();
    }
    controller.stop().await;
}
