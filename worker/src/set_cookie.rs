//! Which `Set-Cookie` of a `fetch` response the profile keeps, decided as Chromium's own cookie
//! store decides for a page's response (RFC 6265bis §5.6, the storage model): a `Domain` must
//! domain-match the response's host and must not be a public suffix (the list compiled into
//! the `psl` crate), `Secure` is taken only over https, `SameSite=None` only with `Secure`, and
//! the `__Secure-` and `__Host-` prefixes hold their promises. What is kept becomes the
//! parameters of CDP's `Network.setCookies`, which takes parsed fields and checks none of this
//! itself (a `Domain` of another site is stored as given), so the decision is made here.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use url::{Host, Url};

/// Why a `Set-Cookie` was not kept (for the logs: a response may set what it likes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ignored {
    #[error("not a cookie")]
    Unparsable,
    #[error("its Domain does not match the response's host")]
    ForeignDomain,
    #[error("its Domain is a public suffix")]
    PublicSuffix,
    #[error("Secure over plain http")]
    SecureOverHttp,
    #[error("SameSite=None without Secure")]
    SameSiteNoneInsecure,
    #[error("its __Secure- or __Host- prefix is not kept")]
    Prefix,
}

/// The `Network.setCookies` entry of the `Set-Cookie` line `line` of a response from `url`, or
/// why it is ignored.
pub fn accept(line: &str, url: &Url) -> Result<Value, Ignored> {
    let cookie = cookie::Cookie::parse(line).map_err(|_| Ignored::Unparsable)?;
    let https = url.scheme() == "https";
    let secure = cookie.secure().unwrap_or(false);
    if secure && !https {
        return Err(Ignored::SecureOverHttp);
    }
    let host = url.host().ok_or(Ignored::ForeignDomain)?;
    let domain = match cookie
        .domain()
        .map(|d| d.trim_start_matches('.').to_ascii_lowercase())
    {
        None => None,
        Some(d) if d.is_empty() => None,
        Some(d) => cookie_domain(&d, &host)?,
    };
    let name = cookie.name();
    let path = cookie.path().filter(|p| p.starts_with('/'));
    if starts_with_ignore_case(name, "__Secure-") && !secure {
        return Err(Ignored::Prefix);
    }
    if starts_with_ignore_case(name, "__Host-")
        && (!secure || domain.is_some() || path != Some("/"))
    {
        return Err(Ignored::Prefix);
    }
    if cookie.same_site() == Some(cookie::SameSite::None) && !secure {
        return Err(Ignored::SameSiteNoneInsecure);
    }

    let mut param = json!({
        "name": name,
        "value": cookie.value(),
        "url": url.as_str(),
        "path": path.map_or_else(|| default_path(url), str::to_string),
        "secure": secure,
        "httpOnly": cookie.http_only().unwrap_or(false),
    });
    // CDP makes a cookie of a domain without a leading dot that domain's alone (it takes the
    // name as the cookie's URL host): a domain cookie is given with its dot. Without a domain
    // the cookie is the response host's only, as the browser keeps it.
    if let Some(domain) = domain {
        param["domain"] = json!(format!(".{domain}"));
    }
    if let Some(same_site) = cookie.same_site() {
        param["sameSite"] = json!(same_site.to_string());
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    if let Some(max_age) = cookie.max_age() {
        param["expires"] = json!(now + max_age.whole_seconds() as f64);
    } else if let Some(expires) = cookie.expires_datetime() {
        param["expires"] = json!(expires.unix_timestamp() as f64);
    }
    Ok(param)
}

/// The domain a `Domain=domain` cookie from `host` is kept for: `Some` for a domain cookie,
/// `None` for one of the host alone; an error when the browser would refuse it.
fn cookie_domain(domain: &str, host: &Host<&str>) -> Result<Option<String>, Ignored> {
    let Host::Domain(host) = host else {
        // An address has no subdomains: only its own literal, and then for it alone.
        let literal = host.to_string().to_ascii_lowercase();
        let bare = literal.trim_start_matches('[').trim_end_matches(']');
        return if domain == literal || domain == bare {
            Ok(None)
        } else {
            Err(Ignored::ForeignDomain)
        };
    };
    let host = host.to_ascii_lowercase();
    if is_public_suffix(domain) {
        // RFC 6265bis §5.6 step 9: a public suffix that is the host itself makes a host-only
        // cookie; any other is refused (it would reach every site under that suffix).
        return if domain == host {
            Ok(None)
        } else {
            Err(Ignored::PublicSuffix)
        };
    }
    let matches = host == domain
        || host
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.'));
    if matches {
        Ok(Some(domain.to_string()))
    } else {
        Err(Ignored::ForeignDomain)
    }
}

/// Whether `domain` is a public suffix ("com", "co.uk", "github.io"), an unknown top-level
/// name counted as one as browsers count it.
pub fn is_public_suffix(domain: &str) -> bool {
    let domain = domain.trim_end_matches('.');
    psl::suffix_str(domain).is_some_and(|suffix| suffix.eq_ignore_ascii_case(domain))
}

/// RFC 6265 §5.1.4: the folder of the request's path.
fn default_path(url: &Url) -> String {
    let path = url.path();
    match path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(at) => path[..at].to_string(),
    }
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(url: &str, line: &str) -> Result<Value, Ignored> {
        accept(line, &Url::parse(url).unwrap())
    }

    #[test]
    fn a_domain_must_match_the_host_and_not_be_a_public_suffix() {
        let kept = from(
            "https://www.bank.example.com/a/b",
            "s=1; Domain=.bank.example.com",
        )
        .unwrap();
        assert_eq!(kept["domain"], ".bank.example.com");
        assert_eq!(kept["path"], "/a");
        assert!(
            from("https://bank.example.com/", "s=1")
                .unwrap()
                .get("domain")
                .is_none()
        );
        assert_eq!(
            from("https://evil.example.com/", "s=1; Domain=bank.example.com"),
            Err(Ignored::ForeignDomain)
        );
        assert_eq!(
            from(
                "https://notbank.example.com/",
                "s=1; Domain=bank.example.com"
            ),
            Err(Ignored::ForeignDomain)
        );
        for (url, suffix) in [
            ("https://shop.example.com/", "com"),
            ("https://a.example.co.uk/", "co.uk"),
            ("https://me.github.io/", "github.io"),
            ("http://evil.test/", "test"),
        ] {
            assert_eq!(
                from(url, &format!("s=1; Domain={suffix}")),
                Err(Ignored::PublicSuffix),
                "{suffix}"
            );
        }
        // The suffix that is the host itself: for that host alone.
        let own = from("https://github.io/", "s=1; Domain=github.io").unwrap();
        assert!(own.get("domain").is_none());
        assert_eq!(
            from("http://127.0.0.2:8000/", "s=1; Domain=localhost"),
            Err(Ignored::ForeignDomain)
        );
        assert!(from("http://127.0.0.2:8000/", "s=1; Domain=127.0.0.2").is_ok());
        assert_eq!(
            from("http://127.0.0.2:8000/", "s=1; Domain=0.0.2"),
            Err(Ignored::ForeignDomain)
        );
    }

    #[test]
    fn secure_same_site_and_prefixes_hold() {
        assert_eq!(
            from("http://a.example/", "s=1; Secure"),
            Err(Ignored::SecureOverHttp)
        );
        assert!(from("https://a.example/", "s=1; Secure").is_ok());
        assert_eq!(
            from("https://a.example/", "s=1; SameSite=None"),
            Err(Ignored::SameSiteNoneInsecure)
        );
        let lax = from("https://a.example/", "s=1; SameSite=Lax").unwrap();
        assert_eq!(lax["sameSite"], "Lax");
        assert_eq!(
            from("https://a.example/", "__Secure-s=1"),
            Err(Ignored::Prefix)
        );
        assert!(from("https://a.example/", "__Secure-s=1; Secure").is_ok());
        assert!(from("https://a.example/", "__Host-s=1; Secure; Path=/").is_ok());
        for bad in [
            "__Host-s=1; Secure",
            "__Host-s=1; Secure; Path=/; Domain=a.example",
            "__host-s=1; Path=/",
        ] {
            assert_eq!(
                from("https://a.example/", bad),
                Err(Ignored::Prefix),
                "{bad}"
            );
        }
    }
}
