//! Holds and the take-over over real sockets: the agent's actions wait while the user has the
//! page, the user's input through the HTTP API, Done, the timeout, a restart, and bad input.

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};

/// The controller's HTTP API, as the card and other clients use it.
struct Api {
    base: String,
    client: reqwest::Client,
}

impl Api {
    fn new(controller: &ControllerProcess) -> Self {
        Self {
            base: format!("http://{}", controller.address),
            client: reqwest::Client::new(),
        }
    }

    async fn answer(response: reqwest::Response) -> (u16, Value) {
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {status}: {text}"));
        (status, value)
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.client.get(format!("{}{path}", self.base));
        Self::answer(response.send().await.unwrap()).await
    }

    /// Posts `body` as it is, malformed or not.
    async fn post_raw(&self, path: &str, body: &str) -> (u16, Value) {
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        Self::answer(request.send().await.unwrap()).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.post_raw(path, &body.to_string()).await
    }

    /// Posts and expects success.
    async fn ok(&self, path: &str, body: Value) -> Value {
        let (status, value) = self.post(path, body).await;
        assert!((200..300).contains(&status), "{path}: {status} {value}");
        value
    }

    /// The status and bytes of a picture.
    async fn get_jpeg_status(&self, path: &str) -> (u16, Vec<u8>) {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.bytes().await.unwrap().to_vec())
    }

    async fn state(&self) -> Value {
        let (status, state) = self.get("/api/state").await;
        assert_eq!(status, 200, "{state}");
        state
    }
}

fn hand_over(thread: &str, reason: &str) -> ActRequest {
    act(
        thread,
        Action::HandOver(HandOverAction {
            reason: reason.into(),
        }),
    )
}

fn extract(thread: &str) -> ActRequest {
    act(thread, Action::Extract(ExtractAction::default()))
}

/// A controller (holds' timeout as given) with one worker, and the test site.
async fn system(
    hold_timeout_ms: u64,
) -> (
    std::net::SocketAddr,
    ControllerProcess,
    Worker,
    tempfile::TempDir,
) {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), |config| {
        config.controller.hold_timeout_ms = hold_timeout_ms;
    })
    .await;
    (site, controller, worker, dir)
}

