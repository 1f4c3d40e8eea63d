//! `fetch url [method] [body]`: an HTTP request with the browser's cookies, no page rendered.
//! The reply gives the status, the headers and the body as text, truncated when long.

use nanomuse_proto::{ActReply, FetchAction, FetchRequest, FetchResult};

use super::Ctx;
use crate::error::{ControllerError, Result};

const BODY_CHARS: usize = 20_000;

pub async fn run(ctx: &mut Ctx<'_>, action: FetchAction) -> Result<ActReply> {
    if action.url.trim().is_empty() {
        return Err(ControllerError::InvalidArgument(
            "fetch needs a URL, e.g. fetch https://example.com/api/orders".into(),
        ));
    }
    let reply = on_page!(ctx, {
        ctx.backend
            .fetch(FetchRequest {
                session: ctx.session(),
                url: action.url.trim().to_string(),
                method: action.method.clone(),
                headers: action.headers.clone(),
                body: action.body.clone().into_bytes(),
            })
            .await
    })?;
    let body = String::from_utf8_lossy(&reply.body);
    let (shown, truncated) = super::truncate(&body, BODY_CHARS);
    let headers: Vec<String> = reply
        .headers
        .iter()
        .map(|h| format!("{}: {}", h.name, h.value))
        .collect();
    Ok(ActReply {
        text: format!(
            "HTTP {} from {}\n{}\n\n{shown}",
            reply.status,
            reply.url,
            headers.join("\n")
        ),
        url: reply.url.clone(),
        fetch: Some(FetchResult {
            status: reply.status,
            headers: reply.headers,
            body: shown,
            truncated,
            body_bytes: reply.body.len() as u64,
        }),
        ..Default::default()
    })
}
