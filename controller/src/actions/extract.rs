//! `extract`: the page's readable text, the first several thousand characters. No frame: the
//! page does not change.

use nanomuse_proto::ActReply;
use serde_json::json;

use super::Ctx;
use crate::error::Result;

const EXTRACT_CHARS: usize = 8_000;

/// The page's text and what its fields hold (`proto/scripts/page_text.js`).
const TEXT_JS: &str = nanomuse_proto::scripts::PAGE_TEXT;

/// How much of one field's value is read.
const FIELD_CHARS: usize = 2_000;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let page = ctx.evaluate(TEXT_JS, json!(null)).await?;
    let url = page["url"].as_str().unwrap_or_default().to_string();
    let title = page["title"].as_str().unwrap_or_default().to_string();
    let values = field_values(&page["fields"]);
    // The fields' values are read whole, within the bound; the text gets the rest.
    let (text, _) = super::truncate(
        page["text"].as_str().unwrap_or_default().trim(),
        EXTRACT_CHARS
            .saturating_sub(values.chars().count())
            .max(EXTRACT_CHARS / 2),
    );
    Ok(ActReply {
        text: format!("{}\n\n{text}{values}", super::titled(&title, &url)),
        url,
        title,
        ..Default::default()
    })
}

/// What the page's fields hold, after its text: `"Label": value` each.
fn field_values(fields: &serde_json::Value) -> String {
    let lines: Vec<String> = fields
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|field| {
            let label = field["label"].as_str()?.replace('"', "\\\"");
            let (value, _) = super::truncate(field["value"].as_str()?, FIELD_CHARS);
            Some(format!("\"{label}\": {value}"))
        })
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("\n\nWhat its fields hold:\n{}", lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{BackendError, EvaluateRequest, ExtractAction};
    use serde_json::json;

    use super::*;
    use crate::error::ControllerError;
    use crate::testing::*;

    #[tokio::test]
    async fn the_readable_text_without_a_frame_truncated_when_long() {
        let h = Harness::new(FakeBackend::new());
        h.backend.reply::<EvaluateRequest>(evaluated(json!({
            "url": "https://x.example/a", "title": "A", "text": "  Hello, world.\n ",
        })));
        let (reply, frame) = h.ok(Action::Extract(ExtractAction {})).await;
        assert_eq!(h.backend.ops(), ["evaluate"]);
        assert_eq!(h.backend.requests::<EvaluateRequest>()[0].js, TEXT_JS);
        assert_eq!(reply.text, "A — https://x.example/a\n\nHello, world.");
        assert_eq!(
            (reply.url.as_str(), reply.title.as_str()),
            ("https://x.example/a", "A")
        );
        assert!(frame.is_none() && reply.frame.is_none());
        let long = "é".repeat(EXTRACT_CHARS + 5);
        h.backend.reply::<EvaluateRequest>(evaluated(json!({
            "url": "https://x.example/b", "title": "B", "text": long,
        })));
        let (reply, _) = h.ok(Action::Extract(ExtractAction {})).await;
        assert!(
            reply.text.ends_with("é\n[… 5 more characters]"),
            "{}",
            &reply.text[reply.text.len() - 40..]
        );
    }

    #[tokio::test]
    async fn what_its_fields_hold_follows_the_text() {
        let h = Harness::new(FakeBackend::new());
        h.backend.reply::<EvaluateRequest>(evaluated(json!({
            "url": "https://x.example/a", "title": "A", "text": "Echo output",
            "fields": [
                {"label": "Echo output", "value": "w0 w1\nw2"},
                {"label": "Say \"hi\"", "value": "x".repeat(FIELD_CHARS + 3)},
            ],
        })));
        let (reply, _) = h.ok(Action::Extract(ExtractAction {})).await;
        assert_eq!(
            reply.text,
            format!(
                "A — https://x.example/a\n\nEcho output\n\nWhat its fields hold:\n\
                 \"Echo output\": w0 w1\nw2\n\"Say \\\"hi\\\"\": {}\n[… 3 more characters]",
                "x".repeat(FIELD_CHARS)
            )
        );
    }

    #[tokio::test]
    async fn a_page_gone_is_reopened_and_a_failing_script_is_reported() {
        let h = Harness::new(FakeBackend::new());
        h.backend
            .fail::<EvaluateRequest>(BackendError::NotFound("no page".into()));
        h.backend
            .fail::<EvaluateRequest>(BackendError::FailedPrecondition(
                "the page's script threw: TypeError".into(),
            ));
        let (reply, _) = h.act(Action::Extract(ExtractAction {})).await;
        assert_eq!(h.backend.ops(), ["evaluate", "open", "evaluate"]);
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::FailedPrecondition(
                _
            )))
        ));
    }
}
