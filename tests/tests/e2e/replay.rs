//! Replay over real sockets and in a real browser: a thread switched to recording keeps every
//! frame past the card's dozen, each with its action; the replay page, opened in a second
//! headless Chromium with the tenant's token as the card takes it, lists them all in order
//! with the hold among them and steps through them; the one-file export holds every frame and
//! picture and replays from its own bytes; the password the user typed during the hold is in
//! none of it; and another tenant gets exactly what a thread nobody has gets. The page's
//! pictures at 1280 and 412 px and the export are kept in `target/card/replay-*` for review.

use std::collections::HashMap;

use base64::Engine as _;
use nanomuse_common::tokens::token_digest;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};

use crate::card::{CENTRE_JS, UserBrowser};

const TOKEN_A: &str = "token-of-tenant-a-replay-0001";
const TOKEN_B: &str = "token-of-tenant-b-replay-0001";
const THREAD: &str = "replayed";
/// What the user types into the password field during the hold.
const SECRET: &str = "hunter2-never-recorded";

/// The controller's HTTP API as `token`: the status, the headers and the body.
async fn http(
    base: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: &str,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let client = reqwest::Client::new();
    let url = format!("{base}{path}");
    let mut request = match method {
        "GET" => client.get(url),
        _ => client.post(url),
    };
    request = request.header("authorization", format!("Bearer {token}"));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

async fn json_of(base: &str, method: &str, path: &str, body: Option<Value>, token: &str) -> Value {
    let (status, _, bytes) = http(base, method, path, body, token).await;
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {value}"
    );
    value
}

/// `request` as tenant A; its reply.
async fn act_a(tool: &mut Tool, request: ActRequest) -> ActReply {
    let what = format!("{:?}", request.action);
    tool.act(bearer(request, Some(TOKEN_A)))
        .await
        .unwrap_or_else(|status| panic!("{what}: {:?} {}", status.code(), status.message()))
        .into_inner()
}

/// Agent action `action` (named `name`) as tenant A: its reply and the (action, caption) the
/// replay should show for its frame.
async fn agent_step(tool: &mut Tool, name: &str, action: Action) -> (ActReply, (String, String)) {
    let reply = act_a(tool, act(THREAD, action)).await;
    let caption = reply.frame.as_ref().expect("a frame").caption.clone();
    (reply, (name.to_string(), caption))
}

/// Taps `selector` on the page in `browser`, scrolled into view first.
async fn press(browser: &UserBrowser<'_>, selector: &str) {
    browser
        .evaluate(
            "(selector) => document.querySelector(selector).scrollIntoView({ block: 'center' })",
            json!(selector),
        )
        .await;
    browser
        .tap(browser.evaluate(CENTRE_JS, json!(selector)).await)
        .await;
}

/// Keeps a picture of the page `browser` shows in `target/card/<name>.jpg`, for review.
async fn keep_picture(browser: &UserBrowser<'_>, name: &str) {
    let shot = browser
        .worker
        .backend
        .screenshot(ScreenshotRequest {
            session: browser.session(),
            quality: 85,
        })
        .await
        .unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/card");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.jpg")), &shot.jpeg).unwrap();
}

/// The (action, caption) of a frame as the replay JSON gives it.
fn step(frame: &Value) -> (String, String) {
    (
        frame["action"].as_str().unwrap().to_string(),
        frame["caption"].as_str().unwrap().to_string(),
    )
}

/// The timeline as the replay page shows it: each entry's kind, action, caption and text.
const TIMELINE_JS: &str = r##"() => [...document.querySelectorAll("#timeline li")].map((li) => ({
  hold: li.classList.contains("hold"),
  action: li.querySelector(".action")?.textContent ?? null,
  caption: li.querySelector(".caption")?.textContent ?? null,
  text: li.textContent,
}))"##;

/// What is cut at the window's edge on the replay page, or makes it scroll sideways.
const LAYOUT_JS: &str = r##"() => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  if (document.documentElement.scrollWidth > width)
    problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  for (const element of document.querySelectorAll("h1, #summary, #export, #picture, #step, #prev, #next, #position, #timeline")) {
    const box = element.getBoundingClientRect();
    if (box.width > 0 && (box.left < -0.5 || box.right > width + 0.5))
      problems.push(`${element.id || element.tagName} is cut: ${box.left}..${box.right} of ${width}`);
  }
  return problems;
}"##;

