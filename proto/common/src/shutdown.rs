//! The services' one shutdown signal: Ctrl-C or SIGTERM cancels the root token.

use tokio_util::sync::CancellationToken;

/// A token cancelled on Ctrl-C or SIGTERM.
pub fn cancel_on_signals() -> CancellationToken {
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
    shutdown
}
