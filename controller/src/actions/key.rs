//! `key key`: presses Enter, Tab, Escape, … on the focused element.

use nanomuse_proto::{ActReply, KeyAction, KeyRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: KeyAction) -> Result<ActReply> {
    on_page!(ctx, {
        ctx.backend
            .key(KeyRequest {
                session: ctx.session(),
                key: action.key.clone(),
            })
            .await
    })?;
    let caption = format!("Pressed {}", action.key);
    ctx.after_change(caption.clone(), format!("{caption}."))
        .await
}
