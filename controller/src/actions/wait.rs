//! `wait [seconds]`: up to 15 s for a page that is still drawing itself, then the page state.

use nanomuse_proto::{ActReply, WaitAction};

use super::Ctx;
use crate::error::{ControllerError, Result};

pub const MAX_WAIT_SECONDS: f64 = 15.0;

pub async fn run(ctx: &mut Ctx<'_>, action: WaitAction) -> Result<ActReply> {
    let seconds = action.seconds;
    if !seconds.is_finite() || !(0.0..=MAX_WAIT_SECONDS).contains(&seconds) {
        return Err(ControllerError::InvalidArgument(format!(
            "wait takes 0 to {MAX_WAIT_SECONDS} seconds, not {seconds}"
        )));
    }
    let bound = if seconds == 0.0 {
        ctx.settle_ms
    } else {
        (seconds * 1000.0) as u32
    };
    let settled = ctx.settle(bound).await?;
    let head = if settled {
        "The page is quiet.".to_string()
    } else {
        format!(
            "Waited {:.1} s; the page is still busy.",
            bound as f64 / 1000.0
        )
    };
    let (listing, frame) = ctx.look("Waited".into()).await?;
    Ok(ctx.page_reply(
        format!("{head} {} — {}", listing.title, listing.url),
        listing,
        frame,
    ))
}
