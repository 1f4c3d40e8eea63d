//! The HTTP routes' front door against the web pages of the user's own browser. The embedded
//! `serve` listens on loopback without tokens, so any page the user opens could call it: by
//! DNS rebinding (its own name made to resolve to 127.0.0.1, so the browser treats the answers
//! as that page's own) or blind, with a form or an `<img>` that needs no answer (CSRF). Every
//! route of [`super::router`] (and `/mcp`) therefore passes [`check_browser_request`]:
//!
//! - `Host` must name this server: the bound address, `localhost`, 127.0.0.1 or [::1] with the
//!   port, or a name of `controller.http_hosts`; a rebound name is none of them.
//! - `Origin`, when a browser sends one (every cross-origin request and every POST), must be
//!   one of the same; `Origin: null` (a sandboxed frame, a file) is refused too.
//! - A POST must say `Content-Type: application/json`: a page can send that to another origin
//!   only after a CORS preflight, which this server never answers, so no form, `<img>` or
//!   `no-cors` fetch changes anything here.
//!
//! gRPC and `/metrics` do not pass it: Prometheus scrapes by address, and gRPC clients name the
//! deployment's own names. gRPC is kept from pages another way ([`grpc_over_http2_only`]): a
//! browser speaks HTTP/2 over TLS only, never to a plaintext port like this one, so a gRPC call
//! over HTTP/1 (a rebound page's `fetch` with a framed body) is refused before any service.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ControllerError;

/// A host as `Host` and `Origin` name it: the name (lowercase; an IPv6 address in brackets)
/// and the port, when one is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostName {
    host: String,
    port: Option<u16>,
}

impl HostName {
    /// `host` or `host:port`; `None` for anything else (a path, a scheme, userinfo).
    pub fn parse(text: &str) -> Option<Self> {
        if text.is_empty() || text.contains(['/', '@', '?', '#', ' ']) {
            return None;
        }
        let authority: axum::http::uri::Authority = text.parse().ok()?;
        let host = authority.host().to_ascii_lowercase();
        if host.is_empty() {
            return None;
        }
        Some(Self {
            host,
            port: authority.port_u16(),
        })
    }
}

/// The hosts this server answers to.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    /// Each with the port it must come with (`None`: any port).
    names: Vec<HostName>,
}

impl AllowedHosts {
    /// The loopback names and the bound address, all with the bound port, and `extra` (the
    /// configuration's `controller.http_hosts`, already validated) as they are written.
    pub fn new(bound: SocketAddr, extra: &[String]) -> Self {
        let port = Some(bound.port());
        let mut names: Vec<HostName> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(|host| HostName {
                host: host.into(),
                port,
            })
            .collect();
        if !bound.ip().is_unspecified() {
            let host = match bound {
                SocketAddr::V4(v4) => v4.ip().to_string(),
                SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
            };
            names.push(HostName { host, port });
        }
        names.extend(extra.iter().filter_map(|h| HostName::parse(h)));
        Self { names }
    }

    /// Whether `name` (as given, with `default_port` when it names none) is one of ours.
    fn allows(&self, name: &HostName, default_port: u16) -> bool {
        let port = name.port.unwrap_or(default_port);
        self.names
            .iter()
            .any(|ours| ours.host == name.host && ours.port.is_none_or(|p| p == port))
    }

