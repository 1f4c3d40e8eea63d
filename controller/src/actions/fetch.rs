//! `fetch url [method] [body]`: an HTTP request with the browser's cookies, no page rendered.
//! The reply gives the status, the headers and the body as text, truncated when long; a binary
//! body (a picture, a PDF, an archive) is described, not shown as garbled text.

use nanomuse_proto::{ActReply, FetchAction, FetchRequest, FetchResult, Header};

use super::Ctx;
use crate::error::{ControllerError, Result};

const BODY_CHARS: usize = 20_000;

/// `headers`, and for a body sent without a `Content-Type` the one it reads as: JSON, a form's
/// `a=1&b=2`, else plain text (an API answers a JSON body sent as nothing with 415 or 422).
fn with_content_type(headers: &[Header], body: &str) -> Vec<Header> {
    let mut headers = headers.to_vec();
    let given = headers
        .iter()
        .any(|h| h.name.eq_ignore_ascii_case("content-type"));
    if body.is_empty() || given {
        return headers;
    }
    let trimmed = body.trim();
    let form = trimmed.contains('=')
        && !trimmed.contains(char::is_whitespace)
        && !trimmed.starts_with(['{', '[']);
    let kind = if serde_json::from_str::<serde_json::Value>(trimmed)
        .is_ok_and(|v| v.is_object() || v.is_array())
    {
        "application/json"
    } else if form {
        "application/x-www-form-urlencoded"
    } else {
        "text/plain;charset=UTF-8"
    };
    headers.push(Header {
        name: "content-type".into(),
        value: kind.into(),
    });
    headers
}

