//! `scroll {dy}`: a wheel turn in the middle of the viewport, so the element under it (the page
//! or an inner scroller) scrolls as it would for a person; where neither can move that way, over
//! the largest box in view that can (a sidebar that scrolls apart: see `scroll_point.js`).

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
    // (A page that cannot say, one being replaced, is turned over its middle.)
    let point = page
        .evaluate(nanomuse_proto::scripts::SCROLL_POINT, &json!(dy))
        .await
        .unwrap_or_default();
    let settings = page.settings();
    let at = |axis: &str, size: u32| point[axis].as_f64().unwrap_or(size as f64 / 2.0);
    let (x, y) = (at("x", settings.width), at("y", settings.height));
    page.cdp(
        "Input.dispatchMouseEvent",
        json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": dy}),
    )
    .await?;
    Ok(ScrollReply {})
}
