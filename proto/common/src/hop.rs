//! The hops inside a deployment authenticate with one shared secret (`NANOMUSE_HOP_SECRET`, or
//! `hop_secret` in a service's configuration): controller → worker, controller → gateway, and
//! worker → the controller's registry. The caller's channel adds it to every call
//! ([`internal`], [`WithHopSecret`], next to the trace layer), and the callee refuses a call
//! without it ([`RequireHopSecretLayer`]) with UNAUTHENTICATED.
//!
//! Open without it: gRPC health and `/metrics` — the kubelet's probes and Prometheus' scrape
//! carry no secret, and neither answers with anything of a tenant's.
//!
//! A service without a secret takes every call; [`check_exposure`] lets it start so only on
//! loopback, where the callers are this machine's own processes.

use std::net::SocketAddr;

use subtle::ConstantTimeEq;

use crate::telemetry::{TracedChannel, traced};
use crate::tokens::sha256;

/// The metadata (HTTP/2 header) that carries the secret.
pub const HOP_SECRET_HEADER: &str = "nanomuse-hop-secret";

/// The variable every binary reads the secret from.
pub const HOP_SECRET_ENV: &str = "NANOMUSE_HOP_SECRET";

/// The shortest secret taken: a shorter one could be guessed.
pub const HOP_SECRET_MIN_CHARS: usize = 16;

/// What a call without the secret (or with another) is told.
pub const REFUSED: &str = "this service takes calls only from inside its deployment, and this \
     call does not carry the deployment's hop secret (nanomuse-hop-secret); set \
     NANOMUSE_HOP_SECRET to the same value on the controller, the workers and the gateway";

/// The shared secret. Its value is never printed.
#[derive(Clone)]
pub struct HopSecret {
    header: http::HeaderValue,
    digest: [u8; 32],
}

impl std::fmt::Debug for HopSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HopSecret(..)")
    }
}

impl HopSecret {
    /// The secret in `value` (trimmed: a Secret's file often ends in a newline); `None` when
    /// empty. `key` names the setting in errors.
    pub fn parse(value: &str, key: &str) -> Result<Option<Self>, String> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(None);
        }
        if value.chars().count() < HOP_SECRET_MIN_CHARS {
            return Err(format!(
                "{key}: the hop secret needs {HOP_SECRET_MIN_CHARS}+ characters (e.g. `openssl \
                 rand -hex 32`)"
            ));
        }
        let mut header = http::HeaderValue::from_str(value).map_err(|_| {
            format!("{key}: the hop secret must be printable ASCII (e.g. `openssl rand -hex 32`)")
        })?;
        header.set_sensitive(true);
        Ok(Some(Self {
            digest: sha256(value.as_bytes()),
            header,
        }))
    }

    /// Whether `presented` is this secret. Both sides are hashed first, so the comparison
    /// (constant time) takes as long whatever the length or the content of a guess.
    pub fn matches(&self, presented: Option<&[u8]>) -> bool {
        let Some(presented) = presented else {
            return false;
        };
        bool::from(sha256(presented).ct_eq(&self.digest))
    }

    /// Whether the call's headers (or gRPC metadata, `metadata.as_ref()`) carry this secret.
    pub fn carried_by(&self, headers: &http::HeaderMap) -> bool {
        self.matches(headers.get(HOP_SECRET_HEADER).map(|v| v.as_bytes()))
    }
}

/// Refuses to serve on a non-loopback address without a hop secret: anyone who reaches the
/// port could otherwise call `service` as its controller does.
pub fn check_exposure(
    address: SocketAddr,
    secret: Option<&HopSecret>,
    service: &str,
) -> Result<(), String> {
    if secret.is_some() || address.ip().is_loopback() {
        return Ok(());
    }
    Err(format!(
        "refusing to serve the {service} on {address} without a hop secret: off loopback anyone \
         who reaches the port could call it; set {HOP_SECRET_ENV} (the same value as the \
         controller's), or listen on 127.0.0.1"
    ))
}

/// A client channel that adds the hop secret to every call it carries (nothing when there is
/// no secret: a loopback setup).
#[derive(Debug, Clone)]
pub struct WithHopSecret<S> {
    inner: S,
    secret: Option<http::HeaderValue>,
}

