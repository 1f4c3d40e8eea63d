//! The tonic service over any [`Backend`]: a thin adapter, so a backend is written once as
//! plain Rust and served by the worker and the gateway alike.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::Backend;
use crate::v1::browser_backend_server::{BrowserBackend, BrowserBackendServer};

/// Serves a [`Backend`] as the `BrowserBackend` gRPC service.
pub struct BackendServer<B: Backend> {
    backend: Arc<B>,
}

impl<B: Backend> BackendServer<B> {
    /// The tonic service to add to a server.
    pub fn service(backend: Arc<B>) -> BrowserBackendServer<Self> {
        BrowserBackendServer::new(Self { backend })
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024)
    }
}

macro_rules! forward {
    ([] $($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
        #[tonic::async_trait]
        impl<B: Backend> BrowserBackend for BackendServer<B> {
            $(
                async fn $method(
                    &self,
                    request: Request<$request>,
                ) -> Result<Response<$reply>, Status> {
                    let request = request.into_inner();
                    if request.session.is_none() {
                        return Err(Status::invalid_argument(
                            "every op needs a session (tenant, workspace, page)",
                        ));
                    }
                    self.backend
                        .$method(request)
                        .await
                        .map(Response::new)
                        .map_err(Status::from)
                }
            )*
        }
    };
}

crate::for_each_op!(forward);
