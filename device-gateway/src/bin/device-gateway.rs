//! The `device-gateway` binary: configuration from a file and flags, then [`run`].

use std::path::PathBuf;

use clap::Parser;
use nanomuse_device_gateway::{GatewayConfig, run};

#[derive(Debug, Parser)]
#[command(about = "The nanoMuse device gateway: phones lend their browser over WebSocket")]
struct Args {
    /// A TOML file with a [gateway] section.
    #[arg(long, env = "NANOMUSE_GATEWAY_CONFIG")]
    config: Option<PathBuf>,
    /// Where to serve phones (WebSocket at /device) and gRPC.
    #[arg(
        long,
        env = "NANOMUSE_GATEWAY_LISTEN",
        default_value = "127.0.0.1:50071"
    )]
    listen: String,
    /// A device token (or its `sha256:<hex>` digest) and its tenant, as TOKEN=TENANT;
    /// repeatable. For local runs: a hosted gateway reads digests from --device-tokens-file.
    #[arg(long = "device-token", value_name = "TOKEN=TENANT")]
    device_tokens: Vec<String>,
    /// A secrets file of device token digests, `"sha256:<hex>" = "tenant"` lines (no
    /// plaintext tokens); added to the configuration's.
    #[arg(long, env = "NANOMUSE_DEVICE_TOKENS_FILE", value_name = "FILE")]
    device_tokens_file: Option<PathBuf>,
    /// Log as JSON lines.
    #[arg(long, env = "NANOMUSE_LOG_JSON")]
    log_json: bool,
}

fn load(args: &Args) -> Result<GatewayConfig, String> {
    let mut config: GatewayConfig =
        nanomuse_common::config_section(args.config.as_deref(), "gateway")?;
    for pair in &args.device_tokens {
        let (token, tenant) = pair
            .split_once('=')
            .ok_or_else(|| format!("--device-token {pair:?}: use TOKEN=TENANT"))?;
        config
            .device_tokens
            .insert(token.to_string(), tenant.to_string());
    }
    if let Some(file) = &args.device_tokens_file {
        let entries = nanomuse_common::tokens::read_token_file(file)?;
        let source = file.display().to_string();
        nanomuse_common::tokens::merge_token_entries(&mut config.device_tokens, entries, &source)?;
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
    let _telemetry = nanomuse_common::telemetry::init("device-gateway", args.log_json, "info");
    let config = match load(&args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("device-gateway: bad configuration: {message}");
            std::process::exit(2);
        }
    };
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    // Scripts and tests read the address from here (with --listen 127.0.0.1:0).
    println!("device-gateway listening on {}", listener.local_addr()?);
    let shutdown = nanomuse_common::cancel_on_signals();
    run(config, listener, shutdown).await
}
