//! The `reference-device` binary: connects to a device gateway as a phone would and carries out
//! the browser ops on a headless Chromium, until Ctrl-C or SIGTERM (see
//! [`nanomuse_reference_device`]).

use std::path::PathBuf;

use clap::Parser;
use nanomuse_reference_device::{self as reference, ReferenceConfig};

#[derive(Debug, Parser)]
#[command(
    about = "A nanoMuse reference device: a headless Chromium that lends itself to a \
                   device gateway like a phone"
)]
struct Args {
    /// The gateway's phone endpoint.
    #[arg(
        long,
        env = "NANOMUSE_DEVICE_GATEWAY",
        default_value = "ws://127.0.0.1:50071/device"
    )]
    gateway: String,
    /// The device's id: 1–64 of A-Z a-z 0-9 . _ -
    #[arg(long, env = "NANOMUSE_DEVICE_ID", default_value = "reference-device")]
    device_id: String,
    /// The device token (better given in the environment, where `ps` does not show it).
    #[arg(long, env = "NANOMUSE_DEVICE_TOKEN", hide_env_values = true)]
    token: String,
    /// Where the browser profile lives.
    #[arg(
        long,
        env = "NANOMUSE_DEVICE_PROFILES",
        default_value = "data/reference-device"
    )]
    profiles: PathBuf,
    /// The Chromium binary (default: /usr/bin/chromium).
    #[arg(long, env = "NANOMUSE_DEVICE_CHROMIUM")]
    chromium: Option<PathBuf>,
    /// The bound of a navigation, a back and a settle when the request gives none.
    #[arg(long, env = "NANOMUSE_DEVICE_TIMEOUT_MS", default_value_t = 30_000)]
    timeout_ms: u64,
    /// Log as JSON lines.
    #[arg(long, env = "NANOMUSE_LOG_JSON")]
    log_json: bool,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let _telemetry = nanomuse_common::telemetry::init(
        "reference-device",
        args.log_json,
        "info,chromiumoxide=error",
    );
    let config = ReferenceConfig {
        gateway: args.gateway,
        device_id: args.device_id,
        token: args.token,
        profiles_root: args.profiles,
        chromium: args.chromium,
        timeout_ms: args.timeout_ms,
    };
    if let Err(message) = config.validate() {
        eprintln!("reference-device: bad configuration: {message}");
        std::process::exit(2);
    }
    let shutdown = nanomuse_common::cancel_on_signals();
    let device = reference::start(config, shutdown);
    // Ends on the signal, or when the gateway refuses the device.
    let outcome = device.ended().await;
    device.stop().await;
    if let Err(why) = outcome {
        eprintln!("reference-device: the gateway refused the device: {why}");
        std::process::exit(1);
    }
}
