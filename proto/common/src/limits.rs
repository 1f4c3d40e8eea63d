//! The bounds of the backend contract's inputs, shared by the backends that enforce them and
//! the controller, which checks them first where a refusal must change nothing (before an
//! element is looked up and scrolled to, before a profile setting is stored).

/// The longest text one `type` takes, in characters.
pub const TYPE_TEXT_MAX_CHARS: usize = 100_000;

/// The largest `scroll` in either direction, in CSS px.
pub const SCROLL_MAX_PX: f64 = 100_000.0;

/// The viewport sizes a profile may have, in CSS px (each of width and height).
pub const VIEWPORT_PX: std::ops::RangeInclusive<u32> = 100..=4096;

/// The longest URL any action or op takes, in bytes: Chromium's own limit (`url::kMaxURLChars`,
/// 2 MiB), past which the browser would refuse it anyway. Refused before any backend is called.
pub const URL_MAX_BYTES: usize = 2 * 1024 * 1024;

/// The longest name a caller gives (a thread, a workspace), a hold's reason and a key, in bytes.
pub const NAME_MAX_BYTES: usize = 1024;

/// How much of a caller's input an error message quotes, in characters.
pub const EXCERPT_CHARS: usize = 120;

/// The longest error message a service sends, in bytes: well under the 16 KiB of headers a gRPC
/// client takes (the message travels in the `grpc-message` trailer), so an error never breaks
/// the connection it travels on.
pub const ERROR_MESSAGE_MAX_BYTES: usize = 4 * 1024;

/// `text` as an error quotes it: whole when short, else its first [`EXCERPT_CHARS`] characters
/// and how long it was. A caller's input in an error goes through here, so no error grows with
/// what was sent.
pub fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((at, _)) => {
            std::borrow::Cow::Owned(format!("{}… ({} bytes in all)", &text[..at], text.len()))
        }
    }
}

/// `message` cut to [`ERROR_MESSAGE_MAX_BYTES`] at a character boundary, saying so: the last
/// bound on what any error carries, applied where a status is made.
pub fn bounded_message(message: &str) -> std::borrow::Cow<'_, str> {
    if message.len() <= ERROR_MESSAGE_MAX_BYTES {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut at = ERROR_MESSAGE_MAX_BYTES - 64;
    while !message.is_char_boundary(at) {
        at -= 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}… (the message was cut: {} bytes in all)",
        &message[..at],
        message.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_and_messages_are_bounded_at_a_character_boundary() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(10_000);
        let quoted = excerpt(&long);
        assert!(quoted.chars().count() < EXCERPT_CHARS + 40, "{quoted}");
        assert!(quoted.ends_with("(20000 bytes in all)"), "{quoted}");
        let message = bounded_message(&long);
        assert!(
            message.len() <= ERROR_MESSAGE_MAX_BYTES,
            "{}",
            message.len()
        );
        assert_eq!(bounded_message("fine"), "fine");
    }
}
