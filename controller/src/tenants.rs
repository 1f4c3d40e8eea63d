//! Who is calling: a bearer token names a tenant, for gRPC and HTTP alike. Tokens are known by
//! their SHA-256 digests only ([`TokenTable`]). With no tokens configured (the embedded
//! single-user `serve`), every caller is the tenant "local" — which [`check_exposure`] allows
//! on loopback only.

use std::net::SocketAddr;

use nanomuse_common::HopSecret;
use nanomuse_common::tokens::TokenTable;

use crate::error::{ControllerError, Result};

/// The tenant of the embedded single-user mode, where no tokens are configured.
pub const LOCAL_TENANT: &str = "local";

pub struct Tenants {
    tokens: TokenTable,
}

impl Tenants {
    pub fn new(tokens: TokenTable) -> Self {
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
            .tenant_of(token)
            .map(str::to_string)
            .ok_or_else(|| ControllerError::Unauthenticated("the token is not known".into()))
    }
}

/// The token of an `authorization: Bearer <token>` header value.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    header.and_then(|value| value.strip_prefix("Bearer "))
}

/// Refuses to serve on a non-loopback address without tenant tokens (every caller would be
/// the one tenant "local", and see its threads) or without a hop secret (anyone could register
/// as a worker and be sent the tenants' pages).
pub fn check_exposure(
    address: SocketAddr,
    tokens: &TokenTable,
    hop_secret: Option<&HopSecret>,
) -> std::result::Result<(), String> {
    if address.ip().is_loopback() {
        return Ok(());
    }
    if tokens.is_empty() {
        return Err(format!(
            "refusing to serve on {address} without tenant tokens: off loopback every caller \
             would be the one tenant \"local\" and see its threads; give tokens \
             (NANOMUSE_TOKENS_FILE or [controller.tokens], digests from `nanomuse-browser \
             hash-token`), or listen on 127.0.0.1"
        ));
    }
    nanomuse_common::hop::check_exposure(address, hop_secret, "controller")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use nanomuse_common::tokens::{Plaintext, token_digest};

    use super::*;

    fn table(pairs: &[(&str, &str)]) -> TokenTable {
        let entries: HashMap<String, String> = pairs
            .iter()
            .map(|(token, tenant)| (token_digest(token), tenant.to_string()))
            .collect();
        TokenTable::from_entries(&entries, "test", Plaintext::Refused).unwrap()
    }

    #[test]
    fn a_token_names_its_tenant_and_nothing_else_passes() {
        let tenants = Tenants::new(table(&[("token-of-tenant-a-0001", "tenant-a")]));
        assert_eq!(
            tenants.tenant(Some("token-of-tenant-a-0001")).unwrap(),
            "tenant-a"
        );
        for refused in [None, Some(""), Some("token-of-tenant-a-0002")] {
            assert!(matches!(
                tenants.tenant(refused),
                Err(ControllerError::Unauthenticated(_))
            ));
        }
        let open = Tenants::new(TokenTable::default());
        assert_eq!(open.tenant(None).unwrap(), LOCAL_TENANT);
    }

    #[test]
    fn off_loopback_the_controller_needs_tokens_and_a_hop_secret() {
        let public: SocketAddr = "0.0.0.0:50051".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:50051".parse().unwrap();
        let tokens = table(&[("token-of-tenant-a-0001", "tenant-a")]);
        let secret = HopSecret::parse("a-hop-secret-0123456789", "k").unwrap();
        assert!(check_exposure(local, &TokenTable::default(), None).is_ok());
        let error = check_exposure(public, &TokenTable::default(), secret.as_ref()).unwrap_err();
        assert!(error.contains("without tenant tokens"), "{error}");
        let error = check_exposure(public, &tokens, None).unwrap_err();
        assert!(error.contains("hop secret"), "{error}");
        assert!(check_exposure(public, &tokens, secret.as_ref()).is_ok());
    }
}
