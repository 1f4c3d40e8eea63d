//! Who is calling: a bearer token names a tenant, for gRPC and HTTP alike. With no tokens
//! configured (the embedded single-user `serve`), every caller is the tenant "local".

use std::collections::HashMap;

use crate::error::{ControllerError, Result};

/// The tenant of the embedded single-user mode, where no tokens are configured.
pub const LOCAL_TENANT: &str = "local";

pub struct Tenants {
    /// token → tenant.
    tokens: HashMap<String, String>,
}

impl Tenants {
    pub fn new(tokens: HashMap<String, String>) -> Self {
        Self { tokens }
    }

    /// The tenant of `token` (from `authorization: Bearer <token>`).
    pub fn tenant(&self, token: Option<&str>) -> Result<String> {
        if self.tokens.is_empty() {
            return Ok(LOCAL_TENANT.to_string());
        }
        let token = token.ok_or_else(|| {
            ControllerError::Unauthenticated(
                "this call needs `authorization: Bearer <token>`".into(),
            )
        })?;
        self.tokens
            .get(token)
            .cloned()
            .ok_or_else(|| ControllerError::Unauthenticated("the token is not known".into()))
    }
}

/// The token of an `authorization: Bearer <token>` header value.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    header.and_then(|value| value.strip_prefix("Bearer "))
}
