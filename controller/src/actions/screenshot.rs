//! `screenshot`: a fresh picture for the chat card, and the listing that goes with it.

use nanomuse_proto::ActReply;

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let (listing, frame) = ctx.look_now("Screenshot".into()).await?;
    Ok(ctx.page_reply(
        format!("{} — {}", listing.title, listing.url),
        listing,
        frame,
    ))
}
