//! What a profile costs: its cold start, its memory with more pages, its relaunch after a
//! crash; and how fast the frame store takes frames.

use std::path::Path;
use std::time::{Duration, Instant};

use nanomuse_proto::*;
use nanomuse_worker::ChromiumBackend;

use crate::procs::pss_mib;
use crate::{Stats, stats};
use nanomuse_tests::{chromium_pid, process_ended};

pub struct Profiles {
    pub cold: Stats,
    /// PSS in MiB of a profile with so many pages.
    pub pss: Vec<(usize, f64)>,
    pub relaunch: Stats,
    pub frame_bytes: usize,
    pub frame_writes: f64,
}

/// Concurrent writers of the frame-store row.
pub const FRAME_WRITERS: usize = 64;

/// Measures on `backend`, whose profiles live in `profiles`; the frame store goes in `store`.
pub async fn measure(
    backend: &ChromiumBackend,
    profiles: &Path,
    site: &str,
    store: &Path,
) -> Profiles {
    // Cold start of a profile: the first open of a new workspace launches its browser.
    let mut cold = Vec::new();
    for i in 0..5 {
        let session = Some(Session::new("bench", format!("cold-{i}"), "p"));
        let at = Instant::now();
        backend
            .open(OpenRequest {
                session,
                ..Default::default()
            })
            .await
            .unwrap();
        cold.push(at.elapsed());
    }

    // Memory: one profile with one page, then with one and four more.
    let memory_profile = profiles.join("bench").join("memory");
    let needle = memory_profile.display().to_string();
    let mut pss = Vec::new();
    for pages in [1usize, 2, 5] {
        for page in 0..pages {
            let session = Some(Session::new("bench", "memory", format!("p{page}")));
            backend
                .open(OpenRequest {
                    session: session.clone(),
                    ..Default::default()
                })
                .await
                .unwrap();
            backend
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
    let session = Some(Session::new("bench", "memory", "p0"));
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
        backend
            .state(StateRequest {
                session: session.clone(),
            })
            .await
            .unwrap();
        relaunch.push(at.elapsed());
    }

    // The frame store: writes of real-sized frames, each flushed as the controller does.
    let store = nanomuse_controller::store::SledStore::open(store).unwrap();
    let shot = backend
        .screenshot(ScreenshotRequest {
            session,
            quality: 70,
        })
        .await
        .unwrap();
    // As many writers as the load rows' agents, each acknowledging its frame only once it is
    // flushed; writers that arrive during a flush share the next one (group commit).
    let store = std::sync::Arc::new(store);
    let writers = FRAME_WRITERS;
    let writes = 2_000;
    let at = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|writer| {
            let store = store.clone();
            let jpeg = shot.jpeg.clone();
            tokio::spawn(async move {
                use nanomuse_controller::store::Store;
                for _ in 0..writes / writers {
                    let frame = Frame {
                        id: store.next_id().unwrap().to_string(),
                        thread: format!("t{writer}"),
                        jpeg: jpeg.clone(),
                        ..Default::default()
                    };
                    store.add_frame("bench", &frame).unwrap();
                    store.flush().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    Profiles {
        cold: stats(cold),
        pss,
        relaunch: stats(relaunch),
        frame_bytes: shot.jpeg.len(),
        frame_writes: writes as f64 / at.elapsed().as_secs_f64(),
    }
}
