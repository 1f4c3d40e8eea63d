//! The browser card: one page served from the binary (no build step) that shows the thread's
//! latest frame, and while the user has the page, a live picture to tap, a text box, keys and
//! Done. The live picture comes over the holder's WebSocket (`/api/threads/{thread}/live`,
//! [`super::live`]), which also takes the keys as they are typed in the card's key box; when it
//! cannot open, the picture is fetched once a second instead. It speaks only the public API, so
//! the card and the API cannot drift apart. (`connect-src 'self'` covers the same origin's
//! `ws:`/`wss:` in Chromium: the card's e2e tests run under this policy.)
//!
//! It is sent with a Content-Security-Policy that lets it run only its own script and style
//! (by their SHA-256, computed once from the page), reach only this server, and be framed only
//! by this server's pages (`frame-ancestors 'self'`: no other site can overlay it to steal a
//! tap), and with `X-Content-Type-Options: nosniff` (from [`super::guard`]).

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::{ApiResult, Caller, Http, State};

const CARD: &str = include_str!("card.html");

/// The card's Content-Security-Policy.
pub static CARD_POLICY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src 'self' {}; style-src 'self' {}; img-src 'self' blob:; \
         connect-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'",
        inline_hash(CARD, "script"),
        inline_hash(CARD, "style"),
    )
});

/// The CSP source of the one inline `<tag>` of `page`: `'sha256-…'` of its text.
pub(super) fn inline_hash(page: &str, tag: &str) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = page.find(&open).map(|at| at + open.len());
    let body = start
        .and_then(|start| Some(&page[start..start + page[start..].find(&close)?]))
        .unwrap_or_else(|| panic!("the page has no <{tag}>"));
    let digest = Sha256::digest(body.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// `GET /browser/{thread}`.
pub async fn page(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
) -> ApiResult<Response> {
    http.controller.known_thread(&tenant, &thread)?;
    Ok((
        [
            (header::CONTENT_SECURITY_POLICY, CARD_POLICY.as_str()),
            (header::X_FRAME_OPTIONS, "SAMEORIGIN"),
            // The card's URL may carry `?token=`: no request of it says where it came from.
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        Html(CARD),
    )
        .into_response())
}
