//! The HTTP side of the controller, on the same port as its gRPC: the JSON API of holds, the
//! take-over and the user's input (`/api/...`), the frames as JPEG and as a Server-Sent Events
//! stream, the holder's live view over a WebSocket, the browser card page (`/browser/{thread}`) and a thread's replay
//! (`/replay/{thread}`). Errors are JSON `{"error": "…"}` with the status from
//! [`ControllerError::http_status`].

mod card;
mod downloads;
mod frames;
pub mod guard;
mod holds;
mod input;
mod live;
mod replay;
mod threads;
mod upload;

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::Method;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, MethodRouter, on};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::app::Controller;
use crate::error::ControllerError;

pub struct HttpState {
    pub controller: Arc<Controller>,
    /// Ends the event streams on shutdown; they would otherwise hold the server open.
    pub shutdown: CancellationToken,
    /// The names every route's `Host` and `Origin` must be ([`guard`]).
    pub allowed: Arc<guard::AllowedHosts>,
}

use axum::extract::State;
type Http = State<Arc<HttpState>>;

/// One route of the HTTP API or the card: its method, its path, and what answers it.
pub struct Route {
    pub method: Method,
    pub path: &'static str,
    handler: fn(MethodFilter) -> MethodRouter<Arc<HttpState>>,
}

const fn route(
    method: Method,
    path: &'static str,
    handler: fn(MethodFilter) -> MethodRouter<Arc<HttpState>>,
) -> Route {
    Route {
        method,
        path,
        handler,
    }
}

/// Every route of [`router`] but the MCP server's (its own module): the router is built from
/// this table, and the tests that call every route list them from it.
pub const ROUTES: &[Route] = &[
    route(Method::GET, "/browser/{thread}", |m| on(m, card::page)),
    route(Method::GET, "/api/state", |m| on(m, holds::state)),
    route(Method::POST, "/api/holds", |m| on(m, holds::open)),
    route(Method::POST, "/api/holds/{id}/done", |m| on(m, holds::done)),
    route(Method::POST, "/api/browser/{thread}/control", |m| {
        on(m, holds::control)
    }),
    route(Method::POST, "/api/browser/{thread}/backend", |m| {
        on(m, threads::set_backend)
    }),
    route(Method::POST, "/api/browser/{thread}/tap", |m| {
        on(m, input::tap)
    }),
    route(Method::POST, "/api/browser/{thread}/type", |m| {
        on(m, input::type_text)
    }),
    route(Method::POST, "/api/browser/{thread}/key", |m| {
        on(m, input::key)
    }),
    route(Method::POST, "/api/browser/{thread}/open", |m| {
        on(m, input::open)
    }),
    route(Method::POST, "/api/browser/{thread}/back", |m| {
        on(m, input::back)
    }),
    route(Method::POST, "/api/browser/{thread}/scroll", |m| {
        on(m, input::scroll)
    }),
    route(Method::GET, "/api/browser/{thread}/frame", |m| {
        on(m, frames::latest)
    }),
    route(Method::GET, "/api/browser/{thread}/frames/{id}", |m| {
        on(m, frames::by_id)
    }),
    route(Method::GET, "/api/browser/{thread}/live", |m| {
        on(m, frames::live)
    }),
    route(Method::GET, "/api/browser/{thread}/events", |m| {
        on(m, frames::events)
    }),
    route(Method::GET, "/api/threads/{thread}/live", |m| {
        on(m, live::socket)
    }),
    route(Method::POST, "/api/browser/{thread}/upload", |m| {
        on(m, upload::upload).layer(upload::limit())
    }),
    route(Method::GET, "/api/workspaces/{workspace}/downloads", |m| {
        on(m, downloads::list)
    }),
    route(
        Method::GET,
        "/api/workspaces/{workspace}/downloads/{name}",
        |m| on(m, downloads::file),
    ),
    route(Method::GET, "/replay/{thread}", |m| on(m, replay::page)),
    route(Method::POST, "/api/browser/{thread}/recording", |m| {
        on(m, replay::switch)
    }),
    route(Method::GET, "/api/browser/{thread}/replay", |m| {
        on(m, replay::timeline)
    }),
    route(Method::GET, "/api/browser/{thread}/replay.html", |m| {
        on(m, replay::export)
    }),
];

/// The HTTP routes ([`ROUTES`] and the MCP server), each behind
/// [`guard::check_browser_request`]; the caller adds the gRPC services and [`not_found`].
pub fn router(state: Arc<HttpState>) -> Router {
    let allowed = state.allowed.clone();
    let routes = ROUTES
        .iter()
        .fold(Router::new(), |router, route| {
            let filter = MethodFilter::try_from(route.method.clone())
                .expect("a route's method is one axum routes");
            router.route(route.path, (route.handler)(filter))
        })
        .with_state(state.clone())
        // The browser tool as an MCP server (its own module: auth, sessions, origins).
        .merge(crate::mcp::router(state));
    guard::guarded(routes, allowed)
}

/// The answer to a path that is neither an API route, the card nor a gRPC method.
pub async fn not_found() -> ControllerError {
    ControllerError::NotFound(
        "no such route: the API is under /api/ and the card under /browser/{thread}".into(),
    )
}

impl IntoResponse for ControllerError {
    fn into_response(self) -> Response {
        if matches!(self, ControllerError::Store(_)) {
            tracing::error!(error = %self, "HTTP request failed");
        }
        (
            self.http_status(),
            axum::Json(json!({"error": self.to_string()})),
        )
            .into_response()
    }
}

type ApiResult<T> = Result<T, ControllerError>;

/// The caller's tenant, as the port's auth layer found it ([`crate::auth`]).
pub struct Caller(pub String);

impl FromRequestParts<Arc<HttpState>> for Caller {
    type Rejection = ControllerError;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &Arc<HttpState>,
    ) -> Result<Self, Self::Rejection> {
        let caller = parts
            .extensions
            .get::<crate::auth::Caller>()
            .ok_or_else(crate::auth::missing)?;
        Ok(Caller(caller.tenant()?))
    }
}

/// A JSON body; a malformed one is a 400 that says what is wrong, in JSON like every error.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ControllerError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) = axum::Json::<T>::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    return ControllerError::TooLarge(
                        "the request body is larger than this call takes (2 MB; an upload's 32 MB)"
                            .into(),
                    );
                }
                ControllerError::InvalidArgument(format!(
                    "the request body is not the JSON this call takes: {}",
                    rejection.body_text()
                ))
            })?;
        Ok(Body(value))
    }
}

/// A frame as the API describes it; its picture is at `jpeg`.
#[derive(Debug, Serialize)]
pub struct FrameView {
    pub id: String,
    pub thread: String,
    pub caption: String,
    pub url: String,
    pub title: String,
    pub width: u32,
    pub height: u32,
    pub created_ms: i64,
    pub jpeg: String,
}

impl From<&nanomuse_proto::Frame> for FrameView {
    fn from(frame: &nanomuse_proto::Frame) -> Self {
        Self {
            id: frame.id.clone(),
            thread: frame.thread.clone(),
            caption: frame.caption.clone(),
            url: frame.url.clone(),
            title: frame.title.clone(),
            width: frame.width,
            height: frame.height,
            created_ms: frame.created_ms,
            jpeg: format!("/api/browser/{}/frames/{}", frame.thread, frame.id),
        }
    }
}
