//! A thread's settings over HTTP: which backend its page is on.

use axum::Json;
use axum::extract::Path;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiResult, Body, Caller, Http, State};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backend {
    backend: String,
}

/// `POST /api/browser/{thread}/backend {"backend": "auto" | "playwright" | "device"}`.
pub async fn set_backend(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(body): Body<Backend>,
) -> ApiResult<Json<Value>> {
    let record = http
        .controller
        .set_backend(&tenant, &thread, &body.backend)
        .await?;
    Ok(Json(
        json!({"thread": thread, "backend": record.backend.as_str()}),
    ))
}
