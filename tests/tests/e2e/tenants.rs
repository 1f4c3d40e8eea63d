//! Tenants and the hops inside a deployment, over real sockets and processes:
//!
//! - tenant B, with its own valid token, tries every `BrowserTool` method (every action of
//!   `Act`) and every HTTP route of the controller on tenant A's thread, hold, frame and phone
//!   ids, and gets exactly what it gets for ids nobody has, while A's state stays as it was;
//! - no token, or a wrong one, is refused on every method and route;
//! - workers and the gateway refuse calls without the hop secret, the registry refuses
//!   registrations without it, and with it all works;
//! - off loopback, the binaries refuse to start without tokens or a hop secret;
//! - token files hold digests: the token behind a digest works, the digest itself does not,
//!   and a plaintext token in a file stops the program.
//!
//! The lists of methods and actions come from `browser_tool.proto`'s descriptors and the routes
//! from the table the HTTP router is built from (`nanomuse_tests::contract`), so a new one
//! without a case here fails.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use nanomuse_common::hop::HOP_SECRET_HEADER;
use nanomuse_common::tokens::token_digest;
use nanomuse_device_gateway::GatewayConfig;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_backend_client::BrowserBackendClient;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::device_gateway_client::DeviceGatewayClient;
use nanomuse_proto::profile_transfer_client::ProfileTransferClient;
use nanomuse_proto::worker_downloads_client::WorkerDownloadsClient;
use nanomuse_proto::worker_registry_client::WorkerRegistryClient;
use nanomuse_proto::worker_screencast_client::WorkerScreencastClient;
use nanomuse_proto::*;
use nanomuse_tests::contract::{action_names, http_routes, rpc_methods};
use nanomuse_tests::phone::KotlinPhone;
use nanomuse_tests::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

const TOKEN_A: &str = "token-of-tenant-a-0123456789";
const TOKEN_B: &str = "token-of-tenant-b-0123456789";
const DEVICE_TOKEN_A: &str = "device-token-of-tenant-a-0001";
const DEVICE_TOKEN_B: &str = "device-token-of-tenant-b-0001";
const HOP_SECRET: &str = "hop-secret-of-this-deployment-0001";
/// Both tenants' phones use this id: one must not replace the other.
const DEVICE: &str = "phone-1";

/// What any call of the test may take at most: one that waits on another tenant's hold would
/// otherwise hang the test rather than fail it.
const CALL_LIMIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// Calls.

fn with_hop<T>(message: T, secret: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(secret) = secret {
        request
            .metadata_mut()
            .insert(HOP_SECRET_HEADER, secret.parse().unwrap());
    }
    request
}

async fn channel(address: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap()
}

/// An HTTP call of the controller's API as `token` (in the header); the status and the body,
/// as JSON when it is.
async fn http(
    base: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let client = reqwest::Client::new();
    let url = format!("http://{base}{path}");
    let mut request = match method {
        "GET" => client.get(url),
        "POST" => client.post(url),
        other => panic!("no {other} in this test"),
    };
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = tokio::time::timeout(CALL_LIMIT, request.send())
        .await
        .unwrap_or_else(|_| panic!("{method} {path} did not answer"))
        .unwrap();
    let status = response.status().as_u16();
    let bytes = tokio::time::timeout(CALL_LIMIT, response.bytes())
        .await
        .unwrap_or_else(|_| panic!("{method} {path}: the body did not end"))
        .unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"not json": format!("{} bytes", bytes.len())}));
    (status, value)
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Whether `text` holds `word` whole (not as part of a longer id).
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_id_char) && !after.is_some_and(is_id_char)
    })
}

/// `text` with `word` (a whole id, not part of a longer one) replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_id = is_id_char;
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_id) || after.is_some_and(is_id) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The ids a call names: a thread, a hold, a frame.
#[derive(Debug, Clone)]
struct Ids {
    thread: String,
    hold: String,
    frame: String,
}

impl Ids {
    /// `text` with these ids masked, so answers about different ids compare, and an id that
    /// is only the asked one echoed is no finding.
    fn mask(&self, text: &str) -> String {
        let text = replace_word(text, &self.thread, "<thread>");
        let text = replace_word(&text, &self.hold, "<hold>");
        // Frame ids: masked where quoted (in JSON too) or in a path only.
        let frame = &self.frame;
        text.replace(&format!("\\\"{frame}\\\""), "\\\"<frame>\\\"")
            .replace(&format!("\"{frame}\""), "\"<frame>\"")
            .replace(&format!("/frames/{frame}"), "/frames/<frame>")
    }
}

