//! `extract`: the page's readable text, the first several thousand characters. No frame: the
//! page does not change.

use nanomuse_proto::ActReply;
use serde_json::json;

use super::Ctx;
use crate::error::Result;

const EXTRACT_CHARS: usize = 8_000;

/// The body's rendered text, where a dropdown reads as the option it shows (its `innerText` is
/// every option, which would say nothing of which is chosen). A list box (`multiple`, `size`)
/// shows its options and keeps them. A page that broke what finding its selects uses is read
/// as drawn. A web component draws its words from its shadow root, which `innerText` leaves
/// out: a page with open shadow roots is read through them, as drawn (a `<slot>` as what it
/// shows), each part without one still by its `innerText`.
const TEXT_JS: &str = r#"() => {
  const body = document.body;
  // What holds a shadow root or a <slot>, which innerText does not read through.
  const holders = new Set();
  const mark = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (!el.shadowRoot && el.localName !== 'slot') continue;
      for (let n = el; n && !holders.has(n); n = n.parentNode || n.host) holders.add(n);
      if (el.shadowRoot) mark(el.shadowRoot);
    }
  };
  const SKIPPED = ['script', 'style', 'template', 'link', 'head'];
  const each = (nodes) => Array.from(nodes, drawn).join('');
  const drawn = (node) => {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType === 11) return each(node.childNodes);
    if (node.nodeType !== 1 || SKIPPED.includes(node.localName)) return '';
    if (node.localName === 'slot') return each(node.assignedNodes({flatten: true}));
    const style = getComputedStyle(node);
    if (style.display === 'none') return '';
    const inner = !holders.has(node) ? node.innerText || ''
      : each(node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes);
    return /^(inline|contents)/.test(style.display) ? inner : '\n' + inner + '\n';
  };
  let text = body ? body.innerText : '';
  try {
    if (body) mark(document);
    if (holders.has(body)) {
      text = drawn(body).replace(/[ \t]+/g, ' ').replace(/ ?\n ?/g, '\n').replace(/\n{3,}/g, '\n\n');
    }
  } catch (_) { /* the body's innerText, then */ }
  // What fields hold is no part of the text (a textarea's innerText is its first value): an
  // app's answer in a read-only box (Gradio's), a field a script filled. A secret's, never.
  const fields = [];
  try {
    const SECRET = /\b(current-password|new-password|one-time-code)\b|pass(word|wd)|\bpwd\b/i;
    const TEXTLESS = ['password', 'hidden', 'checkbox', 'radio', 'file', 'submit', 'button',
      'reset', 'image', 'range', 'color'];
    for (const field of body ? body.querySelectorAll('textarea, input') : []) {
      const value = field.value;
      if (!value || !value.trim() || TEXTLESS.includes(field.type)) continue;
      if (!field.getClientRects().length || (field.checkVisibility && !field.checkVisibility({visibilityProperty: true}))) continue;
      const masked = getComputedStyle(field).webkitTextSecurity;
      if ((window.__nanomuseSecrets && window.__nanomuseSecrets.has(field)) || (masked && masked !== 'none')
        || SECRET.test([field.autocomplete, field.name, field.id].join(' '))) continue;
      const label = field.getAttribute('aria-label') || (field.labels && field.labels[0] && field.labels[0].innerText)
        || field.placeholder || field.name || field.id || field.localName;
      fields.push({label: String(label).replace(/\s+/g, ' ').trim().slice(0, 80), value});
    }
  } catch (_) { /* the text alone */ }
  const page = {url: location.href, title: document.title, text, fields};
  let shown = '', from = 0;
  try {
    for (const select of body ? body.querySelectorAll('select') : []) {
      // A select not drawn is not in the text (its innerText would be its options' source).
      if (select.multiple || select.size > 1 || !select.getClientRects().length) continue;
      const every = select.innerText;
      const at = every ? text.indexOf(every, from) : -1;
      if (at < 0) continue;
      const chosen = select.selectedOptions[0];
      shown += text.slice(from, at) + (chosen ? chosen.text.trim() : '');
      from = at + every.length;
    }
  } catch (_) {
    return page;
  }
  return {...page, text: shown + text.slice(from)};
}"#;

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
        text: format!("{title} — {url}\n\n{text}{values}"),
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
