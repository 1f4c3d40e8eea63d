//! `scroll dy`: scrolls by pixels, negative for up, and lists what is now in view.

use nanomuse_proto::{ActReply, ScrollAction, ScrollRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: ScrollAction) -> Result<ActReply> {
    on_page!(ctx, {
        ctx.backend
            .scroll(ScrollRequest {
                session: ctx.session(),
                dy: action.dy,
            })
            .await
    })?;
    let direction = if action.dy < 0.0 { "up" } else { "down" };
    let caption = format!("Scrolled {direction} {} px", action.dy.abs().round());
    ctx.after_change(caption.clone(), format!("{caption}."))
        .await
}
