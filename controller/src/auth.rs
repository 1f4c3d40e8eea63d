//! Who is calling, decided once per request by one tower layer on the controller's whole port
//! (gRPC and HTTP alike): the tenant of the bearer token ([`Tenants`]) is put in the request's
//! extensions as [`Caller`], where gRPC handlers ([`Caller::of`]) and axum extractors read it;
//! a `BrowserTool` call without a good token is refused here, and a `WorkerRegistry` call
//! without the deployment's hop secret too. HTTP routes that take a [`Caller`] refuse through
//! the extractor (their errors are JSON); the others (the card's page, `/metrics`) are open.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use nanomuse_common::HopSecret;
use nanomuse_proto::Coded as _;

use crate::error::ControllerError;
use crate::tenants::{Tenants, bearer};

const BROWSER_TOOL: &str = "/nanomuse.browser.v1.BrowserTool/";
const WORKER_REGISTRY: &str = "/nanomuse.browser.v1.WorkerRegistry/";

/// The tenant a request authenticated as, or why it did not.
#[derive(Debug, Clone)]
pub struct Caller(Result<String, String>);

impl Caller {
    /// The tenant, or the refusal as an error.
    pub fn tenant(&self) -> Result<String, ControllerError> {
        self.0.clone().map_err(ControllerError::Unauthenticated)
    }

    /// The tenant of a gRPC call that passed the layer.
    pub fn of<T>(request: &tonic::Request<T>) -> Result<String, tonic::Status> {
        match request.extensions().get::<Caller>() {
            Some(caller) => Ok(caller.tenant()?),
            None => Err(missing().into()),
        }
    }
}

/// A request that did not pass the layer: a server built without it is a bug, refused closed.
pub(crate) fn missing() -> ControllerError {
    ControllerError::Unauthenticated("the caller was not authenticated".into())
}

pub struct Auth {
    pub tenants: Arc<Tenants>,
    pub hop_secret: Option<HopSecret>,
}

/// The layer's function (`axum::middleware::from_fn_with_state`).
pub async fn authenticate(
    State(auth): State<Arc<Auth>>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if path.starts_with(WORKER_REGISTRY) {
        if let Some(secret) = &auth.hop_secret
            && !secret.carried_by(request.headers())
        {
            return refused_grpc(ControllerError::Unauthenticated(
                nanomuse_common::hop::REFUSED.into(),
            ));
        }
        return next.run(request).await;
    }
    let header = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let grpc = path.starts_with(BROWSER_TOOL);
    // What a browser page cannot give headers to (an `<img>`, an `EventSource`) brings the
    // token as a `token` query parameter; gRPC and MCP clients always can send the header.
    let token = bearer(header).map(str::to_string).or_else(|| {
        (!grpc && path != "/mcp")
            .then(|| query_token(request.uri().query().unwrap_or_default()))
            .flatten()
    });
    let caller = Caller(
        auth.tenants
            .tenant(token.as_deref())
            .map_err(|error| error.to_string()),
    );
    if grpc && let Err(error) = caller.tenant() {
        return refused_grpc(error);
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

fn query_token(query: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "token")
        .map(|(_, value)| value.into_owned())
}

fn refused_grpc(error: ControllerError) -> Response {
    error.to_status().into_http::<axum::body::Body>()
}
