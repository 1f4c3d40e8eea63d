//! The browser card in a real browser: a second headless Chromium (a worker of our own, driven
//! through its ops) opens the card the controller serves, sees the hold's reason, taps the page
//! under control through the picture, types through the text box and presses Done; the agent's
//! waiting action then returns with the state those inputs made. The card is laid out at 412
//! and 1280 px wide without anything cut or overlapping, and its pictures are kept in
//! `target/card/` for review.

use std::path::PathBuf;

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};

/// Resolves once `CONDITION` (a JS expression) is truthy, checked on every DOM change and every
/// load of an image; rejects after 15 s with what it waited for (`WHAT`). The condition is
/// written into the function, not `eval`ed in the page: the card's Content-Security-Policy
/// forbids `eval`, as it should.
const WAIT_JS: &str = r##"() => new Promise((resolve, reject) => {
  const check = () => {
    let value;
    try { value = (CONDITION); } catch (_) { return; }
    if (value) { stop(); resolve(value); }
  };
  const observer = new MutationObserver(check);
  const timer = setTimeout(() => { stop(); reject(new Error("timed out waiting for " + WHAT)); }, 15000);
  const stop = () => { observer.disconnect(); document.removeEventListener("load", check, true); clearTimeout(timer); };
  observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  document.addEventListener("load", check, true);
  check();
})"##;

