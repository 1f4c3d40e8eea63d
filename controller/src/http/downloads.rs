//! A workspace's downloads over HTTP: `GET /api/workspaces/{workspace}/downloads` lists them
//! (JSON), `GET /api/workspaces/{workspace}/downloads/{name}` streams one file's bytes from
//! its worker, for the tenant's own workspaces only. A name that could leave the folder (a
//! path, `..`, a hidden name) is a 400 before any worker is asked.

use axum::body::Body;
use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::TryStreamExt as _;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::json;

use super::{ApiResult, Caller, Http, State};

/// `GET /api/workspaces/{workspace}/downloads`: the files, newest first.
pub async fn list(
    State(http): Http,
    Caller(tenant): Caller,
    Path(workspace): Path<String>,
) -> ApiResult<Response> {
    let files = http.controller.list_downloads(&tenant, &workspace).await?;
    let files: Vec<_> = files
        .iter()
        .map(|file| {
            json!({
                "name": file.name,
                "size": file.size,
                "completed_ms": file.completed_ms,
                "url": file.url,
                "page": file.page,
            })
        })
        .collect();
    Ok(axum::Json(json!({"workspace": workspace, "downloads": files})).into_response())
}

/// `GET /api/workspaces/{workspace}/downloads/{name}`: the file, streamed as it is read.
pub async fn file(
    State(http): Http,
    Caller(tenant): Caller,
    Path((workspace, name)): Path<(String, String)>,
) -> ApiResult<Response> {
    let body = http
        .controller
        .read_download(&tenant, &workspace, &name)
        .await?;
    let disposition = format!(
        "attachment; filename*=UTF-8''{}",
        utf8_percent_encode(&name, NON_ALPHANUMERIC)
    );
    let chunks = body
        .chunks
        .map_err(|error| std::io::Error::other(error.to_string()));
    let response = Response::builder()
        // Whatever the file is, a browser shows it as nothing but a download: a page saved
        // from some site must not run as this server's own.
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .header(header::CONTENT_DISPOSITION, disposition)
        .header(header::CONTENT_LENGTH, body.size)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from_stream(chunks))
        .map_err(|e| crate::error::ControllerError::Store(e.to_string()))?;
    Ok(response)
}
