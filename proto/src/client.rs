//! A [`Backend`] over a gRPC channel: how the controller reaches a worker or the gateway.

use tonic::transport::Channel;

use crate::hop::{HopSecret, InternalChannel, internal};
use crate::v1::browser_backend_client::BrowserBackendClient;
use crate::v1::*;
use crate::{Backend, BackendError};

/// The `BrowserBackend` service at the other end of a channel, as a [`Backend`]. Cloning is
/// cheap and shares the connection.
#[derive(Debug, Clone)]
pub struct GrpcBackend {
    client: BrowserBackendClient<InternalChannel>,
}

impl GrpcBackend {
    /// A backend reached without a hop secret (a worker or gateway on loopback that has none).
    pub fn new(channel: Channel) -> Self {
        Self::with_hop_secret(channel, None)
    }

    /// A backend inside the deployment: every op carries the hop secret.
    pub fn with_hop_secret(channel: Channel, secret: Option<&HopSecret>) -> Self {
        let client = BrowserBackendClient::new(internal(channel, secret))
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024);
        Self { client }
    }

    /// Connects to `endpoint` (e.g. `http://127.0.0.1:50051`).
    pub async fn connect(endpoint: String) -> Result<Self, BackendError> {
        let channel = Channel::from_shared(endpoint.clone())
            .map_err(|e| BackendError::InvalidArgument(format!("bad endpoint {endpoint}: {e}")))?
            .connect()
            .await
            .map_err(|e| BackendError::Unavailable(format!("cannot reach {endpoint}: {e}")))?;
        Ok(Self::new(channel))
    }
}

macro_rules! call {
    ($($method:ident($request:ty) -> $reply:ty;)*) => {
        #[tonic::async_trait]
        impl Backend for GrpcBackend {
            $(
                async fn $method(&self, request: $request) -> Result<$reply, BackendError> {
                    let mut client = self.client.clone();
                    Ok(client.$method(request).await?.into_inner())
                }
            )*
        }
    };
}

call! {
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
