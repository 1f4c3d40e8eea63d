//! The error vocabulary of every service: one table from a code to its gRPC code, its HTTP
//! status and its name in the phone protocol (`PROTOCOL.md`). Each service's error type says
//! which code it is ([`Coded`]); the statuses follow from this table alone.

use http::StatusCode;
use tonic::Code;

/// What kind of failure an error is; its message says the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The request itself is wrong.
    InvalidArgument,
    /// The caller may not do this (the URL policy refused the destination).
    PermissionDenied,
    NotFound,
    /// The op did not finish within its bound.
    Timeout,
    /// Not reachable now (a browser relaunching, no worker, shutting down).
    Unavailable,
    /// A limit or a quota was reached, or a queue's deadline passed.
    ResourceExhausted,
    /// The state does not allow it now (element numbers of an old listing, Done on a closed
    /// hold, nothing focused to type into).
    FailedPrecondition,
    Unauthenticated,
    /// A request body larger than the server takes.
    TooLarge,
    /// A state-changing HTTP call without a JSON body.
    UnsupportedMediaType,
    Unimplemented,
    /// The browser behind the service failed (seen from the controller).
    BadGateway,
    /// Anything else; the message still says what failed.
    Internal,
}

impl ErrorCode {
    /// Every code, for the table's tests.
    pub const ALL: [ErrorCode; 13] = [
        Self::InvalidArgument,
        Self::PermissionDenied,
        Self::NotFound,
        Self::Timeout,
        Self::Unavailable,
        Self::ResourceExhausted,
        Self::FailedPrecondition,
        Self::Unauthenticated,
        Self::TooLarge,
        Self::UnsupportedMediaType,
        Self::Unimplemented,
        Self::BadGateway,
        Self::Internal,
    ];

    /// The table: gRPC code, HTTP status, name on the phone's wire.
    const fn row(self) -> (Code, StatusCode, &'static str) {
        match self {
            Self::InvalidArgument => (
                Code::InvalidArgument,
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            Self::PermissionDenied => (
                Code::PermissionDenied,
                StatusCode::FORBIDDEN,
                "permission_denied",
            ),
            Self::NotFound => (Code::NotFound, StatusCode::NOT_FOUND, "not_found"),
            Self::Timeout => (
                Code::DeadlineExceeded,
                StatusCode::GATEWAY_TIMEOUT,
                "timeout",
            ),
            Self::Unavailable => (
                Code::Unavailable,
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
            ),
            Self::ResourceExhausted => (
                Code::ResourceExhausted,
                StatusCode::TOO_MANY_REQUESTS,
                "resource_exhausted",
            ),
            Self::FailedPrecondition => (
                Code::FailedPrecondition,
                StatusCode::CONFLICT,
                "failed_precondition",
            ),
            Self::Unauthenticated => (
                Code::Unauthenticated,
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
            ),
            Self::TooLarge => (
                Code::ResourceExhausted,
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
            ),
            Self::UnsupportedMediaType => (
                Code::InvalidArgument,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            Self::Unimplemented => (
                Code::Unimplemented,
                StatusCode::NOT_IMPLEMENTED,
                "unimplemented",
            ),
            Self::BadGateway => (Code::Internal, StatusCode::BAD_GATEWAY, "bad_gateway"),
            Self::Internal => (
                Code::Internal,
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
            ),
        }
    }

    pub const fn grpc(self) -> Code {
        self.row().0
    }

    pub const fn http(self) -> StatusCode {
        self.row().1
    }

    /// The code's name in the phone protocol.
    pub const fn name(self) -> &'static str {
        self.row().2
    }

    /// The code named `name` on the phone's wire.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|code| code.name() == name)
    }

    /// The code of a gRPC status received from another service.
    pub fn from_grpc(code: Code) -> Self {
        match code {
            Code::InvalidArgument | Code::OutOfRange => Self::InvalidArgument,
            Code::PermissionDenied => Self::PermissionDenied,
            Code::NotFound => Self::NotFound,
            Code::DeadlineExceeded => Self::Timeout,
            Code::Unavailable | Code::Cancelled | Code::Aborted => Self::Unavailable,
            Code::ResourceExhausted => Self::ResourceExhausted,
            Code::FailedPrecondition => Self::FailedPrecondition,
            Code::Unauthenticated => Self::Unauthenticated,
            Code::Unimplemented => Self::Unimplemented,
            _ => Self::Internal,
        }
    }
}

/// An error type of one service: which code of the vocabulary each of its errors is.
pub trait Coded: std::fmt::Display {
    fn code(&self) -> ErrorCode;

    /// The error as a gRPC status: its code's, with its message bounded (a message past the
    /// client's 16 KiB of headers would break the whole connection, failing other tenants'
    /// ops on it).
    fn to_status(&self) -> tonic::Status {
        tonic::Status::new(
            self.code().grpc(),
            nanomuse_common::limits::bounded_message(&self.to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_wire_name_and_comes_back_from_it_and_from_its_grpc_code() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.name()), Some(code));
            let back = ErrorCode::from_grpc(code.grpc());
            assert_eq!(back.grpc(), code.grpc(), "{code:?}");
        }
        let mut names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        assert_eq!(ErrorCode::from_name("bogus"), None);
    }
}
