//! `nanomuse-browser serve`: the embedded single-user default — the controller and one
//! in-process worker on loopback, state and profiles under one data folder, no tokens.

use std::path::PathBuf;

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
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "warn,nanomuse_controller=info,nanomuse_worker=info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let mut config = Config::load(options.config.as_deref()).map_err(anyhow::Error::msg)?;
    config.controller.data_dir = options.data.join("controller");
    config.worker.profiles_root = options.data.join("profiles");
    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    tokio::spawn(async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        signal.cancel();
    });
    run_embedded(config, &options.listen, shutdown, |address| {
        println!("nanomuse-browser serving");
        println!("  gRPC (BrowserTool): http://{address}");
        println!("  data:               {}", options.data.display());
        println!("try: nanomuse-browser navigate https://example.com/");
    })
    .await
}

/// The controller on `listen` and a worker on a free loopback port that registers with it.
/// `ready` is told the controller's address once both listen.
pub async fn run_embedded(
    mut config: Config,
    listen: &str,
    shutdown: CancellationToken,
    ready: impl FnOnce(std::net::SocketAddr),
) -> anyhow::Result<()> {
    let controller_listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    let address = controller_listener.local_addr()?;
    let worker_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut worker = config.worker.clone();
    worker.controller = format!("http://{address}");
    worker.name = if worker.name == "worker" {
        "embedded".into()
    } else {
        worker.name
    };
    config.worker = worker.clone();
    let controller = tokio::spawn(crate::run(config, controller_listener, shutdown.clone()));
    let worker = tokio::spawn(nanomuse_worker::run(
        worker,
        worker_listener,
        shutdown.clone(),
    ));
    ready(address);
    let (controller, worker) = tokio::join!(controller, worker);
    controller??;
    worker??;
    Ok(())
}
