//! `navigate {url}`: loads a URL and waits for its `load`. A URL that turns out to be a
//! download waits for the file instead; one that yields no page (a 204) says so. The URL
//! policy checks the URL first; what its proxy refused on the way (a redirect, a subresource)
//! comes back in the reply, or as the error when the page could not load because of it.

use std::time::Duration;

use nanomuse_proto::{NavigateReply, NavigateRequest};
use serde_json::{Value, json};

use crate::downloads::DownloadState;
use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// How many times a navigation is asked for when the page it leaves takes it over.
const ATTEMPTS: u32 = 3;
/// How long a navigation the page it left asked for, stopped after ours loaded, may take to be
/// shown or to fail.
const LEFT_PAGES_NAVIGATION_TOLD: Duration = Duration::from_secs(2);

pub async fn run(
    page: &PageHandle,
    request: &NavigateRequest,
    worker_timeout: Duration,
) -> Result<NavigateReply> {
    let url = super::checked_url(page, &request.url)?;
    // Errors quote the URL, never the whole of it: it is the caller's input.
    let shown = nanomuse_common::limits::excerpt(url.as_str()).into_owned();
    // The caller's bound (the deployment's `browser.timeout_ms`), within this worker's own.
    let timeout = match request.timeout_ms {
        0 => worker_timeout,
        ms => worker_timeout.min(Duration::from_millis(ms.into())),
    };
    let known_downloads = page.downloads.known();

    // One navigation; `None` when the page it leaves took it over (see the tracker), unless it
    // is the `last` try.
    let (url, shown, known_downloads) = (&url, &shown, &known_downloads);
    let load_once = |last: bool| async move {
        let reply = page
            .cdp("Page.navigate", json!({"url": url.as_str()}))
            .await?;
        if let Some(error) = reply.get("errorText").and_then(Value::as_str) {
            if reply.get("isDownload").and_then(Value::as_bool) == Some(true) {
                let download = page
                    .downloads
                    .wait_for_new(&page.target_id, known_downloads)
                    .await;
                if download.state == DownloadState::Canceled {
                    return Err(WorkerError::FailedPrecondition(format!(
                        "the download of {shown} was cancelled"
                    )));
                }
                return Ok(Some((0, Some(download.filename))));
            }
            // A refused https URL (or hop) fails its tunnel: the refusal says why.
            if let Some(refusal) = page.take_refusals(Some(url)).into_iter().next() {
                return Err(WorkerError::Refused(refusal));
            }
            if error == "net::ERR_ABORTED" {
                return Err(WorkerError::FailedPrecondition(format!(
                    "navigation to {shown} was aborted: the server sent no page (e.g. 204 No \
                     Content); the page stays where it was"
                )));
            }
            // An error status with an empty body: which status it was is the useful part.
            let status = match reply.get("loaderId").and_then(Value::as_str) {
                Some(loader) if error == "net::ERR_HTTP_RESPONSE_CODE_FAILURE" => {
                    page.tracker.status_of(loader)
                }
                _ => 0,
            };
            if status != 0 {
                let reason = hyper::StatusCode::from_u16(status as u16)
                    .ok()
                    .and_then(|code| code.canonical_reason())
                    .map_or(String::new(), |reason| format!(" {reason}"));
                return Err(WorkerError::FailedPrecondition(format!(
                    "navigation to {shown} failed: {error} (the server answered {status}{reason} \
                     with an empty page: nothing to show)"
                )));
            }
            return Err(WorkerError::FailedPrecondition(format!(
                "navigation to {shown} failed: {error}{}",
                nanomuse_common::net_errors::meaning(error)
            )));
        }
        // No loader means a same-document navigation (a #fragment): nothing to load.
        let status = match reply.get("loaderId").and_then(Value::as_str) {
            Some(loader) => {
                // However many documents a page that moves itself on commits meanwhile.
                let _kept = page.tracker.pin(loader);
                match page.tracker.loaded(loader).await {
                    (_, Some(unreachable)) => {
                        return Err(WorkerError::FailedPrecondition(format!(
                            "navigation to {shown} failed: {unreachable}"
                        )));
                    }
                    _ if !last && page.tracker.lost_to_the_document_it_replaced(loader) => {
                        tracing::debug!("the page left took the navigation over: asked for again");
                        return Ok(None);
                    }
                    (status, None) if page.tracker.left_pages_navigation_follows(loader) => {
                        // Stopped, and seen to land or not: a person's typed address is where
                        // they stay.
                        tracing::debug!(
                            "the page left asked for a navigation after ours loaded: stopped"
                        );
                        page.cdp("Page.stopLoading", json!({})).await?;
                        let tracker = &page.tracker;
                        let landed_or_failed = tracker
                            .until(|t| (!t.left_pages_navigation_follows(loader)).then_some(()));
                        // Chromium tells either within a few ms; a bound in case it tells neither.
                        let _ = tokio::time::timeout(LEFT_PAGES_NAVIGATION_TOLD, landed_or_failed)
                            .await;
                        if !last && !tracker.shows(loader) {
                            tracing::debug!(
                                "the page left took the navigation over after its load: asked \
                                 for again"
                            );
                            return Ok(None);
                        }
                        status
                    }
                    (status, None) => status,
                }
            }
            None => 0,
        };
        Ok(Some((status, None)))
    };
    // Asked for again as a person would type the address again.
    let loading = async {
        let mut attempt = 1;
        loop {
            if let Some(loaded) = load_once(attempt == ATTEMPTS).await? {
                return Ok::<_, WorkerError>(loaded);
            }
            attempt += 1;
        }
    };
    let (status, download) = match tokio::time::timeout(timeout, loading).await {
        Ok(loaded) => loaded?,
        Err(_) => {
            super::quiet(page).await;
            return Err(WorkerError::timeout(
                format!("navigation to {shown}"),
                timeout.as_millis() as u64,
            ));
        }
    };
    Ok(NavigateReply {
        page: Some(super::page_info(page).await?),
        status,
        download: download.unwrap_or_default(),
        refused: super::sentences(page.take_refusals(Some(url))),
    })
}
