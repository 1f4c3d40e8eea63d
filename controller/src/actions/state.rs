//! `state`: where the page is, without changing it or making a frame.

use nanomuse_proto::{ActReply, StateRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let state = on_page!(ctx, {
        ctx.backend
            .state(StateRequest {
                session: ctx.session(),
            })
            .await
    })?;
    let loading = if state.loading {
        " (still loading)"
    } else {
        ""
    };
    Ok(ActReply {
        text: format!(
            "{} — {}{loading}; {}×{} on {}",
            state.title, state.url, state.width, state.height, state.host
        ),
        url: state.url,
        title: state.title,
        ..Default::default()
    })
}
