//! The controller's one error type and its codes in the shared vocabulary
//! ([`nanomuse_proto::ErrorCode`]), from which its gRPC and HTTP statuses follow.

use nanomuse_proto::{BackendError, Coded, ErrorCode, Refusal};

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    NotFound(String),
    /// Element numbers from a listing the page no longer has.
    #[error("{0}")]
    StaleListing(String),
    #[error("{0}")]
    Unauthenticated(String),
    /// The URL policy refused the destination; the message names the rule.
    #[error("{0}")]
    PermissionDenied(String),
    /// Every worker is full and the queue's deadline passed, or the queue is full, or one of
    /// the tenant's quotas (`controller.quotas`) is reached.
    #[error("{0}")]
    ResourceExhausted(String),
    /// A request body larger than the server takes.
    #[error("{0}")]
    TooLarge(String),
    /// An HTTP call that changes state sent no JSON body (a form or a blind request of a
    /// page, see `http::guard`).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// No worker can take the action now (none registered, or the workspace's one is down).
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Unimplemented(String),
    /// The request is well-formed but the state does not allow it (Done on a closed hold,
    /// input on a page nobody took over).
    #[error("{0}")]
    Conflict(String),
    /// The browser said no; its message is for the model as it is.
    #[error("{0}")]
    Backend(#[from] BackendError),
    #[error("the controller's store failed: {0}")]
    Store(String),
}

impl From<sled::Error> for ControllerError {
    fn from(error: sled::Error) -> Self {
        Self::Store(error.to_string())
    }
}

impl From<Refusal> for ControllerError {
    fn from(refusal: Refusal) -> Self {
        let message = refusal.to_string();
        match refusal.code() {
            ErrorCode::InvalidArgument => Self::InvalidArgument(message),
            ErrorCode::PermissionDenied => Self::PermissionDenied(message),
            code => Self::Backend(BackendError::from_code(code, message)),
        }
    }
}

impl Coded for ControllerError {
    fn code(&self) -> ErrorCode {
        match self {
            ControllerError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            ControllerError::NotFound(_) => ErrorCode::NotFound,
            ControllerError::StaleListing(_) | ControllerError::Conflict(_) => {
                ErrorCode::FailedPrecondition
            }
            ControllerError::Unauthenticated(_) => ErrorCode::Unauthenticated,
            ControllerError::PermissionDenied(_) => ErrorCode::PermissionDenied,
            ControllerError::ResourceExhausted(_) => ErrorCode::ResourceExhausted,
            ControllerError::TooLarge(_) => ErrorCode::TooLarge,
            ControllerError::UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            ControllerError::Unavailable(_) => ErrorCode::Unavailable,
            ControllerError::Unimplemented(_) => ErrorCode::Unimplemented,
            // Seen from here, the browser's own failure is a bad gateway.
            ControllerError::Backend(BackendError::Internal(_)) => ErrorCode::BadGateway,
            ControllerError::Backend(backend) => backend.code(),
            ControllerError::Store(_) => ErrorCode::Internal,
        }
    }
}

impl From<ControllerError> for tonic::Status {
    fn from(error: ControllerError) -> Self {
        error.to_status()
    }
}

impl ControllerError {
    /// The HTTP status of the error for the card's API.
    pub fn http_status(&self) -> axum::http::StatusCode {
        self.code().http()
    }
}

pub type Result<T, E = ControllerError> = std::result::Result<T, E>;
