//! The controller: the browser tool's actions written once over the 15 backend ops, threads,
//! listings, frames, holds and placements in sled, the worker registry and scheduler, the HTTP
//! API with the browser card and MCP. The CLI and the embedded `serve` are the
//! `nanomuse-browser` package beside it.

pub mod actions;
pub mod app;
pub mod auth;
pub mod config;
pub mod devices;
pub mod error;
pub mod frames;
mod group_commit;
pub mod holds;
pub mod http;
pub mod listing;
pub mod mcp;
pub mod metrics;
pub mod observed;
pub mod replay;
pub mod scheduler;
pub mod service;
pub mod store;
pub mod takeover;
pub mod tenants;
#[cfg(test)]
mod testing;
pub mod url_policy;

use std::sync::Arc;

use nanomuse_proto::browser_tool_server::BrowserToolServer;
use nanomuse_proto::worker_registry_server::WorkerRegistryServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use app::Controller;
pub use config::Config;

use crate::service::{BrowserToolService, WorkerRegistryService};
use crate::store::{SledStore, Store};
use crate::tenants::Tenants;
use axum::serve::ListenerExt as _;

/// Serves the controller (gRPC and HTTP on one port) on `listener` until `shutdown` is cancelled; then stops taking calls,
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
    /// Its downloads folder, read without a network hop.
    pub downloads: Option<Arc<dyn nanomuse_proto::downloads::Downloads>>,
    /// Its pages' live views, watched without a network hop.
    pub screencast: Option<Arc<dyn nanomuse_proto::screencast::Screencast>>,
}

/// [`run`], with an in-process worker beside any that register over gRPC.
pub async fn run_with_local(
    config: Config,
    listener: TcpListener,
    shutdown: CancellationToken,
    local: Option<LocalWorker>,
) -> anyhow::Result<()> {
    let mut config = config;
    config.validate().map_err(anyhow::Error::msg)?;
    let address = listener.local_addr()?;
    let tokens = config.token_table().map_err(anyhow::Error::msg)?;
    let hop_secret = config.hop_secret().map_err(anyhow::Error::msg)?;
    tenants::check_exposure(address, &tokens, hop_secret.as_ref()).map_err(anyhow::Error::msg)?;
    if tokens.plaintext_count() > 0 {
        tracing::warn!(
            count = tokens.plaintext_count(),
            "controller.tokens holds tenant tokens in plaintext; keep their digests instead \
             (nanomuse-browser hash-token)"
        );
    }
    config
        .controller
        .url_policy
        .decide_hosted(listener.local_addr()?);
    let hosted = config.controller.url_policy.hosted == Some(true);
    tracing::info!(hosted, "URL policy");
    std::fs::create_dir_all(&config.controller.data_dir)?;
    let store: Arc<dyn Store> = Arc::new(
        SledStore::open(&config.controller.data_dir.join("sled"))
            .map_err(|e| anyhow::anyhow!("opening the store: {e}"))?,
    );
    let config = Arc::new(config);
    let controller = Arc::new(Controller::new(config.clone(), store.clone())?);
    if let Some(local) = local {
        controller.scheduler.register_local_with(
            &local.name,
            local.capacity,
            local.backend,
            local.downloads,
            local.screencast,
        );
    }
    // Tasks that hold the store: awaited before it is flushed and closed, so a controller
    // started on the same folder right after this one returns finds sled's lock free.
    let background = TaskTracker::new();
    devices::spawn(
        controller.clone(),
        &config.controller.gateways,
        shutdown.clone(),
        &background,
    );
    metrics::watch(Arc::downgrade(&controller));
    replay::spawn_pruning(
        store.clone(),
        config.controller.recording.clone(),
        shutdown.clone(),
        &background,
    );

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
    let tenants = Arc::new(Tenants::new(tokens));
    let auth = Arc::new(auth::Auth {
        tenants,
        hop_secret,
    });
    let tool = BrowserToolService::new(controller.clone(), shutdown.clone());
    let registry = WorkerRegistryService::new(
        controller.clone(),
        config.controller.heartbeat_interval_ms as u32,
    );
    let api = http::router(Arc::new(http::HttpState {
        controller: controller.clone(),
        shutdown: shutdown.clone(),
        allowed: Arc::new(http::guard::AllowedHosts::new(
            address,
            &config.controller.http_hosts,
        )),
    }));
    // One port: gRPC's routes are its services' paths, everything else is HTTP.
    let app = tonic::service::Routes::from(api.merge(nanomuse_common::metrics::router()))
        .add_service(health_service)
        .add_service(
            BrowserToolServer::new(tool)
                .max_encoding_message_size(64 * 1024 * 1024)
                .max_decoding_message_size(64 * 1024 * 1024),
        )
        .add_service(WorkerRegistryServer::new(registry))
        .into_axum_router()
        .fallback(http::not_found)
        .layer(axum::middleware::from_fn_with_state(
            auth,
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn(http::guard::grpc_over_http2_only))
        .layer(nanomuse_common::telemetry::ServerTraceLayer);
    tracing::info!(%address, "controller serving gRPC and HTTP");
    let listener = listener.tap_io(|stream| {
        // Small request/response exchanges: Nagle's delay would add up to 40 ms to each.
        let _ = stream.set_nodelay(true);
    });
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.clone().cancelled_owned())
        .await;
    controller.drain().await;
    drop(controller);
    background.close();
    background.wait().await;
    store
        .flush()
        .await
        .map_err(|e| anyhow::anyhow!("flushing the store: {e}"))?;
    tracing::info!("controller stopped");
    served?;
    Ok(())
}
