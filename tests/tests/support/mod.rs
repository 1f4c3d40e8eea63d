//! What the end-to-end tests share: a site served on 127.0.0.1 by the test itself, a real
//! worker on a real socket, and small readers of what Chromium leaves behind.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, Query};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{AppendHeaders, Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use nanomuse_proto::{GrpcBackend, OpenRequest, Session};
use nanomuse_worker::WorkerConfig;
use tokio_util::sync::CancellationToken;

/// The test site: pages, forms, cookies, downloads and the React/Vue fixtures.
pub async fn serve_site() -> SocketAddr {
    let app = Router::new()
        .route("/page", get(|| async { Html(PAGE) }))
        .route("/second", get(|| async { Html(SECOND) }))
        .route("/submitted", get(submitted))
        .route("/set-cookies", get(set_cookies))
        .route("/echo-cookies", get(echo_cookies))
        .route("/echo-ua", get(echo_user_agent))
        .route("/login", get(|| async { Html(LOGIN) }).post(login))
        .route("/takeover", get(|| async { Html(TAKEOVER) }))
        .route("/account", get(account))
        .route("/api/whoami", get(whoami))
        .route("/redirect-set", get(redirect_set))
        .route("/popups", get(|| async { Html(POPUPS) }))
        .route("/download", get(download))
        .route("/no-content", get(|| async { StatusCode::NO_CONTENT }))
        .route("/never", get(never))
        .route("/big", get(|| async { "x".repeat(300_000) }))
        .route("/listing", get(|| async { Html(LISTING) }))
        .route("/listing-nested", get(|| async { Html(LISTING_NESTED) }))
        .route("/listing-many", get(listing_many))
        .route("/listing-odd", get(|| async { Html(LISTING_ODD) }))
        .route("/typing-patched", get(|| async { Html(TYPING_PATCHED) }))
        .route("/fixtures/{*path}", get(fixture));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

const PAGE: &str = r#"<!doctype html><html><head><title>Test page</title>
<meta name="viewport" content="width=device-width"></head>
<body style="margin:0">
<button id="press" style="position:absolute;left:10px;top:10px;width:200px;height:50px"
  onclick="document.getElementById('out').textContent='clicked'">Press</button>
<p id="out" style="position:absolute;left:10px;top:70px;margin:0">idle</p>
<form action="/submitted" method="get" style="position:absolute;left:10px;top:120px;margin:0">
  <input id="q" name="q" style="width:200px;height:30px;box-sizing:border-box"></form>
<a id="next" href="/second" style="position:absolute;left:10px;top:200px;display:block;width:100px;height:30px">Next</a>
<div style="height:5000px"></div>
<script>
  window.seen = [];
  for (const type of ['touchstart', 'touchend', 'mousedown', 'mouseup', 'click'])
    document.addEventListener(type, (e) => window.seen.push(e.type), true);
</script>
</body></html>"#;

const SECOND: &str = "<!doctype html><title>Second</title><p>second page</p>";

const LOGIN: &str = r#"<!doctype html><title>Sign in</title>
<form method="post" action="/login">
  <input id="user" name="user" style="display:block;width:200px;height:30px">
  <input id="password" name="password" type="password" style="display:block;width:200px;height:30px">
  <button id="go" style="display:block;width:200px;height:30px">Sign in</button>
</form>"#;

/// A page for the take-over: a button that counts its presses and a field whose value is
/// echoed as text, both at known places on a 1280×900 viewport, so the state the user's input
/// made shows in the page's text.
const TAKEOVER: &str = r#"<!doctype html><html><head><title>Take-over</title></head>
<body style="margin:0">
<button id="press" style="position:absolute;left:10px;top:10px;width:200px;height:50px"
  onclick="window.presses = (window.presses || 0) + 1;
           document.getElementById('count').textContent = 'pressed ' + window.presses">Press</button>
<p id="count" style="position:absolute;left:260px;top:10px;margin:0">pressed 0</p>
<input id="field" style="position:absolute;left:10px;top:120px;width:200px;height:30px"
  oninput="document.getElementById('echo').textContent = 'typed: ' + this.value">
<p id="echo" style="position:absolute;left:260px;top:120px;margin:0">typed:</p>
</body></html>"#;

const POPUPS: &str = r#"<!doctype html><title>Popups</title><body style="margin:0">
<a id="blank" href="/second" target="_blank"
   style="position:absolute;left:10px;top:10px;display:block;width:150px;height:30px">Blank link</a>
<button id="open" onclick="window.open('/second?via=open', '_blank')"
   style="position:absolute;left:10px;top:60px;width:150px;height:30px">Open</button>
</body>"#;

/// Every kind of element the listing knows, each at a known place on a 1280×900 viewport, plus
/// the ones it must leave out: hidden three ways, below the fold, and a span inside a button.
const LISTING: &str = r#"<!doctype html><html><head><title>Listing</title>
<style>.at { position: absolute; margin: 0; box-sizing: border-box; }</style></head>
<body style="margin:0;height:4000px">
<a class="at" href="/second" style="left:10px;top:10px;width:100px;height:20px">Docs</a>
<button class="at" id="save" style="left:200px;top:10px;width:100px;height:30px">Save
  <span onclick="document.title = 'span clicked'">now</span></button>
<input class="at" id="search" placeholder="Search" style="left:10px;top:62px;width:200px;height:30px">
<input class="at" type="email" aria-label="Email" style="left:300px;top:60px;width:200px;height:30px">
<label class="at" for="password" style="left:10px;top:110px">Password</label>
<input class="at" id="password" type="password" style="left:100px;top:110px;width:150px;height:30px">
<label class="at" style="left:300px;top:110px;display:block;height:30px"><input type="checkbox"
  checked style="margin:0;vertical-align:top"> Remember me</label>
<label class="at" for="country" style="left:10px;top:160px">Country</label>
<select class="at" id="country" style="left:100px;top:160px;height:30px">
  <option>France</option><option selected>Germany</option></select>
<textarea class="at" name="notes" style="left:300px;top:160px;width:200px;height:60px">Dear "team"</textarea>
<div class="at" role="button" style="left:10px;top:260px;width:100px;height:30px">Menu</div>
<div class="at" onclick="this.textContent = 'Expanded'" style="left:200px;top:260px;width:100px;height:30px">Expand</div>
<button class="at" disabled style="left:400px;top:260px;width:100px;height:30px">Send</button>
<button class="at" style="left:10px;top:320px;display:none">Hidden</button>
<a class="at" href="/second" style="left:200px;top:320px;visibility:hidden">Invisible</a>
<button class="at" style="left:400px;top:320px;opacity:0">Ghost</button>
<button class="at" id="far" style="left:10px;top:3000px;width:120px;height:30px">Far away</button>
</body></html>"#;

/// Elements the listing reaches beyond the plain document: in an open shadow root, in a
/// same-origin frame (with a 5 px border), and a styled checkbox drawn by its label.
const LISTING_NESTED: &str = r#"<!doctype html><html><head><title>Nested</title></head>
<body style="margin:0">
<div id="host" style="position:absolute;left:10px;top:10px"></div>
<iframe srcdoc="<body style='margin:0'><button style='position:absolute;left:20px;top:30px;width:100px;height:40px'>Inside frame</button></body>"
  style="position:absolute;left:100px;top:100px;width:400px;height:200px;border:5px solid black"></iframe>
<label style="position:absolute;left:10px;top:400px;display:block;width:150px;height:30px"><input
  id="subscribe" type="checkbox" style="position:absolute;opacity:0"> Subscribe</label>
<script>
  document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
    '<button style="width:120px;height:30px">In shadow</button>';
</script>
</body></html>"#;

/// What real apps do to a listing: a framework's handler on the box that holds the app, one
/// over the whole page, todos whose checkboxes only their row names (one drawn transparent
/// over its box, as dijit's), an icon button drawn by CSS, a focusable <div> drawn as
/// pressable, and a page that breaks what a listing would use (`document.querySelectorAll` and
/// `Array.from` replaced, an element whose geometry throws).
const LISTING_ODD: &str = r#"<!doctype html><html><head><title>Odd</title>
<style>
  .at { position: absolute; margin: 0; box-sizing: border-box; }
  ul { list-style: none; padding: 0; margin: 0; }
  li > div { display: flex; align-items: flex-start; height: 30px; }
  input[type=checkbox] { margin: 0; width: 16px; height: 16px; }
  .destroy { width: 20px; height: 20px; padding: 0; }
  .destroy::after { content: '×'; }
  .box { position: relative; display: inline-block; width: 16px; height: 16px; border: 1px solid; }
  .box input { position: absolute; left: 0; top: 0; opacity: 0; }
</style></head>
<body style="margin:0">
<div id="app" class="at" style="left:0;top:0;width:600px;height:300px">
  <section>
    <input id="all" type="checkbox" class="at" style="left:10px;top:10px">
    <ul class="at" style="left:10px;top:50px;width:400px">
      <li><div><input type="checkbox"><label>buy milk</label><button class="destroy"></button></div></li>
      <li><div><span>bread</span><span class="box"><input type="checkbox"></span></div></li>
    </ul>
  </section>
</div>
<div id="overlay" class="at" style="left:0;top:0;width:100%;height:100%;z-index:-1"></div>
<div class="at" tabindex="0" style="left:700px;top:10px;width:100px;height:30px;cursor:pointer">Tile</div>
<div id="broken" class="at" style="left:700px;top:200px;width:100px;height:30px">Broken</div>
<button class="at" style="left:700px;top:250px;width:100px;height:30px">After broken</button>
<label class="at" for="qty" style="left:700px;top:300px">Quantity</label>
<input class="at" id="qty" style="left:800px;top:300px;width:60px;height:30px">
<script>
  document.getElementById('app').onclick = () => {};
  document.getElementById('overlay').onclick = () => {};
  const broken = document.getElementById('broken');
  broken.onclick = () => {};
  Object.defineProperty(broken, 'getBoundingClientRect', { value() { throw new TypeError('broken'); } });
  document.querySelectorAll = () => 42;
  // MooTools' Array.from: no mapping function.
  Array.from = (item) => [item];
</script>
</body></html>"#;

/// A field on a page that breaks the setter path of typing as troopjs's and MooTools' shims do:
/// property descriptors read through a getter that throws, `Event` replaced. The field echoes
/// what reaches it, and whether the browser sent it.
const TYPING_PATCHED: &str = r#"<!doctype html><html><head><title>Patched</title></head>
<body style="margin:0">
<input id="field" value="old" style="position:absolute;left:10px;top:10px;width:200px;height:30px"
  oninput="document.getElementById('echo').textContent = this.value + (event.isTrusted ? ' (trusted)' : '')">
<p id="echo" style="position:absolute;left:10px;top:60px;margin:0"></p>
<script>
  const illegal = () => { throw new TypeError('Illegal invocation'); };
  Object.getOwnPropertyDescriptor = illegal;
  Reflect.getOwnPropertyDescriptor = illegal;
  window.Event = function (event) { this.type = event.type.indexOf('x'); };
</script>
</body></html>"#;

/// 2,000 buttons, five to a 30 px row, so the listing's speed and counts show on a big page.
async fn listing_many() -> Html<String> {
    let mut page = String::from(
        "<!doctype html><html><head><title>Many</title></head><body style=\"margin:0;height:12000px\">",
    );
    for i in 0..2000 {
        let (row, column) = (i / 5, i % 5);
        page.push_str(&format!(
            "<div><button style=\"position:absolute;left:{}px;top:{}px;width:140px;height:24px\">b{i}</button></div>",
            column * 150,
            row * 30
        ));
    }
    page.push_str("</body></html>");
    Html(page)
}

async fn submitted(Query(query): Query<std::collections::HashMap<String, String>>) -> Html<String> {
    let q = query.get("q").cloned().unwrap_or_default();
    Html(format!(
        "<!doctype html><title>Submitted</title><p id=\"q\">{q}</p>"
    ))
}

async fn set_cookies() -> Response {
    (
        // A plain array would insert, keeping only the last Set-Cookie.
        AppendHeaders([
            (header::SET_COOKIE, "persistent=kept; Max-Age=86400; Path=/"),
            (header::SET_COOKIE, "session=gone; Path=/"),
        ]),
        Html("<!doctype html><title>Cookies set</title><p>set</p>"),
    )
        .into_response()
}

fn cookie_header(headers: &HeaderMap) -> String {
    headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

async fn echo_cookies(headers: HeaderMap) -> String {
    cookie_header(&headers)
}

async fn echo_user_agent(headers: HeaderMap) -> String {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

async fn login(body: String) -> Response {
    if body.contains("user=ada") && body.contains("password=s3cret") {
        (
            [(header::SET_COOKIE, "sid=ada-session; Path=/; HttpOnly")],
            Redirect::to("/account"),
        )
            .into_response()
    } else {
        (StatusCode::UNAUTHORIZED, Html("<title>Denied</title>")).into_response()
    }
}

async fn account(headers: HeaderMap) -> Html<String> {
    let who = if cookie_header(&headers).contains("sid=ada-session") {
        "ada"
    } else {
        "nobody"
    };
    Html(format!(
        "<!doctype html><title>Account</title><p id=\"who\">{who}</p>"
    ))
}

async fn whoami(headers: HeaderMap) -> Response {
    let cookies = cookie_header(&headers);
    let user = if cookies.contains("sid=ada-session") {
        "ada"
    } else {
        "nobody"
    };
    (
        [
            (header::SET_COOKIE, "seen=yes; Path=/; Max-Age=600"),
            (header::CONTENT_TYPE, "application/json"),
        ],
        format!("{{\"user\":\"{user}\"}}"),
    )
        .into_response()
}

async fn redirect_set() -> Response {
    (
        [(header::SET_COOKIE, "hop=one; Path=/")],
        Redirect::to("/echo-cookies"),
    )
        .into_response()
}

async fn download() -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"report.txt\"",
            ),
        ],
        "quarterly numbers\n",
    )
        .into_response()
}

