//! Downloads of one browser, as `Browser.downloadWillBegin` / `downloadProgress` report them,
//! so a navigation that turned into a download can wait for its file, a settle can say which
//! files a click saved, and the folder's index ([`INDEX_FILE`]) records where each came from.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::error::Result;

/// The index of the downloads folder: per file, its URL, the page it came from and when it
/// completed. Hidden, so never listed nor served as a download.
pub const INDEX_FILE: &str = ".nanomuse-downloads.json";

#[derive(Debug, Clone, PartialEq)]
pub enum DownloadState {
    InProgress,
    Completed,
    Canceled,
}

#[derive(Debug, Clone)]
pub struct Download {
    pub frame_id: String,
    pub filename: String,
    pub state: DownloadState,
    /// The file's URL and the page's when it began.
    pub url: String,
    pub page: String,
    /// Said in an op's reply already (navigate's, or a settle's).
    pub reported: bool,
}

/// What the index keeps of one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexEntry {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub page: String,
    #[serde(default)]
    pub completed_ms: i64,
}

/// Reads the index of the folder `dir`; an absent or unreadable one is empty (the files are
/// still listed, without their origin).
pub fn read_index(dir: &Path) -> BTreeMap<String, IndexEntry> {
    std::fs::read(dir.join(INDEX_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Records `name` in the folder's index, replacing the temporary file over the old index so a
/// crash mid-write leaves the old one whole.
fn record(dir: &Path, name: &str, entry: IndexEntry) -> std::io::Result<()> {
    let mut index = read_index(dir);
    index.insert(name.to_string(), entry);
    let temporary = dir.join(format!("{INDEX_FILE}.tmp"));
    std::fs::write(&temporary, serde_json::to_vec_pretty(&index)?)?;
    std::fs::rename(temporary, dir.join(INDEX_FILE))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[derive(Debug, Default)]
pub struct Downloads {
    by_guid: Mutex<HashMap<String, Download>>,
    /// Each page's main-frame URL, by target id (a page's target id is its main frame's id).
    pages: Mutex<HashMap<String, Arc<Mutex<Option<String>>>>>,
    dir: PathBuf,
    changes: watch::Sender<u64>,
}

impl Downloads {
    /// Starts watching `browser`'s downloads, saved in `dir`; the task ends with the browser's
    /// events.
    pub async fn watch(
        browser: &Browser,
        dir: &Path,
    ) -> Result<(Arc<Self>, tokio::task::JoinHandle<()>)> {
        let mut begun = browser.event_listener::<EventDownloadWillBegin>().await?;
        let mut progress = browser.event_listener::<EventDownloadProgress>().await?;
        let downloads = Arc::new(Self {
            dir: dir.to_path_buf(),
            ..Self::default()
        });
        let this = downloads.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(event) = begun.next() => {
                        let frame_id = event.frame_id.inner().clone();
                        let page = this.page_url(&frame_id);
                        this.by_guid.lock().unwrap().entry(event.guid.clone()).or_insert(Download {
                            frame_id,
                            filename: event.suggested_filename.clone(),
                            state: DownloadState::InProgress,
                            url: event.url.clone(),
                            page,
                            reported: false,
                        });
                    }
                    Some(event) = progress.next() => {
                        let state = match event.state {
                            DownloadProgressState::Completed => DownloadState::Completed,
                            DownloadProgressState::Canceled => DownloadState::Canceled,
                            _ => DownloadState::InProgress,
                        };
                        let completed = {
                            let mut by_guid = this.by_guid.lock().unwrap();
                            let Some(download) = by_guid.get_mut(&event.guid) else { continue };
                            // The name on disk, when Chromium says it (a name taken already
                            // may be changed).
                            if let Some(name) = event.file_path.as_deref()
                                .and_then(|path| Path::new(path).file_name())
                                .and_then(|name| name.to_str())
                            {
                                download.filename = name.to_string();
                            }
                            let first = state == DownloadState::Completed
                                && download.state != DownloadState::Completed;
                            download.state = state;
                            first.then(|| download.clone())
                        };
                        if let Some(done) = completed {
                            let entry = IndexEntry {
                                url: done.url,
                                page: done.page,
                                completed_ms: now_ms(),
                            };
                            let (dir, name) = (this.dir.clone(), done.filename);
                            let written = tokio::task::spawn_blocking(move || record(&dir, &name, entry)).await;
                            if !matches!(written, Ok(Ok(()))) {
                                tracing::warn!(?written, "the downloads index was not written");
                            }
                        }
                    }
                    else => break,
                }
                this.changes.send_modify(|n| *n = n.wrapping_add(1));
            }
        });
        Ok((downloads, task))
    }

    /// Where the browser's uploads are written (`uploads/` beside `downloads/`): the files an
    /// upload hands a page's file input, which the page reads when its form is sent. Emptied
    /// when the browser launches and when it closes, when no page can still need them.
    pub fn uploads_dir(&self) -> PathBuf {
        self.dir.with_file_name("uploads")
    }

    /// Keeps `url` (the page's last committed URL) as the page of its target's downloads.
    pub fn track_page(&self, target_id: &str, url: Arc<Mutex<Option<String>>>) {
        self.pages
            .lock()
            .unwrap()
            .insert(target_id.to_string(), url);
    }

    fn page_url(&self, frame_id: &str) -> String {
        self.pages
            .lock()
            .unwrap()
            .get(frame_id)
            .and_then(|url| url.lock().unwrap().clone())
            .unwrap_or_default()
    }

    /// Waits until a download of `frame_id` that was not in `known` has ended; it counts as
    /// reported.
    pub async fn wait_for_new(&self, frame_id: &str, known: &[String]) -> Download {
        let mut changes = self.changes.subscribe();
        loop {
            let finished = self
                .by_guid
                .lock()
                .unwrap()
                .iter_mut()
                .find(|(guid, d)| {
                    d.frame_id == frame_id
                        && d.state != DownloadState::InProgress
                        && !known.contains(guid)
                })
                .map(|(_, d)| {
                    d.reported = true;
                    d.clone()
                });
            if let Some(download) = finished {
                return download;
            }
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Waits, until `deadline`, while a download of `frame_id` is in progress; then the names
    /// of its completed downloads not reported yet (now reported).
    pub async fn finished(&self, frame_id: &str, deadline: tokio::time::Instant) -> Vec<String> {
        let mut changes = self.changes.subscribe();
        loop {
            let busy = self
                .by_guid
                .lock()
                .unwrap()
                .values()
                .any(|d| d.frame_id == frame_id && d.state == DownloadState::InProgress);
            if !busy
                || tokio::time::timeout_at(deadline, changes.changed())
                    .await
                    .map_or(true, |changed| changed.is_err())
            {
                break;
            }
        }
        let mut by_guid = self.by_guid.lock().unwrap();
        let mut names = Vec::new();
        for download in by_guid.values_mut() {
            if download.frame_id == frame_id
                && download.state == DownloadState::Completed
                && !download.reported
            {
                download.reported = true;
                names.push(download.filename.clone());
            }
        }
        names
    }

    /// The guids seen so far.
    pub fn known(&self) -> Vec<String> {
        self.by_guid.lock().unwrap().keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_keeps_each_file_and_survives_a_bad_one() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_index(dir.path()).is_empty());
        let entry = |page: &str| IndexEntry {
            url: "http://127.0.0.1/report.csv".into(),
            page: page.into(),
            completed_ms: 7,
        };
        record(dir.path(), "report.csv", entry("http://127.0.0.1/")).unwrap();
        record(dir.path(), "other.pdf", entry("http://127.0.0.1/other")).unwrap();
        let index = read_index(dir.path());
        assert_eq!(index.len(), 2);
        assert_eq!(index["report.csv"], entry("http://127.0.0.1/"));
        std::fs::write(dir.path().join(INDEX_FILE), b"{ not json").unwrap();
        assert!(read_index(dir.path()).is_empty());
    }
}
