//! `type n text`: focuses element n, then types through the backend's `type` (the page's own
//! setters and input events, so frameworks notice). The text is never echoed: it may be secret.

use nanomuse_proto::{ActReply, TypeAction, TypeRequest};

use super::{Ctx, quoted};
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: TypeAction) -> Result<ActReply> {
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
    let head = format!(
        "Typed {} characters into {}.",
        action.text.chars().count(),
        quoted(&label)
    );
    ctx.after_change(caption, head).await
}