/// Where the replay page stands: its position line, the step's text and the picture shown.
const SHOWN_JS: &str = r##"() => ({
  position: document.getElementById("position").textContent,
  step: document.getElementById("step").textContent,
  src: document.getElementById("picture").getAttribute("src"),
  next: document.getElementById("next").disabled,
})"##;

/// Checks the replay page `browser` shows: every frame of `expected` in order, with the hold
/// between the frames before it and the user's, then steps through them with Next (each
/// showing its picture, `pictures[i]` as the page's `src`, loaded), back with Previous, and to
/// one from the list.
async fn check_page(
    browser: &UserBrowser<'_>,
    expected: &[(String, String)],
    pictures: &[String],
    hold_before: usize,
) {
    let count = expected.len();
    browser
        .wait_for(&format!(
            "document.querySelectorAll('#timeline li.frame').length === {count} && \
             document.getElementById('picture').complete && \
             document.getElementById('picture').naturalWidth > 0"
        ))
        .await;
    let entries = browser.evaluate(TIMELINE_JS, Value::Null).await;
    let entries = entries.as_array().unwrap();
    let frames: Vec<(String, String)> = entries
        .iter()
        .filter(|e| e["hold"] == false)
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["caption"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(frames, expected, "the page lists every frame in order");
    let holds: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e["hold"] == true)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(
        holds,
        [hold_before],
        "the hold sits where it was opened: {entries:?}"
    );
    let hold = entries[hold_before]["text"].as_str().unwrap();
    assert!(
        hold.contains("The agent handed the page to the user (sign in for me)")
            && hold.contains("handed back after"),
        "{hold}"
    );

    for (at, (action, caption)) in expected.iter().enumerate() {
        let shown = browser.evaluate(SHOWN_JS, Value::Null).await;
        assert_eq!(shown["position"], format!("{} of {count}", at + 1));
        assert!(
            shown["src"] == pictures[at].as_str(),
            "step {at}: another picture"
        );
        let text = shown["step"].as_str().unwrap();
        assert!(
            text.starts_with(action.as_str()) && text.contains(caption.as_str()),
            "step {at}: {text:?}, not {action} {caption}"
        );
        browser
            .wait_for(
                "document.getElementById('picture').complete && \
                 document.getElementById('picture').naturalWidth > 0",
            )
            .await;
        if at + 1 < count {
            press(browser, "#next").await;
            let next = format!("{} of {count}", at + 2);
            browser
                .wait_for(&format!(
                    "document.getElementById('position').textContent === {next:?}"
                ))
                .await;
        } else {
            assert_eq!(shown["next"], true, "Next ends at the last frame");
        }
    }
    press(browser, "#prev").await;
    let back = format!("{} of {count}", count - 1);
    browser
        .wait_for(&format!(
            "document.getElementById('position').textContent === {back:?}"
        ))
        .await;
    press(browser, "#timeline li:nth-child(2) button").await;
    browser
        .wait_for(&format!(
            "document.getElementById('position').textContent === '2 of {count}'"
        ))
        .await;
}

