//! The browser card: one page served from the binary (no build step) that shows the thread's
//! latest frame, and while the user has the page, a live picture to tap, a text box, keys and
//! Done. It speaks only the public API, so the card and the API cannot drift apart.

use axum::extract::Path;
use axum::response::Html;

use super::{ApiResult, Caller, Http, State};

const CARD: &str = include_str!("card.html");

/// `GET /browser/{thread}`.
pub async fn page(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Html<&'static str>> {
    http.controller.known_thread(&tenant, &thread)?;
    Ok(Html(CARD))
}
