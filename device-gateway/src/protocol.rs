//! The messages of the phone protocol (`PROTOCOL.md`): one JSON object per WebSocket text
//! frame, told apart by `kind`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version this side speaks.
pub const PROTOCOL_VERSION: u32 = 1;
/// The largest message either side accepts: an upload of 20 MiB of files is ~27 MiB of base64.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;
/// How many requests may wait for one phone's answers at once.
pub const MAX_PENDING: usize = 32;
/// How often the gateway pings, and how long a silent phone is kept.
pub const PING_INTERVAL_MS: u64 = 15_000;
pub const SILENCE_LIMIT_MS: u64 = 45_000;
/// How long a new connection has to say hello.
pub const HELLO_WITHIN_MS: u64 = 10_000;

/// Close codes of the gateway.
pub const CLOSE_BAD_HELLO: u16 = 4000;
pub const CLOSE_UNAUTHORIZED: u16 = 4001;
pub const CLOSE_REPLACED: u16 = 4002;

/// W3C trace context carried inside a message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub traceparent: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tracestate: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// The phone's hello.
    Device(Hello),
    Welcome(Welcome),
    DeviceRequest(DeviceRequest),
    DeviceResult(DeviceResult),
    DeviceEvent(DeviceEvent),
    Hold(HoldNotice),
    Ping,
    Pong,
    Error(ErrorMessage),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub device_id: String,
    pub token: String,
    #[serde(default)]
    pub browser: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub app: String,
    #[serde(default = "default_protocol")]
    pub protocol: u32,
}

fn default_protocol() -> u32 {
    PROTOCOL_VERSION
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welcome {
    pub device_id: String,
    pub max_message_bytes: usize,
    pub ping_interval_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceRequest {
    pub id: String,
    /// Always "browser" for the browser's ops.
    pub op: String,
    pub browser_op: String,
    #[serde(default)]
    pub args: Value,
    #[serde(default)]
    pub timeout_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceResult {
    pub id: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// invalid_argument, permission_denied, not_found, timeout, unavailable,
    /// failed_precondition, resource_exhausted or internal (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

impl DeviceResult {
    pub fn ok(id: String, result: Value) -> Self {
        Self {
            id,
            ok: true,
            result: Some(result),
            error: None,
            code: None,
            trace: None,
        }
    }

    pub fn failed(id: String, error: String, code: &str) -> Self {
        Self {
            id,
            ok: false,
            result: None,
            error: Some(error),
            code: Some(code.to_string()),
            trace: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceEvent {
    /// "take_over" or "handed_back".
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldNotice {
    /// "open" or "closed".
    pub state: String,
    pub hold_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorMessage {
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Message {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("messages serialise")
    }

    pub fn error(error: impl Into<String>) -> Self {
        Message::Error(ErrorMessage {
            error: error.into(),
            id: None,
        })
    }
}

/// Reads one message, saying what is wrong with a bad one.
pub fn parse(text: &str) -> Result<Message, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("the message is not JSON: {e}"))?;
    let Some(kind) = value.get("kind").and_then(Value::as_str) else {
        return Err("the message has no \"kind\"".into());
    };
    let kind = kind.to_string();
    serde_json::from_value(value).map_err(|e| format!("a bad {kind:?} message: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_messages_read_and_write_as_the_protocol_text_shows_them() {
        let hello =
            parse(r#"{"kind": "device", "device_id": "pixel-7", "token": "t", "browser": true}"#)
                .unwrap();
        assert!(matches!(&hello, Message::Device(h) if h.browser && h.protocol == 1));
        let request = Message::DeviceRequest(DeviceRequest {
            id: "17".into(),
            op: "browser".into(),
            browser_op: "navigate".into(),
            args: json!({"url": "https://example.com/"}),
            timeout_ms: 30_000,
            trace: Some(Trace {
                traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
                tracestate: String::new(),
            }),
        });
        let text: Value = serde_json::from_str(&request.to_json()).unwrap();
        assert_eq!(text["kind"], "device_request");
        assert_eq!(text["browser_op"], "navigate");
        assert_eq!(text["trace"]["traceparent"].as_str().unwrap().len(), 55);
        assert_eq!(parse(&request.to_json()).unwrap(), request);
        assert_eq!(
            serde_json::to_value(Message::Pong).unwrap(),
            json!({"kind": "pong"})
        );
        let failed = parse(r#"{"kind": "device_result", "id": "1", "ok": false, "error": "no"}"#);
        assert!(matches!(failed, Ok(Message::DeviceResult(r)) if !r.ok && r.code.is_none()));
    }

    #[test]
    fn bad_messages_say_what_is_wrong() {
        assert!(parse("{").unwrap_err().contains("not JSON"));
        assert!(parse("{}").unwrap_err().contains("kind"));
        assert!(parse(r#"{"kind": "fly"}"#).unwrap_err().contains("\"fly\""));
        assert!(
            parse(r#"{"kind": "device_result"}"#)
                .unwrap_err()
                .contains("id")
        );
    }
}
