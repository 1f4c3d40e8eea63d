//! `fetch {url, method, headers, body}`: an HTTP request that carries the profile's cookies for
//! its URL, with no page rendered. Cookies the responses set go back into the profile; redirects
//! are followed here, hop by hop, so the cookies of every hop are kept and every hop passes the
//! URL policy: its URL here, the addresses its name resolves to in the client's resolver
//! ([`crate::egress::Egress::http`]), which the client then connects to.

use nanomuse_common::limits::excerpt;
use nanomuse_proto::{FetchReply, FetchRequest, Header};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::egress;
use crate::error::{Result, WorkerError};
use crate::page::PageHandle;
use crate::set_cookie;

const MAX_REDIRECTS: usize = 20;

pub async fn run(
    page: &PageHandle,
    request: &FetchRequest,
    max_bytes: usize,
) -> Result<FetchReply> {
    // One policy and its client for every hop of this fetch.
    let policy = page.egress.policy();
    let http = page.egress.http();
    let mut url = policy.check_url(&request.url)?;
    let method_name = if request.method.is_empty() {
        "GET"
    } else {
        &request.method
    };
    let mut method = Method::from_bytes(method_name.to_ascii_uppercase().as_bytes())
        .map_err(|_| WorkerError::invalid(format!("{method_name:?} is not an HTTP method")))?;
    let mut body = Some(request.body.clone());
    let user_agent = page.settings().user_agent;

    for _ in 0..=MAX_REDIRECTS {
        let cookies = cookie_header(page, url.as_str()).await?;
        let mut builder = http.request(method.clone(), url.clone());
        for header in &request.headers {
            if header.name.eq_ignore_ascii_case("cookie") {
                continue;
            }
            builder = builder.header(&header.name, &header.value);
        }
        let has_agent = request
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("user-agent"));
        if !has_agent {
            builder = builder.header(reqwest::header::USER_AGENT, &user_agent);
        }
        if !cookies.is_empty() {
            builder = builder.header(reqwest::header::COOKIE, cookies);
        }
        if let Some(body) = body.as_ref().filter(|b| !b.is_empty()) {
            builder = builder.body(body.clone());
        }
        let mut response = builder
            .send()
            .await
            .map_err(|e| match egress::refusal_in(&e) {
                Some(refusal) => WorkerError::Refused(refusal),
                None => WorkerError::Fetch(format!(
                    "fetch of {} failed: {}",
                    excerpt(url.as_str()),
                    describe(&e)
                )),
            })?;
        store_cookies(page, &url, response.headers()).await?;

        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            let location = location.to_str().unwrap_or_default();
            url = url.join(location).map_err(|e| {
                WorkerError::Fetch(format!(
                    "{} redirected to a bad location {:?}: {e}",
                    excerpt(url.as_str()),
                    excerpt(location)
                ))
            })?;
            // The next hop is checked like the first: a redirect to an internal address is
            // refused before anything is sent to it.
            url = policy.check_url(url.as_str())?;
            if matches!(
                status,
                StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND | StatusCode::SEE_OTHER
            ) && method != Method::HEAD
            {
                method = Method::GET;
                body = None;
            }
            continue;
        }

        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| Header {
                name: name.as_str().to_string(),
                value: String::from_utf8_lossy(value.as_bytes()).into_owned(),
            })
            .collect();
        let mut collected = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            WorkerError::Fetch(format!(
                "reading {} failed: {}",
                excerpt(url.as_str()),
                describe(&e)
            ))
        })? {
            if collected.len() + chunk.len() > max_bytes {
                return Err(WorkerError::TooLarge(format!(
                    "the response of {} is larger than {max_bytes} bytes, the fetch limit",
                    excerpt(url.as_str())
                )));
            }
            collected.extend_from_slice(&chunk);
        }
        return Ok(FetchReply {
            status: status.as_u16().into(),
            headers,
            body: collected,
            url: url.to_string(),
        });
    }
    Err(WorkerError::Fetch(format!(
        "{} redirected more than {MAX_REDIRECTS} times",
        excerpt(&request.url)
    )))
}

fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    // rustls's own words for a certificate it refused ("invalid peer certificate: …"), said as
    // `navigate` says Chromium's.
    if text.contains("invalid peer certificate") {
        text.push_str(" (the site's certificate is not one the browser trusts: nothing was sent)");
    }
    text
}

/// The `Cookie` header the browser would send to `url`, HttpOnly cookies included.
async fn cookie_header(page: &PageHandle, url: &str) -> Result<String> {
    let reply = page
        .cdp("Network.getCookies", json!({"urls": [url]}))
        .await?;
    let mut cookies = reply["cookies"].as_array().cloned().unwrap_or_default();
    // RFC 6265 §5.4: longer paths first. CDP gives no creation times and its own order varies
    // from call to call, so names break ties: the same jar always makes the same header.
    let key = |c: &Value| {
        let path = c["path"].as_str().unwrap_or_default().len();
        (
            std::cmp::Reverse(path),
            c["name"].as_str().unwrap_or_default().to_string(),
        )
    };
    cookies.sort_by_key(key);
    Ok(cookies
        .iter()
        .filter_map(|c| Some(format!("{}={}", c["name"].as_str()?, c["value"].as_str()?)))
        .collect::<Vec<_>>()
        .join("; "))
}

/// Writes the `Set-Cookie`s of a response from `url` into the profile that the browser would
/// have kept ([`crate::set_cookie`]): none for another site, none for a public suffix; then
/// the profile's cookie snapshot.
async fn store_cookies(
    page: &PageHandle,
    url: &url::Url,
    headers: &reqwest::header::HeaderMap,
) -> Result<()> {
    let mut cookies = Vec::new();
    for value in headers.get_all(reqwest::header::SET_COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        match set_cookie::accept(text, url) {
            Ok(cookie) => cookies.push(cookie),
            Err(why) => tracing::debug!(%why, "Set-Cookie of a fetch ignored"),
        }
    }
    if !cookies.is_empty() {
        page.cdp("Network.setCookies", json!({"cookies": cookies}))
            .await?;
        // Before the reply, as after any op that set cookies: a login by fetch survives a
        // crash right after it.
        if let Err(error) = page.cookies.save().await {
            tracing::warn!(%error, "cookie snapshot failed");
        }
    }
    Ok(())
}
