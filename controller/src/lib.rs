//! The controller: the browser tool's actions written once over the 14 backend ops, threads,
//! listings, frames and placements in sled, the worker registry and scheduler, and the CLI.

pub mod actions;
pub mod app;
pub mod cli;
pub mod config;
pub mod error;
pub mod frames;
pub mod listing;
pub mod scheduler;
pub mod serve;
pub mod service;
pub mod store;

use std::sync::Arc;

use nanomuse_proto::browser_tool_server::BrowserToolServer;
use nanomuse_proto::worker_registry_server::WorkerRegistryServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use app::Controller;
pub use config::Config;

use crate::service::{BrowserToolService, WorkerRegistryService};
use crate::store::{SledStore, Store};

/// Serves the controller on `listener` until `shutdown` is cancelled; then stops taking calls,
/// lets the ones in flight finish and flushes the store.
pub async fn run(
    config: Config,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    run_with_local(config, listener, shutdown, None).await
}

/// A backend in this process, used as a worker that is never down (the embedded `serve`).
pub struct LocalWorker {
    pub name: String,
    pub capacity: u32,
    pub backend: Arc<dyn nanomuse_proto::Backend>,
}

/// [`run`], with an in-process worker beside any that register over gRPC.
pub async fn run_with_local(
    config: Config,
    listener: TcpListener,
    shutdown: CancellationToken,
    local: Option<LocalWorker>,
) -> anyhow::Result<()> {
    config.validate().map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&config.controller.data_dir)?;
    let store: Arc<dyn Store> = Arc::new(
        SledStore::open(&config.controller.data_dir.join("sled"))
            .map_err(|e| anyhow::anyhow!("opening the store: {e}"))?,
    );
    let config = Arc::new(config);
    let controller = Arc::new(Controller::new(config.clone(), store.clone()));
    if let Some(local) = local {
        controller
            .scheduler
            .register_local(&local.name, local.capacity, local.backend);
    }
    let address = listener.local_addr()?;

    let (health, health_service) = tonic_health::server::health_reporter();
    for service in [
        "",
        "nanomuse.browser.v1.BrowserTool",
        "nanomuse.browser.v1.WorkerRegistry",
    ] {
        health
            .set_service_status(service, tonic_health::ServingStatus::Serving)
            .await;
    }
    let tool = BrowserToolService::new(
        controller.clone(),
        config.controller.tokens.clone(),
        shutdown.clone(),
    );
    let registry = WorkerRegistryService::new(
        controller.clone(),
        config.controller.heartbeat_interval_ms as u32,
    );
    tracing::info!(%address, "controller serving");
    let served = tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(
            BrowserToolServer::new(tool)
                .max_encoding_message_size(64 * 1024 * 1024)
                .max_decoding_message_size(64 * 1024 * 1024),
        )
        .add_service(WorkerRegistryServer::new(registry))
        .serve_with_incoming_shutdown(
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
            shutdown.cancelled(),
        )
        .await;
    controller.drain().await;
    drop(controller);
    store
        .flush()
        .await
        .map_err(|e| anyhow::anyhow!("flushing the store: {e}"))?;
    tracing::info!("controller stopped");
    served?;
    Ok(())
}
