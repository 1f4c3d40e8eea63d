//! `type {text}`: fills the focused field through the page's own value setter plus `input` and
//! `change` events, so React and Vue forms notice; a contenteditable gets `insertText`.

use nanomuse_proto::limits::TYPE_TEXT_MAX_CHARS as MAX_TEXT_CHARS;
use nanomuse_proto::{TypeReply, TypeRequest};
use serde_json::{Value, json};

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// Returns null on success, else why nothing was typed.
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
  if (!cls) return 'the focused element (' + el.tagName.toLowerCase() + ') does not take text';
  if (el.disabled || el.readOnly) return 'the focused field is disabled or read-only';
  Object.getOwnPropertyDescriptor(cls.prototype, 'value').set.call(el, text);
  el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return null;
}"#;

pub async fn run(page: &PageHandle, request: &TypeRequest) -> Result<TypeReply> {
    if request.text.chars().count() > MAX_TEXT_CHARS {
        return Err(WorkerError::invalid(format!(
            "the text is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    match page.evaluate(FILL_FOCUSED_JS, &json!(request.text)).await? {
        Value::Null => Ok(TypeReply {}),
        Value::String(why) => Err(WorkerError::FailedPrecondition(why)),
        other => Err(WorkerError::FailedPrecondition(other.to_string())),
    }
}
