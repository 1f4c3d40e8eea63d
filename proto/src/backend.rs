//! The 14 ops as a plain Rust trait, and the one error type every backend answers with.

use crate::v1::*;

/// A failure a model can read: the message says what went wrong and, where it helps, what to
/// do instead. The variant only picks the gRPC code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The request itself is wrong (a tap outside the viewport, an unknown key, a bad URL).
    #[error("{0}")]
    InvalidArgument(String),
    /// The URL policy refused the destination (an internal address, a host not allowed); the
    /// message names the rule.
    #[error("{0}")]
    PermissionDenied(String),
    /// The page or profile named does not exist (never opened, or closed).
    #[error("{0}")]
    NotFound(String),
    /// The op did not finish within its bound.
    #[error("{0}")]
    Timeout(String),
    /// The browser is not reachable right now (crashed, relaunching, shutting down).
    #[error("{0}")]
    Unavailable(String),
    /// A limit was reached (response too large, too many pages).
    #[error("{0}")]
    ResourceExhausted(String),
    /// The page is in a state where the op cannot run (nothing focused to type into).
    #[error("{0}")]
    FailedPrecondition(String),
    /// Anything else; the message still says what failed.
    #[error("{0}")]
    Internal(String),
}

impl From<BackendError> for tonic::Status {
    fn from(error: BackendError) -> Self {
        use tonic::Code;
        let code = match &error {
            BackendError::InvalidArgument(_) => Code::InvalidArgument,
            BackendError::PermissionDenied(_) => Code::PermissionDenied,
            BackendError::NotFound(_) => Code::NotFound,
            BackendError::Timeout(_) => Code::DeadlineExceeded,
            BackendError::Unavailable(_) => Code::Unavailable,
            BackendError::ResourceExhausted(_) => Code::ResourceExhausted,
            BackendError::FailedPrecondition(_) => Code::FailedPrecondition,
            BackendError::Internal(_) => Code::Internal,
        };
        // Bounded here, where every backend's status is made: a message past the client's
        // 16 KiB of headers would break the whole connection, failing other tenants' ops on it.
        tonic::Status::new(code, crate::limits::bounded_message(&error.to_string()))
    }
}

impl From<crate::Refusal> for BackendError {
    /// A URL that is not a web address is bad input; anything else the policy refused is a
    /// destination this tenant may not reach; a name that leads nowhere cannot be opened now.
    fn from(refusal: crate::Refusal) -> Self {
        let message = refusal.to_string();
        match refusal.rule {
            crate::Rule::NotWebUrl => Self::InvalidArgument(message),
            crate::Rule::Unresolved => Self::FailedPrecondition(message),
            _ => Self::PermissionDenied(message),
        }
    }
}

impl From<tonic::Status> for BackendError {
    fn from(status: tonic::Status) -> Self {
        use tonic::Code;
        let message = status.message().to_string();
        match status.code() {
            Code::InvalidArgument | Code::OutOfRange => Self::InvalidArgument(message),
            Code::PermissionDenied => Self::PermissionDenied(message),
            Code::NotFound => Self::NotFound(message),
            Code::DeadlineExceeded => Self::Timeout(message),
            Code::Unavailable | Code::Cancelled | Code::Aborted => Self::Unavailable(message),
            Code::ResourceExhausted => Self::ResourceExhausted(message),
            Code::FailedPrecondition => Self::FailedPrecondition(message),
            _ => Self::Internal(message),
        }
    }
}

/// The 14 ops of the spec's protocol. Every request carries its [`Session`].
#[tonic::async_trait]
pub trait Backend: Send + Sync + 'static {
    async fn open(&self, request: OpenRequest) -> Result<OpenReply, BackendError>;
    async fn navigate(&self, request: NavigateRequest) -> Result<NavigateReply, BackendError>;
    async fn evaluate(&self, request: EvaluateRequest) -> Result<EvaluateReply, BackendError>;
    async fn tap(&self, request: TapRequest) -> Result<TapReply, BackendError>;
    async fn r#type(&self, request: TypeRequest) -> Result<TypeReply, BackendError>;
    async fn key(&self, request: KeyRequest) -> Result<KeyReply, BackendError>;
    async fn scroll(&self, request: ScrollRequest) -> Result<ScrollReply, BackendError>;
    async fn back(&self, request: BackRequest) -> Result<BackReply, BackendError>;
    async fn settle(&self, request: SettleRequest) -> Result<SettleReply, BackendError>;
    async fn screenshot(&self, request: ScreenshotRequest)
    -> Result<ScreenshotReply, BackendError>;
    async fn state(&self, request: StateRequest) -> Result<StateReply, BackendError>;
    async fn fetch(&self, request: FetchRequest) -> Result<FetchReply, BackendError>;
    async fn profile(&self, request: ProfileRequest) -> Result<ProfileReply, BackendError>;
    async fn close(&self, request: CloseRequest) -> Result<CloseReply, BackendError>;
}
