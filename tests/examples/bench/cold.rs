//! Cold start through the whole service: a new workspace's first action until its reply, and
//! an existing profile's relaunch (its browser closed by `close` on its only page) until the
//! next action's reply. Playwright's counterpart is in `tests/bench/playwright_load.py`.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use nanomuse_proto::act_request::Action;
use nanomuse_proto::{ActRequest, CloseAction};
use nanomuse_tests::{act_in, acted, navigate};

use crate::{Stats, Tool, stats};

#[derive(Clone, Copy)]
pub struct Cold {
    /// A new workspace (a new profile): launch + first page until answered.
    pub new: Stats,
    /// An existing profile whose browser was closed: relaunch + page until answered.
    pub relaunch: Stats,
}

impl Cold {
    pub fn from_samples(new: Vec<Duration>, relaunch: Vec<Duration>) -> Self {
        Self {
            new: stats(new),
            relaunch: stats(relaunch),
        }
    }
}

/// `runs` new workspaces `{prefix}-0…`, each navigated to `url`, closed, navigated again and
/// closed again (so that no browser of theirs stays for the rows after). Each sample starts
/// once serve (at `address`) has its `ahead` browsers launched ahead again, as a user who comes
/// along later finds it.
pub async fn ours(
    tool: &Tool,
    address: SocketAddr,
    ahead: usize,
    prefix: &str,
    url: &str,
    runs: usize,
) -> Cold {
    let mut tool = tool.clone();
    let (mut new, mut relaunch) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let name = format!("{prefix}-{i}");
        let request = |action| act_in(&name, &name, action);
        for samples in [&mut new, &mut relaunch] {
            until_ahead(address, ahead).await;
            samples.push(timed(&mut tool, request(navigate(url))).await);
            // The thread's only page: its browser closes, the profile stays on disk.
            acted(&mut tool, request(Action::Close(CloseAction {}))).await;
        }
    }
    Cold::from_samples(new, relaunch)
}

/// Waits until serve's `/metrics` says `ahead` browsers are ready (at most 30 s).
pub async fn until_ahead(address: SocketAddr, ahead: usize) {
    let url = format!("http://{address}/metrics");
    let wanted = format!("nanomuse_worker_browsers_ahead {ahead}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(response) = reqwest::get(&url).await
            && let Ok(text) = response.text().await
            && text.lines().any(|line| line.trim() == wanted)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("the pool did not reach {ahead} browsers ahead in 30 s");
}

async fn timed(tool: &mut Tool, request: ActRequest) -> Duration {
    let at = Instant::now();
    acted(tool, request).await;
    at.elapsed()
}
