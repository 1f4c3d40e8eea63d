//! The browser tool as an MCP server, a thin adapter over [`crate::Controller::act`]: one tool
//! per action ([`tools`]), the server that carries calls out ([`server`]), the thread's frames
//! and the workspace's downloads as resources ([`frames`], [`downloads`]), Streamable HTTP at
//! `/mcp` on the controller's port ([`http`]); stdio for local agents (`nanomuse-browser mcp`)
//! lives with the CLI and forwards to a server. Through the official Rust SDK, `rmcp`.

pub mod downloads;
pub mod frames;
pub mod http;
pub mod server;
pub mod sessions;
pub mod tools;

pub use http::router;
