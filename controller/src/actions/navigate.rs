//! `navigate url`: opens a page; the reply lists its interactive elements, numbered.

use nanomuse_proto::{ActReply, NavigateAction, NavigateRequest};

use super::Ctx;
use crate::error::{ControllerError, Result};

pub async fn run(ctx: &mut Ctx<'_>, action: NavigateAction) -> Result<ActReply> {
    let url = action.url.trim();
    if url.is_empty() {
        return Err(ControllerError::InvalidArgument(
            "navigate needs a URL, e.g. navigate https://example.com/".into(),
        ));
    }
    let reply = on_page!(ctx, {
        ctx.backend
            .navigate(NavigateRequest {
                session: ctx.session(),
                url: url.to_string(),
                timeout_ms: ctx.navigate_ms,
            })
            .await
    })?;
    ctx.note_refused(reply.refused);
    let page = reply.page.unwrap_or_default();
    if !reply.download.is_empty() {
        return Ok(ActReply {
            text: format!(
                "{url} is a download: saved {} to the workspace's downloads/ folder. The page \
                 stays at {}.",
                reply.download, page.url
            ),
            url: page.url,
            title: page.title,
            ..Default::default()
        });
    }
    let status = match reply.status {
        400.. => format!(" (HTTP {})", reply.status),
        _ => String::new(),
    };
    ctx.after_change(
        format!("Opened {}", page.url),
        format!("{} — {}{status}", page.title, page.url),
    )
    .await
}