/// The call of one HTTP route on `ids`; a route without a case fails the test, so a new route
/// is tried across tenants as soon as it exists.
fn route_call(method: &str, route: &str, ids: &Ids, site: SocketAddr) -> (String, Option<Value>) {
    let t = &ids.thread;
    let (path, body) = match (method, route) {
        ("GET", "/browser/{thread}") => (format!("/browser/{t}"), None),
        ("GET", "/api/state") => ("/api/state".to_string(), None),
        ("POST", "/api/holds") => (
            "/api/holds".into(),
            Some(json!({"thread": t, "reason": "let me in"})),
        ),
        ("POST", "/api/holds/{id}/done") => {
            (format!("/api/holds/{}/done", ids.hold), Some(json!({})))
        }
        ("POST", "/api/browser/{thread}/control") => (
            format!("/api/browser/{t}/control"),
            Some(json!({"action": "handed_back"})),
        ),
        ("POST", "/api/browser/{thread}/backend") => (
            format!("/api/browser/{t}/backend"),
            Some(json!({"backend": "playwright"})),
        ),
        ("POST", "/api/browser/{thread}/tap") => (
            format!("/api/browser/{t}/tap"),
            Some(json!({"x": 20, "y": 20})),
        ),
        ("POST", "/api/browser/{thread}/type") => (
            format!("/api/browser/{t}/type"),
            Some(json!({"text": "typed by b"})),
        ),
        ("POST", "/api/browser/{thread}/key") => (
            format!("/api/browser/{t}/key"),
            Some(json!({"key": "Enter"})),
        ),
        ("POST", "/api/browser/{thread}/open") => (
            format!("/api/browser/{t}/open"),
            Some(json!({"url": format!("http://{site}/second")})),
        ),
        ("POST", "/api/browser/{thread}/back") => {
            (format!("/api/browser/{t}/back"), Some(json!({})))
        }
        ("POST", "/api/browser/{thread}/upload") => (
            format!("/api/browser/{t}/upload"),
            Some(json!({"n": 1, "files": [{"name": "b.txt", "content_base64": "Yg=="}]})),
        ),
        ("GET", "/api/workspaces/{workspace}/downloads") => {
            ("/api/workspaces/default/downloads".into(), None)
        }
        ("GET", "/api/workspaces/{workspace}/downloads/{name}") => {
            ("/api/workspaces/default/downloads/report.csv".into(), None)
        }
        ("POST", "/api/browser/{thread}/scroll") => {
            (format!("/api/browser/{t}/scroll"), Some(json!({"dy": 300})))
        }
        ("GET", "/api/browser/{thread}/frame") => (format!("/api/browser/{t}/frame"), None),
        ("GET", "/api/browser/{thread}/frames/{id}") => {
            (format!("/api/browser/{t}/frames/{}", ids.frame), None)
        }
        ("GET", "/api/browser/{thread}/live") => (format!("/api/browser/{t}/live"), None),
        ("GET", "/api/browser/{thread}/events") => (format!("/api/browser/{t}/events"), None),
        // A plain GET: a WebSocket's refusal comes before its upgrade, so it is the same here.
        ("GET", "/api/threads/{thread}/live") => (format!("/api/threads/{t}/live"), None),
        ("GET", "/replay/{thread}") => (format!("/replay/{t}"), None),
        ("POST", "/api/browser/{thread}/recording") => (
            format!("/api/browser/{t}/recording"),
            Some(json!({"on": true})),
        ),
        ("GET", "/api/browser/{thread}/replay") => (format!("/api/browser/{t}/replay"), None),
        ("GET", "/api/browser/{thread}/replay.html") => {
            (format!("/api/browser/{t}/replay.html"), None)
        }
        other => panic!(
            "no case for route {other:?} in tests/tests/e2e/tenants.rs: add one, so another \
             tenant tries it on tenant A's ids"
        ),
    };
    (path, body)
}

/// An action of every kind, by its name in `ActRequest`'s `oneof action`; a new action without
/// a case fails the test.
fn action_of(name: &str, site: SocketAddr) -> Action {
    match name {
        "navigate" => Action::Navigate(NavigateAction {
            url: format!("http://{site}/second"),
        }),
        "extract" => Action::Extract(ExtractAction {}),
        "click" => Action::Click(ClickAction {
            n: 1,
            ..Default::default()
        }),
        "type" => Action::Type(TypeAction {
            n: 1,
            text: "typed by b".into(),
        }),
        "key" => Action::Key(KeyAction {
            key: "Enter".into(),
        }),
        "scroll" => Action::Scroll(ScrollAction { dy: 200.0 }),
        "back" => Action::Back(BackAction {}),
        "wait" => Action::Wait(WaitAction::default()),
        "screenshot" => Action::Screenshot(ScreenshotAction {}),
        "fetch" => Action::Fetch(FetchAction {
            url: format!("http://{site}/echo-cookies"),
            ..Default::default()
        }),
        "profile" => Action::Profile(ProfileAction {
            kind: Some(profile_action::Kind::Desktop(true)),
        }),
        "close" => Action::Close(CloseAction {}),
        "hand_over" => Action::HandOver(HandOverAction {
            reason: "b's own sign-in".into(),
        }),
        "state" => Action::State(StateAction {}),
        "downloads" => Action::Downloads(DownloadsAction {}),
        "upload" => Action::Upload(UploadAction {
            n: 1,
            files: vec![UploadFile {
                name: "b.txt".into(),
                mime_type: String::new(),
                content: b"b".to_vec(),
            }],
            downloads: vec![],
        }),
        other => panic!(
            "no case for action {other:?} in tests/tests/e2e/tenants.rs: add one, so another \
             tenant tries it on tenant A's threads"
        ),
    }
}

