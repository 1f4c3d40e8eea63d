//! `click n`: taps the centre of element n of the last listing (scrolled into view first), as a
//! finger would, then lists the page again.

use nanomuse_proto::{ActReply, ClickAction, TapRequest};

use super::{Ctx, quoted};
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: ClickAction) -> Result<ActReply> {
    let before = ctx.store.listing(ctx.tenant, ctx.thread)?.map(|l| l.url);
    let (x, y, label) = ctx.element(action.n, false).await?;
    on_page!(ctx, {
        ctx.backend
            .tap(TapRequest {
                session: ctx.session(),
                x,
                y,
            })
            .await
    })?;
    ctx.settle(ctx.settle_ms).await?;
    let caption = format!("Clicked {}", quoted(&label));
    // The new listing says where the page is now: no op of its own for that.
    let (listing, frame) = ctx.look(caption.clone()).await?;
    let head = if before.as_deref() != Some(listing.url.as_str()) {
        format!("{caption} → now at {} ({})", listing.url, listing.title)
    } else {
        format!("{caption}.")
    };
    Ok(ctx.page_reply(head, listing, frame))
}
