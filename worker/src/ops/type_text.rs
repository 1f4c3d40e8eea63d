//! `type {text}`: fills the focused field through the page's own value setter plus `input` and
//! `change` events, so React and Vue forms notice; a contenteditable gets `insertText`. Where
//! the page breaks that path (troopjs's shims replace `Object.getOwnPropertyDescriptor`,
//! MooTools replaces `Event`) or the value does not take, the field's text is selected and
//! typed over with trusted input, `Input.insertText`, as a keyboard would.

use nanomuse_proto::limits::TYPE_TEXT_MAX_CHARS as MAX_TEXT_CHARS;
use nanomuse_proto::{TypeReply, TypeRequest};
use serde_json::{Value, json};

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// Returns null on success, `{trusted: true}` when the field (its text selected) wants trusted
/// input instead, else why nothing was typed. The phone's copy: android/…/Scripts.kt.
const FILL_FOCUSED_JS: &str = r#"(text) => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body || el === document.documentElement) {
    return 'nothing is focused: tap or click a field first';
  }
  if (el.isContentEditable) {
    document.execCommand('selectAll', false);
    document.execCommand('insertText', false, text);
    return null;
  }
  const classes = [HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement];
  const cls = classes.find((c) => el instanceof c);
  const tag = String(el.tagName).toLowerCase();
  // A polyfill's wrapper of a field (Polymer's) is no instance of the DOM's classes.
  if (!cls && !['input', 'textarea', 'select'].includes(tag)) {
    return 'the focused element (' + tag + ') does not take text';
  }
  if (el.disabled || el.readOnly) return 'the focused field is disabled or read-only';
  let took = false;
  try {
    const value = Reflect.getOwnPropertyDescriptor(cls.prototype, 'value');
    value.set.call(el, text);
    // Checked before the events: what the page's handlers then do to the value is theirs.
    took = cls === HTMLSelectElement || value.get.call(el) === text;
    if (took) {
      el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text}));
      el.dispatchEvent(new Event('change', {bubbles: true}));
      return null;
    }
  } catch (_) {
    // The page patched what the setter path uses, or wrapped the field: trusted input below,
    // unless its handlers already saw the value (a later event of ours failed).
    if (took) return null;
  }
  try { el.select(); } catch (_) { /* typed at the caret */ }
  return {trusted: true};
}"#;

pub async fn run(page: &PageHandle, request: &TypeRequest) -> Result<TypeReply> {
    if request.text.chars().count() > MAX_TEXT_CHARS {
        return Err(WorkerError::invalid(format!(
            "the text is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    match page.evaluate(FILL_FOCUSED_JS, &json!(request.text)).await? {
        Value::Null => Ok(TypeReply {}),
        Value::Object(asked) if asked.get("trusted") == Some(&Value::Bool(true)) => {
            tracing::debug!("the page's setter path failed; typing with trusted input");
            page.cdp("Input.insertText", json!({"text": request.text}))
                .await?;
            Ok(TypeReply {})
        }
        Value::String(why) => Err(WorkerError::FailedPrecondition(why)),
        other => Err(WorkerError::FailedPrecondition(other.to_string())),
    }
}
