//! `scroll {dy}`: a wheel turn in the middle of the viewport, so the element under it (the page
//! or an inner scroller) scrolls as it would for a person.

use nanomuse_proto::{ScrollReply, ScrollRequest};
use serde_json::json;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

use nanomuse_common::limits::SCROLL_MAX_PX as MAX_SCROLL_PX;

pub async fn run(page: &PageHandle, request: &ScrollRequest) -> Result<ScrollReply> {
    let dy = request.dy;
    if !dy.is_finite() || dy.abs() > MAX_SCROLL_PX {
        return Err(WorkerError::invalid(format!(
            "scroll by {dy} px is out of range: use -{MAX_SCROLL_PX}..={MAX_SCROLL_PX}"
        )));
    }
    let settings = page.settings();
    let (x, y) = (settings.width as f64 / 2.0, settings.height as f64 / 2.0);
    page.cdp(
        "Input.dispatchMouseEvent",
        json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": dy}),
    )
    .await?;
    Ok(ScrollReply {})
}
