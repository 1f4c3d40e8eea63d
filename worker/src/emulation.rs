//! The page's profile: viewport size, user agent and touch, applied per target and live (no
//! reload), as a phone or a desktop browser.

use serde_json::json;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// The mobile profile's viewport and pixel ratio: a common Android phone.
pub const MOBILE_SIZE: (u32, u32) = (412, 915);
pub const MOBILE_SCALE: f64 = 2.625;
pub const DESKTOP_SIZE: (u32, u32) = (1280, 900);
use nanomuse_common::limits::VIEWPORT_PX as SIZE_RANGE;

/// How a page presents itself.
#[derive(Debug, Clone, PartialEq)]
pub struct PageSettings {
    pub user_agent: String,
    pub width: u32,
    pub height: u32,
    pub mobile: bool,
}

impl PageSettings {
    /// Settings from a request: zero sizes and an empty user agent take the profile's defaults
    /// for `chrome_major` (the running Chromium's major version).
    pub fn from_request(
        user_agent: &str,
        width: u32,
        height: u32,
        mobile: bool,
        chrome_major: &str,
    ) -> Result<Self> {
        let (default_width, default_height) = if mobile { MOBILE_SIZE } else { DESKTOP_SIZE };
        let width = if width == 0 { default_width } else { width };
        let height = if height == 0 { default_height } else { height };
        for (name, value) in [("width", width), ("height", height)] {
            if !SIZE_RANGE.contains(&value) {
                return Err(WorkerError::invalid(format!(
                    "{name} {value} is out of range: a viewport is {}..={} CSS px (0 picks the \
                     profile's default)",
                    SIZE_RANGE.start(),
                    SIZE_RANGE.end()
                )));
            }
        }
        if user_agent.len() > 1024 || user_agent.contains(['\r', '\n']) {
            return Err(WorkerError::invalid(
                "the user agent must be one line of at most 1024 characters",
            ));
        }
        let user_agent = if user_agent.is_empty() {
            default_user_agent(mobile, chrome_major)
        } else {
            user_agent.to_string()
        };
        Ok(Self {
            user_agent,
            width,
            height,
            mobile,
        })
    }

    pub fn device_scale_factor(&self) -> f64 {
        if self.mobile { MOBILE_SCALE } else { 1.0 }
    }
}

fn default_user_agent(mobile: bool, chrome_major: &str) -> String {
    if mobile {
        format!(
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) \
             Chrome/{chrome_major}.0.0.0 Mobile Safari/537.36"
        )
    } else {
        format!(
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
             Chrome/{chrome_major}.0.0.0 Safari/537.36"
        )
    }
}

/// Applies `settings` to `page` at once: size, user agent (with client hints), touch. They are
/// set on the session that captures screenshots: a clipped capture scales from its own
/// session's device metrics.
pub async fn apply(page: &PageHandle, settings: &PageSettings, chrome_major: &str) -> Result<()> {
    let (platform, navigator_platform, model) = if settings.mobile {
        ("Android", "Linux armv81", "Pixel 8")
    } else {
        ("Linux", "Linux x86_64", "")
    };
    let metrics = page.cdp(
        "Emulation.setDeviceMetricsOverride",
        json!({
            "width": settings.width,
            "height": settings.height,
            "deviceScaleFactor": settings.device_scale_factor(),
            "mobile": settings.mobile,
            "screenWidth": settings.width,
            "screenHeight": settings.height,
        }),
    );
    let agent = page.cdp(
        "Emulation.setUserAgentOverride",
        json!({
            "userAgent": settings.user_agent,
            "platform": navigator_platform,
            "userAgentMetadata": {
                "brands": [
                    {"brand": "Chromium", "version": chrome_major},
                    {"brand": "Not=A?Brand", "version": "24"},
                ],
                "platform": platform,
                "platformVersion": if settings.mobile { "14.0.0" } else { "" },
                "architecture": if settings.mobile { "" } else { "x86" },
                "model": model,
                "mobile": settings.mobile,
            },
        }),
    );
    let touch = page.cdp(
        "Emulation.setTouchEmulationEnabled",
        json!({"enabled": settings.mobile, "maxTouchPoints": 5}),
    );
    let (metrics, agent, touch) = tokio::join!(metrics, agent, touch);
    metrics.and(agent).and(touch).map(|_| ())
}
