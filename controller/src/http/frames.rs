//! Frames over HTTP: the latest or a given one as JPEG, a live picture taken now, and the
//! thread's event stream (SSE) of new frames and hold changes.

use std::convert::Infallible;

use axum::extract::Path;
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt, stream};
use serde_json::json;
use tokio_stream::wrappers::BroadcastStream;

use super::{ApiResult, Caller, FrameView, Http, State};

fn jpeg(bytes: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/jpeg"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        bytes,
    )
        .into_response()
}

/// `GET /api/browser/{thread}/frame`: the thread's latest frame.
pub async fn latest(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Response> {
    http.controller.known_thread(&tenant, &thread)?;
    let frame = http.controller.frame(&tenant, &thread, "").await?;
    Ok(jpeg(frame.jpeg))
}

/// `GET /api/browser/{thread}/frames/{id}`: one of the thread's last frames.
pub async fn by_id(
    State(http): Http,
    Caller(tenant): Caller,
    Path((thread, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let frame = http.controller.frame(&tenant, &thread, &id).await?;
    Ok(jpeg(frame.jpeg))
}

/// `GET /api/browser/{thread}/live`: the page as it is now (not stored), for the card's
/// once-a-second refresh while the user has the page.
pub async fn live(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Response> {
    let shot = http.controller.live_picture(&tenant, &thread).await?;
    Ok(jpeg(shot.jpeg))
}

/// `GET /api/browser/{thread}/events`: first a `state` event (the open hold and the latest
/// frame), then a `frame` event per new frame and a `hold` event per change of the thread's
/// holds, until the client leaves or the controller stops.
pub async fn events(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let controller = &http.controller;
    controller.known_thread(&tenant, &thread)?;
    // Subscribe before reading the state, so nothing falls between the two.
    let frames = BroadcastStream::new(controller.frames().watch(&tenant, &thread));
    let holds = BroadcastStream::new(controller.holds.changes());
    let latest = controller.store().latest_frame(&tenant, &thread)?;
    let first = Event::default().event("state").json_data(json!({
        "hold": controller.holds.open_hold(&tenant, &thread),
        "frame": latest.as_ref().map(FrameView::from),
    }));

    let frames = frames.filter_map(|frame| async move {
        // A lagging card skips frames; the next one shows the page anyway.
        let frame = frame.ok()?;
        Event::default()
            .event("frame")
            .json_data(FrameView::from(&frame))
            .ok()
    });
    let own_thread = thread.clone();
    let holds = holds.filter_map(move |change| {
        let mine = change
            .ok()
            .filter(|c| c.tenant == tenant && c.hold.thread == own_thread);
        async move { Event::default().event("hold").json_data(mine?.hold).ok() }
    });
    let events = stream::iter(first.ok())
        .chain(stream::select(frames, holds))
        .map(Ok)
        .take_until(http.shutdown.clone().cancelled_owned());
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
