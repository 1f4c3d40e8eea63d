//! Python Playwright on the same Chromium and pages, run as a subprocess in the same run: the
//! per-step peer, and the load and cold-start peer.

use std::collections::BTreeMap;
use std::time::Duration;

use nanomuse_controller::listing::LIST_JS;
use serde_json::Value;

use crate::cold::Cold;
use crate::load::Load;
use crate::procs::Sample;
use crate::{Options, Stats};

/// Playwright's full step per step name, or why it was not measured.
pub fn playwright(options: &Options, site: &str) -> Result<BTreeMap<String, Stats>, String> {
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
            &options.runs.timed.to_string(),
            "--warmup",
            &options.runs.warmup.to_string(),
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

/// Playwright's load and cold-start peer (`tests/bench/playwright_load.py`), driven a row at a
/// time so that each of its rows runs right next to ours; the CPU of its process tree (python,
/// the node driver, the Chromiums) is sampled here, as ours is.
pub struct LoadPeer {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _dir: tempfile::TempDir,
}

impl LoadPeer {
    /// Starts the peer, which first times its cold starts (`cold_runs` of each kind, None for
    /// none).
    pub async fn start(
        options: &Options,
        site: &str,
        cold_runs: usize,
    ) -> Result<(Self, Option<Cold>), String> {
        use tokio::io::AsyncBufReadExt;
        let dir = tempfile::tempdir().unwrap();
        let list_js = dir.path().join("list.js");
        std::fs::write(&list_js, LIST_JS).unwrap();
        let profiles = dir.path().join("profiles");
        std::fs::create_dir(&profiles).unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/playwright_load.py");
        let mut child = tokio::process::Command::new(&options.python)
            .arg(script)
            .args(["--base", site, "--cold-runs", &cold_runs.to_string()])
            .arg("--list-js")
            .arg(&list_js)
            .arg("--profiles")
            .arg(&profiles)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", options.python))?;
        let stdin = child.stdin.take().unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut peer = Self {
            child,
            stdin,
            lines,
            _dir: dir,
        };
        let cold = peer.event("cold").await?;
        let samples = |key: &str| -> Vec<Duration> {
            cold[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .map(|ms| Duration::from_secs_f64(ms / 1000.0))
                .collect()
        };
        let (new, relaunch) = (samples("new_ms"), samples("relaunch_ms"));
        if cold_runs == 0 {
            return Ok((peer, None));
        }
        if new.len() != cold_runs || relaunch.len() != cold_runs {
            return Err(format!(
                "the Playwright load peer sent too few cold starts: {cold}"
            ));
        }
        Ok((peer, Some(Cold::from_samples(new, relaunch))))
    }

    /// One row: `agents` pages in a closed loop for `duration`.
    pub async fn row(&mut self, agents: usize, duration: Duration) -> Result<Load, String> {
        self.send(&format!("row {agents} {}", duration.as_secs_f64()))
            .await?;
        self.event("ready").await?;
        let pid = self
            .child
            .id()
            .ok_or("the Playwright load peer has ended")?;
        let start = Sample::tree(pid);
        self.send("go").await?;
        let row = self.event("row").await?;
        let cpu = Sample::tree(pid).since(&start);
        let number = |key: &str| row[key].as_f64();
        let stats = match (number("median_ms"), number("p95_ms")) {
            (Some(median), Some(p95)) => Some(Stats { median, p95 }),
            _ => None,
        };
        Ok(Load {
            threads: agents,
            actions: number("actions").unwrap_or(0.0) as usize,
            rate: number("rate").unwrap_or(0.0),
            stats,
            failed: number("failed").unwrap_or(0.0) as usize,
            cpu,
        })
    }

    /// Tells the peer to close its browsers and waits for it to end.
    pub async fn finish(mut self) -> Result<(), String> {
        self.send("done").await?;
        drop(self.stdin);
        match self.child.wait().await {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(format!("the Playwright load peer ended with {status}")),
            Err(e) => Err(format!("the Playwright load peer: {e}")),
        }
    }

    async fn send(&mut self, line: &str) -> Result<(), String> {
        use tokio::io::AsyncWriteExt;
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(|e| format!("the Playwright load peer stopped reading: {e}"))
    }

    /// The next line, which must be the JSON event `name`.
    async fn event(&mut self, name: &str) -> Result<Value, String> {
        let line = self
            .lines
            .next_line()
            .await
            .map_err(|e| format!("reading the Playwright load peer: {e}"))?
            .ok_or_else(|| format!("the Playwright load peer ended before its {name:?} event"))?;
        let value: Value = serde_json::from_str(&line)
            .map_err(|e| format!("the Playwright load peer sent {line:?}: {e}"))?;
        if value["event"] != name {
            return Err(format!(
                "the Playwright load peer sent {line:?}, not {name:?}"
            ));
        }
        Ok(value)
    }
}
