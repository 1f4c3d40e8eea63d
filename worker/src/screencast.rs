//! The live view of a page while a person has it: [`LiveViews`] implements [`Screencast`] with
//! Chromium's `Page.startScreencast`, served to the controller as `WorkerScreencast` (beside
//! `WorkerDownloads`) and used in-process by the embedded `serve`. One screencast per page,
//! shared by its watchers through a `watch` channel (a slow watcher skips to the newest frame,
//! nothing queues); started with the first watcher, stopped when the last one goes. Chromium
//! sends a frame only when the page paints, so a still page costs nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::page::{
    EventScreencastFrame, ScreencastFrameAckParams, StartScreencastFormat, StartScreencastParams,
    StopScreencastParams,
};
use futures::StreamExt as _;
use nanomuse_proto::screencast::{DEFAULT_QUALITY, FrameStream, Screencast};
use nanomuse_proto::{BackendError, ScreenFrame, WatchScreenRequest};
use tokio::sync::watch;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;
use crate::profiles::{InUse, Pool};

/// A page by tenant, workspace and page name.
type PageKey = (String, String, String);

/// The newest frame of a page's screencast; its receivers are the watchers.
type Latest = watch::Sender<Option<ScreenFrame>>;

pub struct LiveViews {
    pool: Arc<Pool>,
    casts: Arc<Mutex<HashMap<PageKey, Arc<Latest>>>>,
}

impl LiveViews {
    pub fn new(pool: Arc<Pool>) -> Self {
        Self {
            pool,
            casts: Arc::default(),
        }
    }

    /// A watcher of the page's running screencast, if it has one.
    fn join(&self, key: &PageKey) -> Option<FrameStream> {
        let casts = self.casts.lock().unwrap();
        let latest = casts.get(key)?;
        let mut watcher = latest.subscribe();
        // The newest frame at once: a still page sends no other.
        if watcher.borrow().is_some() {
            watcher.mark_changed();
        }
        Some(frames_of(watcher))
    }
}

/// The frames a watcher receives: each newest frame once, until the screencast ends.
fn frames_of(watcher: watch::Receiver<Option<ScreenFrame>>) -> FrameStream {
    Box::pin(futures::stream::unfold(watcher, |mut watcher| async move {
        loop {
            watcher.changed().await.ok()?;
            let frame = watcher.borrow_and_update().clone();
            if let Some(frame) = frame {
                return Some((Ok(frame), watcher));
            }
        }
    }))
}

#[nanomuse_proto::async_trait]
impl Screencast for LiveViews {
    async fn watch(&self, request: WatchScreenRequest) -> Result<FrameStream, BackendError> {
        let quality = match request.quality {
            0 => DEFAULT_QUALITY,
            q @ 1..=100 => q,
            q => {
                return Err(BackendError::InvalidArgument(format!(
                    "JPEG quality {q} is out of range: use 1..=100"
                )));
            }
        };
        let session = request.session.ok_or_else(|| {
            BackendError::InvalidArgument("a live view names its page's session".into())
        })?;
        let key = (
            session.tenant.clone(),
            session.workspace.clone(),
            session.page.clone(),
        );
        if let Some(frames) = self.join(&key) {
            return Ok(frames);
        }
        let (page, in_use) = self.pool.page(Some(&session)).await?;
        let (latest, watcher) = {
            let mut casts = self.casts.lock().unwrap();
            // Another watcher started it meanwhile: share that one.
            if casts.contains_key(&key) {
                drop(casts);
                return self.join(&key).ok_or_else(|| {
                    BackendError::Unavailable("the page's live view just ended; retry".into())
                });
            }
            let (latest, watcher) = watch::channel(None);
            let latest = Arc::new(latest);
            casts.insert(key.clone(), latest.clone());
            (latest, watcher)
        };
        let settings = page.settings();
        let size = |wanted: u32, viewport: u32| if wanted == 0 { viewport } else { wanted };
        let max = (
            size(request.max_width, settings.width),
            size(request.max_height, settings.height),
        );
        let frames = match start(&page, quality, max).await {
            Ok(frames) => frames,
            Err(error) => {
                self.casts.lock().unwrap().remove(&key);
                return Err(error.into());
            }
        };
        tracing::debug!(page = %key.2, "screencast started");
        let cast = Cast {
            pool: self.pool.clone(),
            session,
            quality,
            max,
            latest,
            key,
            casts: self.casts.clone(),
            _in_use: in_use,
        };
        tokio::spawn(cast.run(page, frames));
        Ok(frames_of(watcher))
    }
}

type ScreencastEvents = chromiumoxide::listeners::EventStream<EventScreencastFrame>;

