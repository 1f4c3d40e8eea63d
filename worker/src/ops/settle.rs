//! `settle {timeout_ms}`: waits until the document has loaded, no request is in flight (nor
//! does traffic linger, see [`crate::tracker`]) and a frame has been drawn without network
//! activity meanwhile — bounded by the timeout. The reply carries what the URL policy refused
//! for the page meanwhile, and the files its downloads saved (waited for within the bound).

use std::time::Duration;

use nanomuse_proto::{SettleReply, SettleRequest};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::Result;
use crate::page::PageHandle;

/// How long a look waits for the page's next network event before it looks again anyway.
const LOOK_AGAIN: Duration = Duration::from_millis(250);

/// The longest settle anyone may ask for.
pub const MAX_SETTLE: Duration = Duration::from_secs(60);

pub async fn run(
    page: &PageHandle,
    request: &SettleRequest,
    default_timeout: Duration,
) -> Result<SettleReply> {
    let bound = match request.timeout_ms {
        0 => default_timeout,
        ms => Duration::from_millis(ms.into()),
    }
    .min(MAX_SETTLE);
    let deadline = Instant::now() + bound;
    let settled = wait(page, deadline).await?;
    let at_once = settled == Some(Round::First) && page.tracker.quiet_since_action();
    // A click on a link to a file: its download, once complete, is what the action did.
    let downloads = page.downloads.finished(&page.target_id, deadline).await;
    Ok(SettleReply {
        settled: settled.is_some(),
        at_once,
        status: page.tracker.current_status(),
        refused: super::sentences(page.take_refusals(None)),
        downloads,
        // The op around it knows (see `ChromiumBackend::settle`).
        window: 0,
    })
}

/// The round of looks in which the page was found settled.
#[derive(Debug, PartialEq)]
enum Round {
    First,
    Later,
}

/// Until the page is settled (in which round), or `None` at the deadline.
async fn wait(page: &PageHandle, deadline: Instant) -> Result<Option<Round>> {
    let mut changes = page.tracker.subscribe();
    let mut round = Round::First;
    loop {
        let round_start = std::time::Instant::now();
        let state = match tokio::time::timeout_at(
            deadline,
            page.evaluate(nanomuse_proto::scripts::FRAME_DRAWN, &Value::Null),
        )
        .await
        {
            Err(_) => return Ok(None),
            // A document being replaced has no frames to give; look again after the change.
            Ok(Err(_)) => None,
            Ok(Ok(state)) => state.as_str().map(str::to_string),
        };
        let network = page.tracker.snapshot();
        let quiet = network.in_flight == 0 && network.last_activity <= round_start;
        if state.as_deref() == Some("complete") && quiet {
            return Ok(Some(round));
        }
        round = Round::Later;
        if network.in_flight > 0 || state.is_none() || state.as_deref() != Some("complete") {
            changes.borrow_and_update();
            // Lingering traffic's quiet ends at a time, not at an event: look again then.
            let look_again = network.lingering_until.map_or(LOOK_AGAIN, |until| {
                until
                    .saturating_duration_since(std::time::Instant::now())
                    .min(LOOK_AGAIN)
            });
            let next_change = tokio::time::timeout(look_again, changes.changed());
            if tokio::time::timeout_at(deadline, next_change)
                .await
                .is_err()
            {
                return Ok(None);
            }
        }
    }
}
