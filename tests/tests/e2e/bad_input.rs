//! Bad input through the controller, over real sockets, on a real worker and Chromium: each is
//! refused with an error that says what to change, and changes nothing — the controller's state
//! (`GET /api/state`: threads, holds, latest frames), the page's URL and title (`state`) and what
//! the page holds (a field's value, the scroll position) are the same before and after.
//!
//! Elsewhere: malformed JSON and other bad input on the HTTP API in
//! `holds.rs::bad_input_gets_a_json_4xx_and_changes_nothing`; malformed messages on the phone's
//! socket in `gateway.rs::malformed_messages_are_answered_with_an_error_and_the_phone_stays_connected`;
//! an unknown CLI subcommand in `controller/src/cli.rs` (`bad_usage`); bad input at the worker's
//! own ops in `worker.rs::bad_input_gets_a_clear_error_and_changes_nothing`.

use std::time::{Duration, Instant};

use nanomuse_proto::act_request::Action;
use nanomuse_proto::profile_action::Kind;
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};

/// A controller with one worker, the test site, and a thread on its `/page`.
struct System {
    site: std::net::SocketAddr,
    controller: ControllerProcess,
    worker: Worker,
    tool: Tool,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl System {
    async fn start() -> Self {
        logs();
        let site = serve_site().await;
        let dir = tempfile::tempdir().unwrap();
        let (controller, worker) = controller_with_worker(dir.path(), |_| {}).await;
        let tool = controller.tool().await;
        Self {
            site,
            controller,
            worker,
            tool,
            http: reqwest::Client::new(),
            _dir: dir,
        }
    }

    async fn stop(self) {
        self.controller.stop().await;
        self.worker.stop().await;
    }

    async fn act(&mut self, thread: &str, action: Action) -> ActReply {
        self.tool
            .act(act(thread, action))
            .await
            .unwrap_or_else(|e| panic!("{thread}: {e:?}"))
            .into_inner()
    }

    /// The action's error, which must carry `code`.
    async fn refused(&mut self, thread: &str, action: Action, code: tonic::Code) -> String {
        let what = format!("{action:?}");
        let what = &what[..what.len().min(120)];
        let error = self
            .tool
            .act(act(thread, action))
            .await
            .expect_err(&format!("{what} was accepted"));
        assert_eq!(error.code(), code, "{what}: {}", error.message());
        let message = error.message().to_string();
        assert!(message.len() > 15, "{what}: the error says why: {message}");
        message
    }

    async fn navigate(&mut self, thread: &str, path: &str) -> ActReply {
        let url = format!("http://{}{path}", self.site);
        self.act(thread, Action::Navigate(NavigateAction { url }))
            .await
    }

    /// Runs `js` on the thread's page on the worker itself, past the controller.
    async fn page_value(&self, thread: &str, js: &str) -> Value {
        let reply = self
            .worker
            .backend
            .evaluate(EvaluateRequest {
                session: Some(Session::new("local", "default", thread)),
                js: js.into(),
                arg_json: String::new(),
            })
            .await
            .expect("evaluate on the worker");
        serde_json::from_str(&reply.value_json).unwrap()
    }

    /// Everything bad input must leave alone: the controller's state (every thread, hold and
    /// latest frame), the page's URL and title, the listing it numbers elements by, and what
    /// the page holds (the field's value, the scroll position, what was clicked).
    async fn snapshot(&mut self, thread: &str) -> Value {
        // A frame promised in the last reply is captured after it: wait for it first.
        self.tool
            .get_frame(GetFrameRequest {
                thread: thread.into(),
                frame_id: String::new(),
            })
            .await
            .expect("the thread has a frame");
        let url = format!("http://{}/api/state", self.controller.address);
        let response = self.http.get(url).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let api: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        let state = self.act(thread, Action::State(StateAction {})).await;
        let page = self
            .page_value(
                thread,
                "() => ({q: document.getElementById('q').value, \
                   out: document.getElementById('out').textContent, \
                   scroll: Math.round(scrollY), listed: document.querySelectorAll('*').length})",
            )
            .await;
        json!({"api": api, "url": state.url, "title": state.title, "page": page})
    }
}

/// A thread on the test page, with "kept" typed into its field; returns its listing.
async fn thread_on_the_page(system: &mut System, thread: &str) -> ActReply {
    let page = system.navigate(thread, "/page").await;
    let field = page
        .elements
        .iter()
        .find(|e| e.kind.starts_with("input"))
        .unwrap_or_else(|| panic!("no field in {:#?}", page.elements))
        .n as i64;
    system
        .act(
            thread,
            Action::Type(TypeAction {
                n: field,
                text: "kept".into(),
            }),
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn element_numbers_outside_the_listing_are_refused_and_change_nothing() {
    let mut system = System::start().await;
    let listing = thread_on_the_page(&mut system, "el").await;
    let count = listing.elements.len() as i64;
    assert!(count >= 3, "{:#?}", listing.elements);
    let before = system.snapshot("el").await;
    assert_eq!(before["page"]["q"], "kept");

    for n in [0, -1, -7, count + 1, 10_000, i64::MAX, i64::MIN] {
        for action in [
            Action::Click(ClickAction {
                n,
                ..Default::default()
            }),
            Action::Type(TypeAction {
                n,
                text: "lost".into(),
            }),
        ] {
            let message = system
                .refused("el", action, tonic::Code::InvalidArgument)
                .await;
            assert!(
                message.contains(&format!("element {n} is not in the last listing"))
                    && message.contains(&format!("1 to {count}")),
                "{n}: {message}"
            );
        }
    }
    assert_eq!(
        system.snapshot("el").await,
        before,
        "bad numbers changed something"
    );
    // The listing still works: element 1 is clicked as it should be.
    let clicked = system
        .act(
            "el",
            Action::Click(ClickAction {
                n: 1,
                ..Default::default()
            }),
        )
        .await;
    assert!(
        clicked.text.starts_with("Clicked 'Press'"),
        "{}",
        clicked.text
    );
    assert_eq!(
        system
            .page_value("el", "() => document.getElementById('out').textContent")
            .await,
        "clicked"
    );
    system.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_relative_and_non_http_urls_are_refused_and_change_nothing() {
    let mut system = System::start().await;
    thread_on_the_page(&mut system, "url").await;
    let before = system.snapshot("url").await;

    // What each refusal must name (loosely: the wording is the URL policy's).
    let cases = [
        ("not a url", "URL"),
        ("http://", "URL"),
        ("http://[::1", "URL"),
        ("http://exa mple.com/", "URL"),
        ("/relative/path", "URL"),
        ("example.com/page", "URL"),
        ("//example.com/", "URL"),
        ("javascript:alert(document.cookie)", "javascript"),
        ("JavaScript:alert(1)", "javascript"),
        ("data:text/html,<h1>hi</h1>", "data"),
        ("file:///etc/passwd", "file"),
        ("chrome://crash", "chrome"),
        ("view-source:http://example.com/", "view-source"),
        ("about:config", "about"),
    ];
    for (url, says) in cases {
        let message = system
            .refused(
                "url",
                Action::Navigate(NavigateAction { url: url.into() }),
                tonic::Code::InvalidArgument,
            )
            .await;
        assert!(message.contains(says), "navigate {url:?}: {message}");
        let message = system
            .refused(
                "url",
                Action::Fetch(FetchAction {
                    url: url.into(),
                    ..Default::default()
                }),
                tonic::Code::InvalidArgument,
            )
            .await;
        assert!(message.contains(says), "fetch {url:?}: {message}");
    }
    for empty in ["", "   "] {
        let message = system
            .refused(
                "url",
                Action::Navigate(NavigateAction { url: empty.into() }),
                tonic::Code::InvalidArgument,
            )
            .await;
        assert!(message.contains("needs a URL"), "{message}");
    }
    assert_eq!(
        system.snapshot("url").await,
        before,
        "a bad URL changed something"
    );
    system.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_text_scroll_and_wait_are_refused_and_change_nothing() {
    let mut system = System::start().await;
    let listing = thread_on_the_page(&mut system, "big").await;
    let field = listing
        .elements
        .iter()
        .find(|e| e.kind.starts_with("input"))
        .unwrap()
        .n as i64;
    // The page scrolled a little, so a scroll that went through would show either way.
    system
        .act("big", Action::Scroll(ScrollAction { dy: 300.0 }))
        .await;
    let before = system.snapshot("big").await;
    assert_eq!(before["page"]["scroll"], 300);

    let megabyte = "x".repeat(1024 * 1024);
    let started = Instant::now();
    let message = system
        .refused(
            "big",
            Action::Type(TypeAction {
                n: field,
                text: megabyte,
            }),
            tonic::Code::InvalidArgument,
        )
        .await;
    assert!(message.contains("100000 characters"), "{message}");
    assert!(
        !message.contains("xxxx"),
        "the text is never echoed: {}",
        &message[..200.min(message.len())]
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    for dy in [1e12, -1e12, f64::INFINITY, f64::NAN, 100_001.0] {
        let message = system
            .refused(
                "big",
                Action::Scroll(ScrollAction { dy }),
                tonic::Code::InvalidArgument,
            )
            .await;
        assert!(message.contains("out of range"), "{dy}: {message}");
    }

    for seconds in [9999.0, 15.5, -1.0, f64::NAN, f64::INFINITY] {
        let started = Instant::now();
        let message = system
            .refused(
                "big",
                Action::Wait(WaitAction {
                    seconds,
                    ..Default::default()
                }),
                tonic::Code::InvalidArgument,
            )
            .await;
        assert!(message.contains("0 to 15 seconds"), "{seconds}: {message}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "wait {seconds} waited before refusing"
        );
    }
    assert_eq!(
        system.snapshot("big").await,
        before,
        "bad input changed something"
    );
    system.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_action_a_frame_of_another_thread_and_a_bad_profile_are_refused_and_change_nothing() {
    let mut system = System::start().await;
    thread_on_the_page(&mut system, "mine").await;
    let theirs = system
        .navigate("theirs", "/second")
        .await
        .frame
        .expect("navigate makes a frame")
        .id;
    // The other thread's frame is captured after its reply: taken before the state is read.
    system
        .tool
        .get_frame(GetFrameRequest {
            thread: "theirs".into(),
            frame_id: theirs.clone(),
        })
        .await
        .expect("the other thread's frame");
    let before = system.snapshot("mine").await;

    // No action at all (a client that sends an action this controller does not know sends
    // none, as protobuf drops unknown fields): on a known thread and on a new one.
    for thread in ["mine", "never-seen"] {
        let error = system
            .tool
            .act(ActRequest {
                thread: thread.into(),
                action: None,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(error.code(), tonic::Code::InvalidArgument);
        assert!(
            error
                .message()
                .contains("no action given: navigate, extract"),
            "{}",
            error.message()
        );
    }

    // A frame id of another thread is not found from this one, over gRPC and HTTP; nor are
    // made-up ones.
    for id in [theirs.as_str(), "999999999", "../theirs", "-1"] {
        let error = system
            .tool
            .get_frame(GetFrameRequest {
                thread: "mine".into(),
                frame_id: id.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(
            error.code(),
            tonic::Code::NotFound,
            "{id}: {}",
            error.message()
        );
        assert!(error.message().contains("no frame"), "{}", error.message());
        let url = format!(
            "http://{}/api/browser/mine/frames/{}",
            system.controller.address,
            id.replace('/', "%2F")
        );
        let response = system.http.get(url).send().await.unwrap();
        assert_eq!(response.status(), 404, "{id}");
        let answer: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        assert!(
            answer["error"].as_str().unwrap().contains("no frame"),
            "{answer}"
        );
    }
    // It is still there for its own thread.
    let frame = system
        .tool
        .get_frame(GetFrameRequest {
            thread: "theirs".into(),
            frame_id: theirs.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(frame.thread, "theirs");

    // A custom profile with a width of 0 or 100000 (or a height out of range).
    for (width, height) in [(0, 800), (100_000, 800), (800, 0), (800, 100_000), (1, 800)] {
        let message = system
            .refused(
                "mine",
                Action::Profile(ProfileAction {
                    kind: Some(Kind::Custom(CustomProfile {
                        user_agent: "Agent/1.0".into(),
                        width,
                        height,
                        mobile: false,
                    })),
                }),
                tonic::Code::InvalidArgument,
            )
            .await;
        // A size left out (0) is said to be missing, one given out of range so.
        let why = if width == 0 || height == 0 {
            "needs its"
        } else {
            "out of range"
        };
        assert!(
            message.contains(why) && message.contains("100..=4096"),
            "{width}×{height}: {message}"
        );
    }
    let message = system
        .refused(
            "mine",
            Action::Profile(ProfileAction { kind: None }),
            tonic::Code::InvalidArgument,
        )
        .await;
    assert!(message.contains("mobile, desktop"), "{message}");
    assert_eq!(
        system
            .page_value("mine", "() => [innerWidth, innerHeight]")
            .await,
        json!([1280, 900])
    );
    assert_eq!(
        system.snapshot("mine").await,
        before,
        "bad input changed something"
    );
    system.stop().await;
}
