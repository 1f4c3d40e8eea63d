//! `screenshot {quality}`: a JPEG of the viewport in CSS px, so a point on the picture is the
//! same point on the page whatever the device pixel ratio.

use base64::Engine;
use nanomuse_proto::{ScreenshotReply, ScreenshotRequest};
use serde_json::json;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

pub async fn run(
    page: &PageHandle,
    request: &ScreenshotRequest,
    default_quality: u32,
) -> Result<ScreenshotReply> {
    let quality = match request.quality {
        0 => default_quality,
        q @ 1..=100 => q,
        q => {
            return Err(WorkerError::invalid(format!(
                "JPEG quality {q} is out of range: use 1..=100"
            )));
        }
    };
    let settings = page.settings();
    let mut params = json!({"format": "jpeg", "quality": quality});
    let scale = settings.device_scale_factor();
    if scale != 1.0 {
        // Scaled down to CSS px; the clip is in document coordinates, so it starts where the
        // visual viewport is scrolled to.
        let metrics = page.cdp("Page.getLayoutMetrics", json!({})).await?;
        let viewport = &metrics["cssVisualViewport"];
        params["clip"] = json!({
            "x": viewport["pageX"].as_f64().unwrap_or(0.0),
            "y": viewport["pageY"].as_f64().unwrap_or(0.0),
            "width": settings.width,
            "height": settings.height,
            "scale": 1.0 / scale,
        });
    }
    let reply = page.cdp("Page.captureScreenshot", params).await?;
    let data = reply["data"].as_str().unwrap_or_default();
    let jpeg = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| WorkerError::BrowserGone(format!("screenshot was not base64: {e}")))?;
    Ok(ScreenshotReply {
        jpeg,
        width: settings.width,
        height: settings.height,
    })
}
