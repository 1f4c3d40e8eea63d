//! The worker's own copy of a profile's cookies. Chromium commits its cookie database only
//! about every 30 s, so a killed browser loses fresh logins; the worker snapshots the cookie
//! jar after every page-changing op and restores it on a relaunch after a crash. A clean close
//! discards the snapshot, so session cookies end with the browser as they should.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chromiumoxide::Browser;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::cdp::{self, SideChannel};
use crate::error::Result;

const SNAPSHOT_FILE: &str = "nanomuse-cookies.json";

pub fn snapshot_path(profile_dir: &Path) -> PathBuf {
    profile_dir.join(SNAPSHOT_FILE)
}

/// The snapshot file of one browser. Saves are serialised and skip the write when the jar is
/// what was last written, so they are cheap enough to follow every page-changing op.
pub struct CookieSnapshots {
    side: Arc<SideChannel>,
    path: PathBuf,
    last_written: tokio::sync::Mutex<Option<u64>>,
    /// A background save is queued and has not read the jar yet.
    queued: std::sync::atomic::AtomicBool,
}

impl CookieSnapshots {
    pub fn new(side: Arc<SideChannel>, path: PathBuf) -> Self {
        Self {
            side,
            path,
            last_written: tokio::sync::Mutex::new(None),
            queued: Default::default(),
        }
    }

    /// Saves in the background, beside the reply of an op that only started something. Ops
    /// that come while a save is queued share it: it reads the jar after them.
    pub fn save_soon(self: &Arc<Self>) {
        use std::sync::atomic::Ordering;
        if self.queued.swap(true, Ordering::SeqCst) {
            return;
        }
        let snapshots = self.clone();
        tokio::spawn(async move {
            // A save under way may have read the jar before those ops: this one waits for it,
            // then takes what came after.
            drop(snapshots.last_written.lock().await);
            snapshots.queued.store(false, Ordering::SeqCst);
            if let Err(error) = snapshots.save().await {
                tracing::warn!(%error, "cookie snapshot failed");
            }
        });
    }

    /// Writes every cookie of the browser to the snapshot (atomically: a crash leaves the old
    /// or the new file).
    pub async fn save(&self) -> Result<()> {
        let mut last_written = self.last_written.lock().await;
        let reply = self
            .side
            .call(None, "Storage.getCookies", json!({}))
            .await?;
        let jar = reply.get("cookies").cloned().unwrap_or_else(|| json!([]));
        let digest = digest(&jar);
        if *last_written == Some(digest) {
            return Ok(());
        }
        let cookies = serde_json::to_vec(&jar).unwrap_or_default();
        let temporary = self.path.with_extension("json.tmp");
        // Session cookies are credentials: readable by the worker alone, as Chromium keeps
        // its own cookie store.
        let mut file = tokio::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .await?;
        file.write_all(&cookies).await?;
        file.sync_all().await?;
        drop(file);
        tokio::fs::rename(&temporary, &self.path).await?;
        *last_written = Some(digest);
        Ok(())
    }

    /// Removes the snapshot (after a clean close, when Chromium's own store is complete).
    pub async fn discard(&self) {
        let _ = self.last_written.lock().await;
        let _ = tokio::fs::remove_file(&self.path).await;
    }
}

/// How long a cookie's expiry may move on before the snapshot is written again for it alone.
const EXPIRY_STEP_SECONDS: f64 = 60.0;

/// What decides whether the jar must be written again: every cookie as it is, but its expiry
/// to the [`EXPIRY_STEP_SECONDS`]. A site that sets `Max-Age` on every response (a session
/// kept alive) moves expiries on at each request; writing and syncing the file for each would
/// cost every such op a disk flush, while a crash without it restores the cookie to expire at
/// most that step earlier.
fn digest(jar: &Value) -> u64 {
    let mut coarse = jar.clone();
    for cookie in coarse.as_array_mut().into_iter().flatten() {
        if let Some(expires) = cookie.get("expires").and_then(Value::as_f64) {
            cookie["expires"] = json!((expires / EXPIRY_STEP_SECONDS).floor());
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    coarse.to_string().hash(&mut hasher);
    hasher.finish()
}

/// Puts the cookies of a snapshot left by a crashed browser (or a profile moved here) back;
/// returns how many.
pub async fn restore(browser: &Browser, path: &Path) -> Result<usize> {
    let Ok(bytes) = tokio::fs::read(path).await else {
        return Ok(0);
    };
    let Ok(Value::Array(cookies)) = serde_json::from_slice::<Value>(&bytes) else {
        tracing::warn!(path = %path.display(), "cookie snapshot unreadable; ignored");
        return Ok(0);
    };
    let params: Vec<Value> = cookies.iter().filter_map(cookie_param).collect();
    if !params.is_empty() {
        cdp::call_browser(browser, "Storage.setCookies", json!({"cookies": params})).await?;
    }
    Ok(params.len())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn jar(value: &str, expires: f64) -> Value {
        json!([{"name": "sid", "value": value, "domain": "a.test", "path": "/",
            "expires": expires, "session": false}])
    }

    #[test]
    fn an_expiry_moved_on_within_its_step_needs_no_new_snapshot() {
        let base = 60.0 * 28_888_888.0;
        assert_eq!(
            digest(&jar("x", base + 1.5)),
            digest(&jar("x", base + 42.25))
        );
    }

    #[test]
    fn a_new_value_or_an_expiry_a_step_later_needs_a_new_snapshot() {
        let base = 60.0 * 28_888_888.0;
        assert_ne!(digest(&jar("x", base)), digest(&jar("y", base)));
        assert_ne!(digest(&jar("x", base)), digest(&jar("x", base + 60.0)));
        // A session cookie's expiry (-1) stays what it is.
        assert_ne!(digest(&jar("x", -1.0)), digest(&jar("x", base)));
    }
}