async fn never() -> Response {
    std::future::pending::<()>().await;
    StatusCode::OK.into_response()
}

async fn fixture(UrlPath(path): UrlPath<String>) -> Response {
    if path.contains("..") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(&path);
    match tokio::fs::read(&file).await {
        Ok(bytes) => {
            let kind = if path.ends_with(".js") {
                "text/javascript"
            } else {
                "text/html; charset=utf-8"
            };
            ([(header::CONTENT_TYPE, kind)], bytes).into_response()
        }
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The test site and a worker on a fresh profiles folder (kept alive by the returned dir).
pub async fn site_and_worker() -> (SocketAddr, tempfile::TempDir, Worker) {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let worker = Worker::start(test_config(dir.path())).await;
    (site, dir, worker)
}

/// A worker served on its own socket, stopped cleanly by [`Worker::stop`].
pub struct Worker {
    pub name: String,
    pub address: SocketAddr,
    pub backend: GrpcBackend,
    pub profiles: PathBuf,
    running: Running,
}

pub fn test_config(profiles: &Path) -> WorkerConfig {
    WorkerConfig {
        name: "test-worker".into(),
        profiles_root: profiles.to_path_buf(),
        timeout_ms: 15_000,
        ..WorkerConfig::default()
    }
}

impl Worker {
    /// Runs the worker as a task of this process.
    pub async fn start(config: WorkerConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let profiles = config.profiles_root.clone();
        let name = config.name.clone();
        let task = tokio::spawn(nanomuse_worker::run(config, listener, shutdown.clone()));
        let backend = GrpcBackend::connect(format!("http://{address}"))
            .await
            .expect("worker reachable");
        Self {
            name,
            address,
            backend,
            profiles,
            running: Running::Task { shutdown, task },
        }
    }

    /// Runs the `worker` binary at `binary` as a process of its own, as it is deployed; its
    /// configuration goes in a file beside the profiles folder.
    pub async fn spawn(binary: &Path, config: WorkerConfig) -> Self {
        let address = free_address();
        let file = config.profiles_root.with_extension("toml");
        let toml = toml::to_string(&std::collections::BTreeMap::from([("worker", &config)]))
            .expect("worker config as TOML");
        std::fs::write(&file, toml).unwrap();
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("--config")
            .arg(&file)
            .args(["--listen", &address.to_string()]);
        let mut child = spawn_quiet(command);
        let endpoint = format!("http://{address}");
        let backend = until_up(&mut child, "worker", || {
            GrpcBackend::connect(endpoint.clone())
        })
        .await;
        Self {
            name: config.name,
            address,
            backend,
            profiles: config.profiles_root,
            running: Running::Process(child),
        }
    }

    /// Stops taking calls, closes the browsers cleanly and waits for the worker to end.
    pub async fn stop(self) {
        self.running.stop().await;
    }
}

/// How a served component runs: as a task of this process, or as a workspace binary in a
/// process of its own.
enum Running {
    Task {
        shutdown: CancellationToken,
        task: tokio::task::JoinHandle<anyhow::Result<()>>,
    },
    Process(tokio::process::Child),
}

impl Running {
    async fn stop(self) {
        match self {
            Running::Task { shutdown, task } => {
                shutdown.cancel();
                task.await.unwrap().unwrap();
            }
            Running::Process(mut child) => {
                // SIGTERM, as Kubernetes stops a pod: the binary drains, then exits with 0.
                let pid = child.id().expect("still running").to_string();
                let sent = std::process::Command::new("kill")
                    .args(["-TERM", &pid])
                    .status()
                    .unwrap();
                assert!(sent.success(), "kill -TERM {pid} failed");
                let status = child.wait().await.unwrap();
                assert!(status.success(), "process {pid} ended with {status}");
            }
        }
    }
}

/// A binary of the workspace, built before the tests (`cargo build --workspace --bins`, as
/// `tests/run.sh` does): the tests run in `<target>/<profile>/deps`, the binaries one up.
pub fn built_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent().and_then(Path::parent).unwrap().join(name);
    assert!(
        binary.exists(),
        "{} is missing: build the binaries first (cargo build --workspace --bins)",
        binary.display()
    );
    binary
}

/// A loopback address no one listens on now. The binaries print their bound address only in
/// their logs, so they are told one; another program taking it in between is unlikely here.
pub fn free_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// Starts `command` with only warnings and errors on stderr; the process dies with this one
/// should it panic before [`Running::stop`].
pub fn spawn_quiet(mut command: tokio::process::Command) -> tokio::process::Child {
    command
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    command.spawn().expect("cannot start the binary")
}

/// Retries `connect` until the process `child` answers; there is no event for a process that
/// starts listening. Panics when the process exits first or takes over 20 s.
pub async fn until_up<T, E: std::fmt::Debug, F>(
    child: &mut tokio::process::Child,
    what: &str,
    mut connect: impl FnMut() -> F,
) -> T
where
    F: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match connect().await {
            Ok(connected) => return connected,
            Err(error) => {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("the {what} binary exited ({status}) before answering");
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the {what} binary did not answer within 20 s: {error:?}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

pub fn session(page: &str) -> Option<Session> {
    Some(Session::new("tenant-a", "work", page))
}

pub fn open_request(page: &str, mobile: bool) -> OpenRequest {
    OpenRequest {
        session: session(page),
        mobile,
        ..Default::default()
    }
}

/// The pid of the main Chromium process running on `profile_dir`, if any.
pub fn chromium_pid(profile_dir: &Path) -> Option<u32> {
    let needle = format!("--user-data-dir={}", profile_dir.display());
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            let state = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let zombie = state.rsplit(')').next()?.trim_start().starts_with('Z');
            (cmdline.contains(&needle) && !cmdline.contains("--type=") && !zombie).then_some(pid)
        })
}

/// Whether process `pid` has wholly exited: gone, or a zombie whose every thread is gone
/// (its leader turns zombie while other threads are still tearing down).
pub fn process_ended(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let zombie = stat
        .rsplit(')')
        .next()
        .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X']));
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    zombie && threads <= 1
}

/// Waits, up to `limit`, for `condition` to hold; there is no event to wait on for a process
/// that ends or a file that appears.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    condition()
}

