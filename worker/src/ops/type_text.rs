//! `type {text}`: fills the focused field through the page's own value setter plus `input` and
//! `change` events, so React and Vue forms notice; a contenteditable gets `insertText`. Where
//! the page breaks that path (troopjs's shims replace `Object.getOwnPropertyDescriptor`,
//! MooTools replaces `Event`) or the value does not take, the field's text is selected and
//! typed over with trusted input, `Input.insertText`, as a keyboard would.

use nanomuse_common::limits::TYPE_TEXT_MAX_CHARS as MAX_TEXT_CHARS;
use nanomuse_proto::{TypeReply, TypeRequest};
use serde_json::{Value, json};

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

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
            tracing::debug!("the page's setter path failed; typing with trusted input");
            page.cdp("Input.insertText", json!({"text": request.text}))
                .await?;
            Ok(TypeReply {})
        }
        Value::String(why) => Err(WorkerError::FailedPrecondition(why)),
        other => Err(WorkerError::FailedPrecondition(other.to_string())),
    }
}
