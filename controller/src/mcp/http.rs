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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{
    SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};

use super::server::BrowserMcp;
use super::sessions::StoredSessions;
use crate::http::HttpState;

/// The tenant of an MCP request, put in its extensions for the server.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// A session idle this long is closed (its thread and page stay); at least a hold's timeout
/// and a margin, so an agent waiting for the user keeps its session.
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// Every this many sessions remembered, the closed ones are forgotten.
const OWNERS_SWEEP_EVERY: usize = 1024;

const SESSION_HEADER: &str = "mcp-session-id";

struct Guard {
    sessions: Arc<LocalSessionManager>,
    /// Session id → the tenant that opened it, of the sessions live here.
    owners: Mutex<HashMap<String, String>>,
    /// Every session's tenant, those opened before a restart too.
    kept: Arc<StoredSessions>,
}

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
    let guard = Arc::new(Guard {
        sessions,
        owners: Mutex::default(),
        kept,
    });
    Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(guard, authenticate))
}

async fn authenticate(
    State(guard): State<Arc<Guard>>,
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
        let live = guard.owners.lock().unwrap().get(session).cloned();
        // One opened before a restart is restored by the SDK, for its own tenant only.
        let owner = match live {
            Some(owner) => Some(owner),
            None => guard.kept.tenant(session).inspect(|owner| {
                if *owner == tenant {
                    guard.remember(session, tenant.clone());
                }
            }),
        };
        if owner.is_some_and(|owner| owner != tenant) {
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
    match session {
        None => {
            let opened = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|value| value.to_str().ok());
            if let Some(opened) = opened {
                let opened = opened.to_string();
                // Kept before the client learns the id: a restart right after cannot lose it.
                if let Err(error) = guard.kept.opened_by(&opened, &tenant).await {
                    tracing::warn!(%error, "an MCP session's tenant could not be kept");
                }
                guard.remember(&opened, tenant);
            }
        }
        Some(session) if closing => {
            guard.owners.lock().unwrap().remove(&session);
        }
        Some(_) => {}
    }
    response
}

impl Guard {
    fn remember(self: &Arc<Self>, session: &str, tenant: String) {
        let sweep = {
            let mut owners = self.owners.lock().unwrap();
            owners.insert(session.to_string(), tenant);
            owners.len().is_multiple_of(OWNERS_SWEEP_EVERY)
        };
        // Sessions that ended on their own (idle, the client gone) are forgotten now and then.
        if sweep {
            let guard = self.clone();
            tokio::spawn(async move {
                let known: Vec<String> = guard.owners.lock().unwrap().keys().cloned().collect();
                let mut gone = Vec::new();
                for session in known {
                    let id: rmcp::transport::streamable_http_server::SessionId =
                        session.as_str().into();
                    if !guard.sessions.has_session(&id).await.unwrap_or(false) {
                        gone.push(session);
                    }
                }
                let mut owners = guard.owners.lock().unwrap();
                for session in gone {
                    owners.remove(&session);
                }
            });
        }
    }
}
