//! The benchmark: our browser tool against Python Playwright on the same machine, the same
//! Chromium and the same local pages, in one run; plus the layers of our own stack and a few
//! scale figures. Writes the table to BENCHMARKS.md (or `--out`).
//!
//! Run: `tests/bench.sh` (installs Playwright from PyPI when missing, builds in release mode).
//!
//! Per step it reports the median and p95 of:
//! - **reply**: `BrowserTool.Act` over gRPC to `serve`'s controller (worker in-process) until the
//!   reply with the listing is back — what the model waits for;
//! - **frame**: from the same call until the frame reaches a `WatchFrames` subscriber;
//! - **worker ops**: the same work as bare ops over gRPC to a worker (the listing and the
//!   screenshot in parallel, as the controller does them);
//! - **in-process**: the same ops on the worker's `ChromiumBackend` with no gRPC at all;
//! - **Playwright**: its full step (action + the same listing + JPEG q70), and the ratios.

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nanomuse_controller::listing::LIST_JS;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use serde_json::{Value, json};
use support::*;

#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    p95: f64,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let rank = ((samples.len() as f64) * 0.95).ceil() as usize;
    Stats {
        median: ms(samples[samples.len() / 2]),
        p95: ms(samples[rank.clamp(1, samples.len()) - 1]),
    }
}

struct Options {
    runs: usize,
    warmup: usize,
    out: String,
    python: String,
}

fn options() -> Options {
    let mut options = Options {
        runs: 30,
        warmup: 5,
        out: "BENCHMARKS.md".into(),
        python: "python3".into(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        match (pair[0].as_str(), pair.get(1)) {
            ("--runs", Some(v)) => options.runs = v.parse().expect("--runs N"),
            ("--warmup", Some(v)) => options.warmup = v.parse().expect("--warmup N"),
            ("--out", Some(v)) => options.out = v.clone(),
            ("--python", Some(v)) => options.python = v.clone(),
            (flag, _) => panic!("unknown flag {flag}; use --runs --warmup --out --python"),
        }
    }
    options
}

/// Times `step` after `warmup` untimed runs.
async fn measure<F, Fut>(options: &Options, mut step: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..options.warmup {
        step().await;
    }
    let mut samples = Vec::with_capacity(options.runs);
    for _ in 0..options.runs {
        let started = Instant::now();
        step().await;
        samples.push(started.elapsed());
    }
    samples
}

/// The steps, each a page to be on and an action on it.
#[derive(Clone, Copy)]
enum Step {
    Navigate(&'static str),
    Click,
    Type,
    Extract,
    Screenshot,
    Fetch,
}

const STEPS: &[(&str, Step)] = &[
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

/// Puts the page where a step starts (untimed).
async fn prepare_bare(backend: &dyn Backend, session: &Option<Session>, site: &str, step: Step) {
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
        Step::Click => Action::Click(ClickAction { n: number("Press") }),
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

/// Proportional set size of the processes whose command line names `needle` and all their
/// descendants (Chromium's renderers do not repeat the profile path), in MiB.
fn pss_mib(needle: &str) -> f64 {
    let mut parents = std::collections::HashMap::new();
    let mut roots = std::collections::HashSet::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        parents.insert(pid, ppid.unwrap_or(0));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            roots.insert(pid);
        }
    }
    let in_tree = |mut pid: u32| loop {
        if roots.contains(&pid) {
            return true;
        }
        match parents.get(&pid) {
            Some(&parent) if parent > 1 => pid = parent,
            _ => return false,
        }
    };
    let mut kib = 0u64;
    for &pid in parents.keys().filter(|&&pid| in_tree(pid)) {
        let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else {
            continue;
        };
        for line in rollup.lines() {
            if let Some(value) = line.strip_prefix("Pss:") {
                kib += value
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0);
            }
        }
    }
    kib as f64 / 1024.0
}

fn playwright(options: &Options, site: &str) -> Result<BTreeMap<String, Stats>, String> {
    let dir = tempfile::tempdir().unwrap();
    let list_js = dir.path().join("list.js");
    let out = dir.path().join("peer.json");
    std::fs::write(&list_js, LIST_JS).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/playwright_peer.py");
    let status = std::process::Command::new(&options.python)
        .arg(script)
        .args([
            "--base",
            site,
            "--runs",
            &options.runs.to_string(),
            "--warmup",
            &options.warmup.to_string(),
        ])
        .arg("--list-js")
        .arg(&list_js)
        .arg("--out")
        .arg(&out)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", options.python))?;
    if !status.success() {
        return Err(format!("the Playwright peer failed ({status})"));
    }
    let value: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    Ok(value["steps"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, s)| {
            let stats = Stats {
                median: s["median_ms"].as_f64().unwrap(),
                p95: s["p95_ms"].as_f64().unwrap(),
            };
            (name.clone(), stats)
        })
        .collect())
}