/// The width and height a JPEG declares in its frame header.
pub fn jpeg_size(jpeg: &[u8]) -> (u32, u32) {
    assert_eq!(&jpeg[..2], &[0xFF, 0xD8], "not a JPEG");
    let mut i = 2;
    while i + 9 < jpeg.len() {
        assert_eq!(jpeg[i], 0xFF, "bad JPEG marker");
        let marker = jpeg[i + 1];
        let length = u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]) as usize;
        if matches!(marker, 0xC0..=0xC2) {
            let height = u16::from_be_bytes([jpeg[i + 5], jpeg[i + 6]]) as u32;
            let width = u16::from_be_bytes([jpeg[i + 7], jpeg[i + 8]]) as u32;
            return (width, height);
        }
        i += 2 + length;
    }
    panic!("no JPEG frame header");
}

pub fn profile_dir(profiles: &Path) -> PathBuf {
    profiles
        .join("tenant-a")
        .join("work")
        .join("browser-profile")
}

pub fn downloads_dir(profiles: &Path) -> PathBuf {
    profiles.join("tenant-a").join("work").join("downloads")
}

/// Worker logs on the test's output, filtered by `RUST_LOG` (off when unset).
pub fn logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}

/// A controller served on its own socket, stopped cleanly by [`ControllerProcess::stop`].
pub struct ControllerProcess {
    pub address: SocketAddr,
    running: Running,
}