/// Starts the page's screencast: JPEG frames scaled to `max` (the viewport in CSS px by
/// default), every painted frame, with the focused field's caret drawn.
async fn start(page: &PageHandle, quality: u32, max: (u32, u32)) -> Result<ScreencastEvents> {
    let frames = page.page.event_listener::<EventScreencastFrame>().await?;
    let params = StartScreencastParams::builder()
        .format(StartScreencastFormat::Jpeg)
        .quality(quality as i64)
        .max_width(max.0 as i64)
        .max_height(max.1 as i64)
        .every_nth_frame(1)
        .build();
    page.page.execute(params).await?;
    Ok(frames)
}

/// One page's screencast and what it needs to go on.
struct Cast {
    pool: Arc<Pool>,
    session: nanomuse_proto::Session,
    quality: u32,
    max: (u32, u32),
    latest: Arc<Latest>,
    key: PageKey,
    casts: Arc<Mutex<HashMap<PageKey, Arc<Latest>>>>,
    _in_use: InUse,
}

impl Cast {
    /// Casts the thread's page, and the popup it opens (or its opener again once that closes):
    /// the person sees the page their input goes to, as the ops act on it.
    async fn run(self, mut page: Arc<PageHandle>, mut frames: ScreencastEvents) {
        loop {
            let moved = self.frames_of(&page, frames).await;
            if !page.closed_as_window() {
                stop(&page).await;
            }
            if !moved {
                break;
            }
            let next = match self.pool.page(Some(&self.session)).await {
                Ok((next, _)) => next,
                Err(error) => {
                    tracing::debug!(%error, "the thread's page is gone");
                    break;
                }
            };
            match start(&next, self.quality, self.max).await {
                Ok(next_frames) => (page, frames) = (next, next_frames),
                Err(error) => {
                    tracing::debug!(%error, "the screencast did not follow the thread's page");
                    break;
                }
            }
        }
        let mut casts = self.casts.lock().unwrap();
        if casts
            .get(&self.key)
            .is_some_and(|c| Arc::ptr_eq(c, &self.latest))
        {
            casts.remove(&self.key);
        }
        // Dropping `latest` (with `self`) ends every watcher's stream.
    }

    /// Passes on `page`'s frames until the last watcher goes or the page does (false), or the
    /// thread moves to another page (true).
    async fn frames_of(&self, page: &Arc<PageHandle>, mut frames: ScreencastEvents) -> bool {
        let (latest, key, casts) = (&self.latest, &self.key, &self.casts);
        let ended = loop {
            tokio::select! {
                frame = frames.next() => {
                    let Some(frame) = frame else {
                        if page.closed_as_window() {
                            return true;
                        }
                        break "the page closed";
                    };
                    // Acked at once, not awaited: Chromium draws the next frame while this one is
                    // passed on.
                    let acked = page.page.clone();
                    let id = frame.session_id;
                    tokio::spawn(async move {
                        if let Err(error) = acked.execute(ScreencastFrameAckParams::new(id)).await {
                            tracing::debug!(%error, "screencast ack failed");
                        }
                    });
                    match screen_frame(page, &frame) {
                        Ok(frame) => { latest.send_replace(Some(frame)); }
                        Err(error) => tracing::debug!(%error, "a screencast frame was skipped"),
                    }
                }
                () = latest.closed() => {
                    // Nobody watches; unless one came meanwhile (joining takes the same lock).
                    let mut casts = casts.lock().unwrap();
                    if latest.receiver_count() == 0 {
                        casts.remove(key);
                        break "nobody watches";
                    }
                }
                () = page.front_moved() => return true,
                why = page.until_lost() => {
                    if page.closed_as_window() {
                        return true;
                    }
                    tracing::debug!(why, "the watched page is gone");
                    break "the page is gone";
                }
            }
        };
        tracing::debug!(page = %key.2, ended, "screencast stopped");
        false
    }
}

async fn stop(page: &PageHandle) {
    if let Err(error) = page.page.execute(StopScreencastParams::default()).await {
        tracing::debug!(%error, "stopping the screencast failed");
    }
}

fn screen_frame(page: &PageHandle, frame: &EventScreencastFrame) -> Result<ScreenFrame> {
    let data: &str = frame.data.as_ref();
    let jpeg = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| WorkerError::BrowserGone(format!("a screencast frame was not base64: {e}")))?;
    let settings = page.settings();
    let metadata = &frame.metadata;
    let timestamp_ms = metadata.timestamp.as_ref().map_or_else(
        || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64)
        },
        |t| (*t.inner() * 1000.0) as i64,
    );
    Ok(ScreenFrame {
        jpeg,
        width: settings.width,
        height: settings.height,
        device_width: metadata.device_width,
        device_height: metadata.device_height,
        timestamp_ms,
    })
}
