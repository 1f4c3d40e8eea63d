//! The Chromium worker: serves the 15 `BrowserBackend` ops on Debian's Chromium, one browser
//! per profile (tenant + workspace) with a persistent `--user-data-dir`, one page per page key.
//! On shutdown it drains: the controller moves its workspaces' profiles off it
//! (`ProfileTransfer`), then it stops.

pub mod backend;
pub mod browser;
pub mod cdp;
pub mod chromium;
pub mod config;
pub mod cookies;
pub mod downloads;
pub mod downloads_service;
pub mod egress;
pub mod emulation;
pub mod error;
pub mod metrics;
pub mod ops;
pub mod page;
pub mod preloaded;
pub mod profiles;
pub mod registration;
pub mod screencast;
pub mod set_cookie;
pub mod tracker;
pub mod transfer;
pub mod warm;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt as _;
use nanomuse_proto::BackendServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use backend::ChromiumBackend;
pub use config::WorkerConfig;

/// Launches the browsers kept ahead, then closes idle browsers until `shutdown`; for a backend
/// served by [`run`] or used in-process.
pub fn spawn_housekeeping(
    backend: &ChromiumBackend,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let pool = backend.pool.clone();
    let every = (backend.config().idle_timeout() / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(30));
    pool.warm.start();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tick.tick() => pool.close_idle().await,
            }
        }
    })
}

/// What the end of a drain keeps for closing the browsers (each close is bounded by 10 s, and
/// they close at once).
const CLOSE_RESERVE: Duration = Duration::from_secs(12);

/// Serves the worker on `listener` until `shutdown` is cancelled, then drains within
/// `drain_timeout_ms`: reports NOT_SERVING, asks the controller to take its workspaces (it
/// waits for their actions, then exports their profiles through `ProfileTransfer`), stops
/// taking calls, lets the ones in flight finish and closes every browser cleanly.
pub async fn run(
    config: WorkerConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    config.validate().map_err(anyhow::Error::msg)?;
    let address = listener.local_addr()?;
    let hop_secret = config.hop_secret().map_err(anyhow::Error::msg)?;
    nanomuse_common::hop::check_exposure(address, hop_secret.as_ref(), "worker")
        .map_err(anyhow::Error::msg)?;
    let config = Arc::new(config);
    let backend = Arc::new(ChromiumBackend::new(config.clone()));

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    health
        .set_service_status(
            "nanomuse.browser.v1.BrowserBackend",
            tonic_health::ServingStatus::Serving,
        )
        .await;

    metrics::watch(Arc::downgrade(&backend.pool), config.capacity);
    let reaper = spawn_housekeeping(&backend, shutdown.clone());

    let advertise = if config.advertise.is_empty() {
        format!("http://{address}")
    } else {
        config.advertise.clone()
    };
    let registration = (!config.controller.is_empty()).then(|| {
        tokio::spawn(registration::keep_registered(
            config.clone(),
            hop_secret.clone(),
            advertise.clone(),
            backend.pool.clone(),
            shutdown.clone(),
        ))
    });

    tracing::info!(%address, name = %config.name, "worker serving");
    // One port: the ops over gRPC, `/metrics` over plain HTTP. Only the controller may call
    // the ops: they reach every tenant's profiles on this worker. The trace layer is outside,
    // so refused calls are counted too.
    let app = tonic::service::Routes::from(nanomuse_common::metrics::router())
        .add_service(health_service)
        .add_service(BackendServer::service(backend.clone()))
        .add_service(transfer::TransferService::service(backend.pool.clone()))
        .add_service(nanomuse_proto::downloads::DownloadsServer::service(
            Arc::new(downloads_service::DownloadsFolder::new(
                &config.profiles_root,
            )),
        ))
        .add_service(nanomuse_proto::screencast::ScreencastServer::service(
            Arc::new(screencast::LiveViews::new(backend.pool.clone())),
        ))
        .into_axum_router()
        .layer(nanomuse_common::hop::RequireHopSecretLayer::new(
            hop_secret.clone(),
        ))
        .layer(nanomuse_common::telemetry::ServerTraceLayer);
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    // The server goes on through the drain: the controller exports the profiles over it.
    let stop_serving = CancellationToken::new();
    let mut server = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(stop_serving.clone().cancelled_owned())
            .into_future(),
    );
    let ended_early = tokio::select! {
        served = &mut server => Some(served),
        _ = shutdown.cancelled() => None,
    };

    let started = Instant::now();
    let bound = config.drain_timeout();
    reaper.abort();
    if let Some(registration) = registration {
        registration.abort();
    }
    for service in ["", "nanomuse.browser.v1.BrowserBackend"] {
        health
            .set_service_status(service, tonic_health::ServingStatus::NotServing)
            .await;
    }
    if ended_early.is_none() && !config.controller.is_empty() {
        tracing::info!(bound_ms = bound.as_millis() as u64, "draining");
        if let Some(reply) = registration::drain(
            &config,
            hop_secret.as_ref(),
            &advertise,
            bound.saturating_sub(CLOSE_RESERVE),
        )
        .await
        {
            tracing::info!(
                exported = reply.exported,
                left = reply.left,
                "the controller took this worker's workspaces"
            );
        }
    }
    stop_serving.cancel();
    let served = match ended_early {
        Some(served) => served,
        None => {
            let left = bound
                .saturating_sub(started.elapsed())
                .saturating_sub(CLOSE_RESERVE)
                .max(Duration::from_secs(1));
            match tokio::time::timeout(left, &mut server).await {
                Ok(served) => served,
                Err(_) => {
                    tracing::warn!("calls still in flight at the end of the drain; cut off");
                    server.abort();
                    Ok(Ok(()))
                }
            }
        }
    };
    let left = bound
        .saturating_sub(started.elapsed())
        .max(Duration::from_secs(1));
    if tokio::time::timeout(left, backend.pool.close_all())
        .await
        .is_err()
    {
        tracing::warn!("browsers still closing at the end of the drain; leaving them");
    }
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        "worker stopped"
    );
    served??;
    Ok(())
}
