//! The benchmark: our browser tool against Python Playwright on the same machine, the same
//! Chromium and the same local pages, in one run; plus the layers of our own stack, the
//! controller's own overhead, and a few scale figures. Writes the tables to BENCHMARKS.md (or
//! `--out`); `report` explains every column.
//!
//! Run: `tests/bench.sh` (installs Playwright from PyPI when missing, builds in release mode).
//!
//! Per step it reports the median and p95 of:
//! - **reply**: `BrowserTool.Act` over gRPC until the reply with the listing is back — what the
//!   model waits for — on `serve`'s controller (worker in-process), and on the `controller`
//!   and `worker` binaries run as processes of their own (the deployed topology);
//! - **frame**: from the same call until the frame reaches a `WatchFrames` subscriber;
//! - **worker ops**: the same work as bare ops over gRPC to the `worker` process (the listing
//!   and the screenshot in parallel, as the controller does them);
//! - **in-process**: the same ops on the worker's `ChromiumBackend` with no gRPC at all;
//! - **fake**: the controller alone, over a backend that answers every op at once;
//! - **Playwright**: its full step (action + the same listing + JPEG q70), and the ratios.
//!
//! Then, next to Python Playwright's async peer (`versus`): the load rows (1, 4, 16, 64
//! agents) with the CPU each side's processes spent per action, and the cold start of a new
//! workspace and of an existing profile. `--only steps,phone,live,load,cold,profiles` runs a part.

mod cold;
mod fake;
mod live;
mod load;
mod mcp;
mod peer;
mod phone;
mod procs;
mod profiles;
mod report;
mod served;
mod steps;
mod versus;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use nanomuse_proto::Session;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_tests::*;

pub use nanomuse_tests::Tool;

/// The workspaces the load rows spread their threads over (one browser each).
pub const LOAD_WORKSPACES: usize = 4;
/// How long each row of the fake backend's load table runs.
pub const FAKE_LOAD: Duration = Duration::from_secs(3);
/// The fake worker's slots: more than any row's threads, so they are never the bound.
pub const FAKE_CAPACITY: u32 = 64;
/// The parts `--only` may name, in the order they run.
const SECTIONS: [&str; 6] = ["steps", "phone", "live", "load", "cold", "profiles"];

#[derive(Clone, Copy)]
pub struct Stats {
    pub median: f64,
    pub p95: f64,
}

pub fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let rank = ((samples.len() as f64) * 0.95).ceil() as usize;
    Stats {
        median: ms(samples[samples.len() / 2]),
        p95: ms(samples[rank.clamp(1, samples.len()) - 1]),
    }
}

/// How often a step runs: `warmup` times untimed, then `timed` times.
#[derive(Clone, Copy)]
pub struct Runs {
    pub warmup: usize,
    pub timed: usize,
}

pub struct Options {
    pub runs: Runs,
    /// How long each load row runs (the 64-agent one half as long).
    pub scale: Duration,
    pub out: String,
    pub python: String,
    /// The parts to run (`--only`); all when None.
    pub only: Option<Vec<String>>,
}

impl Options {
    pub fn runs(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|s| s == section))
    }
}

fn options() -> Options {
    let mut options = Options {
        runs: Runs {
            warmup: 5,
            timed: 30,
        },
        scale: Duration::from_secs(10),
        out: "BENCHMARKS.md".into(),
        python: "python3".into(),
        only: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        match (pair[0].as_str(), pair.get(1)) {
            ("--runs", Some(v)) => options.runs.timed = v.parse().expect("--runs N"),
            ("--warmup", Some(v)) => options.runs.warmup = v.parse().expect("--warmup N"),
            ("--scale-seconds", Some(v)) => {
                options.scale = Duration::from_secs(v.parse().expect("--scale-seconds N"))
            }
            ("--out", Some(v)) => options.out = v.clone(),
            ("--python", Some(v)) => options.python = v.clone(),
            ("--only", Some(v)) => {
                let only: Vec<String> = v.split(',').map(str::to_string).collect();
                if let Some(bad) = only.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                    panic!("--only {bad}: the parts are {}", SECTIONS.join(","));
                }
                options.only = Some(only);
            }
            (flag, _) => panic!(
                "unknown flag {flag}; use --runs --warmup --scale-seconds --out --python --only"
            ),
        }
    }
    options
}

/// Times `step` after `runs.warmup` untimed runs.
pub async fn measure<F, Fut>(runs: Runs, mut step: F) -> Vec<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..runs.warmup {
        step().await;
    }
    let mut samples = Vec::with_capacity(runs.timed);
    for _ in 0..runs.timed {
        let started = Instant::now();
        step().await;
        samples.push(started.elapsed());
    }
    samples
}

