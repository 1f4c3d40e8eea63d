//! The controller's one error type, and its mapping to `tonic::Status` in one place.

use nanomuse_proto::BackendError;

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
    /// Every worker is full and the queue's deadline passed, or the queue is full.
    #[error("{0}")]
    ResourceExhausted(String),
    /// No worker can take the action now (none registered, or the workspace's one is down).
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Unimplemented(String),
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

impl From<ControllerError> for tonic::Status {
    fn from(error: ControllerError) -> Self {
        use tonic::Code;
        let code = match &error {
            ControllerError::InvalidArgument(_) => Code::InvalidArgument,
            ControllerError::NotFound(_) => Code::NotFound,
            ControllerError::StaleListing(_) => Code::FailedPrecondition,
            ControllerError::Unauthenticated(_) => Code::Unauthenticated,
            ControllerError::ResourceExhausted(_) => Code::ResourceExhausted,
            ControllerError::Unavailable(_) => Code::Unavailable,
            ControllerError::Unimplemented(_) => Code::Unimplemented,
            ControllerError::Backend(backend) => return tonic::Status::from(backend.clone()),
            ControllerError::Store(_) => Code::Internal,
        };
        tonic::Status::new(code, error.to_string())
    }
}

pub type Result<T, E = ControllerError> = std::result::Result<T, E>;
