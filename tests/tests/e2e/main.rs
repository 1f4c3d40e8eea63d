//! The end-to-end tests, one binary with a module per area: real Chromium, real gRPC and HTTP
//! over sockets, the workspace's binaries as processes of their own (built first: `cargo build
//! --workspace --bins`), the Kotlin phone on the JVM. What they share is the tests crate's
//! library (`tests/src`). One area alone: `cargo test -p nanomuse-tests --test e2e <module>::`.

mod bad_input;
mod card;
mod cli;
mod controller;
mod crash;
mod deploy;
mod downloads;
mod drain;
mod faults;
mod gateway;
mod holds;
mod kotlin_phone;
mod listing;
mod live;
mod mcp;
mod observability;
mod parity;
mod replay;
mod security;
mod stops;
mod telemetry;
mod tenants;
mod todomvc;
mod upload;
mod url_policy;
mod wait;
mod warm;
mod worker;
