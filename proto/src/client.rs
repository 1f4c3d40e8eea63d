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
    /// How errors name the other end ("worker w1").
    peer: std::sync::Arc<str>,
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
        Self {
            client,
            peer: "the backend".into(),
        }
    }

    /// The same backend, named `peer` in the errors of a broken connection.
    pub fn named(mut self, peer: impl Into<String>) -> Self {
        self.peer = peer.into().into();
        self
    }

    /// The error of a call: the other end's own status as it is; a connection that failed
    /// (refused, reset, closed mid-call: a status made here, with its cause as its source) as
    /// UNAVAILABLE, saying the op's outcome is unknown.
    fn failure(&self, op: &str, status: tonic::Status) -> BackendError {
        if std::error::Error::source(&status).is_none() {
            return status.into();
        }
        BackendError::Unavailable(format!(
            "{} stopped answering during {op} ({}); what the op did is unknown: look again \
             once it is back",
            self.peer,
            status.message()
        ))
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
    ($($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
        #[tonic::async_trait]
        impl Backend for GrpcBackend {
            $(
                async fn $method(&self, request: $request) -> Result<$reply, BackendError> {
                    let mut client = self.client.clone();
                    match client.$method(request).await {
                        Ok(reply) => Ok(reply.into_inner()),
                        Err(status) => Err(self.failure($name, status)),
                    }
                }
            )*
        }
    };
}

call! {
    open(OpenRequest) -> OpenReply, "open";
    navigate(NavigateRequest) -> NavigateReply, "navigate";
    evaluate(EvaluateRequest) -> EvaluateReply, "evaluate";
    tap(TapRequest) -> TapReply, "tap";
    r#type(TypeRequest) -> TypeReply, "type";
    key(KeyRequest) -> KeyReply, "key";
    scroll(ScrollRequest) -> ScrollReply, "scroll";
    back(BackRequest) -> BackReply, "back";
    settle(SettleRequest) -> SettleReply, "settle";
    screenshot(ScreenshotRequest) -> ScreenshotReply, "screenshot";
    state(StateRequest) -> StateReply, "state";
    fetch(FetchRequest) -> FetchReply, "fetch";
    profile(ProfileRequest) -> ProfileReply, "profile";
    close(CloseRequest) -> CloseReply, "close";
}
