//! The `worker` binary: configuration from a file, the environment and flags, then [`run`].

use std::path::PathBuf;

use clap::Parser;
use nanomuse_worker::{WorkerConfig, run};

#[derive(Debug, Parser)]
#[command(about = "A nanoMuse browser worker: the 15 BrowserBackend ops on Chromium")]
struct Args {
    /// A TOML file with a [worker] section.
    #[arg(long, env = "NANOMUSE_WORKER_CONFIG")]
    config: Option<PathBuf>,
    /// Where to serve gRPC.
    #[arg(
        long,
        env = "NANOMUSE_WORKER_LISTEN",
        default_value = "127.0.0.1:50061"
    )]
    listen: String,
    #[arg(long, env = "NANOMUSE_WORKER_NAME")]
    name: Option<String>,
    #[arg(long, env = "NANOMUSE_WORKER_CHROMIUM")]
    chromium: Option<PathBuf>,
    #[arg(long, env = "NANOMUSE_WORKER_PROFILES")]
    profiles_root: Option<PathBuf>,
    #[arg(long, env = "NANOMUSE_WORKER_IDLE_TIMEOUT_MS")]
    idle_timeout_ms: Option<u64>,
    /// Log as JSON lines.
    #[arg(long, env = "NANOMUSE_LOG_JSON")]
    log_json: bool,
}

fn load(args: &Args) -> Result<WorkerConfig, String> {
    let mut config: WorkerConfig =
        nanomuse_common::config_section(args.config.as_deref(), "worker")?;
    if let Some(name) = &args.name {
        config.name = name.clone();
    }
    if let Some(chromium) = &args.chromium {
        config.chromium = chromium.clone();
    }
    if let Some(root) = &args.profiles_root {
        config.profiles_root = root.clone();
    }
    if let Some(ms) = args.idle_timeout_ms {
        config.idle_timeout_ms = ms;
    }
    // From the environment only, never a flag: a process's arguments are visible to all.
    if let Ok(secret) = std::env::var(nanomuse_common::hop::HOP_SECRET_ENV)
        && !secret.trim().is_empty()
    {
        config.hop_secret = secret;
    }
    config.validate()?;
    Ok(config)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _telemetry =
        nanomuse_common::telemetry::init("worker", args.log_json, "info,chromiumoxide=error");
    let config = match load(&args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("worker: bad configuration: {message}");
            std::process::exit(2);
        }
    };
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    let shutdown = nanomuse_common::cancel_on_signals();
    run(config, listener, shutdown).await
}
