//! The gRPC adapters: `BrowserTool` for agents and `WorkerRegistry` for workers. The port's
//! auth layer ([`crate::auth`]) has checked the caller (a tenant's bearer token, the
//! deployment's hop secret); they read the tenant it found and hand over to [`Controller`].

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use nanomuse_proto::browser_tool_server::BrowserTool;
use nanomuse_proto::worker_registry_server::WorkerRegistry;
use nanomuse_proto::*;
use tokio_stream::wrappers::BroadcastStream;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

use crate::app::Controller;
use crate::auth::Caller;

pub struct BrowserToolService {
    controller: Arc<Controller>,
    /// Ends the frame streams on shutdown; they would otherwise hold the server open.
    shutdown: CancellationToken,
}

impl BrowserToolService {
    pub fn new(controller: Arc<Controller>, shutdown: CancellationToken) -> Self {
        Self {
            controller,
            shutdown,
        }
    }
}

type FrameStream = Pin<Box<dyn Stream<Item = Result<Frame, Status>> + Send>>;

#[tonic::async_trait]
impl BrowserTool for BrowserToolService {
    async fn act(&self, request: Request<ActRequest>) -> Result<Response<ActReply>, Status> {
        let tenant = Caller::of(&request)?;
        let reply = self.controller.act(&tenant, request.into_inner()).await?;
        Ok(Response::new(reply))
    }

    type WatchFramesStream = FrameStream;

    async fn watch_frames(
        &self,
        request: Request<WatchFramesRequest>,
    ) -> Result<Response<FrameStream>, Status> {
        let tenant = Caller::of(&request)?;
        let frames = self
            .controller
            .watch_frames(&tenant, &request.into_inner().thread)?;
        // A watcher too slow to keep up skips frames rather than holding the others back.
        let stream = BroadcastStream::new(frames)
            .filter_map(|frame| async move { frame.ok().map(Ok) })
            .take_until(self.shutdown.clone().cancelled_owned());
        Ok(Response::new(Box::pin(stream)))
    }

    async fn get_frame(
        &self,
        request: Request<GetFrameRequest>,
    ) -> Result<Response<Frame>, Status> {
        let tenant = Caller::of(&request)?;
        let request = request.into_inner();
        Ok(Response::new(
            self.controller
                .frame(&tenant, &request.thread, &request.frame_id)
                .await?,
        ))
    }
}

pub struct WorkerRegistryService {
    controller: Arc<Controller>,
    heartbeat_interval_ms: u32,
}

impl WorkerRegistryService {
    pub fn new(controller: Arc<Controller>, heartbeat_interval_ms: u32) -> Self {
        Self {
            controller,
            heartbeat_interval_ms,
        }
    }
}

#[tonic::async_trait]
impl WorkerRegistry for WorkerRegistryService {
    async fn register(
        &self,
        request: Request<RegisterWorkerRequest>,
    ) -> Result<Response<RegisterWorkerReply>, Status> {
        let request = request.into_inner();
        let scheduler = &self.controller.scheduler;
        if scheduler.register(&request.name, &request.address, request.capacity)? {
            scheduler.drop_parked_of(&request.name).await?;
        }
        Ok(Response::new(RegisterWorkerReply {
            heartbeat_interval_ms: self.heartbeat_interval_ms,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatReply>, Status> {
        let known = self
            .controller
            .scheduler
            .heartbeat(&request.into_inner().name);
        Ok(Response::new(HeartbeatReply { known }))
    }

    async fn drain(&self, request: Request<DrainRequest>) -> Result<Response<DrainReply>, Status> {
        let request = request.into_inner();
        let budget = std::time::Duration::from_millis(request.budget_ms.into());
        let reply = self
            .controller
            .scheduler
            .drain(&request.name, &request.address, request.capacity, budget)
            .await?;
        Ok(Response::new(reply))
    }

    async fn list_workers(
        &self,
        _: Request<ListWorkersRequest>,
    ) -> Result<Response<ListWorkersReply>, Status> {
        let workers = self.controller.scheduler.statuses()?;
        Ok(Response::new(ListWorkersReply { workers }))
    }
}
