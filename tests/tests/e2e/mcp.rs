//! The browser tool as an MCP server, driven by a real MCP client nobody here wrote: the
//! official Python SDK (`mcp` on PyPI, in the venv of `tests/mcp/ensure-client.sh`), scripted
//! by `tests/mcp/client.py`, against the real binaries — the hosted `controller` with a `worker`
//! (Streamable HTTP at `/mcp`), `nanomuse-browser mcp` over stdio forwarding to it, the
//! embedded `nanomuse-browser serve`, and `nanomuse-browser mcp` starting the embedded server
//! itself. What the client saw is judged here: the tools and their schemas, listings
//! and JPEG frames, React state changed by typing and clicking, bad arguments as tool errors,
//! holds that make the next call wait (with progress) until the HTTP API's Done, cancellation,
//! the thread's frames as resources, and the HTTP side's refusals (no token, another tenant's session or thread, a foreign
//! Origin).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use nanomuse_common::tokens::token_digest;
use nanomuse_tests::*;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const TOKEN_A: &str = "mcp-token-of-tenant-a-0123456789";
const TOKEN_B: &str = "mcp-token-of-tenant-b-0123456789";
const BEARER_A: &str = "Bearer mcp-token-of-tenant-a-0123456789";
const BEARER_B: &str = "Bearer mcp-token-of-tenant-b-0123456789";

/// The venv's python with the SDK: NANOMUSE_MCP_PYTHON (set by tests/run.sh), else the one
/// `tests/mcp/ensure-client.sh` makes (or finds) now.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("NANOMUSE_MCP_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(python);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/ensure-client.sh");
    let output = std::process::Command::new(&script)
        .output()
        .expect("tests/mcp/ensure-client.sh runs");
    assert!(
        output.status.success(),
        "tests/mcp/ensure-client.sh failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// Runs the scripted client with `args` (`http URL …` or `stdio COMMAND …`) on `plan`; what
/// it saw.
pub(crate) async fn client(args: &[String], plan: Value) -> Value {
    client_around_pause(args, plan, async {}).await
}

/// [`client`], with `at_pause` run while the client waits at its plan's `{"pause": true}` step
/// (never, for a plan without one).
async fn client_around_pause(
    args: &[String],
    plan: Value,
    at_pause: impl std::future::Future<Output = ()>,
) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client.py");
    let mut child = tokio::process::Command::new(python())
        .arg(script)
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the MCP client starts");
    let pauses = plan["steps"]
        .as_array()
        .is_some_and(|steps| steps.iter().any(|step| step["pause"] == true));
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{plan}\n").as_bytes())
        .await
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    if pauses {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(60), stdout.read_line(&mut line))
            .await
            .expect("the client reached its pause within a minute")
            .unwrap();
        assert_eq!(line.trim(), r#"{"paused": true}"#);
        at_pause.await;
        stdin.write_all(b"go\n").await.unwrap();
    }
    drop(stdin);
    let mut report = String::new();
    let output = tokio::time::timeout(Duration::from_secs(120), async {
        stdout.read_to_string(&mut report).await.unwrap();
        child.wait_with_output().await.unwrap()
    })
    .await
    .expect("the MCP client finished within 2 minutes");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the MCP client failed: {stderr}");
    assert!(
        !stderr.contains("Session termination failed"),
        "the client's session did not close cleanly: {stderr}"
    );
    serde_json::from_str(&report)
        .unwrap_or_else(|e| panic!("the client's report is not JSON ({e}): {stderr}"))
}

pub(crate) fn http_client(url: &str, token: Option<&str>) -> Vec<String> {
    let mut args = vec!["http".to_string(), url.to_string()];
    if let Some(token) = token {
        args.extend(["--token".to_string(), token.to_string()]);
    }
    args
}

fn step(report: &Value, i: usize) -> &Value {
    &report["steps"][i]
}

