//! What the end-to-end tests (`tests/e2e`, one binary with a module per area) and the
//! benchmark (`examples/bench`) share: a site served on 127.0.0.1 by the test itself, a real
//! worker and controller on real sockets, the calls the agent makes, the contract's lists of
//! methods, actions and routes, a watcher of the live take-over, the Kotlin phone, and small readers of what Chromium leaves
//! behind.

mod calls;
mod chromium;
pub mod contract;
mod controller;
mod live;
pub mod phone;
mod processes;
mod site;
mod tls;
mod worker;

pub use calls::*;
pub use chromium::*;
pub use controller::*;
pub use live::*;
pub use processes::*;
pub use site::*;
pub use tls::*;
pub use worker::*;
