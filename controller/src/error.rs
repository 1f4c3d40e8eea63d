//! The controller's one error type, and its mappings to `tonic::Status` and to HTTP status
//! codes, in one place.

use nanomuse_proto::{BackendError, Refusal, Rule};

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
    /// A URL that is not a web address is bad input; a refused destination is a permission
    /// this tenant lacks; a name that does not resolve cannot be opened now.
    fn from(refusal: Refusal) -> Self {
        let message = refusal.to_string();
        match refusal.rule {
            Rule::NotWebUrl => Self::InvalidArgument(message),
            Rule::Unresolved => Self::Backend(BackendError::FailedPrecondition(message)),
            _ => Self::PermissionDenied(message),
        }
    }
}

impl From<ControllerError> for tonic::Status {
    fn from(error: ControllerError) -> Self {
        if let ControllerError::Backend(backend) = error {
            return tonic::Status::from(backend);
        }
        tonic::Status::new(
            error.code(),
            nanomuse_proto::limits::bounded_message(&error.to_string()),
        )
    }
}

impl ControllerError {
    /// The gRPC code of the error.
    pub fn code(&self) -> tonic::Code {
        use tonic::Code;
        match self {
            ControllerError::InvalidArgument(_) => Code::InvalidArgument,
            ControllerError::NotFound(_) => Code::NotFound,
            ControllerError::StaleListing(_) => Code::FailedPrecondition,
            ControllerError::Unauthenticated(_) => Code::Unauthenticated,
            ControllerError::PermissionDenied(_) => Code::PermissionDenied,
            ControllerError::ResourceExhausted(_) | ControllerError::TooLarge(_) => {
                Code::ResourceExhausted
            }
            ControllerError::UnsupportedMediaType(_) => Code::InvalidArgument,
            ControllerError::Unavailable(_) => Code::Unavailable,
            ControllerError::Unimplemented(_) => Code::Unimplemented,
            ControllerError::Conflict(_) => Code::FailedPrecondition,
            ControllerError::Backend(backend) => tonic::Status::from(backend.clone()).code(),
            ControllerError::Store(_) => Code::Internal,
        }
    }

    /// The HTTP status of the error for the card's API.
    pub fn http_status(&self) -> axum::http::StatusCode {
        use axum::http::StatusCode as S;
        match self {
            ControllerError::InvalidArgument(_) => S::BAD_REQUEST,
            ControllerError::NotFound(_) => S::NOT_FOUND,
            ControllerError::StaleListing(_) | ControllerError::Conflict(_) => S::CONFLICT,
            ControllerError::Unauthenticated(_) => S::UNAUTHORIZED,
            ControllerError::PermissionDenied(_) => S::FORBIDDEN,
            ControllerError::ResourceExhausted(_) => S::TOO_MANY_REQUESTS,
            ControllerError::TooLarge(_) => S::PAYLOAD_TOO_LARGE,
            ControllerError::UnsupportedMediaType(_) => S::UNSUPPORTED_MEDIA_TYPE,
            ControllerError::Unavailable(_) => S::SERVICE_UNAVAILABLE,
            ControllerError::Unimplemented(_) => S::NOT_IMPLEMENTED,
            ControllerError::Backend(backend) => match backend {
                BackendError::InvalidArgument(_) => S::BAD_REQUEST,
                BackendError::PermissionDenied(_) => S::FORBIDDEN,
                BackendError::NotFound(_) => S::NOT_FOUND,
                BackendError::Timeout(_) => S::GATEWAY_TIMEOUT,
                BackendError::Unavailable(_) => S::SERVICE_UNAVAILABLE,
                BackendError::ResourceExhausted(_) => S::TOO_MANY_REQUESTS,
                BackendError::FailedPrecondition(_) => S::CONFLICT,
                BackendError::Internal(_) => S::BAD_GATEWAY,
            },
            ControllerError::Store(_) => S::INTERNAL_SERVER_ERROR,
        }
    }
}

pub type Result<T, E = ControllerError> = std::result::Result<T, E>;
