//! The processes of a tree, read from /proc: their CPU time by kind, sampled at the start and
//! the end of a load row, and their memory. One reader for both sides of the comparison:
//! ours (`nanomuse-browser serve` and its Chromiums; the benchmark's agents) and Playwright's
//! (python, its node driver and their Chromiums).
//!
//! A process's CPU is its `utime + stime` plus `cutime + cstime` (its children that ended and
//! were reaped), so that a renderer that exits during a row still counts, under its parent's
//! kind. Chromium's processes are told apart by `--type=` (none: the browser process).

use std::collections::{BTreeMap, HashMap, HashSet};

const USER_HZ: f64 = 100.0;

struct Process {
    pid: u32,
    ppid: u32,
    kind: String,
    /// CPU time in clock ticks, its reaped children's included.
    ticks: u64,
    zombie: bool,
}

/// Every process now. One that ends while it is read is left out.
fn table() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // The name in parentheses may hold spaces; the fields after it do not.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
            let ticks = (11..=14).map(field).sum::<Option<u64>>()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            Some(Process {
                pid,
                ppid: field(1)? as u32,
                kind: kind(pid, &cmdline),
                ticks,
                zombie: fields.first().is_some_and(|s| s.starts_with(['Z', 'X'])),
            })
        })
        .collect()
}

/// Chromium's processes by `--type=`, any other by its program's file name. The program is
/// read from `exe`: Chromium rewrites its children's command lines into one string.
fn kind(pid: u32, cmdline: &[u8]) -> String {
    let program = std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|exe| Some(exe.file_name()?.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if program.starts_with("chromium") || program.starts_with("chrome") {
        let cmdline = String::from_utf8_lossy(cmdline);
        let kind = cmdline
            .split(['\0', ' '])
            .find_map(|a| a.strip_prefix("--type="))
            .unwrap_or("browser");
        format!("chromium {kind}")
    } else {
        program
    }
}

/// The pids of the processes `is_root` picks and of all their descendants.
fn tree(processes: &[Process], is_root: impl Fn(&Process) -> bool) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in processes {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found = HashSet::new();
    let mut next: Vec<u32> = processes
        .iter()
        .filter(|p| is_root(p))
        .map(|p| p.pid)
        .collect();
    while let Some(pid) = next.pop() {
        if found.insert(pid) {
            next.extend(children.get(&pid).into_iter().flatten());
        }
    }
    found
}

/// CPU ticks per process at one moment, with each process's kind.
#[derive(Default)]
pub struct Sample(HashMap<u32, (String, u64)>);

impl Sample {
    /// Process `pid` and all its descendants.
    pub fn tree(pid: u32) -> Self {
        let processes = table();
        let pids = tree(&processes, |p| p.pid == pid);
        Self(
            processes
                .into_iter()
                .filter(|p| pids.contains(&p.pid))
                .map(|p| (p.pid, (p.kind, p.ticks)))
                .collect(),
        )
    }

    /// Process `pid` alone, under `kind`.
    pub fn process(pid: u32, kind: &str) -> Self {
        let ticks = table()
            .into_iter()
            .find(|p| p.pid == pid)
            .map_or(0, |p| p.ticks);
        Self(HashMap::from([(pid, (kind.to_string(), ticks))]))
    }

    /// Both; `other` wins for a pid in both.
    pub fn and(mut self, other: Self) -> Self {
        self.0.extend(other.0);
        self
    }

    /// CPU milliseconds per kind spent from `start` to this sample. A process that started in
    /// between counts from zero; one that ended in between is missing from this sample (its
    /// whole time shows in its parent's once reaped, rare within a row).
    pub fn since(&self, start: &Sample) -> BTreeMap<String, f64> {
        // /proc counts in USER_HZ, 100 on every architecture Linux exposes it on (sysconf
        // would need unsafe, which the workspace forbids).
        let hz = USER_HZ;
        let mut spent = BTreeMap::new();
        for (pid, (kind, ticks)) in &self.0 {
            let before = start.0.get(pid).map_or(0, |(_, t)| *t);
            *spent.entry(kind.clone()).or_insert(0.0) +=
                ticks.saturating_sub(before) as f64 * 1000.0 / hz;
        }
        spent
    }
}

/// Proportional set size of the live processes whose command line names `needle` and all their
/// descendants (Chromium's renderers do not repeat the profile path), in MiB.
pub fn pss_mib(needle: &str) -> f64 {
    let processes = table();
    let pids = tree(&processes, |p| {
        std::fs::read(format!("/proc/{}/cmdline", p.pid))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
    });
    let mut kib = 0u64;
    for p in processes
        .iter()
        .filter(|p| pids.contains(&p.pid) && !p.zombie)
    {
        let Ok(rollup) = std::fs::read_to_string(format!("/proc/{}/smaps_rollup", p.pid)) else {
            continue;
        };
        for line in rollup.lines() {
            if let Some(value) = line.strip_prefix("Pss:") {
                let value = value.trim().trim_end_matches("kB").trim();
                kib += value.parse::<u64>().unwrap_or(0);
            }
        }
    }
    kib as f64 / 1024.0
}

/// The machine's busy and total CPU ticks so far (`/proc/stat`'s first line).
fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// Waits until the machine is quiet — under a tenth of its CPU busy over a quarter second —
/// so that a row does not pay for what the one before left running (a browser finishing its
/// start-up, a peer's processes winding down); at most 15 s.
pub async fn until_quiet() {
    const WINDOW: std::time::Duration = std::time::Duration::from_millis(250);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while std::time::Instant::now() < deadline {
        let Some((busy, total)) = machine_ticks() else {
            return;
        };
        tokio::time::sleep(WINDOW).await;
        let Some((busy_now, total_now)) = machine_ticks() else {
            return;
        };
        let elapsed = total_now.saturating_sub(total).max(1);
        if (busy_now.saturating_sub(busy) as f64) / (elapsed as f64) < 0.1 {
            return;
        }
    }
    eprintln!("the machine did not become quiet within 15 s; measuring all the same");
}