    fn listed(&self) -> String {
        self.names
            .iter()
            .map(|n| match n.port {
                Some(port) => format!("{}:{port}", n.host),
                None => n.host.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The one check of a browser-reachable request (see the module's header): its `Host`,
    /// its `Origin` when it has one, and for a POST its JSON content type.
    pub fn check(
        &self,
        method: &Method,
        uri: &axum::http::Uri,
        headers: &HeaderMap,
    ) -> Result<(), ControllerError> {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| uri.authority().map(ToString::to_string));
        let host_name = host.as_deref().and_then(HostName::parse);
        if !host_name.is_some_and(|h| self.allows(&h, 80)) {
            let shown = host.as_deref().map_or_else(
                || "none".to_string(),
                |h| format!("{:?}", nanomuse_common::limits::excerpt(h)),
            );
            return Err(ControllerError::PermissionDenied(format!(
                "this server answers to {} only, and the request's Host is {shown}: a page \
                 reaching it under another name is refused (a deployment reached by a name \
                 lists it in controller.http_hosts)",
                self.listed()
            )));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let text = origin.to_str().unwrap_or_default();
            if !self.origin_allowed(text) {
                return Err(ControllerError::PermissionDenied(format!(
                    "a page of {:?} may not call this server: only its own pages (Origin {}) \
                     may",
                    nanomuse_common::limits::excerpt(text),
                    self.listed()
                )));
            }
        }
        if method == Method::POST && !is_json(headers) {
            return Err(ControllerError::UnsupportedMediaType(
                "a POST here takes a JSON body: send `Content-Type: application/json` (and \
                 `{}` where the call takes nothing)"
                    .into(),
            ));
        }
        Ok(())
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let Ok(url) = url::Url::parse(origin) else {
            return false;
        };
        if !matches!(url.scheme(), "http" | "https") || url.path() != "/" && !url.path().is_empty()
        {
            return false;
        }
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return false;
        };
        let name = HostName {
            host: host.to_ascii_lowercase(),
            port: Some(port),
        };
        self.allows(&name, port)
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// The middleware of every browser-reachable route: refuses what [`AllowedHosts::check`]
/// refuses, in the API's JSON error form, and marks every answer `nosniff` (no JPEG or JSON
/// of ours is ever taken for a script or a page).
pub async fn check_browser_request(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = match allowed.check(request.method(), request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refused) => {
            tracing::warn!(error = %refused, "browser request refused");
            refused.into_response()
        }
    };
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// Refuses a gRPC call (`content-type: application/grpc…`) that does not come over HTTP/2:
/// gRPC clients always use HTTP/2, and a browser cannot speak it to a plaintext server, so
/// what comes over HTTP/1 is a page's request (DNS rebinding) posing as a client. Applied to
/// the whole port, gRPC services included.
pub async fn grpc_over_http2_only(request: Request, next: Next) -> Response {
    let grpc = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"));
    if grpc && request.version() != axum::http::Version::HTTP_2 {
        tracing::warn!(version = ?request.version(), "gRPC over HTTP/1 refused");
        return ControllerError::PermissionDenied(
            "gRPC is served over HTTP/2 only; this request came over HTTP/1, as a web page's \
             does"
                .into(),
        )
        .into_response();
    }
    next.run(request).await
}

/// `router` with every route behind [`check_browser_request`]: how [`super::router`] and the
/// MCP endpoint are served.
pub fn guarded(router: axum::Router, allowed: Arc<AllowedHosts>) -> axum::Router {
    router.layer(axum::middleware::from_fn_with_state(
        allowed,
        check_browser_request,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn only_our_names_and_origins_and_json_posts_pass() {
        let allowed = AllowedHosts::new(
            "127.0.0.1:7000".parse().unwrap(),
            &["browser.example.com".into(), "other.example:8443".into()],
        );
        let uri = axum::http::Uri::from_static("/api/state");
        let get = |pairs: &[(&str, &str)]| allowed.check(&Method::GET, &uri, &headers(pairs));
        for host in [
            "127.0.0.1:7000",
            "localhost:7000",
            "LOCALHOST:7000",
            "[::1]:7000",
            "browser.example.com",
            "browser.example.com:9",
            "other.example:8443",
        ] {
            assert!(get(&[("host", host)]).is_ok(), "{host}");
        }
        for host in [
            "evil.example",
            "localhost:7001",
            "127.0.0.1",
            "other.example",
            "other.example:443",
            "localhost.evil.example:7000",
        ] {
            assert!(
                matches!(
                    get(&[("host", host)]),
                    Err(ControllerError::PermissionDenied(_))
                ),
                "{host}"
            );
        }
        assert!(get(&[]).is_err(), "no Host at all");
        let host = ("host", "127.0.0.1:7000");
        assert!(get(&[host, ("origin", "http://localhost:7000")]).is_ok());
        assert!(get(&[host, ("origin", "https://browser.example.com")]).is_ok());
        for origin in [
            "http://evil.example",
            "null",
            "http://localhost:7001",
            "file://",
        ] {
            assert!(get(&[host, ("origin", origin)]).is_err(), "{origin}");
        }
        let post = |pairs: &[(&str, &str)]| allowed.check(&Method::POST, &uri, &headers(pairs));
        assert!(post(&[host, ("content-type", "application/json")]).is_ok());
        assert!(post(&[host, ("content-type", "Application/JSON; charset=utf-8")]).is_ok());
        for kind in ["text/plain", "application/x-www-form-urlencoded", ""] {
            let refused = if kind.is_empty() {
                post(&[host])
            } else {
                post(&[host, ("content-type", kind)])
            };
            assert!(
                matches!(refused, Err(ControllerError::UnsupportedMediaType(_))),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_server_on_every_address_answers_to_loopback_and_its_names_only() {
        let allowed = AllowedHosts::new("0.0.0.0:50051".parse().unwrap(), &[]);
        let uri = axum::http::Uri::from_static("/");
        let check = |host: &str| allowed.check(&Method::GET, &uri, &headers(&[("host", host)]));
        assert!(check("127.0.0.1:50051").is_ok());
        assert!(check("0.0.0.0:50051").is_err());
        assert!(check("10.0.0.5:50051").is_err());
    }
}
