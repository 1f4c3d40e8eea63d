//! `evaluate {js, arg}`: runs `(js)(arg)` in the page and returns the JSON of its value.

use nanomuse_proto::{EvaluateReply, EvaluateRequest};
use serde_json::Value;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

const MAX_SCRIPT_BYTES: usize = 1024 * 1024;

pub async fn run(page: &PageHandle, request: &EvaluateRequest) -> Result<EvaluateReply> {
    if request.js.trim().is_empty() {
        return Err(WorkerError::invalid("evaluate needs a function in js"));
    }
    if request.js.len() + request.arg_json.len() > MAX_SCRIPT_BYTES {
        return Err(WorkerError::invalid(format!(
            "the script and its argument exceed {MAX_SCRIPT_BYTES} bytes"
        )));
    }
    let arg = if request.arg_json.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&request.arg_json)
            .map_err(|e| WorkerError::invalid(format!("arg_json is not valid JSON: {e}")))?
    };
    let value = page.evaluate(&request.js, &arg).await?;
    Ok(EvaluateReply {
        value_json: value.to_string(),
    })
}
