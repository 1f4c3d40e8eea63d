//! `wait` as the spec says it, through the controller on a real worker: `wait N` pauses N
//! seconds, then lists what the page drew meanwhile; `wait` alone waits until the page is quiet
//! — no request in flight and no DOM change for a moment — at most 15 s, saying so when it
//! never is; `wait --text T` waits until T is on the page, and says so when it does not come.
//! Every action's settle lets the short timers an input began fire (a search box's pause, a
//! menu opened a moment after its click) and a transition under way end (and the one its end
//! starts) before the page is listed, and waits for what an app sends over its WebSocket after
//! it (in parts, with pauses between them) and for an app that builds itself after its load,
//! yet not for a socket that never stops nor a page that polls.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Html;
use axum::routing::get;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;

/// Draws its button 1.5 s after load, from a timer: nothing on the network says so.
const LATE: &str = r#"<!doctype html><title>Late</title><body>
<script>setTimeout(() => {
  const button = document.createElement('button');
  button.textContent = 'Drawn late';
  document.body.appendChild(button);
}, 1500);</script>"#;

/// A loader that changes the page every 100 ms for 1.2 s, then draws its result.
const LOADING: &str = r#"<!doctype html><title>Loading</title><body><p id="progress">0</p>
<script>let ticks = 0;
const timer = setInterval(() => {
  ticks += 1;
  document.getElementById('progress').textContent = String(ticks);
  if (ticks === 12) {
    clearInterval(timer);
    const button = document.createElement('button');
    button.textContent = 'Loaded';
    document.body.appendChild(button);
  }
}, 100);</script>"#;

/// A clock: the page never stops changing.
const CLOCK: &str = r#"<!doctype html><title>Clock</title><body><p id="now"></p>
<script>setInterval(() => { document.getElementById('now').textContent = String(Date.now()); }, 50);</script>"#;

/// Says "Order confirmed" 1 s after load.
const CONFIRM: &str = r#"<!doctype html><title>Order</title><body><p id="status">Placing the order…</p>
<script>setTimeout(() => {
  document.getElementById('status').textContent = 'Order   confirmed';
}, 1000);</script>"#;

/// A menu whose choice fades it out over 400 ms, then removes it: what an action's reply lists
/// is the page after that, not the leaving options.
const MENU: &str = r#"<!doctype html><title>Menu</title><body>
<style>@keyframes out { to { opacity: 0; } } .closing { animation: out 400ms forwards; }</style>
<button id="open">Language</button>
<div id="menu"><button>English</button> <button id="french">French</button></div>
<script>document.getElementById('french').onclick = () => {
  const menu = document.getElementById('menu');
  menu.addEventListener('animationend', () => menu.remove());
  menu.classList.add('closing');
  document.getElementById('open').textContent = 'Language: French';
};</script>"#;

/// A dialog over a backdrop that closes as Bootstrap's does: the dialog fades out, and only
/// when it has does the backdrop start fading out; each is removed once it has faded.
const DIALOG: &str = r#"<!doctype html><title>Dialog</title><body>
<style>@keyframes out { to { opacity: 0; } } .closing { animation: out 250ms forwards; }
#backdrop { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.5); }
#dialog { position: fixed; top: 40%; left: 40%; background: white; padding: 20px; }</style>
<button>Behind</button>
<div id="backdrop"></div>
<div id="dialog" role="dialog">Sure? <button id="close">Close</button></div>
<script>document.getElementById('close').onclick = () => {
  const dialog = document.getElementById('dialog');
  const backdrop = document.getElementById('backdrop');
  dialog.addEventListener('animationend', () => {
    dialog.remove();
    backdrop.addEventListener('animationend', () => backdrop.remove());
    backdrop.classList.add('closing');
  });
  dialog.classList.add('closing');
};</script>"#;