/// What a binary body is said to be instead of shown: its size and type. A body is binary
/// when its type says so, or when it holds NUL bytes (no text does; a Latin-1 page, which is
/// no UTF-8 either, is still read as text).
fn binary_body(headers: &[Header], body: &[u8]) -> Option<String> {
    let kind = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| {
            h.value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let binary_kind = ["image/", "audio/", "video/", "font/"]
        .iter()
        .any(|prefix| kind.starts_with(prefix) && kind != "image/svg+xml")
        || [
            "application/octet-stream",
            "application/pdf",
            "application/zip",
            "application/gzip",
            "application/x-gzip",
            "application/x-tar",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "application/vnd.ms-excel",
            "application/msword",
            "application/wasm",
        ]
        .contains(&kind.as_str());
    let holds_nul = body.iter().take(8192).any(|b| *b == 0);
    if body.is_empty() || !(binary_kind || holds_nul) {
        return None;
    }
    let kind = if kind.is_empty() {
        "no type given".into()
    } else {
        kind
    };
    Some(format!(
        "(a binary body of {} bytes, {kind}: not shown as text)",
        body.len()
    ))
}

pub async fn run(ctx: &mut Ctx<'_>, action: FetchAction) -> Result<ActReply> {
    if action.url.trim().is_empty() {
        return Err(ControllerError::InvalidArgument(
            "fetch needs a URL, e.g. fetch https://example.com/api/orders".into(),
        ));
    }
    for header in &action.headers {
        let name_ok = http::HeaderName::from_bytes(header.name.as_bytes()).is_ok();
        if !name_ok || http::HeaderValue::from_str(&header.value).is_err() {
            return Err(ControllerError::InvalidArgument(format!(
                "{:?}: {:?} is not an HTTP header (a name of letters, digits and -, a value on \
                 one line); nothing was sent",
                header.name, header.value
            )));
        }
    }
    let reply = ctx
        .op(FetchRequest {
            session: ctx.session(),
            url: action.url.trim().to_string(),
            method: action.method.clone(),
            headers: with_content_type(&action.headers, &action.body),
            body: action.body.clone().into_bytes(),
        })
        .await?;
    let (shown, truncated) = match binary_body(&reply.headers, &reply.body) {
        Some(described) => (described, false),
        None => super::truncate(&String::from_utf8_lossy(&reply.body), BODY_CHARS),
    };
    let headers: Vec<String> = reply
        .headers
        .iter()
        .map(|h| format!("{}: {}", h.name, h.value))
        .collect();
    Ok(ActReply {
        text: format!(
            "HTTP {} from {}\n{}\n\n{shown}",
            reply.status,
            reply.url,
            headers.join("\n")
        ),
        url: reply.url.clone(),
        fetch: Some(FetchResult {
            status: reply.status,
            headers: reply.headers,
            body: shown,
            truncated,
            body_bytes: reply.body.len() as u64,
        }),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{FetchAction, FetchReply, FetchRequest, Header};

    use super::*;
    use crate::testing::*;

    fn header(name: &str, value: &str) -> Header {
        Header {
            name: name.into(),
            value: value.into(),
        }
    }

    #[tokio::test]
    async fn a_malformed_header_is_refused_and_nothing_is_sent() {
        let h = Harness::new(FakeBackend::new());
        for (name, value) in [("X Key", "1"), ("X-Key", "a\r\nCookie: b"), ("", "v")] {
            let (reply, _) = h
                .act(Action::Fetch(FetchAction {
                    url: "https://api.example/".into(),
                    headers: vec![header(name, value)],
                    ..Default::default()
                }))
                .await;
            assert!(
                matches!(reply, Err(ControllerError::InvalidArgument(ref m)) if m.contains("is not an HTTP header")),
                "{name:?}: {reply:?}"
            );
        }
        assert!(h.backend.ops().is_empty());
    }

    #[test]
    fn a_binary_body_is_described_and_text_is_shown() {
        let png = header("Content-Type", "image/png");
        assert_eq!(
            binary_body(std::slice::from_ref(&png), b"\x89PNG\r\n"),
            Some("(a binary body of 6 bytes, image/png: not shown as text)".into())
        );
        assert_eq!(
            binary_body(&[], b"PK\x03\x04\x00\x00"),
            Some("(a binary body of 6 bytes, no type given: not shown as text)".into())
        );
        let html = header("content-type", "text/html; charset=iso-8859-1");
        assert_eq!(binary_body(&[html], b"caf\xe9"), None);
        assert_eq!(
            binary_body(&[header("content-type", "image/svg+xml")], b"<svg/>"),
            None
        );
        assert_eq!(binary_body(&[png], b""), None);
    }

    #[tokio::test]
    async fn a_fetched_picture_is_said_to_be_one() {
        let h = Harness::new(FakeBackend::new());
        h.backend.reply::<FetchRequest>(FetchReply {
            status: 200,
            url: "https://x.example/logo.png".into(),
            headers: vec![header("content-type", "image/png")],
            body: vec![0x89, b'P', b'N', b'G', 0, 0, 0, 13],
        });
        let (reply, _) = h
            .ok(Action::Fetch(FetchAction {
                url: "https://x.example/logo.png".into(),
                ..Default::default()
            }))
            .await;
        assert!(
            reply
                .text
                .ends_with("\n\n(a binary body of 8 bytes, image/png: not shown as text)"),
            "{}",
            reply.text
        );
        let fetched = reply.fetch.unwrap();
        assert_eq!((fetched.body_bytes, fetched.truncated), (8, false));
    }

    #[test]
    fn a_body_without_a_content_type_is_sent_as_what_it_reads_as() {
        let kind = |body: &str| {
            with_content_type(&[], body)
                .iter()
                .find(|h| h.name == "content-type")
                .map(|h| h.value.clone())
        };
        assert_eq!(
            kind(r#"{"name": "Bo"}"#).as_deref(),
            Some("application/json")
        );
        assert_eq!(kind("[1, 2]").as_deref(), Some("application/json"));
        assert_eq!(
            kind("name=Bo&kind=bird").as_deref(),
            Some("application/x-www-form-urlencoded")
        );
        assert_eq!(
            kind("hello there").as_deref(),
            Some("text/plain;charset=UTF-8")
        );
        assert_eq!(kind(""), None, "no body, no type");
        let given = with_content_type(&[header("Content-Type", "text/csv")], "a,b");
        assert_eq!(
            given,
            [header("Content-Type", "text/csv")],
            "one given is kept"
        );
    }

    #[tokio::test]
    async fn sends_the_request_and_reports_status_headers_and_body() {
        let h = Harness::new(FakeBackend::new());
        h.backend.reply::<FetchRequest>(FetchReply {
            status: 201,
            headers: vec![header("content-type", "application/json")],
            body: br#"{"id":7}"#.to_vec(),
            url: "https://api.example/orders".into(),
        });
        let (reply, frame) = h
            .ok(Action::Fetch(FetchAction {
                url: " https://api.example/orders ".into(),
                method: "POST".into(),
                body: r#"{"item":"milk"}"#.into(),
                headers: vec![header("x-csrf", "abc")],
            }))
            .await;
        let sent = &h.backend.requests::<FetchRequest>()[0];
        assert_eq!(h.backend.ops(), ["fetch"]);
        assert_eq!(
            (
                sent.url.as_str(),
                sent.method.as_str(),
                sent.body.as_slice()
            ),
            (
                "https://api.example/orders",
                "POST",
                br#"{"item":"milk"}"#.as_slice()
            )
        );
        assert_eq!(
            sent.headers,
            [
                header("x-csrf", "abc"),
                header("content-type", "application/json")
            ]
        );
        assert_eq!(
            reply.text,
            "HTTP 201 from https://api.example/orders\ncontent-type: application/json\n\n{\"id\":7}"
        );
        let result = reply.fetch.unwrap();
        assert_eq!(
            (result.status, result.truncated, result.body_bytes),
            (201, false, 8)
        );
        assert!(frame.is_none());
    }

    #[tokio::test]
    async fn a_long_body_is_truncated_and_says_so() {
        let h = Harness::new(FakeBackend::new());
        h.backend.reply::<FetchRequest>(FetchReply {
            status: 200,
            body: vec![b'a'; BODY_CHARS + 10],
            ..Default::default()
        });
        let (reply, _) = h
            .ok(Action::Fetch(FetchAction {
                url: "https://x.example/big".into(),
                ..Default::default()
            }))
            .await;
        let result = reply.fetch.unwrap();
        assert!(result.truncated);
        assert_eq!(result.body_bytes, (BODY_CHARS + 10) as u64);
        assert!(result.body.ends_with("[… 10 more characters]"));
    }

    #[tokio::test]
    async fn no_url_changes_nothing() {
        let h = Harness::new(FakeBackend::new());
        let (reply, _) = h
            .act(Action::Fetch(FetchAction {
                url: " ".into(),
                ..Default::default()
            }))
            .await;
        assert!(
            matches!(reply, Err(ControllerError::InvalidArgument(ref m)) if m.contains("fetch needs a URL"))
        );
        assert!(h.backend.ops().is_empty());
    }
}
