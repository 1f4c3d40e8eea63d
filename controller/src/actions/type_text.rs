//! `type n text`: focuses element n, then types through the backend's `type` (the page's own
//! setters and input events, so frameworks notice). The text is never echoed: it may be secret.

use nanomuse_proto::{ActReply, TypeAction, TypeRequest};

use super::{Ctx, quoted};
use crate::error::{ControllerError, Result};

// Refused before the element is looked up, so an oversized text changes nothing, not even
// the focus or the scroll position.
use nanomuse_proto::limits::TYPE_TEXT_MAX_CHARS as TEXT_MAX;

pub async fn run(ctx: &mut Ctx<'_>, action: TypeAction) -> Result<ActReply> {
    let length = action.text.chars().count();
    if length > TEXT_MAX {
        return Err(ControllerError::InvalidArgument(format!(
            "type takes at most {TEXT_MAX} characters at a time, not {length}; type it in parts"
        )));
    }
    let (_, _, label) = ctx.element(action.n, true).await?;
    on_page!(ctx, {
        ctx.backend
            .r#type(TypeRequest {
                session: ctx.session(),
                text: action.text.clone(),
            })
            .await
    })?;
    let caption = format!("Typed into {}", quoted(&label));
    let head = format!("Typed {} characters into {}.", length, quoted(&label));
    ctx.after_change(caption, head).await
}
