//! Python Playwright on the same Chromium and pages, run as a subprocess in the same run: the
//! per-step peer, and the load and cold-start peer.

use std::collections::BTreeMap;
use std::time::Duration;

use nanomuse_controller::listing::LIST_JS;
use serde_json::Value;

use crate::cold::Cold;
use crate::load::Load;
use crate::procs::Sample;
use crate::{Options, Runs, Stats, stats};

/// Playwright's per-step peer (`tests/bench/playwright_peer.py`), driven a step at a time so
/// that its blocks of runs take turns with ours: its samples per step name (the full step, and
/// the action alone as `NAME_bare`).
pub struct StepPeer {
    driven: Driven,
    samples: BTreeMap<String, Vec<Duration>>,
}

impl StepPeer {
    pub async fn start(options: &Options, site: &str) -> Result<Self, String> {
        let (dir, list_js) = list_js_file();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/playwright_peer.py");
        let mut command = tokio::process::Command::new(&options.python);
        command
            .arg(script)
            .args(["--base", site])
            .arg("--list-js")
            .arg(&list_js);
        let mut driven = Driven::spawn(command, "Playwright step peer", dir)?;
        driven.event("ready").await?;
        Ok(Self {
            driven,
            samples: BTreeMap::new(),
        })
    }

    /// A block of `runs` of step `name` (and of its action alone, where it has one).
    pub async fn step(&mut self, name: &str, runs: Runs) -> Result<(), String> {
        self.driven
            .send(&format!("step {name} {} {}", runs.timed, runs.warmup))
            .await?;
        let step = self.driven.event("step").await?;
        for (each, samples) in step["samples_ms"].as_object().into_iter().flatten() {
            self.samples
                .entry(each.clone())
                .or_default()
                .extend(durations(samples));
        }
        Ok(())
    }

    /// Every block's samples per step, as medians and p95s; the browser closed.
    pub async fn finish(self) -> Result<BTreeMap<String, Stats>, String> {
        self.driven.finish().await?;
        Ok(self
            .samples
            .into_iter()
            .map(|(name, samples)| (name, stats(samples)))
            .collect())
    }
}

/// Playwright's load and cold-start peer (`tests/bench/playwright_load.py`), driven a row at a
/// time so that each of its rows runs right next to ours; the CPU of its process tree (python,
/// the node driver, the Chromiums) is sampled here, as ours is.
pub struct LoadPeer {
    driven: Driven,
}

impl LoadPeer {
    /// Starts the peer, which first times its cold starts (`cold_runs` of each kind, None for
    /// none).
    pub async fn start(
        options: &Options,
        site: &str,
        cold_runs: usize,
    ) -> Result<(Self, Option<Cold>), String> {
        let (dir, list_js) = list_js_file();
        let profiles = dir.path().join("profiles");
        std::fs::create_dir(&profiles).unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/playwright_load.py");
        let mut command = tokio::process::Command::new(&options.python);
        command
            .arg(script)
            .args(["--base", site, "--cold-runs", &cold_runs.to_string()])
            .arg("--list-js")
            .arg(&list_js)
            .arg("--profiles")
            .arg(&profiles);
        let mut peer = Self {
            driven: Driven::spawn(command, "Playwright load peer", dir)?,
        };
        let cold = peer.driven.event("cold").await?;
        let (new, relaunch) = (durations(&cold["new_ms"]), durations(&cold["relaunch_ms"]));
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
        let driven = &mut self.driven;
        driven
            .send(&format!("row {agents} {}", duration.as_secs_f64()))
            .await?;
        driven.event("ready").await?;
        let pid = driven
            .child
            .id()
            .ok_or("the Playwright load peer has ended")?;
        let start = Sample::tree(pid);
        driven.send("go").await?;
        let row = driven.event("row").await?;
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
    pub async fn finish(self) -> Result<(), String> {
        self.driven.finish().await
    }
}

/// The listing script, written to a file of a folder of its own for a peer to read.
fn list_js_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let list_js = dir.path().join("list.js");
    std::fs::write(&list_js, LIST_JS).unwrap();
    (dir, list_js)
}

/// A JSON array of milliseconds, as durations.
fn durations(ms: &Value) -> Vec<Duration> {
    ms.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .collect()
}

/// A peer script run as a child: a line to its stdin, a JSON event per line from its stdout.
struct Driven {
    /// What the errors call it.
    name: &'static str,
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _dir: tempfile::TempDir,
}

impl Driven {
    fn spawn(
        mut command: tokio::process::Command,
        name: &'static str,
        dir: tempfile::TempDir,
    ) -> Result<Self, String> {
        use tokio::io::AsyncBufReadExt;
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run the {name}: {e}"))?;
        let stdin = child.stdin.take().unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        Ok(Self {
            name,
            child,
            stdin,
            lines,
            _dir: dir,
        })
    }

    /// Says "done" and waits for the peer to end.
    async fn finish(mut self) -> Result<(), String> {
        let name = self.name;
        self.send("done").await?;
        drop(self.stdin);
        match self.child.wait().await {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(format!("the {name} ended with {status}")),
            Err(e) => Err(format!("the {name}: {e}")),
        }
    }

    async fn send(&mut self, line: &str) -> Result<(), String> {
        use tokio::io::AsyncWriteExt;
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(|e| format!("the {} stopped reading: {e}", self.name))
    }

    /// The next line, which must be the JSON event `event`.
    async fn event(&mut self, event: &str) -> Result<Value, String> {
        let name = self.name;
        let line = self
            .lines
            .next_line()
            .await
            .map_err(|e| format!("reading the {name}: {e}"))?
            .ok_or_else(|| format!("the {name} ended before its {event:?} event"))?;
        let value: Value =
            serde_json::from_str(&line).map_err(|e| format!("the {name} sent {line:?}: {e}"))?;
        if value["event"] != event {
            return Err(format!("the {name} sent {line:?}, not {event:?}"));
        }
        Ok(value)
    }
}
