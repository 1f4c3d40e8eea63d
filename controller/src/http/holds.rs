//! Holds over HTTP: the state (open holds and threads), opening a hold, Done, and the
//! take-over / hand-back control of a thread.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiResult, Body, Caller, FrameView, Http, State};
use crate::error::ControllerError;
use crate::holds::OpenedBy;

/// `GET /api/state`: the open holds, the threads with their latest frame, and the phones with
/// a browser connected now.
pub async fn state(State(http): Http, Caller(tenant): Caller) -> ApiResult<Json<Value>> {
    let controller = &http.controller;
    let store = controller.store();
    let holds = controller.holds.open_holds(&tenant);
    let mut threads = Vec::new();
    for (thread, record) in store.threads(&tenant)? {
        let frame = store.latest_frame(&tenant, &thread)?;
        threads.push(json!({
            "thread": thread,
            "workspace": record.workspace,
            "profile": if record.profile.mobile { "mobile" } else { "desktop" },
            "backend": record.backend,
            "hold": holds.iter().find(|h| h.thread == thread).map(|h| &h.id),
            "frame": frame.as_ref().map(FrameView::from),
        }));
    }
    let devices = controller.devices.of(&tenant);
    Ok(Json(
        json!({"holds": holds, "threads": threads, "devices": devices}),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenHold {
    thread: String,
    reason: String,
}

/// `POST /api/holds {thread, reason}`: 201 with the new hold, or 200 with the one already open.
pub async fn open(
    State(http): Http,
    Caller(tenant): Caller,
    Body(body): Body<OpenHold>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let controller = &http.controller;
    controller.known_thread(&tenant, &body.thread)?;
    let (hold, opened) = controller
        .holds
        .open(&tenant, &body.thread, &body.reason, OpenedBy::User)
        .await?;
    let status = if opened {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({"hold": hold, "opened": opened}))))
}

/// `POST /api/holds/{id}/done`: the user is done; the waiting actions go on.
pub async fn done(
    State(http): Http,
    Caller(tenant): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let hold = http.controller.holds.done(&tenant, &id).await?;
    Ok(Json(json!({"hold": hold})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    action: String,
    /// What the card shows while the user has the page (take_over only).
    #[serde(default)]
    reason: Option<String>,
}

/// `POST /api/browser/{thread}/control {"action": "take_over" | "handed_back"}`.
pub async fn control(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(body): Body<Control>,
) -> ApiResult<Json<Value>> {
    let controller = &http.controller;
    controller.known_thread(&tenant, &thread)?;
    let holds = &controller.holds;
    let hold = match body.action.as_str() {
        "take_over" => {
            let reason = body.reason.as_deref().unwrap_or("You took over the page");
            holds
                .open(&tenant, &thread, reason, OpenedBy::User)
                .await?
                .0
        }
        "handed_back" => holds.hand_back(&tenant, &thread).await?,
        other => {
            return Err(ControllerError::InvalidArgument(format!(
                "unknown control action {other:?}: use \"take_over\" or \"handed_back\""
            )));
        }
    };
    Ok(Json(json!({"hold": hold})))
}
