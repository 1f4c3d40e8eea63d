//! `type {text}`: fills the focused field through the page's own value setter plus `input` and
//! `change` events, so React and Vue forms notice. Where
//! the page breaks that path (troopjs's shims replace `Object.getOwnPropertyDescriptor`,
//! MooTools replaces `Event`) or the value does not take, the field's text is selected and
//! typed over with trusted input, `Input.insertText`, as a keyboard would. A code editor's
//! hidden field and a rich text editor (a contenteditable) get the editor's own select-all
//! (Ctrl+A), then the text as a paste, which the editor keeps as it is (typing, only where the
//! page takes no paste).

use nanomuse_common::limits::TYPE_TEXT_MAX_CHARS as MAX_TEXT_CHARS;
use nanomuse_proto::{TypeReply, TypeRequest};
use serde_json::{Value, json};

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// Ctrl+A as a keyboard sends it: a code editor's own select-all (CodeMirror, Ace and Monaco
/// bind it), else the browser's, which the key's `commands` run when the page leaves it be.
fn select_all() -> [(&'static str, Value); 2] {
    key_press(
        json!({"key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65,
        "nativeVirtualKeyCode": 65, "modifiers": 2}),
        "selectAll",
    )
}

/// Delete, which empties what select-all selected (no editor takes an empty paste).
fn delete() -> [(&'static str, Value); 2] {
    key_press(
        json!({"key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46,
        "nativeVirtualKeyCode": 46}),
        "deleteForward",
    )
}

fn key_press(key: Value, command: &str) -> [(&'static str, Value); 2] {
    let mut press = key.clone();
    press["type"] = json!("rawKeyDown");
    press["commands"] = json!([command]);
    let mut release = key;
    release["type"] = json!("keyUp");
    [
        ("Input.dispatchKeyEvent", press),
        ("Input.dispatchKeyEvent", release),
    ]
}

pub async fn run(page: &PageHandle, request: &TypeRequest) -> Result<TypeReply> {
    if request.text.chars().count() > MAX_TEXT_CHARS {
        return Err(WorkerError::invalid(format!(
            "the text is longer than {MAX_TEXT_CHARS} characters"
        )));
    }
    match page
        .evaluate(nanomuse_proto::scripts::FILL_FOCUSED, &json!(request.text))
        .await?
    {
        Value::Null => Ok(TypeReply {}),
        Value::Object(asked) if asked.get("trusted") == Some(&Value::Bool(true)) => {
            if asked.get("selectAll") == Some(&Value::Bool(true)) {
                tracing::debug!("a code editor's hidden field: its select-all, then a paste");
                page.cdp_in_order(&select_all()).await?;
                if request.text.is_empty() {
                    page.cdp_in_order(&delete()).await?;
                    return Ok(TypeReply {});
                }
                let pasted = page
                    .evaluate(nanomuse_proto::scripts::PASTE_FOCUSED, &json!(request.text))
                    .await?;
                if pasted == Value::Bool(true) {
                    return Ok(TypeReply {});
                }
            }
            tracing::debug!("typing with trusted input");
            page.cdp("Input.insertText", json!({"text": request.text}))
                .await?;
            Ok(TypeReply {})
        }
        Value::String(why) => Err(WorkerError::FailedPrecondition(why)),
        other => Err(WorkerError::FailedPrecondition(other.to_string())),
    }
}
