//! `close`: closes the page; the profile and its cookies stay.

use nanomuse_proto::{ActReply, BackendError, CloseRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let closed = ctx
        .backend
        .close(CloseRequest {
            session: ctx.session(),
        })
        .await;
    match closed {
        Ok(_) | Err(BackendError::NotFound(_)) => {}
        Err(error) => return Err(error.into()),
    }
    ctx.store.put_listing(ctx.tenant, ctx.thread, None)?;
    Ok(ActReply {
        text: "Closed the page; the profile and its cookies stay.".into(),
        ..Default::default()
    })
}
