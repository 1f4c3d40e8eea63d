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

/// How many threads `/api/state` lists when the query names no `limit`, and at most.
pub const STATE_PAGE_DEFAULT: usize = 100;
pub const STATE_PAGE_MAX: usize = 1_000;

/// `?limit=N&after=THREAD` of `/api/state` (other parameters, such as `token`, are not ours).
fn page_of(uri: &axum::http::Uri) -> ApiResult<(usize, String)> {
    let mut limit = STATE_PAGE_DEFAULT;
    let mut after = String::new();
    let query = uri.query().unwrap_or_default();
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "limit" => {
                limit = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=STATE_PAGE_MAX).contains(n))
                    .ok_or_else(|| {
                        ControllerError::InvalidArgument(format!(
                            "limit={:?}: give a number of threads from 1 to {STATE_PAGE_MAX}",
                            nanomuse_common::limits::excerpt(&value)
                        ))
                    })?;
            }
            "after" => {
                crate::app::check_id("after (a thread)", &value)?;
                after = value.into_owned();
            }
            _ => {}
        }
    }
    Ok((limit, after))
}

/// `GET /api/state[?limit=N&after=THREAD]`: the open holds, a page of the threads (by name,
/// [`STATE_PAGE_DEFAULT`] unless `limit` says otherwise) with their latest frame, and the
/// phones with a browser connected now. `next` names the thread to ask `after` for the next
/// page; it is absent on the last.
pub async fn state(
    State(http): Http,
    Caller(tenant): Caller,
    uri: axum::http::Uri,
) -> ApiResult<Json<Value>> {
    let (limit, after) = page_of(&uri)?;
    let controller = &http.controller;
    let store = controller.store();
    let holds = controller.holds.open_holds(&tenant);
    let mut threads = Vec::new();
    // One more than the page: whether there is a next one.
    let mut page = store.threads_after(&tenant, &after, limit + 1)?;
    let next = (page.len() > limit).then(|| {
        page.truncate(limit);
        page.last().map(|(name, _)| name.clone())
    });
    for (thread, record) in page {
        let frame = store.latest_frame(&tenant, &thread)?;
        threads.push(json!({
            "thread": thread,
            "workspace": record.workspace,
            "profile": if record.profile.mobile { "mobile" } else { "desktop" },
            "backend": record.backend.as_str(),
            "hold": holds.iter().find(|h| h.thread == thread).map(|h| &h.id),
            "frame": frame.as_ref().map(FrameView::from),
        }));
    }
    let devices = controller.devices.of(&tenant);
    let mut state = json!({"holds": holds, "threads": threads, "devices": devices});
    if let Some(Some(next)) = next {
        state["next"] = json!(next);
    }
    Ok(Json(state))
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
                "unknown control action {:?}: use \"take_over\" or \"handed_back\"",
                nanomuse_common::limits::excerpt(other)
            )));
        }
    };
    Ok(Json(json!({"hold": hold})))
}
