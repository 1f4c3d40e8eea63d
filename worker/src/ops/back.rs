//! `back {}`: one step back in the page's history, waiting for the page to be there (restored
//! from the back-forward cache, or loaded again).

use std::time::Duration;

use nanomuse_proto::{BackReply, BackRequest};
use serde_json::{Value, json};

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

pub async fn run(
    page: &PageHandle,
    _request: &BackRequest,
    timeout: Duration,
) -> Result<BackReply> {
    let previous = earlier_entry(page).await?.ok_or_else(|| {
        WorkerError::FailedPrecondition(
            "there is no earlier page in this tab's history to go back to".into(),
        )
    })?;
    let entry_id = previous["id"].clone();

    let before = page.tracker.progress();
    let going_back = async {
        page.cdp("Page.navigateToHistoryEntry", json!({"entryId": entry_id}))
            .await?;
        // A step within the document (a #fragment, a `pushState`) is there at once.
        let new_document = page
            .tracker
            .until(|tracker| {
                let now = tracker.progress();
                if now.committed > before.committed {
                    Some(true)
                } else {
                    (now.same_document > before.same_document).then_some(false)
                }
            })
            .await;
        if !new_document {
            return Ok::<_, WorkerError>(());
        }
        // A page restored from the back-forward cache is complete at once; others load again.
        let state = page
            .evaluate("() => document.readyState", &Value::Null)
            .await;
        if !matches!(
            state.as_ref().ok().and_then(Value::as_str),
            Some("complete")
        ) {
            page.tracker.next_load(&before).await;
        }
        Ok(())
    };
    tokio::time::timeout(timeout, going_back)
        .await
        .map_err(|_| WorkerError::timeout("going back", timeout.as_millis() as u64))??;
    Ok(BackReply {
        page: Some(super::page_info(page).await?),
        refused: super::sentences(page.take_refusals(None)),
    })
}

/// The entry before the page's current one in its tab's history, if any.
async fn earlier_entry(page: &PageHandle) -> Result<Option<Value>> {
    let history = page.cdp("Page.getNavigationHistory", json!({})).await?;
    let current = history["currentIndex"].as_u64().unwrap_or(0) as usize;
    let entries = history["entries"].as_array().cloned().unwrap_or_default();
    Ok(current
        .checked_sub(1)
        .and_then(|i| entries.get(i))
        .filter(|entry| entry["url"].as_str() != Some("about:blank") || current > 1)
        .cloned())
}

/// Back from a popup's first page is back to the page that opened it, as a person closes the
/// window: the popup is closed; true when it was.
pub async fn close_first_popup(page: &PageHandle) -> Result<bool> {
    if !page.is_popup() || earlier_entry(page).await?.is_some() {
        return Ok(false);
    }
    page.close().await?;
    page.mark_closed();
    Ok(true)
}
