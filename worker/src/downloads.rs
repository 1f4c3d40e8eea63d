//! Downloads of one browser, as `Browser.downloadWillBegin` / `downloadProgress` report them,
//! so a navigation that turned into a download can wait for its file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use futures::StreamExt;
use tokio::sync::watch;

use crate::error::Result;

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
}

#[derive(Debug, Default)]
pub struct Downloads {
    by_guid: Mutex<HashMap<String, Download>>,
    changes: watch::Sender<u64>,
}

impl Downloads {
    /// Starts watching `browser`'s downloads; the task ends with the browser's events.
    pub async fn watch(browser: &Browser) -> Result<(Arc<Self>, tokio::task::JoinHandle<()>)> {
        let mut begun = browser.event_listener::<EventDownloadWillBegin>().await?;
        let mut progress = browser.event_listener::<EventDownloadProgress>().await?;
        let downloads = Arc::new(Self::default());
        let this = downloads.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(event) = begun.next() => {
                        this.by_guid.lock().unwrap().entry(event.guid.clone()).or_insert(Download {
                            frame_id: event.frame_id.inner().clone(),
                            filename: event.suggested_filename.clone(),
                            state: DownloadState::InProgress,
                        });
                    }
                    Some(event) = progress.next() => {
                        let state = match event.state {
                            DownloadProgressState::Completed => DownloadState::Completed,
                            DownloadProgressState::Canceled => DownloadState::Canceled,
                            _ => DownloadState::InProgress,
                        };
                        if let Some(download) = this.by_guid.lock().unwrap().get_mut(&event.guid) {
                            download.state = state;
                        }
                    }
                    else => break,
                }
                this.changes.send_modify(|n| *n = n.wrapping_add(1));
            }
        });
        Ok((downloads, task))
    }

    /// Waits until a download of `frame_id` that was not in `known` has ended.
    pub async fn wait_for_new(&self, frame_id: &str, known: &[String]) -> Download {
        let mut changes = self.changes.subscribe();
        loop {
            let finished = self
                .by_guid
                .lock()
                .unwrap()
                .iter()
                .find(|(guid, d)| {
                    d.frame_id == frame_id
                        && d.state != DownloadState::InProgress
                        && !known.contains(guid)
                })
                .map(|(_, d)| d.clone());
            if let Some(download) = finished {
                return download;
            }
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// The guids seen so far.
    pub fn known(&self) -> Vec<String> {
        self.by_guid.lock().unwrap().keys().cloned().collect()
    }
}
