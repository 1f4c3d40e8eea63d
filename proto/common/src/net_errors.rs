//! What Chromium's common network errors mean to someone who did not read its source, said the
//! same whichever browser failed: the worker adds it to its own errors, and the controller to a
//! phone's, which name the error by its code alone.

/// The plain words for `error` (`net::ERR_…`), with a leading space, or "" for one without.
pub fn meaning(error: &str) -> &'static str {
    match error {
        "net::ERR_CONNECTION_REFUSED" => " (nothing answers at that address and port)",
        "net::ERR_NAME_NOT_RESOLVED" => " (no such host name)",
        // An https site the egress proxy could not reach: its tunnel was not opened.
        "net::ERR_TUNNEL_CONNECTION_FAILED" => {
            " (the site could not be reached: no such host name, or nothing answers at that \
             address and port)"
        }
        "net::ERR_CONNECTION_TIMED_OUT" | "net::ERR_TIMED_OUT" => " (the server did not answer)",
        "net::ERR_INVALID_AUTH_CREDENTIALS" | "net::ERR_UNEXPECTED_PROXY_AUTH" => {
            " (the site asks for a user name and password of its own, HTTP authentication, for \
             which the browser shows no form: nothing was loaded)"
        }
        "net::ERR_UNSAFE_PORT" => {
            " (browsers refuse to load any page from this port, as it belongs to another kind of \
             service, such as mail or SSH: the site has to be served on another port)"
        }
        "net::ERR_TOO_MANY_REDIRECTS" => {
            " (the site redirects in a loop, often for a cookie it expects and does not get)"
        }
        "net::ERR_SSL_PROTOCOL_ERROR" | "net::ERR_SSL_VERSION_OR_CIPHER_MISMATCH" => {
            " (what answers at that address does not speak https as a browser can: it may serve \
             http:// only)"
        }
        "net::ERR_EMPTY_RESPONSE" | "net::ERR_CONNECTION_CLOSED" | "net::ERR_CONNECTION_RESET" => {
            " (the server closed the connection without an answer)"
        }
        "net::ERR_HTTP_RESPONSE_CODE_FAILURE" => {
            " (the server answered with an error status and an empty page: nothing to show)"
        }
        "net::ERR_ADDRESS_UNREACHABLE" => " (no route to that address from the browser)",
        error if error.starts_with("net::ERR_CERT_") => {
            " (the site's certificate is not one the browser trusts: nothing was loaded)"
        }
        _ => "",
    }
}

/// `message` with the meaning of the network error it ends with, when it ends with one.
pub fn explained(message: &str) -> String {
    let code = message.rsplit(' ').next().unwrap_or_default();
    let is_code = code.starts_with("net::ERR_")
        && code[9..]
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if is_code {
        format!("{message}{}", meaning(code))
    } else {
        message.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_ending_with_a_known_code_gains_its_meaning() {
        assert_eq!(
            explained("navigation to https://a.test/ failed: net::ERR_CERT_AUTHORITY_INVALID"),
            "navigation to https://a.test/ failed: net::ERR_CERT_AUTHORITY_INVALID (the site's \
             certificate is not one the browser trusts: nothing was loaded)"
        );
        assert!(explained("x failed: net::ERR_NAME_NOT_RESOLVED").ends_with("(no such host name)"));
        assert!(explained("x failed: net::ERR_UNSAFE_PORT").contains("served on another port"));
        assert!(explained("x failed: net::ERR_TOO_MANY_REDIRECTS").contains("redirects in a loop"));
    }

    #[test]
    fn a_message_explained_already_or_without_a_code_stays_as_it_is() {
        for message in [
            "navigation to x failed: net::ERR_NAME_NOT_RESOLVED (no such host name)",
            "navigation to x failed: net::ERR_SOMETHING_NEW",
            "the page did not load",
            "",
        ] {
            assert_eq!(explained(message), message);
        }
    }
}
