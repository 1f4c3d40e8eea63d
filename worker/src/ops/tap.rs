//! `tap {x, y, count}`: what a finger does on a phone profile (touch), what a mouse does on a
//! desktop one (move, press, release), at CSS px of the viewport; `count` taps in a row make a
//! double-click (a double tap: the page gets `dblclick` either way).

use nanomuse_proto::{TapReply, TapRequest};
use serde_json::json;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// The most taps in a row: a triple-click (a paragraph selected).
pub const MAX_COUNT: u32 = 3;

pub async fn run(page: &PageHandle, request: &TapRequest) -> Result<TapReply> {
    if request.count > MAX_COUNT {
        return Err(WorkerError::invalid(format!(
            "a tap is repeated at most {MAX_COUNT} times in a row, not {}",
            request.count
        )));
    }
    dispatch(page, request.x, request.y, request.count.max(1)).await?;
    Ok(TapReply {})
}

/// `count` taps' input events at (x, y), refused outside the viewport (upload taps this way
/// too). A mouse's presses carry their click count, as a double-click's do; a finger's taps
/// follow each other at once, well within a double tap's time.
pub async fn dispatch(page: &PageHandle, x: f64, y: f64, count: u32) -> Result<()> {
    let settings = page.settings();
    let inside = x.is_finite()
        && y.is_finite()
        && (0.0..settings.width as f64).contains(&x)
        && (0.0..settings.height as f64).contains(&y);
    if !inside {
        return Err(WorkerError::invalid(format!(
            "({x}, {y}) is outside the {}×{} viewport",
            settings.width, settings.height
        )));
    }
    let events: Vec<_> = if settings.mobile {
        (0..count)
            .flat_map(|_| {
                [
                    (
                        "Input.dispatchTouchEvent",
                        json!({"type": "touchStart", "touchPoints": [{"x": x, "y": y}]}),
                    ),
                    (
                        "Input.dispatchTouchEvent",
                        json!({"type": "touchEnd", "touchPoints": []}),
                    ),
                ]
            })
            .collect()
    } else {
        let mut moved = super::mouse("mouseMoved", x, y, 0);
        moved["button"] = json!("none");
        let presses = (1..=count).flat_map(|n| {
            [("mousePressed", 1), ("mouseReleased", 0)].map(|(kind, buttons)| {
                let mut params = super::mouse(kind, x, y, buttons);
                params["clickCount"] = json!(n);
                ("Input.dispatchMouseEvent", params)
            })
        });
        std::iter::once(("Input.dispatchMouseEvent", moved))
            .chain(presses)
            .collect()
    };
    page.cdp_in_order(&events).await
}
