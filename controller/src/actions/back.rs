//! `back`: one step back in history.

use nanomuse_proto::{ActReply, BackRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let reply = on_page!(ctx, {
        ctx.backend
            .back(BackRequest {
                session: ctx.session(),
            })
            .await
    })?;
    ctx.note_refused(reply.refused);
    let page = reply.page.unwrap_or_default();
    ctx.after_change(
        "Went back".into(),
        format!("Went back to {} — {}", page.title, page.url),
    )
    .await
}
