//! What every service shares beside the contract: telemetry (traces across every hop, logs),
//! metrics, tenant and device tokens, the deployment's hop secret, config files, the bounds of
//! names and messages, what network errors mean, and shutdown on signals.

pub mod config_file;
pub mod hop;
pub mod limits;
pub mod metrics;
pub mod names;
pub mod net_errors;
pub mod shutdown;
pub mod telemetry;
pub mod tokens;

pub use config_file::config_section;
pub use hop::HopSecret;
pub use names::check_name;
pub use shutdown::cancel_on_signals;
