//! The device gateway: phones that lend their WebView to the browser tool. They connect over
//! WebSocket and speak the protocol of `PROTOCOL.md`; the gateway serves the same
//! `BrowserBackend` gRPC service as a worker, forwarding each op to the tenant's phone.

pub mod ops;
pub mod protocol;