/// A controller configuration for tests: fast heartbeats, a short queue deadline.
pub fn controller_config(data: &Path) -> nanomuse_controller::Config {
    let mut config = nanomuse_controller::Config::default();
    config.controller.data_dir = data.to_path_buf();
    config.controller.heartbeat_interval_ms = 100;
    config.controller.heartbeat_timeout_ms = 1_000;
    config.controller.queue_deadline_ms = 1_000;
    config
}

/// A worker that registers with the controller at `controller`.
pub fn registered_worker_config(
    profiles: &Path,
    name: &str,
    controller: SocketAddr,
    capacity: u32,
) -> WorkerConfig {
    WorkerConfig {
        name: name.into(),
        controller: format!("http://{controller}"),
        capacity,
        ..test_config(profiles)
    }
}

/// A controller (its configuration tuned by `tune`) with one registered worker, `w1`, both
/// keeping their state under `dir`.
pub async fn controller_with_worker(
    dir: &Path,
    tune: impl FnOnce(&mut nanomuse_controller::Config),
) -> (ControllerProcess, Worker) {
    let mut config = controller_config(&dir.join("controller"));
    tune(&mut config);
    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
    let worker_config = registered_worker_config(&dir.join("w1"), "w1", controller.address, 4);
    let worker = Worker::start(worker_config).await;
    controller.wait_for_workers(&["w1"]).await;
    (controller, worker)
}