#[tokio::test]
async fn an_agent_action_during_a_hold_waits_for_done_and_sees_the_page_the_user_left() {
    let (site, controller, worker, _dir) = system(600_000).await;
    let mut tool = controller.tool().await;
    let api = Api::new(&controller);
    let navigate = Action::Navigate(NavigateAction {
        url: format!("http://{site}/takeover"),
    });
    tool.act(act("t", navigate)).await.unwrap();
    let reply = tool
        .act(hand_over("t", "press the button and fill the field"))
        .await
        .unwrap()
        .into_inner();
    assert!(reply.text.contains("with the user now"), "{}", reply.text);
    let state = api.state().await;
    assert_eq!(
        state["holds"][0]["reason"],
        "press the button and fill the field"
    );
    assert_eq!(state["holds"][0]["opened_by"], "agent");
    let hold = state["holds"][0]["id"].as_str().unwrap().to_string();

    let mut agent = tool.clone();
    let waiting = tokio::spawn(async move { agent.act(extract("t")).await });

    // The user's input is not blocked by the waiting action.
    let tapped = api
        .ok("/api/browser/t/tap", json!({"x": 110, "y": 35}))
        .await;
    assert!(
        tapped["frame"]["caption"]
            .as_str()
            .unwrap()
            .contains("tapped")
    );
    api.ok("/api/browser/t/tap", json!({"x": 110, "y": 135}))
        .await;
    let typed = api
        .ok("/api/browser/t/type", json!({"text": "by hand"}))
        .await;
    assert_eq!(typed["frame"]["caption"], "You typed 7 characters");
    let (status, frame) = api.get_jpeg_status("/api/browser/t/frame").await;
    assert_eq!((status, frame.starts_with(&[0xFF, 0xD8])), (200, true));
    assert!(
        !waiting.is_finished(),
        "the agent went on while the user had the page"
    );

    api.ok(&format!("/api/holds/{hold}/done"), json!({})).await;
    let reply = waiting.await.unwrap().unwrap().into_inner();
    assert!(
        reply.text.contains("handed the page back"),
        "{}",
        reply.text
    );
    assert!(reply.text.contains("pressed 1"), "{}", reply.text);
    assert!(reply.text.contains("typed: by hand"), "{}", reply.text);
    assert_eq!(api.state().await["holds"], json!([]));

    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn with_a_short_timeout_the_action_goes_on_and_says_the_user_did_not_come_back() {
    let (site, controller, worker, _dir) = system(300).await;
    let mut tool = controller.tool().await;
    let api = Api::new(&controller);
    let navigate = Action::Navigate(NavigateAction {
        url: format!("http://{site}/takeover"),
    });
    tool.act(act("t", navigate)).await.unwrap();
    let opened = api
        .ok(
            "/api/holds",
            json!({"thread": "t", "reason": "solve the CAPTCHA"}),
        )
        .await;
    let hold = opened["hold"]["id"].as_str().unwrap().to_string();

    let reply = tool.act(extract("t")).await.unwrap().into_inner();
    assert!(reply.text.contains("did not come back"), "{}", reply.text);
    assert!(reply.text.contains("pressed 0"), "{}", reply.text);
    assert_eq!(api.state().await["holds"], json!([]), "the hold expired");
    let (status, error) = api
        .post(&format!("/api/holds/{hold}/done"), json!({}))
        .await;
    assert_eq!(status, 409, "{error}");
    assert!(
        error["error"].as_str().unwrap().contains("expired"),
        "{error}"
    );

    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn a_hold_survives_a_controller_restart_and_closed_ones_are_not_listed() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let config = controller_config(&dir.path().join("controller"));
    let controller = ControllerProcess::start(config.clone(), "127.0.0.1:0").await;
    let mut tool = controller.tool().await;
    // hand_over needs no browser: the hold is the controller's alone.
    tool.act(hand_over("kept", "sign in to the bank"))
        .await
        .unwrap();
    tool.act(hand_over("closed", "type the SMS code"))
        .await
        .unwrap();
    let api = Api::new(&controller);
    api.ok(
        "/api/browser/closed/control",
        json!({"action": "handed_back"}),
    )
    .await;
    controller.stop().await;

    let controller = ControllerProcess::start(config.clone(), "127.0.0.1:0").await;
    let api = Api::new(&controller);
    let state = api.state().await;
    let holds = state["holds"].as_array().unwrap();
    assert_eq!(holds.len(), 1, "{state}");
    assert_eq!(holds[0]["thread"], "kept");
    assert_eq!(holds[0]["reason"], "sign in to the bank");
    assert!(holds[0]["since_ms"].as_i64().unwrap() > 0);
    let threads: Vec<&str> = state["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_str().unwrap())
        .collect();
    assert_eq!(threads, ["closed", "kept"]);
    let id = holds[0]["id"].as_str().unwrap();
    api.ok(&format!("/api/holds/{id}/done"), json!({})).await;
    controller.stop().await;

    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
    assert_eq!(Api::new(&controller).state().await["holds"], json!([]));
    controller.stop().await;
}

#[tokio::test]
async fn bad_input_gets_a_json_4xx_and_changes_nothing() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let config = controller_config(&dir.path().join("controller"));
    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
    let mut tool = controller.tool().await;
    let api = Api::new(&controller);
    tool.act(hand_over("held", "sign in")).await.unwrap();
    tool.act(hand_over("free", "sign in")).await.unwrap();
    let closed = api
        .ok(
            "/api/browser/free/control",
            json!({"action": "handed_back"}),
        )
        .await;
    let closed = closed["hold"]["id"].as_str().unwrap().to_string();
    let before = api.state().await;
    let done_again = format!("/api/holds/{closed}/done");

    let cases: Vec<(&str, &str, String, u16)> = vec![
        (
            "unknown thread",
            "/api/browser/nope/control",
            r#"{"action":"take_over"}"#.into(),
            404,
        ),
        ("unknown hold", "/api/holds/h999999/done", "{}".into(), 404),
        ("Done on a closed hold", &done_again, "{}".into(), 409),
        (
            "tap outside the viewport",
            "/api/browser/held/tap",
            r#"{"x":5000,"y":10}"#.into(),
            400,
        ),
        (
            "malformed JSON",
            "/api/browser/held/tap",
            r#"{"x":10,"#.into(),
            400,
        ),
        (
            "a field missing",
            "/api/browser/held/tap",
            r#"{"x":10}"#.into(),
            400,
        ),
        (
            "an unknown control",
            "/api/browser/held/control",
            r#"{"action":"steal"}"#.into(),
            400,
        ),
        (
            "input with no hold",
            "/api/browser/free/type",
            r#"{"text":"x"}"#.into(),
            409,
        ),
        (
            "hand back with no hold",
            "/api/browser/free/control",
            r#"{"action":"handed_back"}"#.into(),
            409,
        ),
        (
            "a hold without a reason",
            "/api/holds",
            r#"{"thread":"free","reason":" "}"#.into(),
            400,
        ),
        (
            "a hold on an unknown thread",
            "/api/holds",
            r#"{"thread":"nope","reason":"x"}"#.into(),
            404,
        ),
        (
            "a bad thread name",
            "/api/browser/..%2Fx/back",
            "{}".into(),
            400,
        ),
        (
            "a URL that is not http",
            "/api/browser/held/open",
            r#"{"url":"file:///etc/passwd"}"#.into(),
            400,
        ),
        ("no such route", "/api/nothing", "{}".into(), 404),
    ];
    for (what, path, body, expected) in &cases {
        let (status, answer) = api.post_raw(path, body).await;
        assert_eq!(status, *expected, "{what}: {answer}");
        let message = answer["error"].as_str().unwrap_or_default();
        assert!(message.len() > 10, "{what}: the error says why: {answer}");
    }
    let (status, answer) = api.get("/api/browser/nope/frame").await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(api.state().await, before, "bad input changed the state");

    controller.stop().await;
}
