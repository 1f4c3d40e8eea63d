//! Python Playwright on the same Chromium and pages, run as a subprocess in the same run.

use std::collections::BTreeMap;

use nanomuse_controller::listing::LIST_JS;
use serde_json::Value;

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
