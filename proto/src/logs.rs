//! Log setup of every binary, in one place: `RUST_LOG` or the binary's default filter, text or
//! JSON lines, on stderr (stdout is left to what a binary prints for scripts).

/// Installs the global subscriber; `default_filter` applies when `RUST_LOG` is unset.
pub fn init_logs(json: bool, default_filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| default_filter.into());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        logs.json().init();
    } else {
        logs.init();
    }
}
