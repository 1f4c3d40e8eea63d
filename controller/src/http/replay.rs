//! A thread's replay over HTTP ([`crate::replay`]): the page that steps through its frames
//! with the actions alongside (`/replay/{thread}`, the tenant's token as the card takes it),
//! the timeline it reads as JSON, the same page with every picture inside it as one HTML file
//! to take away, and the per-thread recording switch.
//!
//! The page is the card's kind: one file served from the binary, its inline script and style
//! allowed by their SHA-256 and nothing else, framed by this server's pages only. The export
//! is that page with the timeline in a JSON block (never run) and the pictures as data: URLs,
//! streamed a frame at a time; opened from disk it needs nothing else.

use std::sync::{Arc, LazyLock};

use axum::Json;
use axum::body::{Body as HttpBody, Bytes};
use axum::extract::Path;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use base64::Engine as _;
use futures::stream;
use serde::Deserialize;
use serde_json::{Value, json};

use super::card::inline_hash;
use super::{ApiResult, Body, Caller, Http, State};
use crate::replay::{Timeline, TimelineFrame};
use crate::store::Store;

const PAGE: &str = include_str!("replay.html");

/// Where the export puts its data.
const DATA_MARK: &str = "<!--REPLAY-DATA-->";

/// The replay page's Content-Security-Policy; `data:` pictures for the export.
static POLICY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src 'self' data:; \
         connect-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'",
        inline_hash(PAGE, "script"),
        inline_hash(PAGE, "style"),
    )
});

fn page_headers() -> [(header::HeaderName, &'static str); 3] {
    [
        (header::CONTENT_SECURITY_POLICY, POLICY.as_str()),
        (header::X_FRAME_OPTIONS, "SAMEORIGIN"),
        // The page's URL may carry `?token=`: no request of it says where it came from.
        (header::REFERRER_POLICY, "no-referrer"),
    ]
}

/// `GET /replay/{thread}`.
pub async fn page(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Response> {
    http.controller.known_thread(&tenant, &thread)?;
    Ok((page_headers(), Html(PAGE)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    on: bool,
}

/// `POST /api/browser/{thread}/recording {"on": true | false}`: whether the thread keeps
/// every frame of its next actions, whatever `controller.recording.on` says.
pub async fn switch(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    Body(body): Body<Switch>,
) -> ApiResult<Json<Value>> {
    let controller = &http.controller;
    controller.known_thread(&tenant, &thread)?;
    // The frame of an action already answered is still its own: taken as the switch found it.
    controller.frames().captured(&tenant, &thread, "").await;
    let store = controller.store();
    store.recordings().set_switch(&tenant, &thread, body.on)?;
    store.flush().await?;
    tracing::info!(thread, on = body.on, "recording switched");
    Ok(Json(json!({"thread": thread, "recording": body.on})))
}

/// The thread's timeline, once its frames still being captured are in.
async fn read(http: &super::HttpState, tenant: &str, thread: &str) -> ApiResult<(Timeline, bool)> {
    let controller = &http.controller;
    controller.known_thread(tenant, thread)?;
    controller.frames().captured(tenant, thread, "").await;
    let store = controller.store();
    let retention = controller.frames().recording().for_tenant(tenant);
    let recording = store.recordings().is_on(tenant, thread, retention)?;
    Ok((
        crate::replay::timeline(store.as_ref(), tenant, thread)?,
        recording,
    ))
}

/// A frame as the page reads it, its picture at `jpeg`.
fn frame_json(thread: &str, frame: &TimelineFrame, jpeg: String) -> Value {
    let f = &frame.frame;
    json!({
        "id": f.id,
        "action": f.action,
        "caption": f.caption,
        "url": f.url,
        "title": f.title,
        "width": f.width,
        "height": f.height,
        "created_ms": f.created_ms,
        "recorded": frame.order.is_some(),
        "thread": thread,
        "jpeg": jpeg,
    })
}

/// `GET /api/browser/{thread}/replay`: `{thread, recording, frames, holds}`, frames oldest
/// first, each with its action, caption, URL, time and picture (`jpeg`, a path of the API).
pub async fn timeline(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Json<Value>> {
    let (timeline, recording) = read(&http, &tenant, &thread).await?;
    let frames: Vec<Value> = timeline
        .frames
        .iter()
        .map(|frame| {
            let path = format!("/api/browser/{thread}/frames/{}", frame.frame.id);
            frame_json(&thread, frame, path)
        })
        .collect();
    Ok(Json(json!({
        "thread": thread,
        "recording": recording,
        "frames": frames,
        "holds": timeline.holds,
    })))
}

/// JSON to sit inside a `<script>` block: no `<` to end it early.
fn in_script(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

/// `GET /api/browser/{thread}/replay.html`: the replay page with the timeline and every
/// picture inside it, as a download.
pub async fn export(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Response> {
    let (timeline, recording) = read(&http, &tenant, &thread).await?;
    let (before, after) = PAGE
        .split_once(DATA_MARK)
        .expect("replay.html marks where the data goes");
    let head = json!({
        "thread": thread,
        "recording": recording,
        "holds": timeline.holds,
    });
    // `{…,"frames":[` then the frames one by one, then `]}`.
    let mut open = in_script(&head);
    open.pop();
    let open =
        format!("{before}<script type=\"application/json\" id=\"replay-data\">{open},\"frames\":[");
    let close = format!("]}}</script>{after}");
    let store = http.controller.store().clone();
    let frames = FramesInline {
        store,
        tenant,
        thread: thread.clone(),
        frames: timeline.frames.into_iter(),
        first: true,
    };
    let body = stream::iter(
        std::iter::once(open)
            .chain(frames)
            .chain(std::iter::once(close))
            .map(|chunk| Ok::<_, std::convert::Infallible>(Bytes::from(chunk))),
    );
    let name: String = thread
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = format!("attachment; filename=\"replay-{name}.html\"");
    let mut response = (page_headers(), HttpBody::from_stream(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        header::HeaderValue::from_str(&disposition).expect("an ASCII file name"),
    );
    Ok(response)
}

/// The export's frames as JSON, each with its picture as a data: URL, read from the store one
/// at a time as the download goes. A picture pruned meanwhile leaves its frame out.
struct FramesInline {
    store: Arc<dyn Store>,
    tenant: String,
    thread: String,
    frames: std::vec::IntoIter<TimelineFrame>,
    first: bool,
}

impl Iterator for FramesInline {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        loop {
            let mut frame = self.frames.next()?;
            let jpeg = match (frame.jpeg.take(), frame.order) {
                (Some(jpeg), _) => Some(jpeg),
                (None, Some(order)) => self
                    .store
                    .recordings()
                    .jpeg(&self.tenant, &self.thread, order)
                    .unwrap_or_else(|error| {
                        tracing::warn!(%error, "a recorded picture could not be read");
                        None
                    }),
                (None, None) => None,
            };
            let Some(jpeg) = jpeg else { continue };
            let url = format!(
                "data:image/jpeg;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(jpeg)
            );
            let comma = if std::mem::take(&mut self.first) {
                ""
            } else {
                ","
            };
            return Some(format!(
                "{comma}{}",
                in_script(&frame_json(&self.thread, &frame, url))
            ));
        }
    }
}
