//! Cold start through the whole service: a new workspace's first action until its reply, and
//! an existing profile's relaunch (its browser closed by `close` on its only page) until the
//! next action's reply. Playwright's counterpart is in `tests/bench/playwright_load.py`.

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
/// closed again (so that no browser of theirs stays for the rows after).
pub async fn ours(tool: &Tool, prefix: &str, url: &str, runs: usize) -> Cold {
    let mut tool = tool.clone();
    let (mut new, mut relaunch) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let name = format!("{prefix}-{i}");
        let request = |action| act_in(&name, &name, action);
        for samples in [&mut new, &mut relaunch] {
            samples.push(timed(&mut tool, request(navigate(url))).await);
            // The thread's only page: its browser closes, the profile stays on disk.
            acted(&mut tool, request(Action::Close(CloseAction {}))).await;
        }
    }
    Cold::from_samples(new, relaunch)
}

async fn timed(tool: &mut Tool, request: ActRequest) -> Duration {
    let at = Instant::now();
    acted(tool, request).await;
    at.elapsed()
}
