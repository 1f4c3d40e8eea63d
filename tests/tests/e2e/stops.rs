//! A remembered login survives every way the service is stopped. A form sign-in whose 303 sets
//! a persistent cookie (`Max-Age`) and a session cookie, then the binary is stopped with SIGINT
//! to its process group (Ctrl-C in a terminal), SIGTERM to its group (`timeout`, `tini -g`,
//! supervisors) or SIGKILL, five times each, since the loss this guards against was a race.
//! After every restart the fresh persistent cookie is sent; after a clean stop the session
//! cookie is not, and the thread's page is back where it was. Over the real
//! `nanomuse-browser serve` and the real `worker` binary.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{AppendHeaders, Html, IntoResponse, Redirect};
use axum::routing::get;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    InterruptGroup,
    TerminateGroup,
    Kill,
}

impl Stop {
    fn signal(self) -> &'static str {
        match self {
            Stop::InterruptGroup => "-INT",
            Stop::TerminateGroup => "-TERM",
            Stop::Kill => "-KILL",
        }
    }

    fn is_clean(self) -> bool {
        self != Stop::Kill
    }
}

/// Each stop five times, interleaved, so a loss that depends on what came before shows too.
fn stops() -> Vec<Stop> {
    [Stop::InterruptGroup, Stop::TerminateGroup, Stop::Kill]
        .into_iter()
        .cycle()
        .take(15)
        .collect()
}