impl<S> WithHopSecret<S> {
    pub fn new(inner: S, secret: Option<&HopSecret>) -> Self {
        Self {
            inner,
            secret: secret.map(|s| s.header.clone()),
        }
    }
}

/// The channel of a hop inside the deployment: traced and counted, carrying the hop secret.
pub type InternalChannel = WithHopSecret<TracedChannel>;

/// Wraps `channel` for a hop inside the deployment; every internal client is made here.
pub fn internal(channel: tonic::transport::Channel, secret: Option<&HopSecret>) -> InternalChannel {
    WithHopSecret::new(traced(channel), secret)
}

impl<S, B> tower::Service<http::Request<B>> for WithHopSecret<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        if let Some(secret) = &self.secret {
            request
                .headers_mut()
                .insert(HOP_SECRET_HEADER, secret.clone());
        }
        self.inner.call(request)
    }
}

/// A tower layer for a server that only its deployment calls (a worker, the gateway): every
/// request must carry the hop secret, except gRPC health, `/metrics` and the paths given to
/// [`RequireHopSecretLayer::open_to`] (the gateway's phones, who bring device tokens). Without
/// a secret it lets everything through (see [`check_exposure`]).
#[derive(Debug, Clone)]
pub struct RequireHopSecretLayer {
    secret: Option<HopSecret>,
    open_paths: &'static [&'static str],
}

impl RequireHopSecretLayer {
    pub fn new(secret: Option<HopSecret>) -> Self {
        Self {
            secret,
            open_paths: &[],
        }
    }

    /// Paths that authenticate their callers otherwise.
    pub fn open_to(self, open_paths: &'static [&'static str]) -> Self {
        Self { open_paths, ..self }
    }
}

impl<S> tower::Layer<S> for RequireHopSecretLayer {
    type Service = RequireHopSecret<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequireHopSecret {
            inner,
            secret: self.secret.clone(),
            open_paths: self.open_paths,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RequireHopSecret<S> {
    inner: S,
    secret: Option<HopSecret>,
    open_paths: &'static [&'static str],
}

/// Paths open on every service: the probes' and the scraper's.
fn always_open(path: &str) -> bool {
    path == "/metrics" || path.starts_with("/grpc.health.v1.Health/")
}

type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, B, R> tower::Service<http::Request<B>> for RequireHopSecret<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Result<S::Response, S::Error>>;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let path = request.uri().path();
        let admitted = match &self.secret {
            None => true,
            Some(secret) => {
                always_open(path)
                    || self.open_paths.contains(&path)
                    || secret.carried_by(request.headers())
            }
        };
        if admitted {
            return Box::pin(self.inner.call(request));
        }
        let is_grpc = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|kind| kind.as_bytes().starts_with(b"application/grpc"));
        let refused = if is_grpc {
            tonic::Status::unauthenticated(REFUSED).into_http()
        } else {
            let mut response = http::Response::new(R::default());
            *response.status_mut() = http::StatusCode::UNAUTHORIZED;
            response
        };
        Box::pin(std::future::ready(Ok(refused)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_matches_itself_only_and_short_or_empty_ones_are_caught() {
        let secret = HopSecret::parse(" a-hop-secret-of-some-length\n", "k")
            .unwrap()
            .unwrap();
        assert!(secret.matches(Some(b"a-hop-secret-of-some-length")));
        assert!(!secret.matches(Some(b"a-hop-secret-of-some-lengtH")));
        assert!(!secret.matches(Some(b"")));
        assert!(!secret.matches(None));
        assert!(HopSecret::parse("  ", "k").unwrap().is_none());
        assert!(HopSecret::parse("short", "k").unwrap_err().contains("16+"));
        assert!(!format!("{secret:?}").contains("length"));
    }

    #[test]
    fn off_loopback_a_service_needs_a_secret() {
        let secret = HopSecret::parse("a-hop-secret-of-some-length", "k").unwrap();
        let public: SocketAddr = "0.0.0.0:50061".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:50061".parse().unwrap();
        let local6: SocketAddr = "[::1]:50061".parse().unwrap();
        assert!(
            check_exposure(public, None, "worker")
                .unwrap_err()
                .contains("hop secret")
        );
        assert!(check_exposure(public, secret.as_ref(), "worker").is_ok());
        assert!(check_exposure(local, None, "worker").is_ok());
        assert!(check_exposure(local6, None, "worker").is_ok());
    }
}
