//! `extract`: the page's readable text, the first several thousand characters. No frame: the
//! page does not change.

use nanomuse_proto::ActReply;
use serde_json::json;

use super::Ctx;
use crate::error::Result;

const EXTRACT_CHARS: usize = 8_000;

const TEXT_JS: &str = "() => ({url: location.href, title: document.title, \
     text: document.body ? document.body.innerText : ''})";

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let page = ctx.evaluate(TEXT_JS, json!(null)).await?;
    let url = page["url"].as_str().unwrap_or_default().to_string();
    let title = page["title"].as_str().unwrap_or_default().to_string();
    let (text, _) = super::truncate(
        page["text"].as_str().unwrap_or_default().trim(),
        EXTRACT_CHARS,
    );
    Ok(ActReply {
        text: format!("{title} — {url}\n\n{text}"),
        url,
        title,
        ..Default::default()
    })
}