impl ControllerProcess {
    /// Starts on `listen` (`127.0.0.1:0` for any port), as a task of this process.
    pub async fn start(config: nanomuse_controller::Config, listen: &str) -> Self {
        Self::start_with_local(config, listen, None).await
    }

    /// [`ControllerProcess::start`], with a backend of this process as a worker besides.
    pub async fn start_with_local(
        config: nanomuse_controller::Config,
        listen: &str,
        local: Option<nanomuse_controller::LocalWorker>,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind(listen).await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(nanomuse_controller::run_with_local(
            config,
            listener,
            shutdown.clone(),
            local,
        ));
        Self {
            address,
            running: Running::Task { shutdown, task },
        }
    }

    /// Runs the `controller` binary at `binary` as a process of its own, with its default
    /// configuration (the deployed heartbeats and queue) and its state in `data`.
    pub async fn spawn(binary: &Path, data: &Path) -> Self {
        let address = free_address();
        let mut command = tokio::process::Command::new(binary);
        command
            .args(["--listen", &address.to_string()])
            .arg("--data")
            .arg(data);
        let mut child = spawn_quiet(command);
        let endpoint = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap();
        until_up(&mut child, "controller", || endpoint.connect()).await;
        Self {
            address,
            running: Running::Process(child),
        }
    }