/// An app drawn from its WebSocket, as Streamlit's: the page is a shell that asks the server
/// for its content, which comes in two messages with the server's work between them; pressing
/// Compute asks again, and the answer comes after a while.
const SOCKET_APP: &str = r#"<!doctype html><title>Loans</title><body><main id="app"></main>
<script>const socket = new WebSocket(`ws://${location.host}/socket`);
socket.onopen = () => socket.send('run');
socket.onmessage = (event) => {
  const app = document.getElementById('app');
  if (event.data === 'form') {
    const amount = document.createElement('input');
    amount.setAttribute('aria-label', 'Amount');
    const compute = document.createElement('button');
    compute.textContent = 'Compute';
    compute.onclick = () => socket.send('compute');
    app.append(amount, compute);
  } else if (event.data.startsWith('result ')) {
    const result = document.createElement('button');
    result.textContent = 'Copy ' + event.data.slice(7);
    app.append(result);
  }
};</script>"#;

/// A socket that never stops talking, and a button that draws at once.
const TICKER: &str = r#"<!doctype html><title>Ticker</title><body><p id="price"></p>
<button onclick="this.textContent = 'Bought'">Buy</button>
<script>const socket = new WebSocket(`ws://${location.host}/ticker`);
socket.onmessage = (event) => { document.getElementById('price').textContent = event.data; };</script>"#;

/// An app that builds itself after its load, as Gradio's: it asks for its layout, works on it
/// for 100 ms with nothing on the network (Gradio's script, 80–130 ms), then asks for its
/// components and draws them.
const BUILT_AFTER_LOAD: &str = r#"<!doctype html><title>Greeter</title><body><main id="app"></main>
<script>addEventListener('load', async () => {
  const layout = await (await fetch('/layout')).json();
  await new Promise((resolve) => setTimeout(resolve, 100));
  const labels = await (await fetch('/components?' + layout.join(','))).json();
  for (const label of labels) {
    const button = document.createElement('button');
    button.textContent = label;
    document.getElementById('app').append(button);
  }
});</script>"#;

/// A page that asks its server for news from its load on, 60 ms after each answer, for as long
/// as it is open.
const POLLING: &str = r#"<!doctype html><title>News</title><body><p id="news"></p>
<button onclick="this.textContent = 'Read'">Mark read</button>
<script>const poll = async () => {
  document.getElementById('news').textContent = await (await fetch('/news')).text();
  setTimeout(poll, 60);
};
addEventListener('load', poll);</script>"#;

/// The server of [`SOCKET_APP`]: `run` gets a session at once, then the form after 200 ms of
/// work (a pause in which nothing is on the network); `compute` gets its result after 200 ms
/// (Streamlit pauses as long on a trivial script; the page stays busy 500 ms after a message).
async fn socket_app(mut socket: WebSocket) {
    let work = Duration::from_millis(200);
    while let Some(Ok(Message::Text(asked))) = socket.recv().await {
        let (at_once, after_work) = match asked.as_str() {
            "run" => (Some("session"), "form"),
            "compute" => (None, "result 83.33"),
            _ => continue,
        };
        if let Some(first) = at_once
            && socket.send(Message::text(first)).await.is_err()
        {
            return;
        }
        tokio::time::sleep(work).await;
        if socket.send(Message::text(after_work)).await.is_err() {
            return;
        }
    }
}

