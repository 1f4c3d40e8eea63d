//! The tonic service over any [`Backend`]: a thin adapter, so a backend is written once as
//! plain Rust and served by the worker and the gateway alike.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::Backend;
use crate::v1::browser_backend_server::{BrowserBackend, BrowserBackendServer};
use crate::v1::*;

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
    ($($method:ident($request:ty) -> $reply:ty;)*) => {
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

forward! {
    open(OpenRequest) -> OpenReply;
    navigate(NavigateRequest) -> NavigateReply;
    evaluate(EvaluateRequest) -> EvaluateReply;
    tap(TapRequest) -> TapReply;
    r#type(TypeRequest) -> TypeReply;
    key(KeyRequest) -> KeyReply;
    scroll(ScrollRequest) -> ScrollReply;
    back(BackRequest) -> BackReply;
    settle(SettleRequest) -> SettleReply;
    screenshot(ScreenshotRequest) -> ScreenshotReply;
    state(StateRequest) -> StateReply;
    fetch(FetchRequest) -> FetchReply;
    profile(ProfileRequest) -> ProfileReply;
    close(CloseRequest) -> CloseReply;
}
