//! `nanomuse-browser serve`: the embedded single-user default — the controller on loopback
//! with a Chromium worker in the same process, state and profiles under one data folder, no
//! tokens. Off loopback it needs tenant tokens and a hop secret, as the `controller` does.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use nanomuse_controller::{Config, LocalWorker};
use nanomuse_worker::{ChromiumBackend, WorkerConfig};
use serde::Deserialize as _;
use tokio_util::sync::CancellationToken;

/// What `serve` runs: the controller's configuration and its in-process worker's, read from
/// one file (`[browser]`, `[controller]` and `[worker]`).
#[derive(Debug, Clone, Default)]
pub struct EmbeddedConfig {
    pub controller: Config,
    pub worker: WorkerConfig,
}

impl EmbeddedConfig {
    /// Reads `path` (when given): `[worker]` for the worker, the rest for the controller, the
    /// environment applied; validated.
    pub fn load(path: Option<&std::path::Path>) -> Result<Self, String> {
        let mut table = nanomuse_controller::config::read_table(path)?;
        let named = |e: toml::de::Error| match path {
            Some(path) => format!("{}: [worker]: {e}", path.display()),
            None => format!("[worker]: {e}"),
        };
        let worker = match table.remove("worker") {
            Some(section) => WorkerConfig::deserialize(section).map_err(named)?,
            None => WorkerConfig::default(),
        };
        let controller = Config::from_table(table, path)?;
        Ok(Self { controller, worker })
    }
}

pub struct ServeOptions {
    pub data: PathBuf,
    pub listen: String,
    pub config: Option<PathBuf>,
}

/// Starts the controller and a worker that registers with it; returns when both have stopped
/// (on Ctrl-C or SIGTERM).
pub async fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let _telemetry = nanomuse_common::telemetry::init(
        "nanomuse-browser",
        false,
        "warn,nanomuse_controller=info,nanomuse_worker=info",
    );
    let config = embedded_config(&options)?;
    let shutdown = nanomuse_common::cancel_on_signals();
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
pub fn embedded_config(options: &ServeOptions) -> anyhow::Result<EmbeddedConfig> {
    let mut config = EmbeddedConfig::load(options.config.as_deref()).map_err(anyhow::Error::msg)?;
    config.controller.controller.data_dir = options.data.join("controller");
    config.worker.profiles_root = options.data.join("profiles");
    Ok(config)
}

/// The controller on `listen` with a Chromium worker in the same process, reached without a
/// network hop. `ready` is told the controller's address once it listens.
pub async fn run_embedded(
    config: EmbeddedConfig,
    listen: &str,
    shutdown: CancellationToken,
    ready: impl FnOnce(std::net::SocketAddr),
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    let address = listener.local_addr()?;
    // Refused before "serving" is said (run_with_local checks again, for every caller).
    let EmbeddedConfig {
        controller: config,
        worker: mut worker_config,
    } = config;
    let tokens = config.token_table().map_err(anyhow::Error::msg)?;
    let hop_secret = config.hop_secret().map_err(anyhow::Error::msg)?;
    nanomuse_controller::tenants::check_exposure(address, &tokens, hop_secret.as_ref())
        .map_err(anyhow::Error::msg)?;
    if worker_config.name == "worker" {
        worker_config.name = "embedded".into();
    }
    worker_config.validate().map_err(anyhow::Error::msg)?;
    let worker = Arc::new(ChromiumBackend::new(Arc::new(worker_config.clone())));
    nanomuse_worker::metrics::watch(Arc::downgrade(&worker.pool), worker_config.capacity);
    let reaper = nanomuse_worker::spawn_housekeeping(&worker, shutdown.clone());
    let local = LocalWorker {
        name: worker_config.name.clone(),
        capacity: worker_config.capacity,
        backend: worker.clone(),
        downloads: Some(Arc::new(
            nanomuse_worker::downloads_service::DownloadsFolder::new(&worker_config.profiles_root),
        )),
        screencast: Some(Arc::new(nanomuse_worker::screencast::LiveViews::new(
            worker.pool.clone(),
        ))),
    };
    ready(address);
    let served = nanomuse_controller::run_with_local(config, listener, shutdown, Some(local)).await;
    reaper.abort();
    worker.pool.close_all().await;
    served
}