/// An `Act` answer without what differs between two threads by nature: the thread's and the
/// holds' ids, frame ids, a response's `date`.
fn act_answer(result: Result<ActReply, tonic::Status>, ids: &Ids) -> String {
    let masked = |text: &str| {
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("date: ")).collect();
        let text = ids.mask(&lines.join("\n"));
        // Each new hold has a random id of its own: two such say the same here.
        text.split(' ')
            .map(|word| match word.strip_prefix("(h") {
                Some(rest)
                    if rest
                        .trim_end_matches(':')
                        .chars()
                        .all(|c| c.is_ascii_hexdigit()) =>
                {
                    "(h…:"
                }
                _ => word,
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    match result {
        Ok(reply) => format!(
            "ok {} | {} | {} | {:?} | {:?} | {}",
            masked(&reply.text),
            ids.mask(&reply.url),
            reply.title,
            reply
                .elements
                .iter()
                .map(|e| (e.n, &e.label, &e.kind, &e.href))
                .collect::<Vec<_>>(),
            reply
                .frame
                .as_ref()
                .map(|f| (f.width, f.height, &f.caption)),
            reply.backend,
        ),
        Err(status) => format!("{:?} {}", status.code(), masked(status.message())),
    }
}

// ---------------------------------------------------------------------------------------------
// The system: a controller with two tenants, a worker, the gateway and phones, all with the hop
// secret.

struct System {
    site: SocketAddr,
    controller: ControllerProcess,
    worker: Worker,
    gateway: SocketAddr,
    gateway_shutdown: CancellationToken,
    gateway_task: tokio::task::JoinHandle<anyhow::Result<()>>,
    phones: Vec<KotlinPhone>,
    dir: tempfile::TempDir,
}

fn tenant_tokens() -> HashMap<String, String> {
    HashMap::from([
        (token_digest(TOKEN_A), "tenant-a".to_string()),
        (token_digest(TOKEN_B), "tenant-b".to_string()),
    ])
}

impl System {
    async fn start() -> Self {
        logs();
        let site = serve_site().await;
        let dir = tempfile::tempdir().unwrap();

        let mut gateway_config = GatewayConfig {
            hop_secret: HOP_SECRET.into(),
            ..GatewayConfig::default()
        };
        gateway_config.device_tokens = HashMap::from([
            (token_digest(DEVICE_TOKEN_A), "tenant-a".to_string()),
            (token_digest(DEVICE_TOKEN_B), "tenant-b".to_string()),
        ]);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gateway = listener.local_addr().unwrap();
        let gateway_shutdown = CancellationToken::new();
        let gateway_task = tokio::spawn(nanomuse_device_gateway::run(
            gateway_config,
            listener,
            gateway_shutdown.clone(),
        ));

        let mut config = controller_config(&dir.path().join("controller"));
        config.controller.tokens = tenant_tokens();
        config.controller.hop_secret = HOP_SECRET.into();
        config.controller.gateways = vec![format!("http://{gateway}")];
        config.controller.queue_deadline_ms = 10_000;
        let controller = ControllerProcess::start(config, "127.0.0.1:0").await;

        let mut worker_config =
            registered_worker_config(&dir.path().join("w1"), "w1", controller.address, 4);
        worker_config.hop_secret = HOP_SECRET.into();
        let worker = Worker::start(worker_config).await;
        let system = Self {
            site,
            controller,
            worker,
            gateway,
            gateway_shutdown,
            gateway_task,
            phones: Vec::new(),
            dir,
        };
        system.wait_for_worker("w1").await;
        system
    }

    /// Waits until `name` is registered and live (asked with the hop secret).
    async fn wait_for_worker(&self, name: &str) {
        let mut registry = WorkerRegistryClient::new(channel(self.controller.address).await);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let workers = registry
                .list_workers(with_hop(ListWorkersRequest {}, Some(HOP_SECRET)))
                .await
                .unwrap()
                .into_inner()
                .workers;
            if workers.iter().any(|w| w.name == name && w.live) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name} did not register: {workers:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A phone of the tenant of `device_token`, with its own profile folder.
    async fn connect_phone(&mut self, device_token: &str, folder: &str) {
        let folder = self.dir.path().join(folder);
        let phone =
            KotlinPhone::connect_in(self.gateway, DEVICE, device_token, Some(&folder)).await;
        self.phones.push(phone);
    }

    async fn tool(&self) -> BrowserToolClient<Channel> {
        BrowserToolClient::new(channel(self.controller.address).await)
            .max_decoding_message_size(64 * 1024 * 1024)
    }

    async fn act(
        &self,
        token: &str,
        thread: &str,
        backend: &str,
        action: Action,
    ) -> Result<ActReply, tonic::Status> {
        let request = act_on(thread, backend, action);
        let mut tool = self.tool().await;
        tokio::time::timeout(CALL_LIMIT, tool.act(bearer(request, Some(token))))
            .await
            .unwrap_or_else(|_| panic!("an action on {thread} did not answer"))
            .map(tonic::Response::into_inner)
    }

    async fn state(&self, token: &str) -> Value {
        let (status, state) = http(
            self.controller.address,
            "GET",
            "/api/state",
            None,
            Some(token),
        )
        .await;
        assert_eq!(status, 200, "{state}");
        state
    }

    /// Waits until `token`'s tenant's state shows `what`: the gateway's events reach the
    /// controller on their own schedule.
    async fn wait_for_state(&self, token: &str, what: &str, shows: impl Fn(&Value) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let state = self.state(token).await;
            if shows(&state) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {what} in {state}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn stop(mut self) {
        for phone in self.phones.drain(..) {
            phone.stop().await;
        }
        self.controller.stop().await;
        self.worker.stop().await;
        self.gateway_shutdown.cancel();
        self.gateway_task.await.unwrap().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn tenant_b_gets_nothing_of_tenant_a_from_any_method_or_route() {
    let mut system = System::start().await;
    let site = system.site;

    // Tenant A: a thread with cookies and frames and a thread the user holds, both on the
    // worker (with A's phone connected, "auto" would put them on the phone), and a thread on
    // A's phone.
    system.connect_phone(DEVICE_TOKEN_A, "phone-a").await;
    system
        .wait_for_state(TOKEN_A, "A's phone", |s| s["devices"] == json!([DEVICE]))
        .await;
    for url in ["set-cookies", "page"] {
        system
            .act(
                TOKEN_A,
                "a-thread",
                "playwright",
                navigate(format!("http://{site}/{url}")),
            )
            .await
            .unwrap();
    }
    system
        .act(
            TOKEN_A,
            "a-thread",
            "",
            Action::Screenshot(ScreenshotAction {}),
        )
        .await
        .unwrap();
    system
        .act(
            TOKEN_A,
            "a-held",
            "playwright",
            navigate(format!("http://{site}/page")),
        )
        .await
        .unwrap();
    system
        .act(
            TOKEN_A,
            "a-held",
            "",
            Action::HandOver(HandOverAction {
                reason: "sign in as a".into(),
            }),
        )
        .await
        .unwrap();
    let on_phone = system
        .act(
            TOKEN_A,
            "a-phone",
            "device",
            navigate(format!("http://{site}/second")),
        )
        .await
        .unwrap();
    assert_eq!(on_phone.backend, format!("device:{DEVICE}"));

    // Every frame promised is taken before A's state is read.
    let mut tool = system.tool().await;
    for thread in ["a-thread", "a-held", "a-phone"] {
        tool.get_frame(bearer(
            GetFrameRequest {
                thread: thread.into(),
                frame_id: String::new(),
            },
            Some(TOKEN_A),
        ))
        .await
        .unwrap();
    }
    let before = system.state(TOKEN_A).await;
    let hold = before["holds"][0]["id"].as_str().unwrap().to_string();
    let threads: Vec<Ids> = before["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Ids {
            thread: t["thread"].as_str().unwrap().into(),
            hold: hold.clone(),
            frame: t["frame"]["id"].as_str().unwrap().into(),
        })
        .collect();
    assert_eq!(threads.len(), 3, "{before}");
    // Ids of the same shapes that nobody has.
    let unknown = |n: usize| Ids {
        thread: format!("nobodys-thread-{n}"),
        hold: "h999999999".into(),
        frame: "999999999".into(),
    };
    // Anything of A's that must never reach B.
    let mut secrets: Vec<String> = vec!["persistent=kept".into(), "Test page".into(), hold.clone()];
    for ids in &threads {
        secrets.push(format!("\"{}\"", ids.frame));
        secrets.push(format!("/frames/{}", ids.frame));
    }
    // (Checked on answers with the asked ids masked: echoing what B asked for tells B nothing.)
    let assert_nothing_of_a = |what: &str, answer: &str| {
        for secret in &secrets {
            assert!(
                !contains_word(answer, secret),
                "{what} gave B {secret:?}: {answer}"
            );
        }
    };

    // Every HTTP route, on each of A's threads (and A's hold and frames), answers B as it
    // answers for ids nobody has.
    let nothing = json!({"holds": [], "threads": [], "devices": []});
    for (method, route) in http_routes() {
        for (n, ids) in threads.iter().enumerate() {
            let (path, body) = route_call(&method, &route, ids, site);
            let (status, answer) = http(
                system.controller.address,
                &method,
                &path,
                body.as_ref(),
                Some(TOKEN_B),
            )
            .await;
            let other = unknown(n);
            let (other_path, other_body) = route_call(&method, &route, &other, site);
            let (other_status, other_answer) = http(
                system.controller.address,
                &method,
                &other_path,
                other_body.as_ref(),
                Some(TOKEN_B),
            )
            .await;
            let what = format!("{method} {path} as B");
            assert_nothing_of_a(&what, &ids.mask(&answer.to_string()));
            assert_eq!(
                (status, ids.mask(&answer.to_string())),
                (other_status, other.mask(&other_answer.to_string())),
                "{what}: not the answer for ids nobody has"
            );
            if route == "/api/state" {
                assert_eq!(answer, nothing, "B's own state, before B did anything");
            } else if route == "/api/workspaces/{workspace}/downloads" {
                assert_eq!(
                    answer,
                    json!({"workspace": "default", "downloads": []}),
                    "B's own downloads"
                );
            } else {
                assert!((400..500).contains(&status), "{what}: {status} {answer}");
            }
        }
    }

    // Every BrowserTool method; Act last, as it makes B threads of its own under A's ids.
    let mut methods = rpc_methods("BrowserTool");
    methods.sort_by_key(|method| method == "Act");
    for method in methods {
        match method.as_str() {
            "GetFrame" => {
                for (n, ids) in threads.iter().enumerate() {
                    let other = unknown(n);
                    for (frame, other_frame) in
                        [(ids.frame.as_str(), other.frame.as_str()), ("", "")]
                    {
                        let mine = tool
                            .get_frame(bearer(
                                GetFrameRequest {
                                    thread: ids.thread.clone(),
                                    frame_id: frame.into(),
                                },
                                Some(TOKEN_B),
                            ))
                            .await
                            .map(|_| ())
                            .unwrap_err();
                        let nobodys = tool
                            .get_frame(bearer(
                                GetFrameRequest {
                                    thread: other.thread.clone(),
                                    frame_id: other_frame.into(),
                                },
                                Some(TOKEN_B),
                            ))
                            .await
                            .map(|_| ())
                            .unwrap_err();
                        let what = format!("GetFrame {frame:?} of {} as B", ids.thread);
                        assert_nothing_of_a(&what, &ids.mask(mine.message()));
                        assert_eq!(
                            (mine.code(), ids.mask(mine.message())),
                            (nobodys.code(), other.mask(nobodys.message())),
                            "{what}"
                        );
                    }
                }
            }
            // Checked below, once B's actions are done: a watch sees its own thread's frames.
            "WatchFrames" => {}
            "Act" => {
                // Every action, on A's held thread (whose hold must not stop B) and on a thread
                // nobody has, in the same order; then a few on A's other threads.
                let held = &threads.iter().find(|t| t.thread == "a-held").unwrap();
                let other = unknown(0);
                let mut names = action_names();
                // The actions that read the page first, before B's own navigation would hide
                // A's page; a hold of B's own makes B's next action wait for B's user: last.
                names.sort_by_key(|name| match name.as_str() {
                    "state" | "extract" | "screenshot" | "fetch" => 0,
                    "hand_over" => 2,
                    _ => 1,
                });
                for name in &names {
                    let mine = system
                        .act(TOKEN_B, &held.thread, "", action_of(name, site))
                        .await;
                    let nobodys = system
                        .act(TOKEN_B, &other.thread, "", action_of(name, site))
                        .await;
                    let (mine, nobodys) = (act_answer(mine, held), act_answer(nobodys, &other));
                    assert_nothing_of_a(&format!("Act {name} on {} as B", held.thread), &mine);
                    assert_eq!(mine, nobodys, "Act {name} on A's held thread as B");
                }
                for (n, ids) in threads
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.thread != "a-held")
                {
                    let other = unknown(10 + n);
                    // On A's phone thread's id, B asks for B's phone (B has none).
                    let steps: &[(&str, &str)] = if ids.thread == "a-phone" {
                        &[("device", "state"), ("", "extract")]
                    } else {
                        &[("", "state"), ("", "extract"), ("", "fetch")]
                    };
                    for &(backend, name) in steps {
                        let mine = system
                            .act(TOKEN_B, &ids.thread, backend, action_of(name, site))
                            .await;
                        let nobodys = system
                            .act(TOKEN_B, &other.thread, backend, action_of(name, site))
                            .await;
                        let mine = act_answer(mine, ids);
                        assert_nothing_of_a(&format!("Act {name} on {} as B", ids.thread), &mine);
                        assert_eq!(
                            mine,
                            act_answer(nobodys, &other),
                            "Act {name} ({backend}) on {} as B",
                            ids.thread
                        );
                    }
                }
            }
            other => panic!(
                "no case for BrowserTool.{other} in tests/tests/e2e/tenants.rs: add one, so \
                 another tenant tries it on tenant A's ids"
            ),
        }
    }
    // B's own state holds B's threads and holds, none of A's.
    assert_nothing_of_a(
        "GET /api/state as B",
        &system.state(TOKEN_B).await.to_string(),
    );

    // WatchFrames: B watches A's thread ids while A makes a frame; B sees none of it.
    let mut watches = Vec::new();
    for ids in &threads {
        let stream = tool
            .watch_frames(bearer(
                WatchFramesRequest {
                    thread: ids.thread.clone(),
                },
                Some(TOKEN_B),
            ))
            .await
            .unwrap()
            .into_inner();
        watches.push(stream);
    }

    // Nothing of A's changed.
    let after = system.state(TOKEN_A).await;
    assert_eq!(before, after, "tenant A's state changed under B's calls");

    let mut a_watch = tool
        .watch_frames(bearer(
            WatchFramesRequest {
                thread: "a-thread".into(),
            },
            Some(TOKEN_A),
        ))
        .await
        .unwrap()
        .into_inner();
    system
        .act(
            TOKEN_A,
            "a-thread",
            "",
            Action::Scroll(ScrollAction { dy: 100.0 }),
        )
        .await
        .unwrap();
    let a_frame = tokio::time::timeout(Duration::from_secs(20), a_watch.message())
        .await
        .expect("A sees its own frame")
        .unwrap()
        .unwrap();
    assert_eq!(a_frame.thread, "a-thread");
    for mut watch in watches {
        let seen = tokio::time::timeout(Duration::from_secs(2), watch.message()).await;
        assert!(seen.is_err(), "B's watch saw a frame of A's: {seen:?}");
    }

    // A phone of B's with the very id of A's phone: each tenant keeps its own.
    system.connect_phone(DEVICE_TOKEN_B, "phone-b").await;
    system
        .wait_for_state(TOKEN_B, "B's phone", |s| s["devices"] == json!([DEVICE]))
        .await;
    assert_eq!(system.state(TOKEN_A).await["devices"], json!([DEVICE]));
    let a_page = system
        .act(TOKEN_A, "a-phone", "", Action::State(StateAction {}))
        .await
        .unwrap();
    assert_eq!(
        a_page.url,
        format!("http://{site}/second"),
        "A's phone lost its page"
    );
    let b_page = system
        .act(TOKEN_B, "b-phone", "device", Action::State(StateAction {}))
        .await
        .unwrap();
    assert_eq!(b_page.backend, format!("device:{DEVICE}"));
    assert_ne!(
        b_page.url, a_page.url,
        "B's phone action reached A's phone: {b_page:?}"
    );

    system.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_token_or_a_wrong_one_is_refused_on_every_method_and_route() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let mut config = controller_config(&dir.path().join("controller"));
    config.controller.tokens = tenant_tokens();
    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
    let address = controller.address;
    let site: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let ids = Ids {
        thread: "a-thread".into(),
        hold: "h1".into(),
        frame: "1".into(),
    };
    let digest_of_a = token_digest(TOKEN_A);
    let refused_tokens = [
        None,
        Some("wrong-token-0123456789"),
        Some(digest_of_a.as_str()),
    ];

    for (method, route) in http_routes() {
        let (path, body) = route_call(&method, &route, &ids, site);
        for token in refused_tokens {
            let (status, answer) = http(address, &method, &path, body.as_ref(), token).await;
            assert_eq!(status, 401, "{method} {path} with {token:?}: {answer}");
            assert!(
                answer["error"].as_str().unwrap().contains("token"),
                "{answer}"
            );
        }
        // The card's page, pictures and stream carry the token in the URL.
        let separator = if path.contains('?') { '&' } else { '?' };
        let in_query = format!("{path}{separator}token=wrong-token-0123456789");
        let (status, _) = http(address, &method, &in_query, body.as_ref(), None).await;
        assert_eq!(status, 401, "{method} {in_query}");
    }
    // With A's token the routes answer (here: no such thread), so 401 above was the token.
    let (status, _) = http(address, "GET", "/api/state", None, Some(TOKEN_A)).await;
    assert_eq!(status, 200);
    let (status, _) = http(
        address,
        "GET",
        "/api/state?token=token-of-tenant-a-0123456789",
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);

    let mut tool = BrowserToolClient::new(channel(address).await);
    for method in rpc_methods("BrowserTool") {
        for token in refused_tokens {
            let status = match method.as_str() {
                "Act" => tool
                    .act(bearer(act("t", Action::State(StateAction {})), token))
                    .await
                    .map(drop),
                "WatchFrames" => tool
                    .watch_frames(bearer(WatchFramesRequest { thread: "t".into() }, token))
                    .await
                    .map(drop),
                "GetFrame" => tool
                    .get_frame(bearer(
                        GetFrameRequest {
                            thread: "t".into(),
                            frame_id: String::new(),
                        },
                        token,
                    ))
                    .await
                    .map(drop),
                other => panic!("no case for BrowserTool.{other} in tests/tests/e2e/tenants.rs"),
            }
            .unwrap_err();
            assert_eq!(
                status.code(),
                tonic::Code::Unauthenticated,
                "{method} with {token:?}: {status}"
            );
        }
    }

    // What needs no token: the probes' health and Prometheus' scrape, neither with a tenant's
    // data in it.
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel(address).await);
    health
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap();
    let metrics = reqwest::get(format!("http://{address}/metrics"))
        .await
        .unwrap();
    assert_eq!(metrics.status().as_u16(), 200);
    controller.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn workers_gateway_and_registry_take_calls_only_with_the_hop_secret() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let mut config = controller_config(&dir.path().join("controller"));
    config.controller.tokens = tenant_tokens();
    config.controller.hop_secret = HOP_SECRET.into();
    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;

    // A worker with the secret registers and heartbeats.
    let mut worker_config =
        registered_worker_config(&dir.path().join("w1"), "w1", controller.address, 2);
    worker_config.hop_secret = HOP_SECRET.into();
    let worker = Worker::start(worker_config).await;

    let mut registry = WorkerRegistryClient::new(channel(controller.address).await);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let workers = registry
            .list_workers(with_hop(ListWorkersRequest {}, Some(HOP_SECRET)))
            .await
            .unwrap()
            .into_inner()
            .workers;
        if workers.iter().any(|w| w.name == "w1" && w.live) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "w1 did not register: {workers:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The registry: nothing without the secret, or with another; a tenant's token is no hop
    // secret either.
    let register = || RegisterWorkerRequest {
        name: "intruder".into(),
        address: "http://127.0.0.1:9".into(),
        capacity: 4,
    };
    for secret in [None, Some("another-secret-0123456789"), Some(TOKEN_A)] {
        let refused = registry
            .register(with_hop(register(), secret))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        assert!(refused.message().contains("hop secret"), "{refused}");
        let refused = registry
            .heartbeat(with_hop(
                HeartbeatRequest {
                    name: "w1".into(),
                    ..Default::default()
                },
                secret,
            ))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        let refused = registry
            .list_workers(with_hop(ListWorkersRequest {}, secret))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        // Nobody drains a worker (and so takes its workspaces' profiles) from outside.
        let refused = registry
            .drain(with_hop(
                DrainRequest {
                    name: "w1".into(),
                    budget_ms: 1_000,
                    ..Default::default()
                },
                secret,
            ))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    }
    registry
        .register(with_hop(register(), Some(HOP_SECRET)))
        .await
        .unwrap();
    let workers = registry
        .list_workers(with_hop(ListWorkersRequest {}, Some(HOP_SECRET)))
        .await
        .unwrap()
        .into_inner()
        .workers;
    assert!(
        workers.iter().any(|w| w.name == "intruder"),
        "with the secret it registers"
    );
    assert!(
        workers.iter().any(|w| w.name == "w1" && w.state == "live"),
        "a refused drain changed nothing: {workers:?}"
    );

    // The worker: every op needs the secret; health and /metrics do not.
    let mut ops = BrowserBackendClient::new(channel(worker.address).await);
    let mut transfer = ProfileTransferClient::new(channel(worker.address).await);
    let mut downloads = WorkerDownloadsClient::new(channel(worker.address).await);
    let mut screencast = WorkerScreencastClient::new(channel(worker.address).await);
    let watch = || WatchScreenRequest {
        session: session("hop-test"),
        ..Default::default()
    };
    let state = || StateRequest {
        session: session("hop-test"),
    };
    for secret in [None, Some("another-secret-0123456789")] {
        let refused = ops.state(with_hop(state(), secret)).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        assert!(refused.message().contains("hop secret"), "{refused}");
        let refused = ops
            .open(with_hop(open_request("hop-test", false), secret))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        // Nor may anyone take a profile off the worker.
        let refused = transfer
            .export_profile(with_hop(
                ProfileRef {
                    tenant: "tenant-a".into(),
                    workspace: "default".into(),
                },
                secret,
            ))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        // Nor list or read a workspace's downloads.
        let refused = downloads
            .list_downloads(with_hop(
                DownloadsRef {
                    tenant: "tenant-a".into(),
                    workspace: "default".into(),
                },
                secret,
            ))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        let refused = downloads
            .read_download(with_hop(
                ReadDownloadRequest {
                    tenant: "tenant-a".into(),
                    workspace: "default".into(),
                    name: "report.csv".into(),
                },
                secret,
            ))
            .await
            .map(drop)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        // Nor watch a page live.
        let refused = screencast
            .watch(with_hop(watch(), secret))
            .await
            .map(drop)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
    }
    let listed = downloads
        .list_downloads(with_hop(
            DownloadsRef {
                tenant: "tenant-a".into(),
                workspace: "default".into(),
            },
            Some(HOP_SECRET),
        ))
        .await
        .expect("with the secret the worker answers");
    assert!(listed.into_inner().downloads.is_empty());
    let answered = ops.state(with_hop(state(), Some(HOP_SECRET))).await;
    assert!(
        !matches!(&answered, Err(s) if s.code() == tonic::Code::Unauthenticated),
        "{answered:?}"
    );
    let mut health =
        tonic_health::pb::health_client::HealthClient::new(channel(worker.address).await);
    health
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap();
    let metrics = reqwest::get(format!("http://{}/metrics", worker.address))
        .await
        .unwrap();
    assert_eq!(metrics.status().as_u16(), 200);

    // The gateway: its BrowserBackend and DeviceGateway services need the secret; phones
    // connect with their device token alone.
    let mut gateway_config = GatewayConfig {
        hop_secret: HOP_SECRET.into(),
        ..GatewayConfig::default()
    };
    gateway_config
        .device_tokens
        .insert(token_digest(DEVICE_TOKEN_A), "tenant-a".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(nanomuse_device_gateway::run(
        gateway_config,
        listener,
        shutdown.clone(),
    ));
    let mut ops = BrowserBackendClient::new(channel(gateway).await);
    let mut devices = DeviceGatewayClient::new(channel(gateway).await);
    let mut screencast = WorkerScreencastClient::new(channel(gateway).await);
    for secret in [None, Some("another-secret-0123456789")] {
        let refused = ops.state(with_hop(state(), secret)).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        let refused = screencast
            .watch(with_hop(watch(), secret))
            .await
            .map(drop)
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        let refused = devices
            .watch_devices(with_hop(WatchDevicesRequest {}, secret))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
        let refused = devices
            .notify_hold(with_hop(HoldNotice::default(), secret))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused}");
    }
    devices
        .watch_devices(with_hop(WatchDevicesRequest {}, Some(HOP_SECRET)))
        .await
        .unwrap();
    let welcome = phone_hello(gateway, DEVICE_TOKEN_A).await;
    assert_eq!(welcome["kind"], "welcome", "{welcome}");

    shutdown.cancel();
    task.await.unwrap().unwrap();
    worker.stop().await;
    controller.stop().await;
}

/// A phone's hello on the gateway's socket with `token`; the gateway's first answer.
async fn phone_hello(gateway: SocketAddr, token: &str) -> Value {
    use tokio_tungstenite::tungstenite::Message as Frame;
    let url = format!("ws://{gateway}/device");
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let hello = json!({"kind": "device", "device_id": "hello-phone", "token": token,
                       "browser": true, "app": "test"});
    socket.send(Frame::text(hello.to_string())).await.unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), socket.next()).await {
            Ok(Some(Ok(Frame::Text(text)))) => return serde_json::from_str(&text).unwrap(),
            Ok(Some(Ok(Frame::Ping(_) | Frame::Pong(_)))) => continue,
            other => panic!("no answer to the hello: {other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The binaries: off loopback they need tokens and a hop secret; token files hold digests.

/// A binary of the workspace with none of the deployment's variables from this environment.
fn binary(name: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(built_binary(name));
    for var in [
        "NANOMUSE_CONFIG",
        "NANOMUSE_TOKENS_FILE",
        "NANOMUSE_DEVICE_TOKENS_FILE",
        "NANOMUSE_HOP_SECRET",
        "NANOMUSE_WORKER_CONFIG",
        "NANOMUSE_GATEWAY_CONFIG",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ] {
        command.env_remove(var);
    }
    command
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Runs `command` to its end (it must end by itself); its exit code and everything it said.
async fn refused(mut command: tokio::process::Command) -> (Option<i32>, String) {
    let output = tokio::time::timeout(Duration::from_secs(30), command.output())
        .await
        .expect("the binary ended by itself")
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), said)
}

#[tokio::test(flavor = "multi_thread")]
async fn off_loopback_no_binary_starts_without_tokens_or_a_hop_secret() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        format!("\"{}\" = \"tenant-a\"\n", token_digest(TOKEN_A)),
    )
    .unwrap();

    // The controller: without tokens, then with tokens but without a hop secret.
    let mut command = binary("controller");
    command
        .args(["--listen", "0.0.0.0:0", "--data"])
        .arg(dir.path().join("c1"));
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("refusing to serve on 0.0.0.0:") && said.contains("without tenant tokens"),
        "{said}"
    );
    assert!(
        !dir.path().join("c1").exists(),
        "it refused before touching its data"
    );

    let mut command = binary("controller");
    command
        .args(["--listen", "0.0.0.0:0", "--data"])
        .arg(dir.path().join("c2"))
        .env("NANOMUSE_TOKENS_FILE", &tokens);
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("without a hop secret"), "{said}");

    // `serve` is the controller too.
    let mut command = binary("nanomuse-browser");
    command
        .args(["serve", "--listen", "0.0.0.0:0", "--data"])
        .arg(dir.path().join("serve"));
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("without tenant tokens"), "{said}");

    // A worker and the gateway without a hop secret.
    let mut command = binary("worker");
    command
        .args(["--listen", "0.0.0.0:0", "--profiles-root"])
        .arg(dir.path().join("profiles"));
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("refusing to serve the worker on 0.0.0.0:")
            && said.contains("without a hop secret"),
        "{said}"
    );

    let mut command = binary("device-gateway");
    command.args(["--listen", "0.0.0.0:0"]);
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("refusing to serve the device gateway")
            && said.contains("without a hop secret"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn token_files_hold_digests_the_token_works_and_the_digest_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        format!(
            "# digests only\n\"{}\" = \"tenant-a\"\n",
            token_digest(TOKEN_A)
        ),
    )
    .unwrap();
    let plaintext = dir.path().join("plaintext.toml");
    std::fs::write(&plaintext, format!("\"{TOKEN_A}\" = \"tenant-a\"\n")).unwrap();

    // The controller, off loopback as deployed, with its tokens from the file.
    let port = free_address().port();
    let mut command = binary("controller");
    command
        .args(["--listen", &format!("0.0.0.0:{port}"), "--data"])
        .arg(dir.path().join("controller"))
        .env("NANOMUSE_TOKENS_FILE", &tokens)
        .env("NANOMUSE_HOP_SECRET", HOP_SECRET)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().unwrap();
    let address: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let endpoint = Channel::from_shared(format!("http://{address}")).unwrap();
    until_up(&mut child, "controller", || endpoint.connect()).await;
    let (status, state) = http(address, "GET", "/api/state", None, Some(TOKEN_A)).await;
    assert_eq!(status, 200, "the token behind the digest: {state}");
    let digest = token_digest(TOKEN_A);
    let (status, _) = http(address, "GET", "/api/state", None, Some(&digest)).await;
    assert_eq!(status, 401, "the file's own line is no token");
    let (status, _) = http(
        address,
        "GET",
        "/api/state",
        None,
        Some(&digest["sha256:".len()..]),
    )
    .await;
    assert_eq!(status, 401, "nor is the bare digest");
    child.kill().await.unwrap();

    // A plaintext token in the file stops the controller, naming the file.
    let mut command = binary("controller");
    command
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("c2"))
        .env("NANOMUSE_TOKENS_FILE", &plaintext);
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("plaintext.toml") && said.contains("plaintext"),
        "{said}"
    );
    assert!(!said.contains(TOKEN_A), "the error quotes no token: {said}");

    // The gateway's device tokens, the same way.
    let device_tokens = dir.path().join("device-tokens.toml");
    std::fs::write(
        &device_tokens,
        format!("\"{}\" = \"tenant-a\"\n", token_digest(DEVICE_TOKEN_A)),
    )
    .unwrap();
    let port = free_address().port();
    let mut command = binary("device-gateway");
    command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .env("NANOMUSE_DEVICE_TOKENS_FILE", &device_tokens)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().unwrap();
    let gateway: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let endpoint = Channel::from_shared(format!("http://{gateway}")).unwrap();
    until_up(&mut child, "device-gateway", || endpoint.connect()).await;
    let welcome = phone_hello(gateway, DEVICE_TOKEN_A).await;
    assert_eq!(welcome["kind"], "welcome", "{welcome}");
    let refused_hello = phone_hello(gateway, &token_digest(DEVICE_TOKEN_A)).await;
    assert!(
        refused_hello["error"].as_str().unwrap().contains("token"),
        "the file's own line is no device token: {refused_hello}"
    );
    child.kill().await.unwrap();

    let plain_devices = dir.path().join("plain-devices.toml");
    std::fs::write(
        &plain_devices,
        format!("\"{DEVICE_TOKEN_A}\" = \"tenant-a\"\n"),
    )
    .unwrap();
    let mut command = binary("device-gateway");
    command
        .args(["--listen", "127.0.0.1:0"])
        .env("NANOMUSE_DEVICE_TOKENS_FILE", &plain_devices);
    let (code, said) = refused(command).await;
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("plain-devices.toml") && said.contains("plaintext"),
        "{said}"
    );

    // `nanomuse-browser hash-token` prints what the files hold, the token from standard input.
    let mut command = binary("nanomuse-browser");
    command
        .arg("hash-token")
        .stdin(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(format!("{TOKEN_A}\n").as_bytes())
            .await
            .unwrap();
    }
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), digest);
}

#[test]
fn the_lists_read_from_the_sources_are_whole() {
    assert_eq!(
        rpc_methods("BrowserTool"),
        ["Act", "WatchFrames", "GetFrame"]
    );
    assert_eq!(
        rpc_methods("WorkerRegistry"),
        ["Register", "Heartbeat", "Drain", "ListWorkers"]
    );
    assert_eq!(action_names().len(), 16);
    let routes: BTreeMap<String, String> = http_routes()
        .into_iter()
        .map(|(method, path)| (path, method))
        .collect();
    assert_eq!(
        routes.get("/api/holds/{id}/done").map(String::as_str),
        Some("POST")
    );
    assert_eq!(
        routes
            .get("/api/browser/{thread}/events")
            .map(String::as_str),
        Some("GET")
    );
}