/// The server of [`TICKER`]: a price every 50 ms until the page goes.
async fn ticker(mut socket: WebSocket) {
    let mut price = 100u64;
    loop {
        price += 1;
        if socket.send(Message::text(price.to_string())).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A page that starts a Web Worker (ReDoc, a PDF viewer, an editor do), which answers it.
const WITH_WORKER: &str = r#"<!doctype html><title>Worker</title>
<button id="b">Ask</button>
<script>
  const worker = new Worker('/echo-worker.js');
  worker.onmessage = (event) => { document.getElementById('b').textContent = 'Answered ' + event.data; };
  worker.postMessage('hi');
</script>"#;

/// Two search boxes that ask their server only once typing pauses for 300 ms: one clears and
/// sets its timer on each input, one (as lodash's `debounce`) lets its timer re-arm itself for
/// the rest of the wait. Each draws what the server suggests as buttons.
const SUGGEST: &str = r#"<!doctype html><title>Suggest</title>
<input id="plain" aria-label="Plain search"> <input id="rearmed" aria-label="Rearmed search">
<div id="found"></div>
<script>
  const show = (q) => fetch('/suggestions?q=' + encodeURIComponent(q)).then((r) => r.json())
    .then((names) => {
      document.getElementById('found').replaceChildren(...names.map((name) => {
        const button = document.createElement('button');
        button.textContent = name;
        return button;
      }));
    });
  let plain;
  document.getElementById('plain').addEventListener('input', (event) => {
    clearTimeout(plain);
    plain = setTimeout(() => show(event.target.value), 300);
  });
  let last = 0, armed = false;
  const expired = () => {
    const left = 300 - (Date.now() - last);
    if (left > 0) { setTimeout(expired, left); return; }
    armed = false;
    show(document.getElementById('rearmed').value);
  };
  document.getElementById('rearmed').addEventListener('input', () => {
    last = Date.now();
    if (!armed) { armed = true; setTimeout(expired, 300); }
  });
  // The key's release re-arms it: the wait starts again from there.
  document.getElementById('rearmed').addEventListener('keyup', () => { last = Date.now(); });
</script>"#;

/// An app that answers in a read-only box a while after it is asked (Gradio's output), beside
/// a password field holding a password, and a field that only its dialog's title names.
const ANSWER_BOX: &str = r#"<!doctype html><title>Answer</title>
<button onclick="setTimeout(() => { document.getElementById('answer').value = 'The answer is 42'; }, 600)">Ask</button>
<label>Answer <textarea id="answer" disabled></textarea></label>
<input type="password" aria-label="Secret" value="hunter2">
<div role="dialog" aria-label="Rename list"><div><input value="Groceries"></div></div>"#;

/// A button whose menu opens on a short timer after the click (a framework's delayed open, a
/// sign-in window that closes a moment after it answered), and which shows at once a toast
/// that leaves on a long one (3 s: the page's own business).
const DELAYED_MENU: &str = r#"<!doctype html><title>Delayed</title>
<button id="options">Options</button> <p id="toast"></p> <div id="menu"></div>
<script>document.getElementById('options').onclick = () => {
  const toast = document.getElementById('toast');
  toast.innerHTML = '<button>Undo</button>';
  setTimeout(() => { toast.replaceChildren(); }, 3000);
  setTimeout(() => {
    document.getElementById('menu').innerHTML = '<button>Rename</button> <button>Delete</button>';
  }, 300);
};</script>"#;

/// A page that keeps a request open to its server from shortly after its load (a dev server's
/// live reload, a chat's long poll), and a button that changes it.
const LONG_POLL: &str = r#"<!doctype html><title>Polled</title>
<button onclick="this.textContent = 'Pressed'">Press</button>
<script>addEventListener('load', () => setTimeout(() => fetch('/held-open'), 300));</script>"#;

/// What the search boxes' server suggests, after a while.
async fn suggestions(
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> axum::Json<Vec<String>> {
    tokio::time::sleep(Duration::from_millis(150)).await;
    let q = query.get("q").cloned().unwrap_or_default();
    axum::Json(vec![format!("{q} one"), format!("{q} two")])
}

async fn pages() -> SocketAddr {
    let app = Router::new()
        .route("/socket-app", get(|| async { Html(SOCKET_APP) }))
        .route(
            "/socket",
            get(|upgrade: WebSocketUpgrade| async { upgrade.on_upgrade(socket_app) }),
        )
        .route("/ticker-page", get(|| async { Html(TICKER) }))
        .route(
            "/ticker",
            get(|upgrade: WebSocketUpgrade| async { upgrade.on_upgrade(ticker) }),
        )
        .route(
            "/built-after-load",
            get(|| async { Html(BUILT_AFTER_LOAD) }),
        )
        .route("/layout", get(|| async { axum::Json(["name", "submit"]) }))
        .route(
            "/components",
            get(|| async { axum::Json(["Name", "Submit"]) }),
        )
        .route("/polling", get(|| async { Html(POLLING) }))
        .route("/news", get(|| async { "nothing new" }))
        .route("/menu", get(|| async { Html(MENU) }))
        .route("/dialog", get(|| async { Html(DIALOG) }))
        .route("/late", get(|| async { Html(LATE) }))
        .route("/loading", get(|| async { Html(LOADING) }))
        .route("/clock", get(|| async { Html(CLOCK) }))
        .route("/confirm", get(|| async { Html(CONFIRM) }))
        .route("/with-worker", get(|| async { Html(WITH_WORKER) }))
        .route("/suggest", get(|| async { Html(SUGGEST) }))
        .route("/answer-box", get(|| async { Html(ANSWER_BOX) }))
        .route("/long-poll", get(|| async { Html(LONG_POLL) }))
        .route("/delayed-menu", get(|| async { Html(DELAYED_MENU) }))
        .route(
            "/held-open",
            get(|| async {
                std::future::pending::<()>().await;
                ""
            }),
        )
        .route("/suggestions", get(suggestions))
        .route(
            "/echo-worker.js",
            get(|| async {
                (
                    [(axum::http::header::CONTENT_TYPE, "text/javascript")],
                    "onmessage = (event) => postMessage(event.data);",
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

/// The settle's bound in the tests of what must not hold an action to it: far above what they
/// allow, so that an action held to it is told apart from a slow one on a loaded machine.
const HELD_BOUND_MS: u64 = 20_000;
/// An action that took this long was held to [`HELD_BOUND_MS`].
const HELD: Duration = Duration::from_secs(10);

fn wait(seconds: f64, text: &str) -> Action {
    Action::Wait(WaitAction {
        seconds,
        text: text.into(),
    })
}

fn labels(reply: &ActReply) -> Vec<&str> {
    reply.elements.iter().map(|e| e.label.as_str()).collect()
}

/// A controller and worker, and the tool on `path` of the test pages.
async fn on_page(path: &str) -> (ControllerProcess, Worker, tempfile::TempDir, Tool) {
    let (controller, worker, dir, tool, _) = opened(path).await;
    (controller, worker, dir, tool)
}

/// [`on_page`], with the reply of the navigate there.
async fn opened(path: &str) -> (ControllerProcess, Worker, tempfile::TempDir, Tool, ActReply) {
    opened_with(path, |_| {}).await
}

/// [`opened`] on a controller configured by `tune`.
async fn opened_with(
    path: &str,
    tune: impl FnOnce(&mut nanomuse_controller::Config),
) -> (ControllerProcess, Worker, tempfile::TempDir, Tool, ActReply) {
    logs();
    let site = pages().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), tune).await;
    let mut tool = controller.tool().await;
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Navigate(NavigateAction {
                url: format!("http://{site}{path}"),
            }),
        ),
    )
    .await;
    (controller, worker, dir, tool, reply)
}

#[tokio::test]
async fn wait_seconds_pauses_then_lists_what_the_page_drew() {
    let (controller, worker, _dir, mut tool) = on_page("/late").await;
    let started = Instant::now();
    let reply = acted(&mut tool, act("waiting", wait(3.0, ""))).await;
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "wait 3 answered after {:?}",
        started.elapsed()
    );
    assert!(reply.text.starts_with("Waited 3.0 s."), "{}", reply.text);
    assert_eq!(labels(&reply), ["Drawn late"], "{}", reply.text);
    assert!(reply.frame.is_some(), "a wait shows the page it waited for");
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn an_actions_listing_comes_after_the_transition_it_started() {
    let (controller, worker, _dir, mut tool) = on_page("/menu").await;
    let reply = acted(&mut tool, act("waiting", wait(0.0, ""))).await;
    assert_eq!(labels(&reply), ["Language", "English", "French"]);
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: 3,
                ..Default::default()
            }),
        ),
    )
    .await;
    assert_eq!(labels(&reply), ["Language: French"], "{}", reply.text);
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn an_actions_listing_comes_after_the_transitions_each_ending_one_starts() {
    let (controller, worker, _dir, mut tool) = on_page("/dialog").await;
    let reply = acted(&mut tool, act("waiting", wait(0.0, ""))).await;
    assert!(
        reply
            .text
            .ends_with("[1] button \"Behind\" (covered)\n[2] button \"Close\""),
        "{}",
        reply.text
    );
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: 2,
                ..Default::default()
            }),
        ),
    )
    .await;
    assert!(
        reply.text.ends_with("\n[1] button \"Behind\""),
        "the dialog, then its backdrop, faded and gone: {}",
        reply.text
    );
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn wait_alone_waits_until_the_dom_stops_changing() {
    let (controller, worker, _dir, mut tool) = on_page("/loading").await;
    let reply = acted(&mut tool, act("waiting", wait(0.0, ""))).await;
    assert!(
        reply.text.starts_with("The page is quiet."),
        "{}",
        reply.text
    );
    assert_eq!(labels(&reply), ["Loaded"], "{}", reply.text);
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn wait_alone_on_a_page_that_never_stops_returns_at_15_s_saying_so() {
    let (controller, worker, _dir, mut tool) = on_page("/clock").await;
    let started = Instant::now();
    let reply = acted(&mut tool, act("waiting", wait(0.0, ""))).await;
    let took = started.elapsed();
    assert!(
        reply
            .text
            .starts_with("Waited 15 s; the page never stopped changing."),
        "{}",
        reply.text
    );
    assert!(
        took >= Duration::from_secs(15) && took < Duration::from_secs(25),
        "took {took:?}"
    );
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn wait_for_text_returns_when_it_appears_and_says_so_when_it_does_not() {
    let (controller, worker, _dir, mut tool) = on_page("/confirm").await;
    let reply = acted(&mut tool, act("waiting", wait(0.0, "Order confirmed"))).await;
    assert!(
        reply.text.starts_with("'Order confirmed' is on the page."),
        "{}",
        reply.text
    );
    let extract = acted(&mut tool, act("waiting", Action::Extract(ExtractAction {}))).await;
    assert!(extract.text.contains("Order confirmed"), "{}", extract.text);

    let started = Instant::now();
    let reply = acted(&mut tool, act("waiting", wait(1.0, "Order cancelled"))).await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(
        reply
            .text
            .starts_with("Waited 1.0 s; 'Order cancelled' did not appear on the page."),
        "{}",
        reply.text
    );

    // Bad input changes nothing and says what would do.
    let refused = tool
        .act(act("waiting", wait(0.0, "   ")))
        .await
        .expect_err("only spaces");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().contains("some text"),
        "{}",
        refused.message()
    );
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn navigate_and_click_wait_for_what_an_app_sends_over_its_websocket() {
    let (controller, worker, _dir, mut tool, reply) = opened("/socket-app").await;
    assert_eq!(labels(&reply), ["Amount", "Compute"], "{}", reply.text);
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: 2,
                ..Default::default()
            }),
        ),
    )
    .await;
    assert_eq!(
        labels(&reply),
        ["Amount", "Compute", "Copy 83.33"],
        "{}",
        reply.text
    );
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn navigate_waits_for_an_app_that_builds_itself_after_its_load() {
    let (controller, worker, _dir, _tool, reply) = opened("/built-after-load").await;
    assert_eq!(labels(&reply), ["Name", "Submit"], "{}", reply.text);
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn a_page_that_polls_after_its_load_does_not_hold_navigate_to_its_bound() {
    let (controller, worker, _dir, mut tool, first) = opened_with("/late", |config| {
        config.controller.settle_ms = HELD_BOUND_MS
    })
    .await;
    let started = Instant::now();
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Navigate(NavigateAction {
                url: first.url.replace("/late", "/polling"),
            }),
        ),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(labels(&reply), ["Mark read"], "{}", reply.text);
    // Requests after the load count for 1.5 s, plus 0.25 s.
    assert!(took < HELD, "the navigate took {took:?}");
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn a_page_with_a_web_worker_does_not_hold_navigate_to_its_bound() {
    let (controller, worker, _dir, mut tool, first) = opened_with("/late", |config| {
        config.controller.settle_ms = HELD_BOUND_MS
    })
    .await;
    let started = Instant::now();
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Navigate(NavigateAction {
                url: first.url.replace("/late", "/with-worker"),
            }),
        ),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(reply.title, "Worker", "{}", reply.text);
    // The worker's script is asked for by the page, but its end is told to the worker alone.
    assert!(took < HELD, "the navigate took {took:?}");
    // And the worker runs: its answer reaches the page (when is the worker's business).
    let answered = acted(&mut tool, act("waiting", wait(10.0, "Answered hi"))).await;
    assert_eq!(labels(&answered), ["Answered hi"], "{}", answered.text);
    controller.stop().await;
    worker.stop().await;
}

