//! The steps every column times, and the two ways of timing them: as bare backend ops, and as
//! the browser tool's actions over gRPC (`Act`) until the reply and until the frame.

use std::time::{Duration, Instant};

use nanomuse_controller::listing::LIST_JS;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::act_in;
use serde_json::json;

use crate::{Runs, Stats, Tool, measure, stats};

/// The steps, each a page to be on and an action on it.
#[derive(Clone, Copy)]
pub enum Step {
    Navigate(&'static str),
    Click,
    Type,
    Extract,
    Screenshot,
    Fetch,
}

pub const STEPS: &[(&str, Step)] = &[
    ("navigate_small", Step::Navigate("/page")),
    ("navigate_form", Step::Navigate("/login")),
    ("navigate_2000", Step::Navigate("/listing-many")),
    ("navigate_react", Step::Navigate("/fixtures/react.html")),
    ("click", Step::Click),
    ("type", Step::Type),
    ("extract", Step::Extract),
    ("screenshot", Step::Screenshot),
    ("fetch", Step::Fetch),
];

/// Times `step` as bare ops on `backend`, on a page of its own.
pub async fn bare(backend: &dyn Backend, page: &str, site: &str, step: Step, runs: Runs) -> Stats {
    let session = Some(Session::new("bench", "bare", page));
    backend
        .open(OpenRequest {
            session: session.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    if !matches!(step, Step::Navigate(_)) {
        backend
            .navigate(NavigateRequest {
                session: session.clone(),
                url: format!("{site}/page"),
                timeout_ms: 0,
            })
            .await
            .unwrap();
    }
    stats(measure(runs, || bare_step(backend, &session, site, step)).await)
}

/// The same work as the controller's action, as bare ops on `backend`.
async fn bare_step(backend: &dyn Backend, session: &Option<Session>, site: &str, step: Step) {
    let listing = || async {
        let js = backend.evaluate(EvaluateRequest {
            session: session.clone(),
            js: LIST_JS.into(),
            arg_json: json!({"listing_id": "bench", "max": 80}).to_string(),
        });
        let shot = backend.screenshot(ScreenshotRequest {
            session: session.clone(),
            quality: 70,
        });
        let (js, shot) = tokio::join!(js, shot);
        js.unwrap();
        shot.unwrap();
    };
    let settle = || async {
        backend
            .settle(SettleRequest {
                session: session.clone(),
                timeout_ms: 5000,
            })
            .await
            .unwrap();
    };
    match step {
        Step::Navigate(path) => {
            backend
                .navigate(NavigateRequest {
                    session: session.clone(),
                    url: format!("{site}{path}"),
                    timeout_ms: 0,
                })
                .await
                .unwrap();
            settle().await;
            listing().await;
        }
        Step::Click => {
            backend
                .tap(TapRequest {
                    session: session.clone(),
                    x: 110.0,
                    y: 35.0,
                    ..Default::default()
                })
                .await
                .unwrap();
            settle().await;
            listing().await;
        }
        Step::Type => {
            backend
                .evaluate(EvaluateRequest {
                    session: session.clone(),
                    js: "() => document.getElementById('q').focus()".into(),
                    arg_json: String::new(),
                })
                .await
                .unwrap();
            backend
                .r#type(TypeRequest {
                    session: session.clone(),
                    text: "hello world".into(),
                })
                .await
                .unwrap();
            settle().await;
            listing().await;
        }
        Step::Extract => {
            backend
                .evaluate(EvaluateRequest {
                    session: session.clone(),
                    js: "() => document.body.innerText".into(),
                    arg_json: String::new(),
                })
                .await
                .unwrap();
        }
        Step::Screenshot => {
            backend
                .screenshot(ScreenshotRequest {
                    session: session.clone(),
                    quality: 70,
                })
                .await
                .unwrap();
        }
        Step::Fetch => {
            backend
                .fetch(FetchRequest {
                    session: session.clone(),
                    url: format!("{site}/api/whoami"),
                    ..Default::default()
                })
                .await
                .unwrap();
        }
    }
}

fn action_for(step: Step, site: &str, reply: Option<&ActReply>) -> Action {
    let number = |label: &str| {
        reply
            .and_then(|r| r.elements.iter().find(|e| e.label == label))
            .map_or(1, |e| e.n as i64)
    };
    match step {
        Step::Navigate(path) => Action::Navigate(NavigateAction {
            url: format!("{site}{path}"),
        }),
        Step::Click => Action::Click(ClickAction {
            n: number("Press"),
            ..Default::default()
        }),
        Step::Type => Action::Type(TypeAction {
            n: number("q"),
            text: "hello world".into(),
        }),
        Step::Extract => Action::Extract(ExtractAction {}),
        Step::Screenshot => Action::Screenshot(ScreenshotAction {}),
        Step::Fetch => Action::Fetch(FetchAction {
            url: format!("{site}/api/whoami"),
            ..Default::default()
        }),
    }
}

/// A step through the browser tool: until the reply, and until its frame (if it makes one).
pub struct Acted {
    pub reply: Stats,
    pub frame: Option<Stats>,
}

/// The samples of [`Acted`], which blocks of runs add to.
#[derive(Default)]
pub struct Timed {
    reply: Vec<Duration>,
    frame: Vec<Duration>,
}

impl Timed {
    pub fn extend(&mut self, more: Timed) {
        self.reply.extend(more.reply);
        self.frame.extend(more.frame);
    }

    pub fn acted(self) -> Acted {
        Acted {
            reply: stats(self.reply),
            frame: (!self.frame.is_empty()).then(|| stats(self.frame)),
        }
    }
}

/// Times `step` as `Act` calls on `tool`, on a thread of its own, each until the reply and
/// until its frame reaches a `WatchFrames` subscriber.
pub async fn act(tool: &Tool, name: &str, site: &str, step: Step, runs: Runs) -> Acted {
    timed(tool, name, site, step, runs).await.acted()
}

/// [`act`]'s samples.
pub async fn timed(tool: &Tool, name: &str, site: &str, step: Step, runs: Runs) -> Timed {
    let mut tool = tool.clone();
    let thread = format!("bench-{name}");
    let act = |action| act_in(&thread, "bench", action);
    let mut frames = tool
        .watch_frames(WatchFramesRequest {
            thread: thread.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    let prepared = if matches!(step, Step::Navigate(_)) {
        None
    } else {
        let reply = tool
            .act(act(Action::Navigate(NavigateAction {
                url: format!("{site}/page"),
            })))
            .await
            .unwrap()
            .into_inner();
        // As an agent would, the timed step starts once the page's frame is out.
        frames.message().await.unwrap();
        Some(reply)
    };
    let mut replies = Vec::new();
    let mut to_frame = Vec::new();
    for run in 0..runs.warmup + runs.timed {
        let started = Instant::now();
        let reply = tool
            .act(act(action_for(step, site, prepared.as_ref())))
            .await
            .unwrap()
            .into_inner();
        let reply_time = started.elapsed();
        let frame_time = match &reply.frame {
            Some(frame) => loop {
                let next = frames.message().await.unwrap().unwrap();
                if next.id == frame.id {
                    break Some(started.elapsed());
                }
            },
            None => None,
        };
        if run >= runs.warmup {
            replies.push(reply_time);
            to_frame.extend(frame_time);
        }
    }
    Timed {
        reply: replies,
        frame: to_frame,
    }
}
