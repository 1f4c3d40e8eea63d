//! The one error type every backend answers with, coded by the vocabulary of
//! [`crate::ErrorCode`], and its gRPC status both ways.

use crate::{Coded, ErrorCode};

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

impl BackendError {
    /// The error of `code` saying `message`; a code no backend answers with (one of the
    /// controller's own) is `Internal`.
    pub fn from_code(code: ErrorCode, message: String) -> Self {
        match code {
            ErrorCode::InvalidArgument | ErrorCode::UnsupportedMediaType => {
                Self::InvalidArgument(message)
            }
            ErrorCode::PermissionDenied => Self::PermissionDenied(message),
            ErrorCode::NotFound => Self::NotFound(message),
            ErrorCode::Timeout => Self::Timeout(message),
            ErrorCode::Unavailable => Self::Unavailable(message),
            ErrorCode::ResourceExhausted | ErrorCode::TooLarge => Self::ResourceExhausted(message),
            ErrorCode::FailedPrecondition => Self::FailedPrecondition(message),
            ErrorCode::Unauthenticated
            | ErrorCode::Unimplemented
            | ErrorCode::BadGateway
            | ErrorCode::Internal => Self::Internal(message),
        }
    }
}

impl Coded for BackendError {
    fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidArgument(_) => ErrorCode::InvalidArgument,
            Self::PermissionDenied(_) => ErrorCode::PermissionDenied,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Timeout(_) => ErrorCode::Timeout,
            Self::Unavailable(_) => ErrorCode::Unavailable,
            Self::ResourceExhausted(_) => ErrorCode::ResourceExhausted,
            Self::FailedPrecondition(_) => ErrorCode::FailedPrecondition,
            Self::Internal(_) => ErrorCode::Internal,
        }
    }
}

impl From<BackendError> for tonic::Status {
    fn from(error: BackendError) -> Self {
        error.to_status()
    }
}

impl From<crate::Refusal> for BackendError {
    fn from(refusal: crate::Refusal) -> Self {
        Self::from_code(refusal.code(), refusal.to_string())
    }
}

impl From<tonic::Status> for BackendError {
    fn from(status: tonic::Status) -> Self {
        Self::from_code(
            ErrorCode::from_grpc(status.code()),
            status.message().to_string(),
        )
    }
}