fn text(step: &Value) -> String {
    step["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn succeeded(step: &Value) -> &Value {
    assert_eq!(step["error"], Value::Null, "a protocol error: {step}");
    assert_eq!(
        step["is_error"],
        json!(false),
        "a tool error: {}",
        text(step)
    );
    step
}

/// The (width, height) of the step's one JPEG.
fn jpeg_of(step: &Value) -> (u32, u32) {
    let images = step["images"].as_array().unwrap();
    assert_eq!(images.len(), 1, "one frame: {}", text(step));
    assert_eq!(images[0]["mime"], "image/jpeg");
    let jpeg = base64::engine::general_purpose::STANDARD
        .decode(images[0]["data"].as_str().unwrap())
        .unwrap();
    jpeg_size(&jpeg)
}

/// The thread of the MCP session, from the card's address a hand-over gives.
fn thread_of_card(step: &Value) -> String {
    let text = text(step);
    let at = text.find("/browser/").expect("the card's address") + "/browser/".len();
    text[at..]
        .split(|c: char| c.is_whitespace() || c == ')')
        .next()
        .unwrap()
        .to_string()
}

/// The plan of a session on the test site: the page listed with its picture, the React form
/// filled and sent, a bad argument, a hold released by the API's Done after the waiting call
/// reported progress; with `cancel`, a call given up by the client while it waits.
fn session_plan(site: SocketAddr, api: SocketAddr, token: Option<&str>, cancel: bool) -> Value {
    let mut steps = vec![
        json!({"tool": "browser_navigate", "args": {"url": format!("http://{site}/page")}}),
        json!({"tool": "browser_navigate",
               "args": {"url": format!("http://{site}/fixtures/react-form.html")}}),
        json!({"tool": "browser_type", "args": {"n": {"$element": "Your name"}, "text": "Ada"}}),
        json!({"tool": "browser_click", "args": {"n": {"$element": "Sign up"}}}),
        json!({"tool": "browser_extract"}),
        json!({"tool": "browser_click", "args": {"n": "seven"}}),
        json!({"tool": "browser_wait", "args": {"seconds": 99}}),
        json!({"tool": "browser_hand_over", "args": {"reason": "Sign in to the test site"}}),
    ];
    if cancel {
        steps.push(json!({"tool": "browser_navigate",
                          "args": {"url": format!("http://{site}/second")},
                          "cancel_on_progress": true}));
    }
    steps.push(json!({"tool": "browser_state",
                      "release_hold": {"api": format!("http://{api}"), "token": token,
                                       "reason": "Sign in to the test site"}}));
    json!({ "steps": steps })
}

/// Judges what the client saw of [`session_plan`]; the session's thread.
fn check_session(report: &Value, site: SocketAddr, cancel: bool) -> String {
    let version = report["protocol_version"].as_str().unwrap();
    assert!(
        ["2025-06-18", "2025-11-25"].contains(&version),
        "negotiated {version}"
    );
    assert_eq!(report["server"], "nanomuse-browser");
    check_tools(&report["tools"]);

    let page = succeeded(step(report, 0));
    let listing = text(page);
    assert!(
        listing.contains(&format!("http://{site}/page")),
        "{listing}"
    );
    assert!(
        listing.contains("[1] ") && listing.contains("\"Press\""),
        "{listing}"
    );
    assert_eq!(
        jpeg_of(page),
        (1280, 900),
        "the frame is the desktop viewport"
    );

    let typed = succeeded(step(report, 2));
    assert!(text(typed).contains("\"Ada\""), "{}", text(typed));
    let clicked = succeeded(step(report, 3));
    assert!(
        text(clicked).contains("Clicked 'Sign up'"),
        "{}",
        text(clicked)
    );
    jpeg_of(clicked);
    let read = succeeded(step(report, 4));
    assert!(text(read).contains("Welcome, Ada!"), "{}", text(read));
    assert!(
        read["images"].as_array().unwrap().is_empty(),
        "extract makes no frame"
    );

    for (i, says) in [
        (
            5,
            "browser_click: the arguments are not right: invalid type: string \"seven\"",
        ),
        (6, "wait takes 0 to 15 seconds, not 99"),
    ] {
        let bad = step(report, i);
        assert_eq!(
            bad["error"],
            Value::Null,
            "a tool error, not a protocol error"
        );
        assert_eq!(bad["is_error"], json!(true), "{bad}");
        assert!(text(bad).contains(says), "{}", text(bad));
    }

    let handed = succeeded(step(report, 7));
    assert!(
        text(handed).contains("The page is with the user now"),
        "{}",
        text(handed)
    );
    let thread = thread_of_card(handed);

    let mut next = 8;
    if cancel {
        let given_up = step(report, next);
        assert_eq!(given_up["cancelled"], json!(true), "{given_up}");
        assert!(!given_up["progress"].as_array().unwrap().is_empty());
        next += 1;
    }
    let waited = succeeded(step(report, next));
    let progress = waited["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "the waiting call reported progress");
    assert!(
        progress[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("waiting for the user to hand the page back: "),
        "{progress:?}"
    );
    assert!(
        waited["released"].is_string(),
        "Done was pressed while it waited"
    );
    let after = text(waited);
    assert!(
        after.starts_with("The user handed the page back"),
        "{after}"
    );
    // The call given up never ran: the page is the form, not /second.
    assert!(after.contains("/fixtures/react-form.html"), "{after}");
    thread
}

/// The sixteen tools, each with an object schema carrying its bounds.
fn check_tools(tools: &Value) {
    let tools = tools.as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "browser_back",
            "browser_click",
            "browser_close",
            "browser_downloads",
            "browser_extract",
            "browser_fetch",
            "browser_hand_over",
            "browser_key",
            "browser_navigate",
            "browser_profile",
            "browser_screenshot",
            "browser_scroll",
            "browser_state",
            "browser_type",
            "browser_upload",
            "browser_wait",
        ]
    );
    let schema = |name: &str| {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        assert!(
            tool["description"].as_str().unwrap().len() > 40,
            "{name} is described for a model"
        );
        tool["input_schema"].clone()
    };
    for tool in tools {
        let schema = &tool["input_schema"];
        assert_eq!(schema["type"], "object", "{tool}");
        assert!(schema["properties"]["thread"].is_object(), "{tool}");
    }
    assert_eq!(schema("browser_navigate")["required"], json!(["url"]));
    assert_eq!(schema("browser_click")["properties"]["n"]["minimum"], 1);
    assert_eq!(
        schema("browser_wait")["properties"]["seconds"]["maximum"],
        15.0
    );
    assert_eq!(
        schema("browser_profile")["properties"]["width"]["minimum"],
        100
    );
    assert_eq!(
        schema("browser_profile")["properties"]["height"]["maximum"],
        4096
    );
    assert_eq!(
        schema("browser_type")["required"],
        json!(["n", "text"]),
        "{}",
        schema("browser_type")
    );
}

/// The hosted `controller` binary with tenant tokens and a `worker` binary registered with it.
struct Hosted {
    controller: tokio::process::Child,
    address: SocketAddr,
    worker: Worker,
    _dir: tempfile::TempDir,
}

impl Hosted {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens.toml");
        std::fs::write(
            &tokens,
            format!(
                "\"{}\" = \"tenant-a\"\n\"{}\" = \"tenant-b\"\n",
                token_digest(TOKEN_A),
                token_digest(TOKEN_B)
            ),
        )
        .unwrap();
        let address = free_address();
        let controller = Self::spawn_controller(dir.path(), address).await;
        let worker = Worker::spawn(
            &built_binary("worker"),
            registered_worker_config(&dir.path().join("w1"), "w1", address, 4),
        )
        .await;
        let hosted = Self {
            controller,
            address,
            worker,
            _dir: dir,
        };
        hosted.wait_for_worker().await;
        hosted
    }

    async fn spawn_controller(dir: &Path, address: SocketAddr) -> tokio::process::Child {
        let mut command = tokio::process::Command::new(built_binary("controller"));
        command
            .args(["--listen", &address.to_string()])
            .arg("--data")
            .arg(dir.join("controller"))
            .env("NANOMUSE_TOKENS_FILE", dir.join("tokens.toml"));
        let mut controller = spawn_quiet(command);
        let endpoint = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap();
        until_up(&mut controller, "controller", || endpoint.connect()).await;
        controller
    }

    /// The controller stopped as a deploy stops it and started again on its data.
    async fn restart_controller(&mut self) {
        terminate(&mut self.controller).await;
        self.controller = Self::spawn_controller(self._dir.path(), self.address).await;
    }

    /// There is no event for a worker's registration: an action is tried until one takes it.
    async fn wait_for_worker(&self) {
        wait_for_workers(self.address, &["w1"]).await;
    }

    fn mcp(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    async fn stop(mut self) {
        self.worker.stop().await;
        terminate(&mut self.controller).await;
    }
}

/// A raw MCP POST (the refusals are HTTP's, before any MCP client logic).
async fn post(
    url: &str,
    body: Value,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_on_the_hosted_controller_serves_the_tools_holds_frames_and_tenants() {
    logs();
    let site = serve_site().await;
    let hosted = Hosted::start().await;

    let mut plan = session_plan(site, hosted.address, Some(TOKEN_A), false);
    plan["list_resources"] = json!(true);
    let report = client(&http_client(&hosted.mcp(), Some(TOKEN_A)), plan).await;
    let thread_of_a = check_session(&report, site, false);
    assert!(
        thread_of_a.starts_with("mcp-"),
        "a session is a thread: {thread_of_a}"
    );
    // Its frames as resources, newest first: the form as the user sees it.
    let frames = report["resources"].as_array().unwrap();
    assert!(frames.len() >= 4, "navigate ×2, type, click: {frames:?}");
    let newest = frames[0]["uri"].as_str().unwrap().to_string();
    assert!(
        newest.starts_with(&format!("nanomuse://frames/{thread_of_a}/")),
        "{newest}"
    );
    assert_eq!(frames[0]["mime"], "image/jpeg");
    assert_eq!(report["reads"][0]["uri"], newest.as_str());
    let read = json!({"images": [report["reads"][0]], "texts": []});
    assert_eq!(jpeg_of(&read), (1280, 900));

    // Tenant B naming A's thread acts on a thread of its own: nothing of A's page.
    // Reading A's frame, B is told there is no such frame, as for one that never was.
    let unknown = format!("nanomuse://frames/{thread_of_a}/999999");
    let report = client(
        &http_client(&hosted.mcp(), Some(TOKEN_B)),
        json!({"steps": [{"tool": "browser_state", "args": {"thread": thread_of_a}}],
               "read_resources": [newest, unknown]}),
    )
    .await;
    let seen_by_b = text(succeeded(step(&report, 0)));
    assert!(!seen_by_b.contains("react-form"), "{seen_by_b}");
    let reads = report["reads"].as_array().unwrap();
    for read in reads {
        let error = read["error"].as_str().unwrap_or_else(|| panic!("{read}"));
        assert!(error.contains("there is no frame"), "{error}");
    }
    assert_eq!(
        reads[0]["error"]
            .as_str()
            .unwrap()
            .replace(&newest, "<uri>"),
        reads[1]["error"]
            .as_str()
            .unwrap()
            .replace(&unknown, "<uri>"),
        "another tenant's frame answers as an unknown one"
    );

    // No token, or one nobody has: 401 with a challenge.
    for token in [None, Some("Bearer not-a-token-0123456789")] {
        let headers: Vec<(&str, &str)> = token.iter().map(|t| ("authorization", *t)).collect();
        let (status, answer_headers, body) = post(&hosted.mcp(), initialize(), &headers).await;
        assert_eq!(status, 401, "{token:?}: {body}");
        let challenge = answer_headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert!(body.contains("token"), "{body}");
    }

    // A's session: B on it is answered as on a session that does not exist; A goes on.
    let (status, headers, body) =
        post(&hosted.mcp(), initialize(), &[("authorization", BEARER_A)]).await;
    assert_eq!(status, 200, "{body}");
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let on_session = |bearer: &'static str| {
        [
            ("authorization", bearer),
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ]
    };
    let a = on_session(BEARER_A);
    let b = on_session(BEARER_B);
    let (status, _, body) = post(&hosted.mcp(), initialized, &a).await;
    assert_eq!(status, 202, "{body}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, body) = post(&hosted.mcp(), list.clone(), &b).await;
    assert_eq!(
        (status, body.as_str()),
        (404, "Not Found: Session not found")
    );
    let unknown: Vec<(&str, &str)> = vec![
        ("authorization", BEARER_B),
        ("mcp-session-id", "no-such-session"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let (status, _, unknown_body) = post(&hosted.mcp(), list.clone(), &unknown).await;
    assert_eq!((status, unknown_body), (404, body), "as an unknown session");
    let (status, _, body) = post(&hosted.mcp(), list, &a).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("browser_navigate"), "{body}");

    // A page in some browser, even with a token: refused.
    let (status, _, body) = post(
        &hosted.mcp(),
        initialize(),
        &[
            ("authorization", BEARER_A),
            ("origin", "http://evil.example"),
        ],
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Origin"), "{body}");
    hosted.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_forwards_to_a_running_server_with_holds_progress_and_cancellation() {
    logs();
    let site = serve_site().await;
    let hosted = Hosted::start().await;
    let binary = built_binary("nanomuse-browser");
    let stdio = vec![
        "stdio".to_string(),
        binary.display().to_string(),
        "mcp".to_string(),
        "--server".to_string(),
        format!("http://{}", hosted.address),
        "--token".to_string(),
        TOKEN_A.to_string(),
    ];
    let report = client(
        &stdio,
        session_plan(site, hosted.address, Some(TOKEN_A), true),
    )
    .await;
    let thread = check_session(&report, site, true);
    assert!(
        thread.starts_with("mcp-"),
        "a session is a thread: {thread}"
    );

    // Without the token the server refuses, and the client is told so.
    let stdio = vec![
        "stdio".to_string(),
        binary.display().to_string(),
        "mcp".to_string(),
        "--server".to_string(),
        format!("http://{}", hosted.address),
    ];
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client.py");
    let mut child = tokio::process::Command::new(python())
        .arg(script)
        .args(&stdio)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"steps\": []}").await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the client gave up within a minute")
        .unwrap();
    assert!(!output.status.success(), "initialize failed");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("did not take the request"), "{stderr}");
    hosted.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_embedded_serve_speaks_mcp_without_a_token_and_refuses_pages_and_foreign_hosts() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut serve, address) = spawn_serve(dir.path()).await;
    let mcp = format!("http://{address}/mcp");

    let report = client(
        &http_client(&mcp, None),
        session_plan(site, address, None, false),
    )
    .await;
    let thread = check_session(&report, site, false);
    assert!(
        thread.starts_with("mcp-"),
        "a session is a thread: {thread}"
    );

    let (status, _, body) = post(&mcp, initialize(), &[("origin", "http://127.0.0.1:9")]).await;
    assert_eq!(status, 403, "a page on another local port: {body}");
    let (status, _, body) = post(&mcp, initialize(), &[("host", "rebound.example:80")]).await;
    assert_eq!(status, 403, "a name rebound to loopback: {body}");
    let (status, _, _) = post(&mcp, initialize(), &[]).await;
    assert_eq!(status, 200, "a client that is no page");
    terminate(&mut serve).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_starts_the_embedded_server_when_none_runs_on_the_thread_it_names() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let address = free_address();
    let stdio = vec![
        "stdio".to_string(),
        built_binary("nanomuse-browser").display().to_string(),
        "mcp".to_string(),
        "--listen".to_string(),
        address.to_string(),
        "--data".to_string(),
        dir.path().display().to_string(),
        "--thread".to_string(),
        "desktop-agent".to_string(),
    ];
    let report = client(&stdio, session_plan(site, address, None, false)).await;
    let thread = check_session(&report, site, false);
    assert_eq!(thread, "desktop-agent", "the thread `mcp --thread` names");
    // It stopped with its client: nothing listens there now.
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
}

/// A session outlives a restart of the server: the official SDK's client, which keeps the
/// session id it was given, makes its next call after `serve` was stopped with Ctrl-C and
/// started again, on the same thread, and finds its page where it was; a session id the server
/// never handed out is still unknown.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_goes_on_after_the_server_is_stopped_and_started_again() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let address = free_address();
    let mut serve = spawn_serve_on(dir.path(), address).await;
    let mcp = format!("http://{address}/mcp");
    let plan = json!({"steps": [
        {"tool": "browser_navigate", "args": {"url": format!("http://{site}/page")}},
        {"pause": true},
        {"tool": "browser_extract"},
    ]});

    let restart = async {
        interrupt(&mut serve).await;
        serve = spawn_serve_on(dir.path(), address).await;
    };
    let report = client_around_pause(&http_client(&mcp, None), plan, restart).await;
    succeeded(step(&report, 0));
    let after = text(succeeded(step(&report, 1)));
    assert!(
        after.contains("Press") && after.contains(&format!("http://{site}/page")),
        "the page of the session's thread, after the restart: {after}"
    );

    let (status, _, body) = post(
        &mcp,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        &[
            ("mcp-session-id", "00000000-0000-0000-0000-000000000000"),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    )
    .await;
    assert_eq!(status, 404, "a session never opened: {body}");
    terminate(&mut serve).await;
}

/// A session kept over a restart is still its tenant's only: another tenant's call on it
/// answers as on an unknown session, its own tenant's goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_kept_over_a_restart_is_taken_up_by_its_own_tenant_only() {
    logs();
    let mut hosted = Hosted::start().await;
    let (status, headers, body) =
        post(&hosted.mcp(), initialize(), &[("authorization", BEARER_A)]).await;
    assert_eq!(status, 200, "{body}");
    let session = headers["mcp-session-id"].to_str().unwrap().to_string();
    let on_session = |bearer: &'static str| {
        [
            ("authorization", bearer),
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ]
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = post(&hosted.mcp(), initialized, &on_session(BEARER_A)).await;
    assert_eq!(status, 202, "{body}");

    hosted.restart_controller().await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _, body) = post(&hosted.mcp(), list.clone(), &on_session(BEARER_B)).await;
    assert_eq!(status, 404, "another tenant on the session: {body}");
    let (status, _, body) = post(&hosted.mcp(), list, &on_session(BEARER_A)).await;
    assert_eq!(status, 200, "its own tenant after the restart: {body}");
    assert!(body.contains("browser_navigate"), "{body}");
    hosted.stop().await;
}
