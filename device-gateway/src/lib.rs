//! The device gateway: phones that lend their WebView to the browser tool. They connect over
//! WebSocket (`/device`) and speak the protocol of `PROTOCOL.md`; on the same port the gateway
//! serves the `BrowserBackend` gRPC service, forwarding each op to the tenant's phone, and the
//! `DeviceGateway` service through which the controller watches the phones.

pub mod backend;
pub mod config;
pub mod metrics;
pub mod ops;
pub mod phones;
pub mod protocol;
mod socket;
mod watch;

use std::sync::Arc;

use axum::extract::WebSocketUpgrade;
use axum::response::Response;
use axum::routing::get;
use axum::serve::ListenerExt as _;
use nanomuse_proto::BackendServer;
use nanomuse_proto::device_gateway_server::DeviceGatewayServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use backend::GatewayBackend;
pub use config::GatewayConfig;

/// What the connections and the services share.
pub struct State {
    pub config: Arc<GatewayConfig>,
    /// The phones' device tokens, by digest.
    pub device_tokens: nanomuse_common::tokens::TokenTable,
    pub phones: Arc<phones::Phones>,
    pub shutdown: CancellationToken,
}

/// Serves phones and the controller on `listener` until `shutdown` is cancelled; then closes
/// the phones' connections (their pending requests fail) and lets calls in flight end.
pub async fn run(
    config: GatewayConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    config.validate().map_err(anyhow::Error::msg)?;
    let address = listener.local_addr()?;
    let hop_secret = config.hop_secret().map_err(anyhow::Error::msg)?;
    nanomuse_common::hop::check_exposure(address, hop_secret.as_ref(), "device gateway")
        .map_err(anyhow::Error::msg)?;
    let device_tokens = config.device_token_table().map_err(anyhow::Error::msg)?;
    if device_tokens.plaintext_count() > 0 {
        tracing::warn!(
            count = device_tokens.plaintext_count(),
            "gateway.device_tokens holds device tokens in plaintext; keep their digests \
             instead (nanomuse-browser hash-token)"
        );
    }
    let config = Arc::new(config);
    let state = Arc::new(State {
        device_tokens,
        phones: Arc::default(),
        config: config.clone(),
        shutdown: shutdown.clone(),
    });
    let backend = Arc::new(GatewayBackend::new(state.phones.clone(), config.clone()));
    metrics::watch(Arc::downgrade(&state.phones));

    let (health, health_service) = tonic_health::server::health_reporter();
    for service in [
        "",
        "nanomuse.browser.v1.BrowserBackend",
        "nanomuse.browser.v1.DeviceGateway",
    ] {
        health
            .set_service_status(service, tonic_health::ServingStatus::Serving)
            .await;
    }
    let phones = axum::Router::new()
        .route("/device", get(upgrade))
        .with_state(state.clone())
        .merge(nanomuse_common::metrics::router());
    let app = tonic::service::Routes::from(phones)
        .add_service(health_service)
        .add_service(BackendServer::service(backend.clone()))
        // The phone's live view: its protocol has no stream, so screenshots back to back while
        // someone watches (the native stream from the app's display is the Kotlin side's).
        .add_service(nanomuse_proto::screencast::ScreencastServer::service(
            Arc::new(nanomuse_proto::screencast::ScreenshotLoop::new(backend)),
        ))
        .add_service(DeviceGatewayServer::new(watch::DeviceGatewayService {
            state: state.clone(),
        }))
        .into_axum_router()
        // Only the controller may call the gRPC services: they drive every tenant's phones.
        // The phones' socket is open: a phone proves itself with its device token.
        .layer(nanomuse_common::hop::RequireHopSecretLayer::new(hop_secret).open_to(&["/device"]))
        .layer(nanomuse_common::telemetry::ServerTraceLayer);
    tracing::info!(%address, "device gateway serving");
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await?;
    tracing::info!("device gateway stopped");
    Ok(())
}

async fn upgrade(
    upgrade: WebSocketUpgrade,
    axum::extract::State(state): axum::extract::State<Arc<State>>,
) -> Response {
    let limit = state.config.max_message_bytes;
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| socket::serve(socket, state))
}
