//! A page's live view while a person has it: the [`Screencast`] trait the controller watches a
//! page through, a tonic server over any `Screencast` ([`ScreencastServer`], the worker's
//! `WorkerScreencast` service) and a `Screencast` over a gRPC channel ([`GrpcScreencast`]).
//! The embedded `serve` uses the worker's implementation in-process. A backend without a stream
//! of its own (the phone's gateway) is watched by [`ScreenshotLoop`]: screenshots back to back.

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, TryStreamExt};

use crate::v1::worker_screencast_client::WorkerScreencastClient;
use crate::v1::worker_screencast_server::{WorkerScreencast, WorkerScreencastServer};
use crate::v1::{ScreenFrame, WatchScreenRequest};
use crate::{Backend, BackendError, ScreenshotRequest};
use nanomuse_common::hop::InternalChannel;

/// The JPEG quality of a live view when the watcher names none.
pub const DEFAULT_QUALITY: u32 = 60;

/// The frames of one watched page, as it paints; ends when the page goes.
pub type FrameStream = Pin<Box<dyn Stream<Item = Result<ScreenFrame, BackendError>> + Send>>;

/// Where a page's live frames come from.
#[tonic::async_trait]
pub trait Screencast: Send + Sync + 'static {
    /// The page's frames from now on (the latest one first, when the page is already
    /// watched), for as long as the stream is kept; a watcher that reads slowly gets the newest
    /// frame, never a queue. NOT_FOUND for a page that is not open.
    async fn watch(&self, request: WatchScreenRequest) -> Result<FrameStream, BackendError>;
}

/// [`Screencast`] over a worker's `WorkerScreencast` service.
#[derive(Clone)]
pub struct GrpcScreencast {
    client: WorkerScreencastClient<InternalChannel>,
}

impl GrpcScreencast {
    pub fn new(channel: InternalChannel) -> Self {
        Self {
            // A frame of a large viewport can pass tonic's 4 MiB default.
            client: WorkerScreencastClient::new(channel).max_decoding_message_size(32 << 20),
        }
    }
}

#[tonic::async_trait]
impl Screencast for GrpcScreencast {
    async fn watch(&self, request: WatchScreenRequest) -> Result<FrameStream, BackendError> {
        let stream = self.client.clone().watch(request).await?.into_inner();
        Ok(Box::pin(stream.map_err(BackendError::from)))
    }
}

/// The `WorkerScreencast` service over any [`Screencast`].
pub struct ScreencastServer<S> {
    screencast: Arc<S>,
}

impl<S: Screencast> ScreencastServer<S> {
    pub fn service(screencast: Arc<S>) -> WorkerScreencastServer<Self> {
        WorkerScreencastServer::new(Self { screencast }).max_encoding_message_size(32 << 20)
    }
}

type Frames = Pin<Box<dyn Stream<Item = Result<ScreenFrame, tonic::Status>> + Send>>;

#[tonic::async_trait]
impl<S: Screencast> WorkerScreencast for ScreencastServer<S> {
    type WatchStream = Frames;

    async fn watch(
        &self,
        request: tonic::Request<WatchScreenRequest>,
    ) -> Result<tonic::Response<Frames>, tonic::Status> {
        let frames = self.screencast.watch(request.into_inner()).await?;
        Ok(tonic::Response::new(Box::pin(
            frames.map(|frame| frame.map_err(tonic::Status::from)),
        )))
    }
}

/// The fastest a [`ScreenshotLoop`] takes pictures: one per this, at most.
pub const LOOP_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// A live view over any [`Backend`] that has no stream: its `screenshot` op back to back while
/// the watcher reads (at most one per [`LOOP_INTERVAL`]), a picture sent only when it differs
/// from the last (a still page sends nothing). Each watcher has its own loop, paced by its own
/// reading, so nothing queues.
pub struct ScreenshotLoop {
    backend: Arc<dyn Backend>,
}

impl ScreenshotLoop {
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        Self { backend }
    }
}

struct Looping {
    backend: Arc<dyn Backend>,
    request: ScreenshotRequest,
    last: Option<Vec<u8>>,
    next_at: tokio::time::Instant,
    failed: bool,
}

impl Looping {
    async fn shot(&mut self) -> Result<ScreenFrame, BackendError> {
        tokio::time::sleep_until(self.next_at).await;
        self.next_at = tokio::time::Instant::now() + LOOP_INTERVAL;
        let shot = self.backend.screenshot(self.request.clone()).await?;
        Ok(ScreenFrame {
            jpeg: shot.jpeg,
            width: shot.width,
            height: shot.height,
            device_width: shot.width.into(),
            device_height: shot.height.into(),
            timestamp_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64),
        })
    }
}

#[tonic::async_trait]
impl Screencast for ScreenshotLoop {
    async fn watch(&self, request: WatchScreenRequest) -> Result<FrameStream, BackendError> {
        let mut looping = Looping {
            backend: self.backend.clone(),
            request: ScreenshotRequest {
                session: request.session,
                quality: match request.quality {
                    0 => DEFAULT_QUALITY,
                    q => q,
                },
            },
            last: None,
            next_at: tokio::time::Instant::now(),
            failed: false,
        };
        // The first picture now: a page that is not open fails the watch, not its stream.
        let first = looping.shot().await?;
        looping.last = Some(first.jpeg.clone());
        let rest = futures::stream::unfold(looping, |mut looping| async move {
            if looping.failed {
                return None;
            }
            loop {
                match looping.shot().await {
                    Ok(frame) if looping.last.as_ref() == Some(&frame.jpeg) => continue,
                    Ok(frame) => {
                        looping.last = Some(frame.jpeg.clone());
                        return Some((Ok(frame), looping));
                    }
                    Err(error) => {
                        looping.failed = true;
                        return Some((Err(error), looping));
                    }
                }
            }
        });
        Ok(Box::pin(futures::stream::iter([Ok(first)]).chain(rest)))
    }
}
