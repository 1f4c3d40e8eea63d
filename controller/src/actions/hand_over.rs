//! `hand_over reason`: gives the page to the user (a login, a code, a CAPTCHA) and returns at
//! once. The thread's next action waits until the user presses Done, or the hold times out.

use nanomuse_proto::{ActReply, HandOverAction};

use crate::error::Result;
use crate::holds::{Holds, OpenedBy};

pub async fn run(
    holds: &Holds,
    tenant: &str,
    thread: &str,
    action: &HandOverAction,
) -> Result<ActReply> {
    let (hold, opened) = holds
        .open(tenant, thread, &action.reason, OpenedBy::Agent)
        .await?;
    let minutes = holds.timeout().as_secs().div_ceil(60);
    let text = if opened {
        format!(
            "The page is with the user now ({}: {}). Your next browser action on this thread \
             waits until they press Done (at most {minutes} min); do not ask them for passwords \
             or codes.",
            hold.id, hold.reason
        )
    } else {
        format!(
            "The page is already with the user ({}: {}); your next browser action waits until \
             they press Done (at most {minutes} min).",
            hold.id, hold.reason
        )
    };
    Ok(ActReply {
        text,
        ..Default::default()
    })
}
