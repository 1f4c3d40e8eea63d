//! The `controller` binary (hosted mode): configuration from a file and the environment, then
//! [`nanomuse_controller::run`].

use std::path::PathBuf;

use clap::Parser;
use nanomuse_controller::{Config, run};

#[derive(Debug, Parser)]
#[command(about = "The nanoMuse browser controller: the browser tool for agents")]
struct Args {
    /// A TOML file with [browser], [controller] and [worker] sections.
    #[arg(long, env = "NANOMUSE_CONFIG")]
    config: Option<PathBuf>,
    /// Where to serve gRPC (BrowserTool, WorkerRegistry, health).
    #[arg(
        long,
        env = "NANOMUSE_CONTROLLER_LISTEN",
        default_value = "127.0.0.1:50051"
    )]
    listen: String,
    /// Where sled keeps its state (overrides controller.data_dir).
    #[arg(long, env = "NANOMUSE_CONTROLLER_DATA")]
    data: Option<PathBuf>,
    /// Log as JSON lines.
    #[arg(long, env = "NANOMUSE_LOG_JSON")]
    log_json: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let _telemetry = nanomuse_common::telemetry::init("controller", args.log_json, "info");
    let mut config = match Config::load(args.config.as_deref()) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("controller: bad configuration: {message}");
            std::process::exit(2);
        }
    };
    if let Some(data) = args.data {
        config.controller.data_dir = data;
    }
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    let shutdown = nanomuse_common::cancel_on_signals();
    run(config, listener, shutdown).await
}
