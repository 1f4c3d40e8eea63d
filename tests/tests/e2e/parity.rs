//! The same tool on both backends: one scenario runs through the controller once on a worker
//! and once on the phone behind the gateway, and what the agent sees agrees at every step —
//! the same numbered elements, the same page states, frames of the profile's size, typing that
//! React and Vue notice, fetch with the page's cookies, hand-over and Done (from the phone on
//! the phone's side), the mobile and the desktop profile. Then the routing (auto, device,
//! playwright) and a take-over on the phone.
//!
//! The phone is the phone's own Kotlin code — DeviceClient, Dispatcher and the page scripts of
//! Scripts.kt — with a headless Chromium over CDP in place of the WebView
//! (`android/run-phone.sh`, [`KotlinPhone`]): the worker is compared with the phone's code,
//! not with itself.

use std::time::Duration;

use nanomuse_device_gateway::GatewayConfig;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::*;
use nanomuse_tests::phone::KotlinPhone;
use nanomuse_tests::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

const TOKEN: &str = "device-token-of-local-001";
const DEVICE: &str = "kotlin-phone";

/// Controller + worker `w1` + gateway + the Kotlin phone, and the test site.
struct System {
    site: std::net::SocketAddr,
    controller: ControllerProcess,
    worker: Worker,
    gateway_shutdown: CancellationToken,
    gateway: tokio::task::JoinHandle<anyhow::Result<()>>,
    device: Option<KotlinPhone>,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl System {
    async fn start() -> Self {
        logs();
        let site = serve_site().await;
        let dir = tempfile::tempdir().unwrap();

        let mut gateway_config = GatewayConfig::default();
        // The embedded controller has no tokens: its one tenant is "local".
        gateway_config
            .device_tokens
            .insert(TOKEN.into(), "local".into());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gateway_address = listener.local_addr().unwrap();
        let gateway_shutdown = CancellationToken::new();
        let gateway = tokio::spawn(nanomuse_device_gateway::run(
            gateway_config,
            listener,
            gateway_shutdown.clone(),
        ));

        let (controller, worker) = controller_with_worker(dir.path(), |config| {
            config.controller.gateways = vec![format!("http://{gateway_address}")];
        })
        .await;

        let device = KotlinPhone::connect(gateway_address, DEVICE, TOKEN).await;
        let mut system = Self {
            site,
            controller,
            worker,
            gateway_shutdown,
            gateway,
            device: Some(device),
            http: reqwest::Client::new(),
            _dir: dir,
        };
        system.wait_for_devices(&[DEVICE]).await;
        system
    }

    async fn state(&self) -> Value {
        let url = format!("http://{}/api/state", self.controller.address);
        let response = self.http.get(url).send().await.unwrap();
        serde_json::from_str(&response.text().await.unwrap()).unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let url = format!("http://{}{path}", self.controller.address);
        let response = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
        serde_json::from_str(&response.text().await.unwrap()).unwrap()
    }

    /// Waits until the controller lists exactly `devices`.
    async fn wait_for_devices(&mut self, devices: &[&str]) {
        self.wait_for_state("the phones", |s| s["devices"] == json!(devices))
            .await;
    }

    /// Waits until `/api/state` shows `what`: the gateway's events reach the controller on
    /// their own schedule, and there is no stream of them to wait on from here.
    async fn wait_for_state(&self, what: &str, shows: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let state = self.state().await;
            if shows(&state) {
                return state;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {what} in {state}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn stop(mut self) {
        if let Some(device) = self.device.take() {
            device.stop().await;
        }
        self.controller.stop().await;
        self.worker.stop().await;
        self.gateway_shutdown.cancel();
        self.gateway.await.unwrap().unwrap();
    }
}

/// What the agent saw at one step, without what legitimately differs between backends (the
/// backend's name, the frame's id).
#[derive(Debug, PartialEq)]
struct Seen {
    step: &'static str,
    text: String,
    url: String,
    title: String,
    elements: Vec<(u32, String, String, String)>,
    frame: Option<(u32, u32, String)>,
    /// The size of the frame's JPEG itself.
    jpeg: Option<(u32, u32)>,
}

/// `text` without what differs from run to run: hold ids (`h` and random hex) and a
/// response's `date` header.
fn timeless(text: &str) -> String {
    let text: Vec<&str> = text.lines().filter(|l| !l.starts_with("date: ")).collect();
    text.join("\n")
        .split(' ')
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
}

fn seen(step: &'static str, reply: &ActReply) -> Seen {
    Seen {
        step,
        text: timeless(&reply.text),
        url: reply.url.clone(),
        title: reply.title.clone(),
        elements: reply
            .elements
            .iter()
            .map(|e| (e.n, e.label.clone(), e.kind.clone(), e.href.clone()))
            .collect(),
        frame: reply
            .frame
            .as_ref()
            .map(|f| (f.width, f.height, f.caption.clone())),
        jpeg: None,
    }
}

/// The scenario on `thread`; `done` presses Done the way that backend's user would.
async fn scenario<F, Fut>(
    system: &System,
    thread: &str,
    backend: &str,
    done: F,
) -> (Vec<Seen>, Vec<String>)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut tool: BrowserToolClient<Channel> = system.controller.tool().await;
    let site = system.site;
    let mut backends = Vec::new();
    let mut steps = Vec::new();
    let mut act = async |step: &'static str, action: Action| -> ActReply {
        let reply = tool
            .act(act_on(thread, backend, action))
            .await
            .unwrap_or_else(|e| panic!("{thread} {step}: {e}"))
            .into_inner();
        backends.push(reply.backend.clone());
        let mut seen = seen(step, &reply);
        if let Some(frame) = &reply.frame {
            let frame = tool
                .get_frame(GetFrameRequest {
                    thread: thread.into(),
                    frame_id: frame.id.clone(),
                })
                .await
                .unwrap_or_else(|e| panic!("{thread} {step}: the frame: {e}"))
                .into_inner();
            seen.jpeg = Some(jpeg_size(&frame.jpeg));
        }
        steps.push(seen);
        reply
    };
    let profile = |kind| Action::Profile(ProfileAction { kind: Some(kind) });
    act(
        "profile mobile",
        profile(profile_action::Kind::Mobile(true)),
    )
    .await;
    let page = act(
        "navigate",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/page"),
        }),
    )
    .await;
    let (press, field) = (element(&page, "Press"), element(&page, "q"));
    act(
        "click",
        Action::Click(ClickAction {
            n: press,
            ..Default::default()
        }),
    )
    .await;
    act("extract after click", Action::Extract(ExtractAction {})).await;
    act(
        "type",
        Action::Type(TypeAction {
            n: field,
            text: "parity".into(),
        }),
    )
    .await;
    act(
        "key Enter",
        Action::Key(KeyAction {
            key: "Enter".into(),
        }),
    )
    .await;
    act("back", Action::Back(BackAction {})).await;
    act("scroll", Action::Scroll(ScrollAction { dy: 300.0 })).await;
    // A sidebar that scrolls apart from a page that cannot: turned over the sidebar on both.
    act(
        "navigate sidebar",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/sidebar.html"),
        }),
    )
    .await;
    act("scroll sidebar", Action::Scroll(ScrollAction { dy: 600.0 })).await;
    // Typing a framework notices: React's state on the phone profile, Vue's on the desktop one.
    let react = act(
        "navigate React",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/react.html"),
        }),
    )
    .await;
    act(
        "type React",
        Action::Type(TypeAction {
            n: element(&react, "Your name"),
            text: "Ada on React".into(),
        }),
    )
    .await;
    act("extract React", Action::Extract(ExtractAction {})).await;
    act(
        "cookies set by a page",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/set-cookies"),
        }),
    )
    .await;
    act(
        "fetch with them",
        Action::Fetch(FetchAction {
            url: format!("http://{site}/echo-cookies"),
            ..Default::default()
        }),
    )
    .await;
    act(
        "profile desktop",
        profile(profile_action::Kind::Desktop(true)),
    )
    .await;
    let vue = act(
        "navigate Vue",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/vue.html"),
        }),
    )
    .await;
    act(
        "type Vue",
        Action::Type(TypeAction {
            n: element(&vue, "Your name"),
            text: "Ada on Vue".into(),
        }),
    )
    .await;
    act("extract Vue", Action::Extract(ExtractAction {})).await;
    // A code editor's hidden field: the text replaces the editor's (CodeMirror 5's Ctrl+A).
    let editors = act(
        "navigate editors",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/editors.html"),
        }),
    )
    .await;
    act(
        "type into a code editor",
        Action::Type(TypeAction {
            n: element(&editors, "SQL query"),
            text: "select 1".into(),
        }),
    )
    .await;
    let edited = act("extract the editor", Action::Extract(ExtractAction {})).await;
    assert!(
        edited.text.contains("query:select 1 (by paste)\n"),
        "{thread} on {backend}: {}",
        edited.text
    );
    // No text empties it: Delete on what its select-all selected.
    act(
        "type nothing into the code editor",
        Action::Type(TypeAction {
            n: element(&editors, "SQL query"),
            text: String::new(),
        }),
    )
    .await;
    let emptied = act(
        "extract the emptied editor",
        Action::Extract(ExtractAction {}),
    )
    .await;
    assert!(
        emptied.text.contains("query: (by +delete)\n"),
        "{thread} on {backend}: {}",
        emptied.text
    );
    // Keys with modifiers, as a chat box takes them: Shift+Enter a new line, Control+s its
    // own shortcut, Enter sends; Control+a selects all, as the browser's own editing does.
    let chat = act(
        "navigate chat",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/chat.html"),
        }),
    )
    .await;
    let message = element(&chat, "Message");
    let key = |key: &str| Action::Key(KeyAction { key: key.into() });
    act(
        "type a message",
        Action::Type(TypeAction {
            n: message,
            text: "first line".into(),
        }),
    )
    .await;
    act("key Shift+Enter", key("Shift+Enter")).await;
    act("key shift+b", key("shift+b")).await;
    act("key Shift+1", key("Shift+1")).await;
    act("key Control+s", key("Control+s")).await;
    act("key Enter to send", key("Enter")).await;
    act(
        "type another",
        Action::Type(TypeAction {
            n: message,
            text: "oops".into(),
        }),
    )
    .await;
    act("key Control+a", key("Control+a")).await;
    act("key Backspace", key("Backspace")).await;
    act("extract chat", Action::Extract(ExtractAction {})).await;
    // A double-click (a double tap on the phone) opens a file; a click only selects one.
    let files = act(
        "navigate files",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/files.html"),
        }),
    )
    .await;
    act(
        "click a file",
        Action::Click(ClickAction {
            n: element(&files, "notes.txt"),
            double_click: false,
        }),
    )
    .await;
    act(
        "double-click a file",
        Action::Click(ClickAction {
            n: element(&files, "report.pdf"),
            double_click: true,
        }),
    )
    .await;
    act("extract files", Action::Extract(ExtractAction {})).await;
    // The page's dialogs are answered at once, alike (OK, a prompt's own default), and the
    // next listing says what they said.
    let dialogs = act(
        "navigate dialogs",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/dialogs.html"),
        }),
    )
    .await;
    act(
        "click a button that asks first",
        Action::Click(ClickAction {
            n: element(&dialogs, "Delete \"Buy milk\""),
            ..Default::default()
        }),
    )
    .await;
    act(
        "click a button that prompts",
        Action::Click(ClickAction {
            n: element(&dialogs, "Rename"),
            ..Default::default()
        }),
    )
    .await;
    act(
        "extract after the dialogs",
        Action::Extract(ExtractAction {}),
    )
    .await;
    act(
        "click a button whose form asks first",
        Action::Click(ClickAction {
            n: element(&dialogs, "Empty the list"),
            ..Default::default()
        }),
    )
    .await;
    // A popup the page opens (Django's "+" beside a related field) is the page the actions act
    // on until it closes; its opener waits behind it as it was left, and gets what it hands.
    let book = act(
        "navigate windows",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/fixtures/windows.html"),
        }),
    )
    .await;
    act(
        "type a title",
        Action::Type(TypeAction {
            n: element(&book, "Title"),
            text: "Dune".into(),
        }),
    )
    .await;
    let click = |n| {
        Action::Click(ClickAction {
            n,
            ..Default::default()
        })
    };
    let popup = act(
        "click + (a popup)",
        click(element(&book, "Add another author")),
    )
    .await;
    assert!(
        popup
            .text
            .contains("(Add author) It is a window the page opened (a popup)"),
        "{thread} on {backend}: {}",
        popup.text
    );
    act(
        "type into the popup",
        Action::Type(TypeAction {
            n: element(&popup, "Name"),
            text: "Frank Herbert".into(),
        }),
    )
    .await;
    let saved = act(
        "click Save author (the popup closes)",
        click(element(&popup, "Save author")),
    )
    .await;
    assert!(
        saved.text.contains("(Add book) The window closed")
            && saved
                .elements
                .iter()
                .any(|e| e.state == "= \"Frank Herbert\"")
            && saved.elements.iter().any(|e| e.state == "= \"Dune\""),
        "{thread} on {backend}: {}",
        saved.text
    );
    act(
        "click + again",
        click(element(&saved, "Add another author")),
    )
    .await;
    let back = act("back closes the popup", Action::Back(BackAction {})).await;
    assert_eq!(
        back.title, "Add book",
        "{thread} on {backend}: {}",
        back.text
    );
    // A sign-in window's way: it hands over and closes itself a moment later, which the
    // click's reply waits for.
    let consent = act(
        "click + once more",
        click(element(&back, "Add another author")),
    )
    .await;
    let continued = act(
        "click Continue as (the popup closes 300 ms later)",
        click(element(&consent, "Continue as Ursula K. Le Guin")),
    )
    .await;
    assert!(
        continued.text.contains("(Add book) The window closed")
            && continued
                .elements
                .iter()
                .any(|e| e.state == "= \"Ursula K. Le Guin\""),
        "{thread} on {backend}: {}",
        continued.text
    );
    act("screenshot", Action::Screenshot(ScreenshotAction {})).await;
    act(
        "hand over",
        Action::HandOver(HandOverAction {
            reason: "sign in".into(),
        }),
    )
    .await;
    let (after, ()) = tokio::join!(
        act("extract after Done", Action::Extract(ExtractAction {})),
        done()
    );
    assert!(
        after.text.contains("handed the page back"),
        "{}",
        after.text
    );
    (steps, backends)
}