/// The workspace's binaries `names` beside this program (`tests/bench.sh` builds them with
/// it). Ones older than a source file of theirs are refused, so that a stale build is never
/// measured.
fn binaries<const N: usize>(names: [&str; N]) -> Result<[PathBuf; N], String> {
    // Not built from here: a cargo started under `cargo run` sees that run's environment, which
    // makes it rebuild what the shell's cargo built (and the other way round), for minutes.
    const BUILD: &str = "run tests/bench.sh, which builds them with the benchmark";
    let profile = binaries_dir();
    let root = repo();
    let sources = ["proto", "controller", "worker", "Cargo.lock"].map(|p| root.join(p));
    let newest_source = sources.iter().filter_map(|p| newest(p)).max();
    let binaries = names.map(|name| profile.join(name));
    for binary in &binaries {
        let built = std::fs::metadata(binary)
            .and_then(|m| m.modified())
            .map_err(|_| format!("{} is missing; {BUILD}", binary.display()))?;
        if newest_source.is_some_and(|source| source > built) {
            return Err(format!(
                "{} is older than its sources; {BUILD}",
                binary.display()
            ));
        }
    }
    Ok(binaries)
}

/// The latest modification time of `path` or of any file below it.
fn newest(path: &Path) -> Option<SystemTime> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_dir() {
        return metadata.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .flatten()
        .filter_map(|entry| newest(&entry.path()))
        .max()
}

async fn connect(address: std::net::SocketAddr) -> Tool {
    BrowserToolClient::connect(format!("http://{address}"))
        .await
        .unwrap()
        .max_decoding_message_size(64 * 1024 * 1024)
}

