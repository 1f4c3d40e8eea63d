//! The live take-over on `serve`: the frames a second its WebSocket brings of a page that
//! moves, and input-to-picture — from a key sent over the socket to the first frame after it
//! (the page draws each key it gets; it has no caret, so nothing else repaints it).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use nanomuse_tests::{Live, LiveView, Tool, act, navigate};
use serde_json::json;

use crate::{Runs, Stats, stats};

/// How long the frames of the moving page are counted.
const COUNTED: Duration = Duration::from_secs(3);

/// A page that repaints on every animation frame.
const MOVING: &str = r#"<!doctype html><title>Moving</title>
<div id="box" style="position:absolute;top:40px;width:60px;height:60px;background:#c33"></div>
<script>
  let x = 0;
  const step = () => { x = (x + 7) % 300; document.getElementById("box").style.left = x + "px"; requestAnimationFrame(step); };
  requestAnimationFrame(step);
</script>"#;

/// A page that draws every key it gets, and nothing else.
const KEYS: &str = r#"<!doctype html><title>Keys</title><p id="out"></p>
<script>document.addEventListener("keydown", (e) => { document.getElementById("out").textContent = e.key + " " + performance.now(); });</script>"#;

pub struct LiveRow {
    pub frames_per_second: f64,
    pub input_to_frame: Stats,
}

async fn pages() -> SocketAddr {
    use axum::response::Html;
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/moving", get(|| async { Html(MOVING) }))
        .route("/keys", get(|| async { Html(KEYS) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

/// Opens `thread` on `url` and a hold on it; the hold's id and the live view.
async fn held(tool: &Tool, server: SocketAddr, thread: &str, url: String) -> (String, LiveView) {
    tool.clone().act(act(thread, navigate(url))).await.unwrap();
    let answer = reqwest::Client::new()
        .post(format!("http://{server}/api/holds"))
        .header("content-type", "application/json")
        .body(json!({"thread": thread, "reason": "benchmark"}).to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let hold = answer["hold"]["id"].as_str().unwrap().to_string();
    let mut live = LiveView::connect(&format!("ws://{server}/api/threads/{thread}/live")).await;
    live.frame().await;
    (hold, live)
}

async fn done(server: SocketAddr, hold: &str) {
    reqwest::Client::new()
        .post(format!("http://{server}/api/holds/{hold}/done"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
}

pub async fn measure(tool: &Tool, server: SocketAddr, runs: Runs) -> LiveRow {
    let site = pages().await;

    let (hold, mut live) = held(tool, server, "live-moving", format!("http://{site}/moving")).await;
    let frames = live.frames_within(COUNTED).await;
    let frames_per_second = frames as f64 / COUNTED.as_secs_f64();
    done(server, &hold).await;

    let (hold, mut live) = held(tool, server, "live-keys", format!("http://{site}/keys")).await;
    let mut samples = Vec::with_capacity(runs.timed);
    for run in 0..runs.warmup + runs.timed {
        let sent = Instant::now();
        live.send(json!({"type": "key", "key": "a"})).await;
        let (mut framed, mut answered) = (None, false);
        while framed.is_none() || !answered {
            match live.next(Duration::from_secs(10)).await {
                Some(Live::Frame(_)) if framed.is_none() => framed = Some(sent.elapsed()),
                Some(Live::Frame(_)) => {}
                Some(Live::Told(told)) => {
                    assert_eq!(told["type"], "done", "{told}");
                    answered = true;
                }
                other => panic!("the key brought no frame: {other:?}"),
            }
        }
        if run >= runs.warmup {
            samples.push(framed.unwrap());
        }
    }
    done(server, &hold).await;
    LiveRow {
        frames_per_second,
        input_to_frame: stats(samples),
    }
}