/// The sign-in site: `/login` posts to `/signin`, whose 303 sets `remember` (a day) and
/// `session` (no expiry), both with the sign-in's number; `/home`'s title says which came back.
async fn sign_in_site() -> SocketAddr {
    #[derive(Clone, Default)]
    struct Site {
        sign_ins: Arc<AtomicU32>,
        last_cookies: Arc<Mutex<String>>,
    }
    let login = || async {
        Html(
            r#"<!doctype html><title>Sign in</title><body style="margin:0">
<form method="post" action="/signin">
<button style="position:absolute;left:10px;top:10px;width:200px;height:50px">Sign in</button>
</form>"#,
        )
    };
    let sign_in = |State(site): State<Site>| async move {
        let n = site.sign_ins.fetch_add(1, Ordering::SeqCst) + 1;
        (
            axum::http::StatusCode::SEE_OTHER,
            AppendHeaders([
                (header::LOCATION, "/home".to_string()),
                (
                    header::SET_COOKIE,
                    format!("remember=r{n}; Path=/; Max-Age=86400; HttpOnly"),
                ),
                (
                    header::SET_COOKIE,
                    format!("session=s{n}; Path=/; HttpOnly"),
                ),
            ]),
        )
            .into_response()
    };
    let home = |State(site): State<Site>, headers: HeaderMap| async move {
        let cookies = headers
            .get(header::COOKIE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        *site.last_cookies.lock().unwrap() = cookies.clone();
        Html(format!(
            "<!doctype html><title>[{cookies}]</title><p>home</p>"
        ))
    };
    let app = Router::new()
        .route("/login", get(login))
        .route("/signin", axum::routing::post(sign_in))
        .route("/home", get(home))
        .route("/", get(|| async { Redirect::to("/login") }))
        .with_state(Site::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

/// The cookies `/home` was sent, from its title `[a=1; b=2]`.
fn cookies_of(title: &str) -> Vec<String> {
    let inner = title.trim_start_matches('[').trim_end_matches(']');
    let mut cookies: Vec<String> = inner
        .split(';')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    cookies.sort();
    cookies
}

/// Starts a binary in a process group of its own, as a terminal or a supervisor does, so a
/// signal to the group reaches everything the binary did not move out of it.
fn spawn_in_group(mut command: tokio::process::Command) -> tokio::process::Child {
    command
        .env(
            "RUST_LOG",
            std::env::var("STOPS_LOG").unwrap_or("warn".into()),
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    command.spawn().expect("cannot start the binary")
}

/// Sends `stop`'s signal to the child's process group and waits for it to end; a clean stop
/// must end with success.
async fn stop(mut child: tokio::process::Child, how: Stop) {
    let pid = child.id().expect("still running");
    let sent = std::process::Command::new("kill")
        .args([how.signal(), "--", &format!("-{pid}")])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {} -{pid} failed", how.signal());
    let status = tokio::time::timeout(Duration::from_secs(40), child.wait())
        .await
        .unwrap_or_else(|_| panic!("{how:?}: the process did not end within 40 s"))
        .unwrap();
    if how.is_clean() {
        assert!(status.success(), "{how:?}: the process ended with {status}");
    }
}

/// What a restart must find after a sign-in numbered `n` and the stop `how`.
fn check_after(how: Stop, n: u32, cookies: &[String]) {
    let remember = format!("remember=r{n}");
    assert!(
        cookies.contains(&remember),
        "after {how:?} the persistent cookie {remember} was not sent; sent: {cookies:?}"
    );
    if how.is_clean() {
        assert!(
            !cookies.iter().any(|c| c.starts_with("session=")),
            "after a clean {how:?} the session cookie was still sent: {cookies:?}"
        );
    }
}

async fn start_serve(data: &Path) -> (tokio::process::Child, Tool) {
    let address = free_address();
    let mut command = tokio::process::Command::new(built_binary("nanomuse-browser"));
    command
        .args(["serve", "--listen", &address.to_string(), "--data"])
        .arg(data);
    let mut child = spawn_in_group(command);
    let endpoint = format!("http://{address}");
    let tool = until_up(&mut child, "nanomuse-browser serve", || {
        Tool::connect(endpoint.clone())
    })
    .await;
    (child, tool)
}

#[tokio::test]
async fn a_login_survives_every_stop_of_serve() {
    logs();
    let site = sign_in_site().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (mut child, mut tool) = start_serve(&data).await;
    for (round, how) in stops().into_iter().enumerate() {
        let n = round as u32 + 1;
        let page = acted(
            &mut tool,
            act(
                "login",
                Action::Navigate(NavigateAction {
                    url: format!("http://{site}/login"),
                }),
            ),
        )
        .await;
        let sign_in = element(&page, "Sign in");
        let home = acted(
            &mut tool,
            act(
                "login",
                Action::Click(ClickAction {
                    n: sign_in,
                    ..Default::default()
                }),
            ),
        )
        .await;
        assert!(
            cookies_of(&home.title).contains(&format!("remember=r{n}")),
            "round {n}: the sign-in did not land: {}",
            home.text
        );
        stop(child, how).await;
        (child, tool) = start_serve(&data).await;
        if how.is_clean() {
            // The page comes back where the thread left it, not blank. (After SIGKILL the
            // last listing may not have reached the disk: the page before it is as right.)
            let state = acted(&mut tool, act("login", Action::State(StateAction {}))).await;
            assert_eq!(
                state.url, home.url,
                "after {how:?} the page is not back where it was: {}",
                state.text
            );
        }
        let home = acted(
            &mut tool,
            act(
                "login",
                Action::Navigate(NavigateAction {
                    url: format!("http://{site}/home"),
                }),
            ),
        )
        .await;
        check_after(how, n, &cookies_of(&home.title));
    }
    stop(child, Stop::TerminateGroup).await;
}

/// A tab opened anew after a restart has no history of its own: `back` goes by the thread's
/// way there, one page at a time, and says so when there is no earlier page.
#[tokio::test]
async fn back_after_a_restart_of_serve_goes_the_threads_way_back_and_no_further() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (child, mut tool) = start_serve(&data).await;
    for path in ["/page", "/second", "/page?third"] {
        acted(
            &mut tool,
            act("way", navigate(format!("http://{site}{path}"))),
        )
        .await;
    }
    stop(child, Stop::InterruptGroup).await;
    let (child, mut tool) = start_serve(&data).await;
    let back = || act("way", Action::Back(BackAction {}));

    let second = acted(&mut tool, back()).await;
    assert_eq!(
        second.url,
        format!("http://{site}/second"),
        "{}",
        second.text
    );
    assert!(second.text.contains("(loaded again"), "{}", second.text);
    let first = acted(&mut tool, back()).await;
    assert_eq!(first.url, format!("http://{site}/page"), "{}", first.text);
    let status = tool.act(back()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains("no earlier page"),
        "{}",
        status.message()
    );
    let state = acted(&mut tool, act("way", Action::State(StateAction {}))).await;
    assert_eq!(state.url, first.url, "a refused back moved the page");
    stop(child, Stop::TerminateGroup).await;
}

/// The first key after a restart lands on the page opened anew where the thread left it: the
/// reply says so, not that the key loaded the page again; the next key says neither.
#[tokio::test]
async fn a_key_pressed_first_after_a_restart_says_the_page_was_loaded_anew_before_it() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (child, mut tool) = start_serve(&data).await;
    acted(
        &mut tool,
        act("keys", navigate(format!("http://{site}/page"))),
    )
    .await;
    stop(child, Stop::InterruptGroup).await;
    let (child, mut tool) = start_serve(&data).await;
    let tab = || act("keys", Action::Key(KeyAction { key: "Tab".into() }));

    let first = acted(&mut tool, tab()).await;
    assert_eq!(first.url, format!("http://{site}/page"), "{}", first.text);
    assert!(
        first.text.starts_with("Pressed Tab. The focus is on"),
        "{}",
        first.text
    );
    assert!(
        first.text.contains(
            "The page was loaded anew at its address first (its browser had closed: idle, or a \
             restart)"
        ),
        "{}",
        first.text
    );
    assert!(!first.text.contains("loaded again"), "{}", first.text);
    let next = acted(&mut tool, tab()).await;
    assert!(
        !next.text.contains("anew") && !next.text.contains("loaded again"),
        "{}",
        next.text
    );
    stop(child, Stop::TerminateGroup).await;
}

/// A restart while the thread is on a popup brings the thread back on the page that opened
/// it: the popup went with its browser, and at its own address it would have no opener to
/// hand its work to.
#[tokio::test(flavor = "multi_thread")]
async fn a_restart_on_a_popup_brings_the_thread_back_on_its_opener() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let book_url = format!("http://{site}/fixtures/windows.html");
    let click = |n| {
        act(
            "pop",
            Action::Click(ClickAction {
                n,
                ..Default::default()
            }),
        )
    };
    let (child, mut tool) = start_serve(&data).await;
    for restart_on_the_popup in [false, true] {
        let book = acted(&mut tool, act("pop", navigate(book_url.clone()))).await;
        let popup = acted(&mut tool, click(element(&book, "Add another author"))).await;
        assert!(popup.url.ends_with("?popup=1"), "{}", popup.text);
        if !restart_on_the_popup {
            let name = element(&popup, "Name");
            let typed = Action::Type(TypeAction {
                n: name,
                text: "Ann".into(),
            });
            acted(&mut tool, act("pop", typed)).await;
            let back = acted(&mut tool, click(element(&popup, "Save author"))).await;
            assert_eq!(back.url, book_url, "{}", back.text);
        }
    }
    stop(child, Stop::InterruptGroup).await;

    let (child, mut tool) = start_serve(&data).await;
    let state = acted(&mut tool, act("pop", Action::State(StateAction {}))).await;
    assert_eq!(state.url, book_url, "{}", state.text);
    stop(child, Stop::TerminateGroup).await;
}

async fn start_worker(
    config: &nanomuse_worker::WorkerConfig,
) -> (tokio::process::Child, GrpcBackend) {
    let address = free_address();
    let file = config.profiles_root.with_extension("toml");
    let toml = toml::to_string(&std::collections::BTreeMap::from([("worker", config)])).unwrap();
    std::fs::write(&file, toml).unwrap();
    let mut command = tokio::process::Command::new(built_binary("worker"));
    command
        .arg("--config")
        .arg(&file)
        .args(["--listen", &address.to_string()]);
    let mut child = spawn_in_group(command);
    let endpoint = format!("http://{address}");
    let backend = until_up(&mut child, "worker", || {
        GrpcBackend::connect(endpoint.clone())
    })
    .await;
    (child, backend)
}

/// The cookies the worker's page sent to `/home`.
async fn home_cookies(backend: &GrpcBackend, site: SocketAddr) -> Vec<String> {
    let reply = backend
        .navigate(NavigateRequest {
            session: session("login"),
            url: format!("http://{site}/home"),
            ..Default::default()
        })
        .await
        .expect("navigate home");
    cookies_of(&reply.page.unwrap_or_default().title)
}

#[tokio::test]
async fn a_login_survives_every_stop_of_the_worker() {
    logs();
    let site = sign_in_site().await;
    let dir = tempfile::tempdir().unwrap();
    let config = test_config(&dir.path().join("profiles"));
    let (mut child, mut backend) = start_worker(&config).await;
    for (round, how) in stops().into_iter().enumerate() {
        let n = round as u32 + 1;
        backend
            .open(open_request("login", false))
            .await
            .expect("open");
        backend
            .navigate(NavigateRequest {
                session: session("login"),
                url: format!("http://{site}/login"),
                ..Default::default()
            })
            .await
            .expect("navigate to the form");
        // The button's centre, where the page puts it.
        backend
            .tap(TapRequest {
                session: session("login"),
                x: 110.0,
                y: 35.0,
                ..Default::default()
            })
            .await
            .expect("tap Sign in");
        backend
            .settle(SettleRequest {
                session: session("login"),
                timeout_ms: 10_000,
            })
            .await
            .expect("settle");
        let state = backend
            .state(StateRequest {
                session: session("login"),
            })
            .await
            .expect("state");
        assert!(
            cookies_of(&state.title).contains(&format!("remember=r{n}")),
            "round {n}: the sign-in did not land: {state:?}"
        );
        stop(child, how).await;
        (child, backend) = start_worker(&config).await;
        backend
            .open(open_request("login", false))
            .await
            .expect("open after the restart");
        check_after(how, n, &home_cookies(&backend, site).await);
    }
    stop(child, Stop::TerminateGroup).await;
}
