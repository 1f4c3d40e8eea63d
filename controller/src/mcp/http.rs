//! `/mcp` on the controller's port: the SDK's Streamable HTTP service behind the tenant check.
//! A call carries the tenant's `Authorization: Bearer` token, checked against the same digests
//! as gRPC and the HTTP API (none needed where no tokens are configured, the embedded `serve`);
//! without a good one it is 401 with `WWW-Authenticate`. A session belongs to the tenant that
//! opened it: another tenant's calls on it answer as on an unknown session. Sessions are kept
//! in the controller's store, so a client goes on with its session after a restart
//! ([`super::sessions`]). The route sits
//! behind the HTTP guard (`Host` must name this server, a POST must be JSON: DNS rebinding and
//! blind pages), and the SDK refuses any request with an `Origin` besides (a page in some
//! browser must not drive the tool).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::server::BrowserMcp;
use super::sessions::StoredSessions;
use crate::http::HttpState;

/// The tenant of an MCP request, put in its extensions for the server.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// A session idle this long is closed (its thread and page stay); at least a hold's timeout
/// and a margin, so an agent waiting for the user keeps its session.
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

const SESSION_HEADER: &str = "mcp-session-id";

/// The `/mcp` route.
pub fn router(state: Arc<HttpState>) -> Router {
    let kept = Arc::new(StoredSessions::open(state.controller.store().clone()));
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(state.shutdown.child_token())
        // `Host` is the HTTP guard's (crate::http::guard), for every route alike.
        .disable_allowed_hosts()
        // With an empty list of allowed origins: any request that has one is refused, even
        // one the guard lets through (the server's own origin): MCP clients are not pages.
        .enforce_origin_validation();
    config.session_store = Some(kept.clone());
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive =
        Some(SESSION_IDLE.max(state.controller.holds.timeout() + Duration::from_secs(60)));
    let sessions = Arc::new(sessions);
    let controller = state.controller.clone();
    let service = StreamableHttpService::new(
        move || Ok(BrowserMcp::new(controller.clone())),
        sessions.clone(),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(kept, authenticate))
}

async fn authenticate(
    State(kept): State<Arc<StoredSessions>>,
    mut request: Request,
    next: Next,
) -> Response {
    let caller = request.extensions().get::<crate::auth::Caller>();
    let tenant = match caller.map_or_else(|| Err(crate::auth::missing()), |c| c.tenant()) {
        Ok(tenant) => tenant,
        Err(error) => {
            let mut response = error.into_response();
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static(r#"Bearer realm="nanomuse-browser""#),
            );
            return response;
        }
    };
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    if let Some(session) = &session {
        // Also one opened before a restart, which the SDK restores: for its own tenant only.
        if kept.tenant(session).is_some_and(|owner| owner != tenant) {
            // As the SDK answers for a session it does not know.
            return (http::StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        }
    }
    let closing = request.method() == http::Method::DELETE;
    request.extensions_mut().insert(Tenant(tenant.clone()));
    let mut response = next.run(request).await;
    // rmcp answers a closed session 202; the official SDKs take 200 or 204 as closed and
    // warn of a failed termination otherwise (Python: "Session termination failed: 202").
    if closing && response.status() == http::StatusCode::ACCEPTED {
        *response.status_mut() = http::StatusCode::NO_CONTENT;
    }
    let opened = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok());
    if let (None, Some(opened)) = (session, opened) {
        // Kept before the client learns the id: a restart right after cannot lose it, nor
        // give the session to another tenant.
        if let Err(error) = kept.opened_by(opened, &tenant).await {
            tracing::warn!(%error, "an MCP session's tenant could not be kept");
        }
    }
    response
}
