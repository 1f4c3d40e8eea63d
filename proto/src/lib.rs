//! The `BrowserBackend` contract: the generated gRPC code of the 15 ops, the [`Backend`] trait
//! the controller's actions are written against, and the adapters between the two — a tonic
//! server over any `Backend` ([`BackendServer`]) and a `Backend` over a gRPC channel
//! ([`GrpcBackend`]). The worker and the device gateway implement `Backend` once and serve it
//! through the same adapter, so the two cannot drift apart. Beside it, the error vocabulary
//! ([`ErrorCode`]), the URL policy's rules ([`url_policy`]) and the page scripts ([`scripts`]);
//! the infrastructure every service shares is `nanomuse-common`.

mod backend;
mod client;
pub mod downloads;
mod error_code;
pub mod screencast;
pub mod scripts;
mod seam;
mod server;
pub mod upload;
pub mod url_policy;

/// The generated messages, client and server of `nanomuse.browser.v1`.
pub mod v1 {
    tonic::include_proto!("nanomuse.browser.v1");
}

/// The encoded `FileDescriptorSet` of the `.proto` files: every service, method and message.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/contract.bin"));

pub use backend::BackendError;
pub use client::GrpcBackend;
pub use error_code::{Coded, ErrorCode};
pub use seam::{Backend, OP_NAMES, Op, OpFuture};
pub use server::BackendServer;
#[doc(hidden)]
pub use tonic::async_trait;
pub use url_policy::{Refusal, Rule};
pub use v1::*;

impl Session {
    /// A session for `page` in the profile of `tenant` + `workspace`.
    pub fn new(
        tenant: impl Into<String>,
        workspace: impl Into<String>,
        page: impl Into<String>,
    ) -> Self {
        Self {
            tenant: tenant.into(),
            workspace: workspace.into(),
            page: page.into(),
            url_policy: None,
        }
    }
}
