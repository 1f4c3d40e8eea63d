//! The worker's own copy of a profile's cookies. Chromium commits its cookie database only
//! about every 30 s, so a killed browser loses fresh logins; the worker snapshots the cookie
//! jar after every page-changing op and restores it on a relaunch after a crash. A clean close
//! discards the snapshot, so session cookies end with the browser as they should.

use std::path::{Path, PathBuf};

use chromiumoxide::Browser;
use serde_json::{Value, json};

use crate::cdp;
use crate::error::Result;

const SNAPSHOT_FILE: &str = "nanomuse-cookies.json";

pub fn snapshot_path(profile_dir: &Path) -> PathBuf {
    profile_dir.join(SNAPSHOT_FILE)
}

/// Writes every cookie of the browser to `path` (atomically: a crash leaves the old or the new).
pub async fn save(browser: &Browser, path: &Path) -> Result<()> {
    let reply = cdp::call_browser(browser, "Storage.getCookies", json!({})).await?;
    let cookies = reply.get("cookies").cloned().unwrap_or_else(|| json!([]));
    let temporary = path.with_extension("json.tmp");
    tokio::fs::write(&temporary, serde_json::to_vec(&cookies).unwrap_or_default()).await?;
    tokio::fs::rename(&temporary, path).await?;
    Ok(())
}

/// Puts the cookies of a snapshot left by a crashed browser back; returns how many.
pub async fn restore(browser: &Browser, path: &Path) -> Result<usize> {
    let Ok(bytes) = tokio::fs::read(path).await else {
        return Ok(0);
    };
    let Ok(Value::Array(cookies)) = serde_json::from_slice::<Value>(&bytes) else {
        tracing::warn!(path = %path.display(), "cookie snapshot unreadable; ignored");
        return Ok(0);
    };
    let params: Vec<Value> = cookies.iter().filter_map(cookie_param).collect();
    let count = params.len();
    if count > 0 {
        cdp::call_browser(browser, "Storage.setCookies", json!({"cookies": params})).await?;
    }
    Ok(count)
}

pub async fn discard(path: &Path) {
    let _ = tokio::fs::remove_file(path).await;
}

/// A `Network.Cookie` as the `Network.CookieParam` that recreates it.
fn cookie_param(cookie: &Value) -> Option<Value> {
    let mut param = json!({
        "name": cookie.get("name")?,
        "value": cookie.get("value")?,
        "domain": cookie.get("domain")?,
        "path": cookie.get("path")?,
    });
    for key in [
        "secure",
        "httpOnly",
        "sameSite",
        "priority",
        "sourceScheme",
        "sourcePort",
        "partitionKey",
    ] {
        if let Some(value) = cookie.get(key) {
            param[key] = value.clone();
        }
    }
    let session = cookie
        .get("session")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !session && let Some(expires) = cookie.get("expires") {
        param["expires"] = expires.clone();
    }
    Some(param)
}