/// Typing's reply shows what the page drew once typing paused, not the page before it asked.
#[tokio::test]
async fn typing_into_a_box_that_waits_for_a_pause_is_answered_with_what_the_pause_brought() {
    let (controller, worker, _dir, mut tool, opened) = opened("/suggest").await;
    assert_eq!(labels(&opened), ["Plain search", "Rearmed search"]);
    for (n, box_name) in [(1, "plain"), (2, "rearmed")] {
        let text = format!("fern {box_name}");
        let reply = acted(
            &mut tool,
            act(
                "waiting",
                Action::Type(TypeAction {
                    n,
                    text: text.clone(),
                }),
            ),
        )
        .await;
        assert_eq!(
            labels(&reply)[2..],
            [format!("{text} one"), format!("{text} two")],
            "{}",
            reply.text
        );
    }
    controller.stop().await;
    worker.stop().await;
}

/// A click's reply shows what the timers its handler began drew, when they are short (up to
/// 1 s), and not what the long ones will.
#[tokio::test]
async fn a_clicks_short_timers_fire_before_its_reply_and_long_ones_do_not_hold_it() {
    let (controller, worker, _dir, mut tool, opened) = opened("/delayed-menu").await;
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: element(&opened, "Options"),
                ..Default::default()
            }),
        ),
    )
    .await;
    assert_eq!(
        labels(&reply),
        ["Options", "Undo", "Rename", "Delete"],
        "{}",
        reply.text
    );
    controller.stop().await;
    worker.stop().await;
}

