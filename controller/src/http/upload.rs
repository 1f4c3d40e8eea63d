//! `POST /api/browser/{thread}/upload`: the `upload` action over HTTP, for callers that speak
//! neither gRPC nor MCP. The body is the MCP tool's arguments (`n`, `files` as
//! `[{name, content_base64, mime_type?}]`, `downloads` as names) plus an optional `workspace`
//! for a new thread; the answer the action's reply as JSON.

use axum::Json;
use axum::extract::DefaultBodyLimit;
use axum::extract::Path;
use rmcp::model::JsonObject;
use serde_json::{Value, json};

use super::{ApiResult, Body, Caller, Http, State};
use crate::error::ControllerError;

/// The largest body the route takes: 20 MiB of files is about 27 MiB of base64.
pub const BODY_MAX: usize = 32 * 1024 * 1024;

pub fn limit() -> DefaultBodyLimit {
    DefaultBodyLimit::max(BODY_MAX)
}

pub async fn upload(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(mut body): Body<JsonObject>,
) -> ApiResult<Json<Value>> {
    let workspace = match body.remove("workspace") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(workspace)) => workspace,
        Some(other) => {
            return Err(ControllerError::InvalidArgument(format!(
                "`workspace` is a name (a string), not {other}"
            )));
        }
    };
    let action = crate::mcp::tools::read_upload(body).map_err(|error| {
        ControllerError::InvalidArgument(format!(
            "{error}; the body takes n, files [{{name, content_base64, mime_type}}], downloads \
             and workspace"
        ))
    })?;
    let reply = http
        .controller
        .act(
            &tenant,
            nanomuse_proto::ActRequest {
                thread,
                workspace,
                action: Some(action),
                ..Default::default()
            },
        )
        .await?;
    let elements: Vec<Value> = reply
        .elements
        .iter()
        .map(|e| json!({"n": e.n, "label": e.label, "kind": e.kind, "href": e.href, "state": e.state}))
        .collect();
    Ok(Json(json!({
        "text": reply.text,
        "url": reply.url,
        "title": reply.title,
        "elements": elements,
        "frame": reply.frame.map(|f| json!({"id": f.id, "caption": f.caption,
                                             "width": f.width, "height": f.height})),
        "backend": reply.backend,
    })))
}
