//! `tap {x, y}`: what a finger does on a phone profile (touch), what a mouse does on a desktop
//! one (move, press, release), at CSS px of the viewport.

use nanomuse_proto::{TapReply, TapRequest};
use serde_json::json;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

pub async fn run(page: &PageHandle, request: &TapRequest) -> Result<TapReply> {
    dispatch(page, request.x, request.y).await?;
    Ok(TapReply {})
}

/// The tap's input events at (x, y), refused outside the viewport (upload taps this way too).
pub async fn dispatch(page: &PageHandle, x: f64, y: f64) -> Result<()> {
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
    let events = if settings.mobile {
        vec![
            (
                "Input.dispatchTouchEvent",
                json!({"type": "touchStart", "touchPoints": [{"x": x, "y": y}]}),
            ),
            (
                "Input.dispatchTouchEvent",
                json!({"type": "touchEnd", "touchPoints": []}),
            ),
        ]
    } else {
        [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)]
            .into_iter()
            .map(|(kind, buttons)| {
                let mut params = super::mouse(kind, x, y, buttons);
                if kind == "mouseMoved" {
                    params["button"] = json!("none");
                }
                ("Input.dispatchMouseEvent", params)
            })
            .collect()
    };
    page.cdp_in_order(&events).await
}
