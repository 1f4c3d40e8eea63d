//! `nanomuse-browser serve`: the embedded single-user default — the controller on loopback
//! with a Chromium worker in the same process, state and profiles under one data folder, no
//! tokens. Off loopback it needs tenant tokens and a hop secret, as the `controller` does.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use nanomuse_worker::ChromiumBackend;
use tokio_util::sync::CancellationToken;

use crate::config::Config;

pub struct ServeOptions {
    pub data: PathBuf,
    pub listen: String,
    pub config: Option<PathBuf>,
}

/// Starts the controller and a worker that registers with it; returns when both have stopped
/// (on Ctrl-C or SIGTERM).
pub async fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let _telemetry = nanomuse_proto::telemetry::init(
        "nanomuse-browser",
        false,
        "warn,nanomuse_controller=info,nanomuse_worker=info",
    );
    let config = embedded_config(&options)?;
    let shutdown = nanomuse_proto::cancel_on_signals();
    run_embedded(config, &options.listen, shutdown, |address| {
        // Whoever started us may stop reading; that must not stop the service.
        let mut out = std::io::stdout();
        let _ = writeln!(
            out,
            "nanomuse-browser serving\n  gRPC (BrowserTool): http://{address}\n  \
             MCP:                http://{address}/mcp\n  \
             browser card:       http://{address}/browser/<thread>\n  \
             data:               {}\n\
             try: nanomuse-browser navigate https://example.com/",
            options.data.display()
        );
        let _ = out.flush();
    })
    .await
}

/// The configuration (`--config`, else the defaults) with state and profiles under `--data`.
pub fn embedded_config(options: &ServeOptions) -> anyhow::Result<Config> {
    let mut config = Config::load(options.config.as_deref()).map_err(anyhow::Error::msg)?;
    config.controller.data_dir = options.data.join("controller");
    config.worker.profiles_root = options.data.join("profiles");
    Ok(config)
}

/// The controller on `listen` with a Chromium worker in the same process, reached without a
/// network hop. `ready` is told the controller's address once it listens.
pub async fn run_embedded(
    mut config: Config,
    listen: &str,
    shutdown: CancellationToken,
    ready: impl FnOnce(std::net::SocketAddr),
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    let address = listener.local_addr()?;
    // Refused before "serving" is said (run_with_local checks again, for every caller).
    let tokens = config.token_table().map_err(anyhow::Error::msg)?;
    let hop_secret = config.hop_secret().map_err(anyhow::Error::msg)?;
    crate::tenants::check_exposure(address, &tokens, hop_secret.as_ref())
        .map_err(anyhow::Error::msg)?;
    if config.worker.name == "worker" {
        config.worker.name = "embedded".into();
    }
    config.worker.validate().map_err(anyhow::Error::msg)?;
    let worker = Arc::new(ChromiumBackend::new(Arc::new(config.worker.clone())));
    let reaper = nanomuse_worker::spawn_idle_reaper(&worker, shutdown.clone());
    let local = crate::LocalWorker {
        name: config.worker.name.clone(),
        capacity: config.worker.capacity,
        backend: worker.clone(),
    };
    ready(address);
    let served = crate::run_with_local(config, listener, shutdown, Some(local)).await;
    reaper.abort();
    worker.pool.close_all().await;
    served
}