/// What is cut at the window's edge or overlaps something else on the card.
const LAYOUT_JS: &str = r##"() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width)
    problems.push(`the card scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  const shown = [...document.querySelectorAll(
      "#title, #address, #turn p, #done, #picture, #caption, #take-over, #controls input, #controls button, #status")]
    .map((element) => [element, element.getBoundingClientRect()])
    .filter(([element, box]) => box.width > 0 && box.height > 0 && getComputedStyle(element).visibility !== "hidden");
  const name = (element) => element.id || element.textContent.trim().slice(0, 20) || element.tagName;
  for (const [element, box] of shown)
    if (box.left < -0.5 || box.right > width + 0.5) problems.push(`${name(element)} is cut: ${box.left}..${box.right} of ${width}`);
  for (let i = 0; i < shown.length; i++)
    for (let j = i + 1; j < shown.length; j++) {
      const [a, p] = shown[i], [b, q] = shown[j];
      if (a.contains(b) || b.contains(a)) continue;
      const x = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const y = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (x > 0.5 && y > 0.5) problems.push(`${name(a)} overlaps ${name(b)}`);
    }
  return { problems, shown: shown.length };
}"##;

/// The centre of `selector` on the card, in the card's CSS px.
pub(crate) const CENTRE_JS: &str = r##"(selector) => {
  const box = document.querySelector(selector).getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2];
}"##;

/// Where point (x, y) of the agent's 1280×900 page is drawn on the card's picture.
const ON_PICTURE_JS: &str = r##"([x, y]) => {
  const box = document.getElementById("picture").getBoundingClientRect();
  return [box.left + x * box.width / 1280, box.top + y * box.height / 900];
}"##;

/// The user's own browser, showing the card (or another page of the controller's:
/// `replay.rs` uses it too).
pub(crate) struct UserBrowser<'a> {
    pub(crate) worker: &'a Worker,
    pub(crate) page: &'static str,
}

impl UserBrowser<'_> {
    pub(crate) fn session(&self) -> Option<Session> {
        session(self.page)
    }

    pub(crate) async fn evaluate(&self, js: &str, arg: Value) -> Value {
        let reply = self
            .worker
            .backend
            .evaluate(EvaluateRequest {
                session: self.session(),
                js: js.into(),
                arg_json: arg.to_string(),
            })
            .await
            .unwrap_or_else(|e| panic!("on the card ({}): {e}", self.page));
        serde_json::from_str(&reply.value_json).unwrap()
    }

    pub(crate) async fn wait_for(&self, condition: &str) {
        let js = WAIT_JS
            .replace("CONDITION", condition)
            .replace("WHAT", &json!(condition).to_string());
        self.evaluate(&js, Value::Null).await;
    }

    pub(crate) async fn tap(&self, at: Value) {
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        let request = TapRequest {
            session: self.session(),
            x,
            y,
            ..Default::default()
        };
        self.worker.backend.tap(request).await.unwrap();
    }

    /// Taps `selector` on the card and waits for the status line to start with `reply`.
    async fn press(&self, selector: &str, reply: &str) {
        self.evaluate(
            "() => { document.getElementById('status').textContent = '' }",
            Value::Null,
        )
        .await;
        self.tap(self.evaluate(CENTRE_JS, json!(selector)).await)
            .await;
        self.wait_for(&format!(
            "document.getElementById('status').textContent.startsWith({reply:?})"
        ))
        .await;
    }

    /// Taps point (x, y) of the page under control through the picture.
    async fn tap_picture(&self, x: f64, y: f64) {
        self.evaluate(
            "() => { document.getElementById('status').textContent = '' }",
            Value::Null,
        )
        .await;
        self.tap(self.evaluate(ON_PICTURE_JS, json!([x, y])).await)
            .await;
        self.wait_for("document.getElementById('status').textContent.startsWith('You tapped')")
            .await;
    }

    /// Checks the layout (`at_least` elements shown) and keeps a picture of the card in `target/card/<name>.jpg`.
    async fn review(&self, name: &str, at_least: u64) {
        let layout = self.evaluate(LAYOUT_JS, Value::Null).await;
        assert_eq!(layout["problems"], json!([]), "{name}: {layout}");
        assert!(
            layout["shown"].as_u64().unwrap() >= at_least,
            "{name}: {layout}"
        );
        let shot = self
            .worker
            .backend
            .screenshot(ScreenshotRequest {
                session: self.session(),
                quality: 85,
            })
            .await
            .unwrap();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/card");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.jpg")), &shot.jpeg).unwrap();
    }
}

#[tokio::test]
async fn the_card_in_a_real_browser_takes_taps_and_text_and_done_releases_the_agent() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), |_| {}).await;
    let mut tool = controller.tool().await;
    let reason = "press the button and fill the field";
    tool.act(act(
        "card",
        Action::Navigate(NavigateAction {
            url: format!("http://{site}/takeover"),
        }),
    ))
    .await
    .unwrap();
    tool.act(act(
        "card",
        Action::HandOver(HandOverAction {
            reason: reason.into(),
        }),
    ))
    .await
    .unwrap();
    let mut agent = tool.clone();
    let waiting = tokio::spawn(async move {
        agent
            .act(act("card", Action::Extract(ExtractAction::default())))
            .await
    });

    let users = Worker::start(test_config(&dir.path().join("user"))).await;
    let card = format!("http://{}/browser/card", controller.address);
    let wide = UserBrowser {
        worker: &users,
        page: "wide",
    };
    let phone = UserBrowser {
        worker: &users,
        page: "phone",
    };
    for (browser, mobile) in [(&wide, false), (&phone, true)] {
        users
            .backend
            .open(open_request(browser.page, mobile))
            .await
            .unwrap();
        users
            .backend
            .navigate(NavigateRequest {
                session: browser.session(),
                url: card.clone(),
                timeout_ms: 0,
            })
            .await
            .unwrap();
        browser
            .wait_for(&format!(
                "!document.getElementById('turn').hidden && \
                 document.getElementById('reason').textContent === {reason:?} && \
                 document.getElementById('picture').naturalWidth > 0"
            ))
            .await;
    }
    wide.review("card-1280", 14).await;
    phone.review("card-412", 14).await;

    // On the phone: the button, then the field, through the picture; then text and Done.
    phone.tap_picture(110.0, 35.0).await;
    phone.tap_picture(110.0, 135.0).await;
    phone
        .tap(phone.evaluate(CENTRE_JS, json!("#text")).await)
        .await;
    users
        .backend
        .r#type(TypeRequest {
            session: phone.session(),
            text: "by the card".into(),
        })
        .await
        .unwrap();
    phone.press("#type", "You typed 11 characters").await;
    assert!(!waiting.is_finished(), "the agent went on before Done");
    phone.press("#done", "Handed back").await;

    let reply = waiting.await.unwrap().unwrap().into_inner();
    assert!(
        reply.text.contains("handed the page back"),
        "{}",
        reply.text
    );
    assert!(reply.text.contains("pressed 1"), "{}", reply.text);
    assert!(reply.text.contains("typed: by the card"), "{}", reply.text);
    // The other card saw the hand-back through its event stream and shows the last frame.
    wide.wait_for(
        "document.getElementById('turn').hidden && !document.getElementById('take-over').hidden",
    )
    .await;
    wide.review("card-1280-after", 6).await;

    users.stop().await;
    controller.stop().await;
    worker.stop().await;
}
