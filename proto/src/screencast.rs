//! A page's live view while a person has it: the [`Screencast`] trait the controller watches a
//! page through, a tonic server over any `Screencast` ([`ScreencastServer`], the worker's
//! `WorkerScreencast` service) and a `Screencast` over a gRPC channel ([`GrpcScreencast`]).
//! The embedded `serve` uses the worker's implementation in-process.

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, TryStreamExt};

use crate::BackendError;
use crate::v1::worker_screencast_client::WorkerScreencastClient;
use crate::v1::worker_screencast_server::{WorkerScreencast, WorkerScreencastServer};
use crate::v1::{ScreenFrame, WatchScreenRequest};
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