#[tokio::test]
async fn the_same_scenario_on_a_worker_and_on_the_phone_gives_the_same_results() {
    let mut system = System::start().await;
    run_on_both_backends(&mut system).await;
    system.stop().await;
}

async fn run_on_both_backends(system: &mut System) {
    let worker_done = {
        let system = &*system;
        move || async move {
            // The hand-over has opened the hold; the user presses Done on the card.
            let state = system.state().await;
            let hold = state["holds"][0]["id"].as_str().expect("an open hold");
            system
                .post(&format!("/api/holds/{hold}/done"), json!({}))
                .await;
        }
    };
    let (on_worker, worker_backends) =
        scenario(system, "on-worker", "playwright", worker_done).await;

    let mut device = system.device.take().unwrap();
    let phone_done = async || {
        // The phone is told of the hold, and the user presses Done on the phone.
        let notice = device.hold("open").await;
        assert_eq!(notice.reason, "sign in");
        device.hand_back().await;
    };
    let (on_phone, phone_backends) = scenario(system, "on-phone", "device", phone_done).await;
    system.device = Some(device);

    // hand_over names no backend: it is the controller's alone.
    assert!(
        worker_backends
            .iter()
            .all(|b| b.is_empty() || b == "worker:w1"),
        "{worker_backends:?}"
    );
    let on_the_phone = format!("device:{DEVICE}");
    assert!(
        phone_backends
            .iter()
            .all(|b| b.is_empty() || *b == on_the_phone),
        "{phone_backends:?}"
    );
    for (worker, phone) in on_worker.iter().zip(&on_phone) {
        assert!(
            worker == phone,
            "the backends disagree at {:?}\n--- on the worker:\n{worker:#?}\n--- on the phone:\n{phone:#?}",
            worker.step
        );
    }
    assert_eq!(on_worker.len(), on_phone.len());

    // What the scenario was about, checked once now that both agree.
    let step = |name: &str| on_worker.iter().find(|s| s.step == name).unwrap();
    assert!(step("navigate").elements.len() >= 3);
    assert_eq!(step("navigate").frame.as_ref().unwrap().0, 412);
    assert!(step("extract after click").text.contains("clicked"));
    assert!(
        step("key Enter").url.contains("/submitted?q=parity"),
        "{:?}",
        step("key Enter")
    );
    assert!(step("back").url.ends_with("/page"));
    for (step, state) in [
        ("extract React", "state:Ada on React"),
        ("extract Vue", "state:Ada on Vue"),
    ] {
        assert!(
            on_worker
                .iter()
                .any(|s| s.step == step && s.text.contains(state)),
            "{step}: {:?}",
            on_worker.iter().find(|s| s.step == step)
        );
    }
    assert!(
        step("fetch with them").text.contains("persistent=kept"),
        "{:?}",
        step("fetch with them")
    );
    assert_eq!(
        step("click a button that asks first")
            .text
            .lines()
            .collect::<Vec<_>>()[..3],
        [
            "Clicked 'Delete \"Buy milk\"'.",
            "The page's confirm dialog asked \"Delete \\\"Buy milk\\\"? This cannot be undone.\" and \
             was answered OK.",
            "The page's alert said \"Deleted.\" (answered OK).",
        ],
        "{:?}",
        step("click a button that asks first")
    );
    assert!(
        step("click a button that prompts").text.starts_with(
            "Clicked 'Rename'.\nThe page's prompt asked \"New name?\" and was answered \
             \"Buy oat milk\" (its own default text).\n["
        ),
        "{:?}",
        step("click a button that prompts")
    );
    let emptied = &step("click a button whose form asks first").text;
    assert!(
        emptied.contains("dialogs.html?emptied=1")
            && emptied.contains(
                "\nThe page's confirm dialog asked \"Empty the list for good?\" and was answered OK.\n"
            ),
        "{emptied}"
    );
    let chat = &step("extract chat").text;
    for said in [
        "Sent: first line / B!",
        "Draft saved: 2 lines.",
        "Last key: Backspace (Backspace)",
    ] {
        assert!(chat.contains(said), "{said:?} in {chat}");
    }
    assert!(
        !chat.contains("oops"),
        "Control+a and Backspace emptied the box: {chat}"
    );
    assert!(
        step("key Control+s").text.starts_with("Pressed Control+s"),
        "{:?}",
        step("key Control+s")
    );
    // What the page did with them, and the focus each key left in the box.
    assert!(
        step("key Shift+1").text.starts_with(
            "Pressed Shift+1. The focus is on [1] textarea \"Message\" = \"first line\\nB!\"."
        ),
        "{:?}",
        step("key Shift+1").text
    );
    let opened = &step("extract files").text;
    assert!(opened.contains("Opened report.pdf."), "{opened}");
    assert!(
        step("double-click a file")
            .text
            .contains("button \"report.pdf\" (pressed)"),
        "{}",
        step("double-click a file").text
    );
    assert!(
        step("click a file")
            .text
            .starts_with("Clicked 'notes.txt'.")
            && !step("click a file").text.contains("Opened"),
        "{}",
        step("click a file").text
    );
    let extracted = &step("extract after the dialogs").text;
    assert!(extracted.contains("renamed to Buy oat milk"), "{extracted}");
    let shot = step("screenshot").frame.as_ref().unwrap();
    assert_eq!((shot.0, shot.1), (1280, 900));
    assert_eq!(step("screenshot").jpeg, Some((1280, 900)));
    assert_eq!(step("navigate").jpeg, Some((412, 915)));
}