#[tokio::test]
async fn a_recording_thread_replays_every_frame_in_order_with_its_actions_to_its_tenant_only() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, worker) = controller_with_worker(dir.path(), |config| {
        config.controller.tokens = HashMap::from([
            (token_digest(TOKEN_A), "tenant-a".to_string()),
            (token_digest(TOKEN_B), "tenant-b".to_string()),
        ]);
    })
    .await;
    let base = format!("http://{}", controller.address);
    let mut tool = controller.tool().await;
    let page = format!("http://{site}/page");

    // The thread starts (recording is off by default), then is switched on.
    act_a(&mut tool, act(THREAD, navigate(&page))).await;
    let switched = json_of(
        &base,
        "POST",
        &format!("/api/browser/{THREAD}/recording"),
        Some(json!({"on": true})),
        TOKEN_A,
    )
    .await;
    assert_eq!(switched, json!({"thread": THREAD, "recording": true}));

    // Agent actions of every kind that makes a frame; their replies name each frame.
    let mut expected: Vec<(String, String)> = Vec::new();
    let (opened, s) = agent_step(&mut tool, "navigate", navigate(&page)).await;
    expected.push(s);
    let press = element(&opened, "Press");
    let steps = [
        (
            "click",
            Action::Click(ClickAction {
                n: press,
                ..Default::default()
            }),
        ),
        ("scroll", Action::Scroll(ScrollAction { dy: 300.0 })),
        ("scroll", Action::Scroll(ScrollAction { dy: -300.0 })),
        ("key", Action::Key(KeyAction { key: "Tab".into() })),
        ("navigate", navigate(format!("http://{site}/second"))),
        ("back", Action::Back(BackAction {})),
        ("screenshot", Action::Screenshot(ScreenshotAction {})),
        ("navigate", navigate(format!("http://{site}/login"))),
    ];
    for (name, action) in steps {
        expected.push(agent_step(&mut tool, name, action).await.1);
    }

    // The hold: the agent hands over, the user taps the password field and types into it
    // through the API (as the card does), then presses Done.
    act_a(
        &mut tool,
        act(
            THREAD,
            Action::HandOver(HandOverAction {
                reason: "sign in for me".into(),
            }),
        ),
    )
    .await;
    let hold_before = expected.len();
    let state = json_of(&base, "GET", "/api/state", None, TOKEN_A).await;
    let hold = state["holds"][0]["id"].as_str().unwrap().to_string();
    for (kind, body) in [
        ("tap", json!({"x": 100, "y": 53})),
        ("type", json!({"text": SECRET})),
    ] {
        let path = format!("/api/browser/{THREAD}/{kind}");
        let reply = json_of(&base, "POST", &path, Some(body), TOKEN_A).await;
        let caption = reply["frame"]["caption"].as_str().unwrap().to_string();
        expected.push((format!("user_{kind}"), caption));
    }
    json_of(
        &base,
        "POST",
        &format!("/api/holds/{hold}/done"),
        Some(json!({})),
        TOKEN_A,
    )
    .await;
    for dy in [100.0, -100.0, 50.0] {
        expected.push(
            agent_step(&mut tool, "scroll", Action::Scroll(ScrollAction { dy }))
                .await
                .1,
        );
    }
    assert!(expected.len() > 13, "{}", expected.len());
    assert!(
        expected
            .iter()
            .all(|(_, caption)| !caption.contains(SECRET))
    );

    // The timeline: every recorded frame in order, each with its action; the hold; pictures
    // past the card's dozen still served; the secret nowhere.
    let replay_path = format!("/api/browser/{THREAD}/replay");
    let replay = json_of(&base, "GET", &replay_path, None, TOKEN_A).await;
    let frames = replay["frames"].as_array().unwrap();
    assert_eq!(frames.iter().map(step).collect::<Vec<_>>(), expected);
    assert_eq!(replay["recording"], true);
    assert_eq!(
        replay["holds"].as_array().unwrap().len(),
        1,
        "{}",
        replay["holds"]
    );
    assert_eq!(replay["holds"][0]["opened_by"], "agent");
    assert_eq!(replay["holds"][0]["state"], "done");
    assert!(!replay.to_string().contains(SECRET));
    let mut pictures = Vec::new();
    for frame in frames {
        let (status, headers, jpeg) =
            http(&base, "GET", frame["jpeg"].as_str().unwrap(), None, TOKEN_A).await;
        assert!(
            status == 200 && headers["content-type"] == "image/jpeg",
            "{status} {headers:?}"
        );
        assert_eq!(&jpeg[..2], &[0xFF, 0xD8]);
        pictures.push(jpeg);
    }

    // The replay page in the user's own (headless) browser, with the token in its URL.
    let users = Worker::start(test_config(&dir.path().join("user"))).await;
    let browser = UserBrowser {
        worker: &users,
        page: "replay",
    };
    users
        .backend
        .open(open_request(browser.page, false))
        .await
        .unwrap();
    users
        .backend
        .navigate(NavigateRequest {
            session: browser.session(),
            url: format!("{base}/replay/{THREAD}?token={TOKEN_A}"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    let served: Vec<String> = frames
        .iter()
        .map(|f| format!("{}?token={TOKEN_A}", f["jpeg"].as_str().unwrap()))
        .collect();
    check_page(&browser, &expected, &served, hold_before).await;
    // Its script and style run by their hashes alone, and it is framed by this server only.
    let (status, headers, _) =
        http(&base, "GET", &format!("/replay/{THREAD}"), None, TOKEN_A).await;
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(
        status == 200
            && policy.contains("script-src 'sha256-")
            && policy.contains("frame-ancestors 'self'")
            && !policy.contains("unsafe"),
        "{status} {policy}"
    );
    // On a phone's 412 px nothing is cut or scrolls sideways.
    let phone = UserBrowser {
        worker: &users,
        page: "replay-phone",
    };
    users
        .backend
        .open(open_request(phone.page, true))
        .await
        .unwrap();
    users
        .backend
        .navigate(NavigateRequest {
            session: phone.session(),
            url: format!("{base}/replay/{THREAD}?token={TOKEN_A}"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    phone
        .wait_for(&format!(
            "document.querySelectorAll('#timeline li.frame').length === {} && \
             document.getElementById('picture').naturalWidth > 0",
            expected.len()
        ))
        .await;
    let cut = phone.evaluate(LAYOUT_JS, Value::Null).await;
    assert_eq!(cut, json!([]), "the replay page at 412 px");
    keep_picture(&browser, "replay-1280").await;
    keep_picture(&phone, "replay-412").await;

    // The export: one HTML file with the timeline and every picture inside it.
    let (status, headers, bytes) = http(
        &base,
        "GET",
        &format!("/api/browser/{THREAD}/replay.html"),
        None,
        TOKEN_A,
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        headers["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment"),
        "{headers:?}"
    );
    let export = String::from_utf8(bytes).unwrap();
    let kept = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/card");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(kept.join("replay-export.html"), &export).unwrap();
    assert!(!export.contains(SECRET));
    let open_tag = r#"<script type="application/json" id="replay-data">"#;
    let data = &export[export.find(open_tag).expect("the export's data") + open_tag.len()..];
    let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
    let exported = data["frames"].as_array().unwrap();
    assert_eq!(exported.iter().map(step).collect::<Vec<_>>(), expected);
    let inline: Vec<String> = exported
        .iter()
        .map(|f| f["jpeg"].as_str().unwrap().to_string())
        .collect();
    for (frame, picture) in exported.iter().zip(&pictures) {
        let url = frame["jpeg"].as_str().unwrap();
        let encoded = url.strip_prefix("data:image/jpeg;base64,").expect(url);
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(&decoded, picture, "the exported picture is the frame's");
    }
    // It replays from its own bytes, served from elsewhere with no token.
    let file = axum::Router::new().route(
        "/replay.html",
        axum::routing::get(move || async move { axum::response::Html(export) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, file).await.unwrap() });
    users
        .backend
        .navigate(NavigateRequest {
            session: browser.session(),
            url: format!("http://{elsewhere}/replay.html"),
            timeout_ms: 0,
        })
        .await
        .unwrap();
    check_page(&browser, &expected, &inline, hold_before).await;

    // Tenant B: every replay route on A's thread answers as for a thread nobody has, and
    // changes nothing.
    for (method, path, body) in [
        ("GET", "/replay/{t}", None),
        ("GET", "/api/browser/{t}/replay", None),
        ("GET", "/api/browser/{t}/replay.html", None),
        (
            "POST",
            "/api/browser/{t}/recording",
            Some(json!({"on": false})),
        ),
    ] {
        let (status, _, answer) = http(
            &base,
            method,
            &path.replace("{t}", THREAD),
            body.clone(),
            TOKEN_B,
        )
        .await;
        let (nobodys, _, other) =
            http(&base, method, &path.replace("{t}", "nobody"), body, TOKEN_B).await;
        let answer = String::from_utf8(answer)
            .unwrap()
            .replace(THREAD, "<thread>");
        let other = String::from_utf8(other)
            .unwrap()
            .replace("nobody", "<thread>");
        assert_eq!((status, &answer), (nobodys, &other), "{method} {path} as B");
        assert_eq!(status, 404, "{method} {path} as B: {answer}");
    }
    let again = json_of(&base, "GET", &replay_path, None, TOKEN_A).await;
    assert_eq!(again["recording"], true, "B switched nothing off");
    assert_eq!(again["frames"].as_array().unwrap().len(), expected.len());

    users.stop().await;
    controller.stop().await;
    worker.stop().await;
}