    async fn channel(&self) -> tonic::transport::Channel {
        tonic::transport::Channel::from_shared(format!("http://{}", self.address))
            .unwrap()
            .connect()
            .await
            .expect("controller reachable")
    }

    pub async fn tool(
        &self,
    ) -> nanomuse_proto::browser_tool_client::BrowserToolClient<tonic::transport::Channel> {
        nanomuse_proto::browser_tool_client::BrowserToolClient::new(self.channel().await)
            .max_decoding_message_size(64 * 1024 * 1024)
    }

    pub async fn workers(&self) -> Vec<nanomuse_proto::WorkerStatus> {
        let mut registry =
            nanomuse_proto::worker_registry_client::WorkerRegistryClient::new(self.channel().await);
        registry
            .list_workers(nanomuse_proto::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers
    }

    /// Waits until `names` are all registered and live; there is no event for a worker's
    /// registration, so the fleet is read until it is complete.
    pub async fn wait_for_workers(&self, names: &[&str]) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let workers = self.workers().await;
            let live = |name: &&str| workers.iter().any(|w| w.name == *name && w.live);
            if names.iter().all(live) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "workers {names:?} did not register: {workers:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn stop(self) {
        self.running.stop().await;
    }
}

/// The number of the element labelled `label` in an action's reply.
pub fn element(reply: &nanomuse_proto::ActReply, label: &str) -> i64 {
    reply
        .elements
        .iter()
        .find(|e| e.label == label)
        .unwrap_or_else(|| panic!("no element {label:?} in {}", reply.text))
        .n
        .into()
}