#[tokio::test]
async fn routing_follows_the_phone_and_a_take_over_on_the_phone_holds_its_thread() {
    let mut system = System::start().await;
    let mut tool = system.controller.tool().await;
    let state = || Action::State(StateAction {});

    let reply = tool
        .act(act_on("auto", "", state()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.backend, format!("device:{DEVICE}"));
    assert!(
        reply.text.contains(DEVICE),
        "state names the phone: {}",
        reply.text
    );
    // The user takes the page on the phone: a hold on the thread the phone's page belongs to;
    // handed back on the phone, it closes.
    let device = system.device.as_mut().unwrap();
    device.take_over("signing in").await;
    let held = system
        .wait_for_state("hold", |s| s["holds"][0]["thread"] == "auto")
        .await;
    let hold = &held["holds"][0];
    assert_eq!(
        (&hold["opened_by"], &hold["reason"]),
        (&json!("user"), &json!("signing in"))
    );
    system.device.as_mut().unwrap().hand_back().await;
    system
        .wait_for_state("hand-back", |s| s["holds"] == json!([]))
        .await;

    let reply = tool
        .act(act_on("server", "playwright", state()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.backend, "worker:w1");

    system.device.take().unwrap().stop().await;
    system.wait_for_devices(&[]).await;
    let reply = tool
        .act(act_on("auto", "", state()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.backend, "worker:w1", "auto falls back to a worker");
    let error = tool
        .act(act_on("phone-only", "device", state()))
        .await
        .unwrap_err();
    assert_eq!(error.code(), tonic::Code::Unavailable);
    assert!(
        error.message().contains("no phone with a browser"),
        "{}",
        error.message()
    );

    // The thread's backend moves through the API.
    system
        .post(
            "/api/browser/phone-only/backend",
            json!({"backend": "playwright"}),
        )
        .await;
    let reply = tool
        .act(act_on("phone-only", "", state()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.backend, "worker:w1");
    system.stop().await;
}
