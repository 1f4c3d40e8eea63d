//! `nanomuse-browser`: the browser tool from a shell ([`cli`]), MCP over stdio for local agents
//! ([`mcp_stdio`]) and the embedded single-user default ([`serve`]: the controller with a
//! Chromium worker in the same process). The only package that links both the controller and
//! the worker; the hosted `controller` binary links no Chromium automation.

pub mod cli;
pub mod mcp_stdio;
pub mod serve;
