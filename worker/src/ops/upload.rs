//! `upload {x, y, files}`: taps (x, y) as [`tap`](super::tap) does with the page's file
//! choosers intercepted (`Page.setInterceptFileChooserDialog`), waits for the chooser the tap
//! opens (`Page.fileChooserOpened`), writes the files into a fresh folder under the profile's
//! `uploads/` and gives them to the chooser's input (`DOM.setFileInputFiles`). The page reads
//! them when its form is sent, so they stay until the browser closes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::{EventFileChooserOpened, FileChooserOpenedMode};
use futures::StreamExt;
use nanomuse_proto::{UploadReply, UploadRequest};
use serde_json::json;

use crate::cdp;
use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// How long after the tap a file chooser may take to open.
const CHOOSER_WAIT: Duration = Duration::from_secs(2);

pub async fn run(page: &PageHandle, request: &UploadRequest) -> Result<UploadReply> {
    nanomuse_proto::upload::check_files(&request.files).map_err(into_worker)?;
    // Listening before the tap, so a chooser that opens at once is not missed. The events
    // come on chromiumoxide's session (it has Page enabled), so the interception is set there.
    let mut opened = page.page.event_listener::<EventFileChooserOpened>().await?;
    intercept(page, true).await?;
    let outcome = async {
        super::tap::dispatch(page, request.x, request.y, 1).await?;
        let chooser = tokio::time::timeout(CHOOSER_WAIT, opened.next())
            .await
            .ok()
            .flatten()
            .ok_or_else(no_chooser)?;
        let multiple = chooser.mode == FileChooserOpenedMode::SelectMultiple;
        if !multiple && request.files.len() > 1 {
            return Err(WorkerError::invalid(format!(
                "the file chooser takes one file, and {} were given: upload one",
                request.files.len()
            )));
        }
        let node = chooser.backend_node_id.ok_or_else(|| {
            WorkerError::FailedPrecondition(
                "the page opened a file picker that is not a file input (the File System \
                 Access API); upload can only fill <input type=file>"
                    .into(),
            )
        })?;
        let paths = write_files(page, request).await?;
        page.cdp(
            "DOM.setFileInputFiles",
            json!({"files": paths, "backendNodeId": node.inner()}),
        )
        .await?;
        tracing::debug!(
            files = request.files.len(),
            multiple,
            "file chooser answered"
        );
        Ok(UploadReply { multiple })
    }
    .await;
    // Off again whatever happened: a chooser the page opens later is the page's own business.
    if let Err(error) = intercept(page, false).await {
        tracing::debug!(%error, "file chooser interception not turned off");
    }
    outcome
}

async fn intercept(page: &PageHandle, enabled: bool) -> Result<()> {
    cdp::call_page(
        &page.page,
        "Page.setInterceptFileChooserDialog",
        json!({"enabled": enabled}),
    )
    .await
    .map(|_| ())
}

fn no_chooser() -> WorkerError {
    WorkerError::FailedPrecondition(format!(
        "the element opened no file chooser within {} s — upload needs a file input, its \
         label, or a control that opens one",
        CHOOSER_WAIT.as_secs()
    ))
}

fn into_worker(error: nanomuse_proto::BackendError) -> WorkerError {
    match error {
        nanomuse_proto::BackendError::ResourceExhausted(message) => WorkerError::TooLarge(message),
        other => WorkerError::invalid(other.to_string()),
    }
}

/// Writes the files into a folder of their own under the browser's `uploads/` (two files of
/// one name in two uploads must not overwrite each other while a form still needs the first),
/// and returns their paths.
async fn write_files(page: &PageHandle, request: &UploadRequest) -> Result<Vec<PathBuf>> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let folder = page.downloads.uploads_dir().join(format!(
        "{nanos:x}-{:x}",
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut paths = Vec::with_capacity(request.files.len());
    for (i, file) in request.files.iter().enumerate() {
        // One folder per file: two files of one upload may share a name.
        let dir = folder.join(i.to_string());
        tokio::fs::create_dir_all(&dir).await?;
        let path = dir.join(&file.name);
        tokio::fs::write(&path, &file.content).await?;
        paths.push(path);
    }
    Ok(paths)
}