/// What a field holds is on the page for `wait --text` and `extract` (an app's answer in a
/// read-only box), each field named as the listing names it, what a password field holds
/// never.
#[tokio::test]
async fn an_answer_in_a_field_is_waited_for_and_read_and_a_password_is_not() {
    let (controller, worker, _dir, mut tool, opened) = opened("/answer-box").await;
    let ask = element(&opened, "Ask");
    acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: ask,
                ..Default::default()
            }),
        ),
    )
    .await;
    let waited = acted(&mut tool, act("waiting", wait(10.0, "answer is 42"))).await;
    assert!(
        waited.text.starts_with("'answer is 42' is on the page."),
        "{}",
        waited.text
    );
    let read = acted(&mut tool, act("waiting", Action::Extract(ExtractAction {}))).await;
    assert!(
        read.text.ends_with(
            "What its fields hold:\n\"Answer\": The answer is 42\n\"Rename list\": Groceries"
        ),
        "{}",
        read.text
    );
    let secret = acted(&mut tool, act("waiting", wait(1.0, "hunter2"))).await;
    assert!(
        secret
            .text
            .contains("'hunter2' did not appear on the page."),
        "{}",
        secret.text
    );
    controller.stop().await;
    worker.stop().await;
}

/// A request the page keeps open since well before an action (a long poll) is not the action's
/// to wait for.
#[tokio::test]
async fn a_request_held_open_since_before_an_action_does_not_hold_it_to_its_bound() {
    let (controller, worker, _dir, mut tool, opened) = opened_with("/long-poll", |config| {
        config.controller.settle_ms = HELD_BOUND_MS
    })
    .await;
    // The page's poll has been open a while (the time is the condition, not an event).
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let started = Instant::now();
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: element(&opened, "Press"),
                ..Default::default()
            }),
        ),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(labels(&reply), ["Pressed"], "{}", reply.text);
    assert!(took < HELD, "the click took {took:?}");
    controller.stop().await;
    worker.stop().await;
}

#[tokio::test]
async fn a_websocket_that_never_stops_does_not_hold_an_action_to_its_bound() {
    let (controller, worker, _dir, mut tool, _) = opened_with("/ticker-page", |config| {
        config.controller.settle_ms = HELD_BOUND_MS
    })
    .await;
    let started = Instant::now();
    let reply = acted(
        &mut tool,
        act(
            "waiting",
            Action::Click(ClickAction {
                n: 1,
                ..Default::default()
            }),
        ),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(labels(&reply), ["Bought"], "{}", reply.text);
    // The socket counts for 1.5 s after the click, plus 0.5 s.
    assert!(took < HELD, "the click took {took:?}");
    controller.stop().await;
    worker.stop().await;
}
