//! A [`Backend`] over a gRPC channel: how the controller reaches a worker or the gateway.

use tonic::transport::Channel;

use crate::v1::browser_backend_client::BrowserBackendClient;
use crate::{Backend, BackendError};
use nanomuse_common::hop::{HopSecret, InternalChannel, internal};

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
    ///
    /// A status made here whose cause is this one call's stream being reset (the connection
    /// itself still up, e.g. a reply the client could not take) is that op's failure alone,
    /// INTERNAL, and says so: the other ops on the connection go on, and nothing is said of
    /// the other end being down.
    fn failure(&self, op: &str, status: tonic::Status) -> BackendError {
        if std::error::Error::source(&status).is_none() {
            return status.into();
        }
        if let Some(reason) = stream_reset(&status) {
            return BackendError::Internal(format!(
                "{} could not answer this {op} (its reply was refused: {reason}); the \
                 connection and other calls on it are unaffected; what the op did is unknown: \
                 look again",
                self.peer
            ));
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

/// The reason of an HTTP/2 reset of this call's stream alone for what it carried (a reply too
/// large or malformed), when that is the cause of `status`; `None` for a connection that failed
/// (GOAWAY, I/O), a stream refused or cancelled (the other end going away: the op may not have
/// run, as for a failed connection) or any other cause.
fn stream_reset(status: &tonic::Status) -> Option<String> {
    use h2::Reason;
    let mut source = std::error::Error::source(status);
    while let Some(cause) = source {
        if let Some(h2) = cause.downcast_ref::<h2::Error>() {
            let reason = h2.reason()?;
            let this_call = matches!(
                reason,
                Reason::PROTOCOL_ERROR
                    | Reason::INTERNAL_ERROR
                    | Reason::FRAME_SIZE_ERROR
                    | Reason::COMPRESSION_ERROR
                    | Reason::ENHANCE_YOUR_CALM
            );
            return (h2.is_reset() && !h2.is_go_away() && !h2.is_io() && this_call)
                .then(|| reason.to_string());
        }
        source = cause.source();
    }
    None
}

macro_rules! call {
    ([] $($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
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

crate::for_each_op!(call);
