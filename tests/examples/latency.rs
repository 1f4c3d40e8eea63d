//! Quick latency and memory figures for the closing notes (the full benchmark is its own
//! program): a worker and a controller on loopback, a small local page, medians of repeated
//! steps. Run: `cargo run --release -p nanomuse-tests --example latency`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use support::*;

const RUNS: usize = 30;

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

/// Proportional set size of every process whose command line names `profile_dir`, in MiB.
fn pss_mib(profile_dir: &std::path::Path) -> f64 {
    let needle = profile_dir.display().to_string();
    let mut kib = 0u64;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(&needle) {
            continue;
        }
        let Ok(rollup) = std::fs::read_to_string(entry.path().join("smaps_rollup")) else {
            continue;
        };
        for line in rollup.lines() {
            if let Some(value) = line.strip_prefix("Pss:") {
                kib += value
                    .trim()
                    .trim_end_matches(" kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0);
            }
        }
    }
    kib as f64 / 1024.0
}

#[tokio::main]
async fn main() {
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let controller = ControllerProcess::start(
        controller_config(&dir.path().join("controller")),
        "127.0.0.1:0",
    )
    .await;
    let worker = Worker::start(registered_worker_config(
        &dir.path().join("w"),
        "w",
        controller.address,
        8,
    ))
    .await;
    controller.wait_for_workers(&["w"]).await;
    let b = &worker.backend;
    let s = || Some(Session::new("bench", "ws", "p"));
    b.open(OpenRequest {
        session: s(),
        ..Default::default()
    })
    .await
    .unwrap();
    let page = format!("http://{site}/page");

    let mut bare_nav = Vec::new();
    let mut bare_click = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        b.navigate(NavigateRequest {
            session: s(),
            url: page.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap();
        b.screenshot(ScreenshotRequest {
            session: s(),
            quality: 70,
        })
        .await
        .unwrap();
        bare_nav.push(t.elapsed());
        let t = Instant::now();
        b.tap(TapRequest {
            session: s(),
            x: 110.0,
            y: 35.0,
        })
        .await
        .unwrap();
        b.settle(SettleRequest {
            session: s(),
            timeout_ms: 5000,
        })
        .await
        .unwrap();
        b.screenshot(ScreenshotRequest {
            session: s(),
            quality: 70,
        })
        .await
        .unwrap();
        bare_click.push(t.elapsed());
    }
    let mut parts: Vec<(&str, Vec<Duration>)> = [
        "navigate",
        "screenshot",
        "tap",
        "settle",
        "state",
        "evaluate 1",
    ]
    .into_iter()
    .map(|name| (name, Vec::new()))
    .collect();
    for _ in 0..RUNS {
        let t = Instant::now();
        b.navigate(NavigateRequest {
            session: s(),
            url: page.clone(),
            timeout_ms: 0,
        })
        .await
        .unwrap();
        parts[0].1.push(t.elapsed());
        let t = Instant::now();
        b.screenshot(ScreenshotRequest {
            session: s(),
            quality: 70,
        })
        .await
        .unwrap();
        parts[1].1.push(t.elapsed());
        let t = Instant::now();
        b.tap(TapRequest {
            session: s(),
            x: 110.0,
            y: 35.0,
        })
        .await
        .unwrap();
        parts[2].1.push(t.elapsed());
        let t = Instant::now();
        b.settle(SettleRequest {
            session: s(),
            timeout_ms: 5000,
        })
        .await
        .unwrap();
        parts[3].1.push(t.elapsed());
        let t = Instant::now();
        b.state(StateRequest { session: s() }).await.unwrap();
        parts[4].1.push(t.elapsed());
        let t = Instant::now();
        b.evaluate(EvaluateRequest {
            session: s(),
            js: "() => 1".into(),
            arg_json: String::new(),
        })
        .await
        .unwrap();
        parts[5].1.push(t.elapsed());
    }
    for (name, samples) in parts {
        println!("  op {name:<12} {:.1} ms", median(samples));
    }
    let profile = dir
        .path()
        .join("w")
        .join("bench")
        .join("ws")
        .join("browser-profile");
    println!("worker ops, median of {RUNS}:");
    println!(
        "  navigate + screenshot:           {:.1} ms",
        median(bare_nav)
    );
    println!(
        "  tap + settle + screenshot:       {:.1} ms",
        median(bare_click)
    );
    println!(
        "  PSS of the live profile (1 page): {:.0} MiB",
        pss_mib(&profile)
    );

    let mut tool = controller.tool().await;
    let act = |action| ActRequest {
        thread: "t".into(),
        workspace: "ws2".into(),
        action: Some(action),
    };
    let mut nav = Vec::new();
    let mut clicks = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let reply = tool
            .act(act(Action::Navigate(NavigateAction { url: page.clone() })))
            .await
            .unwrap()
            .into_inner();
        nav.push(t.elapsed());
        let n = reply
            .elements
            .iter()
            .find(|e| e.label == "Press")
            .unwrap()
            .n as i64;
        let t = Instant::now();
        tool.act(act(Action::Click(ClickAction { n })))
            .await
            .unwrap();
        clicks.push(t.elapsed());
    }
    println!(
        "controller actions (gRPC → controller → worker → Chromium → frame stored), median of {RUNS}:"
    );
    println!("  navigate (listing + frame):      {:.1} ms", median(nav));
    println!(
        "  click n (listing + frame):       {:.1} ms",
        median(clicks)
    );
    controller.stop().await;
    worker.stop().await;
}