#[tokio::main]
async fn main() {
    let options = options();
    let started = Instant::now();
    let address = serve_site().await;
    let site = format!("http://{address}");
    let dir = tempfile::tempdir().unwrap();

    // `serve`: the controller with its worker in-process.
    let serve_config = nanomuse_browser::serve::EmbeddedConfig {
        controller: controller_config(&dir.path().join("controller")),
        worker: test_config(&dir.path().join("serve-profiles")),
    };
    let worker_capacity = serve_config.worker.capacity;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let serve = tokio::spawn(nanomuse_browser::serve::run_embedded(
        serve_config,
        "127.0.0.1:0",
        shutdown.clone(),
        move |address| {
            let _ = ready_tx.send(address);
        },
    ));
    let serve_address = ready_rx.await.unwrap();
    let serve_tool = connect(serve_address).await;

    // Multi-process: the `controller` binary, and a `worker` binary registered with it, which
    // the bare worker ops also go to. Without the binaries, the ops go to a worker task here.
    let (multi, worker) = match binaries(["controller", "worker"]) {
        Ok([controller_binary, worker_binary]) => {
            let controller =
                ControllerProcess::spawn(&controller_binary, &dir.path().join("multi-controller"))
                    .await;
            let config = registered_worker_config(
                &dir.path().join("worker-profiles"),
                "bench-worker",
                controller.address,
                worker_capacity,
            );
            let worker = Worker::spawn(&worker_binary, config).await;
            controller.wait_for_workers(&["bench-worker"]).await;
            (Ok(controller), worker)
        }
        Err(why) => {
            eprintln!("multi-process mode not measured: {why}");
            let worker = Worker::start(test_config(&dir.path().join("worker-profiles"))).await;
            (Err(why), worker)
        }
    };
    let multi_tool = match &multi {
        Ok(controller) => Some(controller.tool().await),
        Err(_) => None,
    };

    let in_process = Arc::new(nanomuse_worker::ChromiumBackend::new(Arc::new(
        test_config(&dir.path().join("inprocess-profiles")),
    )));

    // The controller alone: over a backend answering at once, with answers of the real page.
    let fake_backend = fake::FakeBackend::recorded(
        in_process.as_ref(),
        Some(Session::new("bench", "fake", "recorded")),
        format!("{site}/page"),
    )
    .await;
    let frame_bytes = fake_backend.jpeg_len();
    let fake = ControllerProcess::start_with_local(
        controller_config(&dir.path().join("fake-controller")),
        "127.0.0.1:0",
        Some(nanomuse_controller::LocalWorker {
            name: "fake".into(),
            capacity: FAKE_CAPACITY,
            backend: Arc::new(fake_backend),
            downloads: None,
            screencast: None,
        }),
    )
    .await;
    let fake_tool = fake.tool().await;
    let fake_address = fake.address;
    // Its runs are cheap and its spread is small against their length: more of them.
    let fake_runs = Runs {
        warmup: options.runs.warmup * 4,
        timed: options.runs.timed * 10,
    };

    eprintln!("started ({:.0} s)", started.elapsed().as_secs_f64());

    let mut rows = Vec::new();
    let steps = if options.runs("steps") {
        steps::STEPS
    } else {
        &[]
    };
    let mut step_peer = match steps {
        [] => Err("not run (--only)".to_string()),
        _ => peer::StepPeer::start(&options, &site).await,
    };
    for &(name, step) in steps {
        let runs = options.runs;
        let in_process = steps::bare(in_process.as_ref(), name, &site, step, runs).await;
        let worker_ops = steps::bare(&worker.backend, name, &site, step, runs).await;
        // Ours through serve and Playwright's full step take turns, a block of half the runs
        // each, twice: what the machine does meanwhile falls on both alike.
        let half = Runs {
            warmup: runs.warmup,
            timed: runs.timed.div_ceil(2),
        };
        let mut serve = steps::Timed::default();
        for _ in 0..2 {
            serve.extend(steps::timed(&serve_tool, name, &site, step, half).await);
            if let Ok(peer) = &mut step_peer
                && let Err(error) = peer.step(name, half).await
            {
                step_peer = Err(error);
            }
        }
        let serve = serve.acted();
        let multi = match &multi_tool {
            Some(tool) => Some(steps::act(tool, name, &site, step, runs).await),
            None => None,
        };
        let fake = steps::act(&fake_tool, name, &site, step, fake_runs).await;
        let (mcp_serve, mcp_fake) = if mcp::STEPS.contains(&name) {
            (
                Some(mcp::act(serve_address, name, &site, step, runs).await),
                Some(mcp::act(fake_address, name, &site, step, fake_runs).await),
            )
        } else {
            (None, None)
        };
        rows.push(report::Row {
            name,
            serve,
            multi,
            worker_ops,
            in_process,
            fake,
            mcp_serve,
            mcp_fake,
        });
        eprintln!("{name} done ({:.0} s)", started.elapsed().as_secs_f64());
    }

    // Closed before the load rows, which want the machine to themselves.
    let peer = match step_peer {
        Ok(peer) => peer.finish().await,
        Err(error) => Err(error),
    };

    let phone = if options.runs("phone") {
        let phone = phone::measure_both(&dir.path().join("phone-path"), &site, options.runs).await;
        eprintln!("phone path done ({:.0} s)", started.elapsed().as_secs_f64());
        phone
    } else {
        Vec::new()
    };

    let live = if options.runs("live") {
        let live = live::measure(&serve_tool, serve_address, options.runs).await;
        eprintln!(
            "live take-over done ({:.0} s)",
            started.elapsed().as_secs_f64()
        );
        Some(live)
    } else {
        None
    };

    // The controller alone under concurrent agents.
    let mut fake_load = Vec::new();
    for threads in [1, 4, 16] {
        if !options.runs("steps") {
            break;
        }
        let url = format!("{site}/page");
        let timeout = Duration::from_secs(10);
        let row = load::run(&fake_tool, "load", threads, &url, FAKE_LOAD, timeout, None).await;
        fake_load.push(row);
    }
    if !fake_load.is_empty() {
        eprintln!("fake load done ({:.0} s)", started.elapsed().as_secs_f64());
    }

    // Next to Playwright: the load rows and the cold start, on `serve` as a process of its own.
    let (load, cold) = if options.runs("load") || options.runs("cold") {
        match binaries(["nanomuse-browser"]) {
            Ok([serve_binary]) => {
                let (load, cold) = versus::measure(
                    &options,
                    &site,
                    dir.path(),
                    &serve_binary,
                    options.runs("load"),
                    options.runs("cold"),
                )
                .await;
                eprintln!(
                    "load and cold start done ({:.0} s)",
                    started.elapsed().as_secs_f64()
                );
                (load.map(Ok), cold.map(Ok))
            }
            Err(why) => (
                options.runs("load").then(|| Err(why.clone())),
                options.runs("cold").then_some(Err(why)),
            ),
        }
    } else {
        (None, None)
    };

    let profiles = if options.runs("profiles") {
        Some(
            profiles::measure(
                &in_process,
                &dir.path().join("inprocess-profiles"),
                &site,
                &dir.path().join("store-bench"),
            )
            .await,
        )
    } else {
        None
    };

    shutdown.cancel();
    serve.await.unwrap().unwrap();
    fake.stop().await;
    let multi_error = match multi {
        Ok(controller) => {
            controller.stop().await;
            None
        }
        Err(why) => Some(why),
    };
    worker.stop().await;
    in_process.pool.close_all().await;

    let results = report::Results {
        rows,
        multi_error,
        worker_capacity,
        frame_bytes,
        fake_runs,
        fake_load,
        load,
        cold,
        profiles,
        peer,
        phone,
        live,
        seconds: started.elapsed().as_secs_f64(),
    };
    std::fs::write(&options.out, report::markdown(&options, &results)).unwrap();
    eprintln!(
        "wrote {} in {:.0} s",
        options.out,
        started.elapsed().as_secs_f64()
    );
}
