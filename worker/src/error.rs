//! The worker's one error type and its codes in the shared vocabulary
//! ([`nanomuse_proto::ErrorCode`]), from which its [`BackendError`] and gRPC status follow.

use nanomuse_proto::{BackendError, Coded, ErrorCode, Refusal};

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{what} timed out after {ms} ms")]
    Timeout { what: String, ms: u64 },
    #[error("{0}")]
    TooLarge(String),
    #[error("the browser is not available: {0}")]
    BrowserGone(String),
    /// The page's renderer crashed or its browser stopped while an op was on it.
    #[error("{0}")]
    PageLost(String),
    #[error("could not start Chromium: {0}")]
    Launch(String),
    #[error("the page raised an error: {0}")]
    Script(String),
    #[error("Chromium refused {method}: {message}")]
    Cdp { method: String, message: String },
    #[error("{0}")]
    Fetch(String),
    /// The URL policy said no; the message names the rule.
    #[error("{0}")]
    Refused(#[from] Refusal),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The workspace's profile was exported to be moved to another worker (a drain).
    #[error("{0}")]
    Moved(String),
    /// A profile's stream between workers broke off or came incomplete.
    #[error("{0}")]
    BrokenTransfer(String),
}

impl WorkerError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidArgument(message.into())
    }

    pub fn timeout(what: impl Into<String>, ms: u64) -> Self {
        Self::Timeout {
            what: what.into(),
            ms,
        }
    }
}

impl From<chromiumoxide::error::CdpError> for WorkerError {
    fn from(error: chromiumoxide::error::CdpError) -> Self {
        use chromiumoxide::error::CdpError;
        match error {
            CdpError::Chrome(e) => Self::Cdp {
                method: "a command".into(),
                message: e.message,
            },
            CdpError::Timeout => Self::BrowserGone("Chromium did not answer in time".into()),
            other => Self::BrowserGone(other.to_string()),
        }
    }
}

impl Coded for WorkerError {
    fn code(&self) -> ErrorCode {
        match self {
            WorkerError::InvalidArgument(_) => ErrorCode::InvalidArgument,
            WorkerError::NotFound(_) => ErrorCode::NotFound,
            WorkerError::FailedPrecondition(_) | WorkerError::Script(_) | WorkerError::Fetch(_) => {
                ErrorCode::FailedPrecondition
            }
            WorkerError::Timeout { .. } => ErrorCode::Timeout,
            WorkerError::TooLarge(_) => ErrorCode::ResourceExhausted,
            WorkerError::BrowserGone(_)
            | WorkerError::Launch(_)
            | WorkerError::PageLost(_)
            | WorkerError::Moved(_)
            | WorkerError::BrokenTransfer(_) => ErrorCode::Unavailable,
            WorkerError::Refused(refusal) => refusal.code(),
            WorkerError::Cdp { .. } | WorkerError::Io(_) => ErrorCode::Internal,
        }
    }
}

impl From<WorkerError> for BackendError {
    fn from(error: WorkerError) -> Self {
        Self::from_code(error.code(), error.to_string())
    }
}

pub type Result<T, E = WorkerError> = std::result::Result<T, E>;
