//! Ours next to Playwright under load and at cold start, in the same run: ours on
//! `nanomuse-browser serve` run as a process of its own (`served`), Playwright's async peer
//! (`peer::LoadPeer`); each load row of Playwright's runs right before ours at the same count,
//! so that both see the machine in the same state, and the CPU of both sides' processes is
//! sampled the same way (`procs`).

use std::path::Path;
use std::time::Duration;

use crate::Options;
use crate::cold::{self, Cold};
use crate::load::{self, Load};
use crate::peer::LoadPeer;
use crate::procs::{self, Sample, pss_mib};
use crate::served::Served;

/// The agents of the load rows.
pub const AGENTS: [usize; 4] = [1, 4, 16, 64];
/// Cold starts of each kind, each side.
pub const COLD_RUNS: usize = 5;
/// How long `serve` may queue an action before refusing it: the 64-agent row queues most of
/// its actions for seconds.
const QUEUE_DEADLINE: Duration = Duration::from_secs(60);
/// The workspaces' name prefix in the load rows.
const LOAD_PREFIX: &str = "load";

/// Worker configurations that cold start is measured with besides the default one, each on a
/// `serve` of its own: (what the row says, the `[worker]` section's lines). The default has a
/// warm pool (browsers launched ahead for new workspaces); without it a new workspace waits
/// for Chromium.
/// The third field is the pool's size, which each sample waits for (a refill after the last
/// sample would otherwise compete with the next on 2 cores).
pub const COLD_VARIANTS: &[(&str, &str, usize)] = &[("warm_browsers = 0", "warm_browsers = 0", 0)];

pub struct LoadRun {
    pub ours: Vec<Load>,
    pub playwright: Result<Vec<Load>, String>,
    /// PSS of ours' first load workspace's browser after the rows, in MiB.
    pub memory: f64,
}

pub struct ColdRun {
    /// Per worker configuration: "default" first, then `COLD_VARIANTS`.
    pub ours: Vec<(&'static str, Cold)>,
    pub playwright: Result<Cold, String>,
}

/// How long the row with `agents` runs: the 64-agent row half as long.
pub fn seconds(options: &Options, agents: usize) -> Duration {
    if agents >= 64 {
        options.scale / 2
    } else {
        options.scale
    }
}

/// `serve`'s configuration: the defaults (64 agents of one tenant fit its 64 actions in
/// flight) but for the queue deadline, and `worker`'s lines in `[worker]`.
fn config(worker: &str) -> String {
    format!(
        "[controller]\nqueue_deadline_ms = {}\n\n[worker]\n{worker}\n",
        QUEUE_DEADLINE.as_millis(),
    )
}

/// The load rows (when `load`) and the cold starts (when `cold`), with `serve` from `binary`.
pub async fn measure(
    options: &Options,
    site: &str,
    dir: &Path,
    binary: &Path,
    load: bool,
    cold: bool,
) -> (Option<LoadRun>, Option<ColdRun>) {
    let url = format!("{site}/page");
    let data = dir.join("served");
    let served = Served::spawn(binary, &data, &config("")).await;
    let tool = served.tool().await;
    // Cold start first, on a quiet machine and a fresh `serve`; it leaves no browser open.
    let ours_cold = if cold {
        let ahead = nanomuse_worker::WorkerConfig::default().warm_browsers;
        Some(cold::ours(&tool, served.address, ahead, "cold", &url, COLD_RUNS).await)
    } else {
        None
    };
    eprintln!("ours: cold start done");
    let cold_runs = if cold { COLD_RUNS } else { 0 };
    let (mut peer, playwright_cold) = match LoadPeer::start(options, site, cold_runs).await {
        Ok((peer, cold)) => (Ok(peer), cold.ok_or_else(|| "not measured".to_string())),
        Err(why) => (Err(why.clone()), Err(why)),
    };
    eprintln!("Playwright: cold start done");

    let mut load_run = None;
    if load {
        let serve_pid = served.pid();
        let ours_cpu =
            move || Sample::tree(serve_pid).and(Sample::process(std::process::id(), "agents"));
        let timeout = QUEUE_DEADLINE + Duration::from_secs(30);
        let mut ours = Vec::new();
        let mut playwright = Ok(Vec::new());
        load::open_workspaces(&tool, LOAD_PREFIX, &url, timeout).await;
        // The pool refills what the workspaces took; its launches are no row's.
        let ahead = nanomuse_worker::WorkerConfig::default().warm_browsers;
        cold::until_ahead(served.address, ahead).await;
        for agents in AGENTS {
            let duration = seconds(options, agents);
            procs::until_quiet().await;
            if let (Ok(peer), Ok(rows)) = (&mut peer, &mut playwright) {
                match peer.row(agents, duration).await {
                    Ok(row) => rows.push(row),
                    Err(why) => playwright = Err(why),
                }
            }
            procs::until_quiet().await;
            let row = load::run(
                &tool,
                LOAD_PREFIX,
                agents,
                &url,
                duration,
                timeout,
                Some(&ours_cpu),
            )
            .await;
            ours.push(row);
            eprintln!("load {agents} done");
        }
        if let Err(why) = &peer {
            playwright = Err(why.clone());
        }
        // A workspace handed a browser of the warm pool has its folder as a link to that
        // browser's, which the browser's command line names.
        let first = data
            .join("profiles")
            .join("local")
            .join(format!("{LOAD_PREFIX}-0"));
        let first = std::fs::canonicalize(&first).unwrap_or(first);
        load_run = Some(LoadRun {
            ours,
            playwright,
            memory: pss_mib(&first.display().to_string()),
        });
    }
    if let Ok(peer) = peer
        && let Err(why) = peer.finish().await
    {
        eprintln!("{why}");
    }
    served.stop().await;

    let cold_run = match ours_cold {
        Some(default) => {
            let mut ours = vec![("default", default)];
            for &(name, worker, ahead) in COLD_VARIANTS {
                let data = dir.join(format!("served-{}", ours.len()));
                let served = Served::spawn(binary, &data, &config(worker)).await;
                let tool = served.tool().await;
                let cold = cold::ours(&tool, served.address, ahead, "cold", &url, COLD_RUNS).await;
                served.stop().await;
                ours.push((name, cold));
            }
            Some(ColdRun {
                ours,
                playwright: playwright_cold,
            })
        }
        None => None,
    };
    (load_run, cold_run)
}
