//! The worker's one error type, and its mapping to the contract's [`BackendError`] (and so to
//! `tonic::Status`) in one place.

use nanomuse_proto::{BackendError, Refusal};

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

impl From<WorkerError> for BackendError {
    fn from(error: WorkerError) -> Self {
        let message = error.to_string();
        match error {
            WorkerError::InvalidArgument(_) => Self::InvalidArgument(message),
            WorkerError::NotFound(_) => Self::NotFound(message),
            WorkerError::FailedPrecondition(_) | WorkerError::Script(_) => {
                Self::FailedPrecondition(message)
            }
            WorkerError::Timeout { .. } => Self::Timeout(message),
            WorkerError::TooLarge(_) => Self::ResourceExhausted(message),
            WorkerError::BrowserGone(_)
            | WorkerError::Launch(_)
            | WorkerError::PageLost(_)
            | WorkerError::Moved(_) => Self::Unavailable(message),
            WorkerError::Fetch(_) => Self::FailedPrecondition(message),
            WorkerError::Refused(refusal) => Self::from(refusal),
            WorkerError::Cdp { .. } | WorkerError::Io(_) => Self::Internal(message),
        }
    }
}

pub type Result<T, E = WorkerError> = std::result::Result<T, E>;
