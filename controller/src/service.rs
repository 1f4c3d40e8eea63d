//! The gRPC adapters: `BrowserTool` for agents (a tenant's bearer token on every call) and
//! `WorkerRegistry` for workers (the deployment's hop secret on every call). They check the
//! caller and hand over to [`Controller`]; nothing else lives here.

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
use crate::error::ControllerError;
use crate::tenants::{Tenants, bearer};

pub struct BrowserToolService {
    controller: Arc<Controller>,
    tenants: Arc<Tenants>,
    /// Ends the frame streams on shutdown; they would otherwise hold the server open.
    shutdown: CancellationToken,
}

impl BrowserToolService {
    pub fn new(
        controller: Arc<Controller>,
        tenants: Arc<Tenants>,
        shutdown: CancellationToken,
    ) -> Self {
        Self {
            controller,
            tenants,
            shutdown,
        }
    }

    fn tenant<T>(&self, request: &Request<T>) -> Result<String, Status> {
        let header = request.metadata().get("authorization");
        let token = bearer(header.and_then(|v| v.to_str().ok()));
        Ok(self.tenants.tenant(token)?)
    }
}

type FrameStream = Pin<Box<dyn Stream<Item = Result<Frame, Status>> + Send>>;

#[tonic::async_trait]
impl BrowserTool for BrowserToolService {
    async fn act(&self, request: Request<ActRequest>) -> Result<Response<ActReply>, Status> {
        let tenant = self.tenant(&request)?;
        let reply = self.controller.act(&tenant, request.into_inner()).await?;
        Ok(Response::new(reply))
    }

    type WatchFramesStream = FrameStream;

    async fn watch_frames(
        &self,
        request: Request<WatchFramesRequest>,
    ) -> Result<Response<FrameStream>, Status> {
        let tenant = self.tenant(&request)?;
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
        let tenant = self.tenant(&request)?;
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
    /// Every call must carry it when set: a worker that registers is sent the tenants' pages.
    hop_secret: Option<HopSecret>,
}

impl WorkerRegistryService {
    pub fn new(
        controller: Arc<Controller>,
        heartbeat_interval_ms: u32,
        hop_secret: Option<HopSecret>,
    ) -> Self {
        Self {
            controller,
            heartbeat_interval_ms,
            hop_secret,
        }
    }

    /// Refuses a call that does not carry the deployment's hop secret (when there is one).
    fn check_hop_secret<T>(&self, request: &Request<T>) -> Result<(), Status> {
        match &self.hop_secret {
            Some(secret) if !secret.carried_by(request.metadata().as_ref()) => {
                Err(ControllerError::Unauthenticated(nanomuse_proto::hop::REFUSED.into()).into())
            }
            _ => Ok(()),
        }
    }
}

#[tonic::async_trait]
impl WorkerRegistry for WorkerRegistryService {
    async fn register(
        &self,
        request: Request<RegisterWorkerRequest>,
    ) -> Result<Response<RegisterWorkerReply>, Status> {
        self.check_hop_secret(&request)?;
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
        self.check_hop_secret(&request)?;
        let known = self
            .controller
            .scheduler
            .heartbeat(&request.into_inner().name);
        Ok(Response::new(HeartbeatReply { known }))
    }

    async fn drain(&self, request: Request<DrainRequest>) -> Result<Response<DrainReply>, Status> {
        self.check_hop_secret(&request)?;
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
        request: Request<ListWorkersRequest>,
    ) -> Result<Response<ListWorkersReply>, Status> {
        self.check_hop_secret(&request)?;
        let workers = self.controller.scheduler.statuses()?;
        Ok(Response::new(ListWorkersReply { workers }))
    }
}
