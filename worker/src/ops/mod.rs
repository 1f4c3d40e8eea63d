//! The 15 ops on a Chromium page, one module each; [`crate::backend`] dispatches to them.

pub mod back;
pub mod close;
pub mod evaluate;
pub mod fetch;
pub mod key;
pub mod navigate;
pub mod open;
pub mod profile;
pub mod screenshot;
pub mod scroll;
pub mod settle;
pub mod state;
pub mod tap;
pub mod type_text;
pub mod upload;

use nanomuse_proto::PageInfo;
use serde_json::{Value, json};

use crate::error::Result;
use crate::page::PageHandle;

const PAGE_INFO_JS: &str = "() => ({url: location.href, title: document.title, loading: document.readyState !== 'complete'})";

/// The page's URL, title, size and loading state, in one round trip.
pub async fn page_info(page: &PageHandle) -> Result<PageInfo> {
    let value = page.evaluate(PAGE_INFO_JS, &Value::Null).await?;
    let settings = page.settings();
    Ok(PageInfo {
        url: value["url"].as_str().unwrap_or_default().to_string(),
        title: value["title"].as_str().unwrap_or_default().to_string(),
        width: settings.width,
        height: settings.height,
        loading: value["loading"].as_bool().unwrap_or(false),
    })
}

/// Stops what a page that did not load in time is still doing — a script that never yields
/// (an endless loop, of alerts too), a body that never ends, a chain of redirects — so it does
/// not eat the browser the profile's other pages share. A page that still answers keeps its
/// scripts: only one that does not answer within half a second has its script ended.
pub async fn quiet(page: &PageHandle) {
    end_runaway_script(page).await;
    if let Err(error) = page.cdp("Page.stopLoading", json!({})).await {
        tracing::debug!(%error, "stopLoading refused");
    }
}

/// Ends the page's script if it does not yield (no answer to a trivial evaluate within half a
/// second); true when it was ended.
pub async fn end_runaway_script(page: &PageHandle) -> bool {
    let probe = page.evaluate("() => 1", &Value::Null);
    if tokio::time::timeout(std::time::Duration::from_millis(500), probe)
        .await
        .is_ok()
    {
        return false;
    }
    tracing::warn!("the page's script does not yield; ending it");
    if let Err(error) = page.cdp("Runtime.terminateExecution", json!({})).await {
        tracing::debug!(%error, "terminateExecution refused");
    }
    true
}

/// A URL the browser may be sent to: about:blank (no network), or one the page's URL policy
/// lets through — absolute http(s), allowed hosts, in hosted mode no internal address given
/// as the host (names are checked where they resolve, by the browser's proxy).
pub fn checked_url(page: &PageHandle, raw: &str) -> Result<url::Url> {
    let trimmed = raw.trim();
    if trimmed == "about:blank" {
        return Ok(url::Url::parse(trimmed).expect("about:blank parses"));
    }
    Ok(page.egress.policy().check_url(trimmed)?)
}

/// The refusals as the replies carry them, one sentence each.
pub fn sentences(refusals: Vec<nanomuse_proto::Refusal>) -> Vec<String> {
    refusals.iter().map(ToString::to_string).collect()
}

/// Parameters of a mouse event at (x, y).
pub fn mouse(kind: &str, x: f64, y: f64, buttons: u32) -> Value {
    json!({"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})
}
