//! Concurrent agents on one controller: each on a thread of its own, navigating back to back
//! (closed loop) for a fixed time, so a row costs the same whatever its latency; and the CPU
//! the row took, by process.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nanomuse_proto::ActRequest;
use nanomuse_tests::{act_in, navigate};

use crate::procs::Sample;
use crate::{LOAD_WORKSPACES, Stats, Tool, stats};

pub struct Load {
    pub threads: usize,
    /// Actions answered in the timed part.
    pub actions: usize,
    /// Actions answered per second, over the time until the last one came back.
    pub rate: f64,
    /// None when every action failed.
    pub stats: Option<Stats>,
    /// Actions refused or not answered within the timeout, the untimed first ones included
    /// (left out of the rate and the times).
    pub failed: usize,
    /// CPU milliseconds per process kind over the timed part; empty when not measured.
    pub cpu: BTreeMap<String, f64>,
}

impl Load {
    /// CPU milliseconds per answered action of `kind`, or of all kinds for None.
    pub fn cpu_per_action(&self, kind: Option<&str>) -> Option<f64> {
        if self.cpu.is_empty() || self.actions == 0 {
            return None;
        }
        let ms: f64 = match kind {
            Some(kind) => self.cpu.get(kind).copied().unwrap_or(0.0),
            None => self.cpu.values().sum(),
        };
        Some(ms / self.actions as f64)
    }
}

/// `threads` agents on threads `{prefix}-0…` spread over the workspaces, navigating
/// to `url` for `duration`. Each first opens its page with one untimed navigate, so that the
/// row times actions on live pages, not the pages' and browsers' launches. `cpu` samples the
/// processes to measure, right as the timed part starts and once its last action is back.
pub async fn run(
    tool: &Tool,
    prefix: &str,
    threads: usize,
    url: &str,
    duration: Duration,
    timeout: Duration,
    cpu: Option<&dyn Fn() -> Sample>,
) -> Load {
    let ready = Arc::new(tokio::sync::Barrier::new(threads + 1));
    let mut tasks = Vec::new();
    for t in 0..threads {
        let mut tool = tool.clone();
        let ready = ready.clone();
        let request = act_in(
            &format!("{prefix}-{t}"),
            &format!("{prefix}-{}", t % LOAD_WORKSPACES),
            navigate(url),
        );
        tasks.push(tokio::spawn(async move {
            let opened = timed(&mut tool, &request, timeout).await.is_some();
            ready.wait().await;
            let began = Instant::now();
            let mut times = Vec::new();
            while began.elapsed() < duration {
                times.push(timed(&mut tool, &request, timeout).await);
            }
            (opened, times)
        }));
    }
    ready.wait().await;
    let began = Instant::now();
    let cpu_start = cpu.map(|sample| sample());
    let mut times = Vec::new();
    let mut unopened = 0;
    for task in tasks {
        let (opened, task_times) = task.await.unwrap();
        unopened += usize::from(!opened);
        times.extend(task_times);
    }
    let elapsed = began.elapsed().as_secs_f64();
    let cpu = match (cpu, cpu_start) {
        (Some(sample), Some(start)) => sample().since(&start),
        _ => BTreeMap::new(),
    };
    let answered: Vec<Duration> = times.iter().flatten().copied().collect();
    Load {
        threads,
        actions: answered.len(),
        rate: answered.len() as f64 / elapsed,
        stats: (!answered.is_empty()).then(|| stats(answered)),
        failed: unopened + times.iter().filter(|t| t.is_none()).count(),
        cpu,
    }
}

/// Opens the workspaces the rows spread their agents over (threads `{prefix}-0…`, one
/// untimed navigate each), so that no row pays for a browser's launch — as Playwright's
/// contexts are launched before its first row.
pub async fn open_workspaces(tool: &Tool, prefix: &str, url: &str, timeout: Duration) {
    let mut tool = tool.clone();
    for w in 0..LOAD_WORKSPACES {
        let name = format!("{prefix}-{w}");
        timed(&mut tool, &act_in(&name, &name, navigate(url)), timeout).await;
    }
}

/// One action until its reply; None (and a line on stderr) when it failed or timed out.
async fn timed(tool: &mut Tool, request: &ActRequest, timeout: Duration) -> Option<Duration> {
    let at = Instant::now();
    match tokio::time::timeout(timeout, tool.act(request.clone())).await {
        Ok(Ok(_)) => Some(at.elapsed()),
        Ok(Err(status)) => {
            eprintln!("load: {}", status.message());
            None
        }
        Err(_) => {
            eprintln!("load: no reply within {timeout:?}");
            None
        }
    }
}