#[tokio::main]
async fn main() {
    let options = options();
    let started = Instant::now();
    let address = serve_site().await;
    let site = format!("http://{address}");
    let dir = tempfile::tempdir().unwrap();

    // Our stack: `serve` (controller with its worker in-process) and a separate gRPC worker.
    let mut serve_config = controller_config(&dir.path().join("controller"));
    serve_config.controller.queue_deadline_ms = 60_000;
    serve_config.worker = test_config(&dir.path().join("serve-profiles"));
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let serve = tokio::spawn(nanomuse_controller::serve::run_embedded(
        serve_config,
        "127.0.0.1:0",
        shutdown.clone(),
        move |address| {
            let _ = ready_tx.send(address);
        },
    ));
    let controller_address = ready_rx.await.unwrap();
    let worker = Worker::start(test_config(&dir.path().join("worker-profiles"))).await;
    let in_process = Arc::new(nanomuse_worker::ChromiumBackend::new(Arc::new(
        test_config(&dir.path().join("inprocess-profiles")),
    )));

    let mut tool = nanomuse_proto::browser_tool_client::BrowserToolClient::connect(format!(
        "http://{controller_address}"
    ))
    .await
    .unwrap()
    .max_decoding_message_size(64 * 1024 * 1024);

    let mut rows: Vec<(String, [Option<Stats>; 5])> = Vec::new();
    for (name, step) in STEPS {
        let step = *step;
        // In-process and over gRPC: bare ops.
        let mut bare = Vec::new();
        for (label, backend) in [
            ("in-process", in_process.clone() as Arc<dyn Backend>),
            ("grpc", Arc::new(worker.backend.clone())),
        ] {
            let session = Some(Session::new("bench", label, *name));
            backend
                .open(OpenRequest {
                    session: session.clone(),
                    ..Default::default()
                })
                .await
                .unwrap();
            prepare_bare(backend.as_ref(), &session, &site, step).await;
            bare.push(stats(
                measure(&options, || {
                    bare_step(backend.as_ref(), &session, &site, step)
                })
                .await,
            ));
        }
        // The controller: time to reply and time to frame.
        let thread = format!("bench-{name}");
        let act = |action| ActRequest {
            thread: thread.clone(),
            workspace: "bench".into(),
            action: Some(action),
            ..Default::default()
        };
        let mut frames = tool
            .clone()
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
        for run in 0..options.warmup + options.runs {
            let started = Instant::now();
            let reply = tool
                .act(act(action_for(step, &site, prepared.as_ref())))
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
            if run >= options.warmup {
                replies.push(reply_time);
                to_frame.extend(frame_time);
            }
        }
        let frame_stats = (!to_frame.is_empty()).then(|| stats(to_frame));
        rows.push((
            name.to_string(),
            [
                Some(stats(replies)),
                frame_stats,
                Some(bare[1]),
                Some(bare[0]),
                None,
            ],
        ));
        eprintln!("{name} done ({:.0} s)", started.elapsed().as_secs_f64());
    }

    // Scale: concurrent threads on one worker, four workspaces.
    let mut scale = Vec::new();
    for threads in [1usize, 4, 16] {
        let began = Instant::now();
        let mut tasks = Vec::new();
        for t in 0..threads {
            let mut tool = tool.clone();
            let site = site.clone();
            tasks.push(tokio::spawn(async move {
                let mut times = Vec::new();
                for _ in 0..3 {
                    let request = ActRequest {
                        thread: format!("scale-{threads}-{t}"),
                        workspace: format!("scale-{}", t % 4),
                        action: Some(Action::Navigate(NavigateAction {
                            url: format!("{site}/page"),
                        })),
                        ..Default::default()
                    };
                    let at = Instant::now();
                    match tokio::time::timeout(Duration::from_secs(10), tool.act(request)).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(status)) => eprintln!("scale: {}", status.message()),
                        Err(_) => eprintln!("scale: no reply within 10 s"),
                    }
                    times.push(at.elapsed());
                }
                times
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap());
        }
        let count = all.len();
        scale.push((
            threads,
            count as f64 / began.elapsed().as_secs_f64(),
            stats(all),
        ));
    }
    let serve_profiles = dir.path().join("serve-profiles");
    let memory = pss_mib(
        &serve_profiles
            .join("local")
            .join("scale-0")
            .display()
            .to_string(),
    );

    // Cold start of a profile: the first open of a new workspace launches its browser.
    let mut cold = Vec::new();
    for i in 0..5 {
        let session = Some(Session::new("bench", format!("cold-{i}"), "p"));
        let at = Instant::now();
        in_process
            .open(OpenRequest {
                session,
                ..Default::default()
            })
            .await
            .unwrap();
        cold.push(at.elapsed());
    }
    let cold = stats(cold);

    // Memory: one profile with one page, then with one and four more.
    let memory_profile = dir
        .path()
        .join("inprocess-profiles")
        .join("bench")
        .join("memory");
    let needle = memory_profile.display().to_string();
    let mut pss = Vec::new();
    for pages in [1usize, 2, 5] {
        for page in 0..pages {
            let session = Some(Session::new("bench", "memory", format!("p{page}")));
            in_process
                .open(OpenRequest {
                    session: session.clone(),
                    ..Default::default()
                })
                .await
                .unwrap();
            in_process
                .navigate(NavigateRequest {
                    session,
                    url: format!("{site}/page"),
                    timeout_ms: 0,
                })
                .await
                .unwrap();
        }
        pss.push((pages, pss_mib(&needle)));
    }

    // A relaunch: the browser killed, the next op brings it and its page back.
    let relaunch_session = Some(Session::new("bench", "memory", "p0"));
    let mut relaunch = Vec::new();
    for _ in 0..3 {
        if let Some(pid) = chromium_pid(&memory_profile.join("browser-profile")) {
            std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .unwrap();
            while !process_ended(pid) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        let at = Instant::now();
        in_process
            .state(StateRequest {
                session: relaunch_session.clone(),
            })
            .await
            .unwrap();
        relaunch.push(at.elapsed());
    }
    let relaunch = stats(relaunch);

    // The frame store: writes of real-sized frames, each flushed as the controller does.
    let store =
        nanomuse_controller::store::SledStore::open(&dir.path().join("store-bench")).unwrap();
    let shot = in_process
        .screenshot(ScreenshotRequest {
            session: relaunch_session.clone(),
            quality: 70,
        })
        .await
        .unwrap();
    let frame_bytes = shot.jpeg.len();
    let writes = 200;
    let at = Instant::now();
    for i in 0..writes {
        use nanomuse_controller::store::Store;
        let frame = Frame {
            id: store.next_id().unwrap().to_string(),
            thread: format!("t{}", i % 8),
            jpeg: shot.jpeg.clone(),
            ..Default::default()
        };
        store.add_frame("bench", &frame).unwrap();
        store.flush().await.unwrap();
    }
    let frame_writes = writes as f64 / at.elapsed().as_secs_f64();

    let peer = playwright(&options, &site);
    shutdown.cancel();
    serve.await.unwrap().unwrap();
    worker.stop().await;
    in_process.pool.close_all().await;

    let mut md = String::new();
    writeln!(md, "# Benchmarks\n").unwrap();
    writeln!(
        md,
        "Generated by `tests/bench.sh` (`cargo run --release -p nanomuse-tests --example bench -- --runs {} --warmup {}`) \
         on {} cores, Chromium 156 (Debian), in {:.0} s. Milliseconds, median / p95 of {} runs.\n",
        options.runs,
        options.warmup,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        started.elapsed().as_secs_f64(),
        options.runs
    )
    .unwrap();
    writeln!(md, "- **reply**: `Act` over gRPC to `serve` until the reply (listing included) is back.\n- **frame**: the same call until its frame reaches a `WatchFrames` subscriber.\n- **worker ops**: the same ops bare over gRPC to a worker (listing ∥ screenshot).\n- **in-process**: the same ops on `ChromiumBackend`, no gRPC.\n- **Playwright**: Python Playwright's full step (action + the same listing + JPEG q70) on the same pages.\n").unwrap();
    writeln!(
        md,
        "| step | reply | frame | worker ops | in-process | Playwright | reply / PW | frame / PW |"
    )
    .unwrap();
    writeln!(md, "|---|---|---|---|---|---|---|---|").unwrap();
    let fmt = |s: Option<Stats>| {
        s.map_or("—".to_string(), |s| {
            format!("{:.1} / {:.1}", s.median, s.p95)
        })
    };
    for (name, [reply, frame, ops, inproc, _]) in &rows {
        let pw = peer.as_ref().ok().and_then(|p| p.get(name)).copied();
        let ratio = |ours: Option<Stats>| match (ours, pw) {
            (Some(o), Some(p)) => format!("{:.2}×", o.median / p.median),
            _ => "—".into(),
        };
        writeln!(
            md,
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            fmt(*reply),
            fmt(*frame),
            fmt(*ops),
            fmt(*inproc),
            fmt(pw),
            ratio(*reply),
            ratio(*frame)
        )
        .unwrap();
    }
    if let Err(error) = &peer {
        writeln!(md, "\nPlaywright was not measured: {error}").unwrap();
    }
    writeln!(
        md,
        "\n## Scale (serve, one worker in-process, `navigate` on four workspaces)\n"
    )
    .unwrap();
    writeln!(
        md,
        "| concurrent threads | actions/s | median | p95 |\n|---|---|---|---|"
    )
    .unwrap();
    for (threads, rate, s) in scale {
        writeln!(
            md,
            "| {threads} | {rate:.1} | {:.1} | {:.1} |",
            s.median, s.p95
        )
        .unwrap();
    }
    writeln!(md, "\n## Profiles\n").unwrap();
    writeln!(
        md,
        "- cold start of a profile (launch + first page): {:.0} ms median, {:.0} ms p95",
        cold.median, cold.p95
    )
    .unwrap();
    writeln!(
        md,
        "- PSS of one live profile's Chromium with its pages after the scale run: {memory:.0} MiB"
    )
    .unwrap();
    for (pages, mib) in &pss {
        writeln!(
            md,
            "- PSS of a profile with {pages} page(s) on the small page: {mib:.0} MiB"
        )
        .unwrap();
    }
    writeln!(
        md,
        "- relaunch after a SIGKILL (next op until answered, page back at its URL): {:.0} ms median",
        relaunch.median
    )
    .unwrap();
    writeln!(
        md,
        "\n## Frame store\n\n- sled, {frame_bytes} B frames, flushed after each write: {frame_writes:.0} writes/s"
    )
    .unwrap();
    std::fs::write(&options.out, md).unwrap();
    eprintln!(
        "wrote {} in {:.0} s",
        options.out,
        started.elapsed().as_secs_f64()
    );
}
