//! The fifteen ops on the wire: how each backend request becomes a `device_request`'s `args`
//! and how a `device_result`'s `result` becomes its reply — and back, for the side that carries
//! the ops out (the reference device). One [`DeviceOp`] implementation per op, all in this file:
//! each is a few lines of field mapping, and side by side they read as the table in
//! `PROTOCOL.md`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use nanomuse_proto::*;
use serde_json::{Value, json};

/// One op of the protocol: its name and its JSON both ways. `from_args` is strict (a phone-side
/// executor refuses a malformed request); `reply_from_result` is lenient (fields a phone leaves
/// out take their defaults).
pub trait DeviceOp: Op {
    fn to_args(&self) -> Value;
    fn from_args(args: &Value) -> Result<Self, String>;
    fn reply_to_result(reply: &Self::Reply) -> Value;
    fn reply_from_result(result: &Value) -> Result<Self::Reply, String>;
    /// The op's own bound, for ops that carry one (navigate, settle); 0 when none.
    fn own_timeout_ms(&self) -> u64 {
        0
    }
}

fn text(value: &Value, field: &str) -> String {
    value
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn number(value: &Value, field: &str) -> f64 {
    value.get(field).and_then(Value::as_f64).unwrap_or_default()
}

fn whole(value: &Value, field: &str) -> u32 {
    value
        .get(field)
        .and_then(Value::as_u64)
        .map_or(0, |n| n.min(u32::MAX as u64) as u32)
}

fn flag(value: &Value, field: &str) -> bool {
    value
        .get(field)
        .and_then(Value::as_bool)
        .unwrap_or_default()
}

/// A field the op cannot do without.
fn needed<'a>(op: &str, args: &'a Value, field: &str, kind: &str) -> Result<&'a Value, String> {
    let present = args.get(field).filter(|v| match kind {
        "a string" => v.is_string(),
        "a number" => v.is_number(),
        _ => !v.is_null(),
    });
    present.ok_or_else(|| format!("{op} needs {field} ({kind})"))
}

fn bytes(value: &Value, field: &str) -> Result<Vec<u8>, String> {
    BASE64
        .decode(text(value, field))
        .map_err(|e| format!("{field} is not base64: {e}"))
}

fn headers_to_json(headers: &[Header]) -> Value {
    headers
        .iter()
        .map(|h| json!({"name": h.name, "value": h.value}))
        .collect()
}

fn headers_from_json(value: &Value) -> Vec<Header> {
    value
        .get("headers")
        .and_then(Value::as_array)
        .map(|headers| {
            headers
                .iter()
                .map(|h| Header {
                    name: text(h, "name"),
                    value: text(h, "value"),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn page_to_json(page: &Option<PageInfo>) -> Value {
    let page = page.clone().unwrap_or_default();
    json!({"url": page.url, "title": page.title, "width": page.width, "height": page.height,
           "loading": page.loading})
}

fn page_from_json(value: &Value) -> Option<PageInfo> {
    Some(PageInfo {
        url: text(value, "url"),
        title: text(value, "title"),
        width: whole(value, "width"),
        height: whole(value, "height"),
        loading: flag(value, "loading"),
    })
}

/// The profile fields shared by `open` and `profile`.
fn profile_to_json(user_agent: &str, width: u32, height: u32, mobile: bool) -> Value {
    json!({"user_agent": user_agent, "width": width, "height": height, "mobile": mobile})
}

/// A settle's window change as the phone writes it: absent when there was none.
fn window_to_json(window: WindowChange) -> Option<&'static str> {
    match window {
        WindowChange::None => None,
        WindowChange::Opened => Some("opened"),
        WindowChange::Closed => Some("closed"),
    }
}

/// What a phone's settle says of its windows; a word this side does not know is no change.
fn window_from_json(value: Option<&Value>) -> WindowChange {
    match value.and_then(Value::as_str) {
        Some("opened") => WindowChange::Opened,
        Some("closed") => WindowChange::Closed,
        _ => WindowChange::None,
    }
}

/// An op whose result is `{}`.
macro_rules! empty_reply {
    () => {
        fn reply_to_result(_: &Self::Reply) -> Value {
            json!({})
        }
        fn reply_from_result(_: &Value) -> Result<Self::Reply, String> {
            Ok(Default::default())
        }
    };
}

impl DeviceOp for OpenRequest {
    fn to_args(&self) -> Value {
        profile_to_json(&self.user_agent, self.width, self.height, self.mobile)
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        Ok(Self {
            session: None,
            user_agent: text(args, "user_agent"),
            width: whole(args, "width"),
            height: whole(args, "height"),
            mobile: flag(args, "mobile"),
        })
    }
    fn reply_to_result(reply: &OpenReply) -> Value {
        page_to_json(&reply.page)
    }
    fn reply_from_result(result: &Value) -> Result<OpenReply, String> {
        Ok(OpenReply {
            page: page_from_json(result),
        })
    }
}

impl DeviceOp for NavigateRequest {
    fn to_args(&self) -> Value {
        json!({"url": self.url, "timeout_ms": self.timeout_ms})
    }
    fn own_timeout_ms(&self) -> u64 {
        self.timeout_ms.into()
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "url", "a string")?;
        Ok(Self {
            session: None,
            url: text(args, "url"),
            timeout_ms: whole(args, "timeout_ms"),
        })
    }
    fn reply_to_result(reply: &NavigateReply) -> Value {
        let mut result = page_to_json(&reply.page);
        result["status"] = json!(reply.status);
        result["download"] = json!(reply.download);
        result
    }
    fn reply_from_result(result: &Value) -> Result<NavigateReply, String> {
        Ok(NavigateReply {
            page: page_from_json(result),
            status: whole(result, "status"),
            download: text(result, "download"),
            // The phone's WebView loads what it loads; only the controller's check applies.
            refused: Vec::new(),
        })
    }
}

impl DeviceOp for EvaluateRequest {
    fn to_args(&self) -> Value {
        let arg = serde_json::from_str(&self.arg_json).unwrap_or(Value::Null);
        json!({"js": self.js, "arg": arg})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "js", "a string")?;
        Ok(Self {
            session: None,
            js: text(args, "js"),
            arg_json: args.get("arg").cloned().unwrap_or(Value::Null).to_string(),
        })
    }
    fn reply_to_result(reply: &EvaluateReply) -> Value {
        json!({"value": reply.value_json, "encoded": "json"})
    }
    fn reply_from_result(result: &Value) -> Result<EvaluateReply, String> {
        // `value` is the JSON text of the value; a phone that sends the value itself is
        // understood too.
        let value_json = match (result.get("encoded"), result.get("value")) {
            (Some(encoded), Some(Value::String(text))) if encoded == "json" => {
                serde_json::from_str::<Value>(text)
                    .map_err(|e| format!("evaluate's value is not JSON text: {e}"))?;
                text.clone()
            }
            (_, Some(value)) => value.to_string(),
            (_, None) => "null".into(),
        };
        Ok(EvaluateReply { value_json })
    }
}

impl DeviceOp for TapRequest {
    fn to_args(&self) -> Value {
        // One tap says no count: the phone's message as it always was.
        if self.count > 1 {
            json!({"x": self.x, "y": self.y, "count": self.count})
        } else {
            json!({"x": self.x, "y": self.y})
        }
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "x", "a number")?;
        needed(Self::NAME, args, "y", "a number")?;
        Ok(Self {
            session: None,
            x: number(args, "x"),
            y: number(args, "y"),
            count: args["count"].as_u64().unwrap_or(0) as u32,
        })
    }
    empty_reply!();
}

impl DeviceOp for TypeRequest {
    fn to_args(&self) -> Value {
        json!({"text": self.text})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "text", "a string")?;
        Ok(Self {
            session: None,
            text: text(args, "text"),
        })
    }
    empty_reply!();
}

impl DeviceOp for KeyRequest {
    fn to_args(&self) -> Value {
        json!({"key": self.key})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "key", "a string")?;
        Ok(Self {
            session: None,
            key: text(args, "key"),
        })
    }
    fn reply_to_result(reply: &KeyReply) -> Value {
        json!({"pressed": reply.pressed})
    }
    // A phone that names no key pressed (an older app) answers `{}`.
    fn reply_from_result(result: &Value) -> Result<KeyReply, String> {
        Ok(KeyReply {
            pressed: text(result, "pressed"),
        })
    }
}

impl DeviceOp for ScrollRequest {
    fn to_args(&self) -> Value {
        json!({"dy": self.dy})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "dy", "a number")?;
        Ok(Self {
            session: None,
            dy: number(args, "dy"),
        })
    }
    empty_reply!();
}

impl DeviceOp for BackRequest {
    fn to_args(&self) -> Value {
        json!({})
    }
    fn from_args(_: &Value) -> Result<Self, String> {
        Ok(Self { session: None })
    }
    fn reply_to_result(reply: &BackReply) -> Value {
        page_to_json(&reply.page)
    }
    fn reply_from_result(result: &Value) -> Result<BackReply, String> {
        Ok(BackReply {
            page: page_from_json(result),
            refused: Vec::new(),
        })
    }
}

impl DeviceOp for SettleRequest {
    fn to_args(&self) -> Value {
        json!({"timeout_ms": self.timeout_ms})
    }
    fn own_timeout_ms(&self) -> u64 {
        self.timeout_ms.into()
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        Ok(Self {
            session: None,
            timeout_ms: whole(args, "timeout_ms"),
        })
    }
    fn reply_to_result(reply: &SettleReply) -> Value {
        let mut result = json!({"settled": reply.settled});
        if let Some(window) = window_to_json(reply.window()) {
            result["window"] = json!(window);
        }
        result
    }
    fn reply_from_result(result: &Value) -> Result<SettleReply, String> {
        // A phone that answers `{}` settled.
        Ok(SettleReply {
            settled: result
                .get("settled")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            window: window_from_json(result.get("window")) as i32,
            // A phone's downloads stay on the phone.
            ..Default::default()
        })
    }
}

impl DeviceOp for ScreenshotRequest {
    fn to_args(&self) -> Value {
        json!({"quality": self.quality})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        Ok(Self {
            session: None,
            quality: whole(args, "quality"),
        })
    }
    fn reply_to_result(reply: &ScreenshotReply) -> Value {
        json!({"jpeg": BASE64.encode(&reply.jpeg), "width": reply.width, "height": reply.height})
    }
    fn reply_from_result(result: &Value) -> Result<ScreenshotReply, String> {
        let jpeg = bytes(result, "jpeg")?;
        if !jpeg.starts_with(&[0xFF, 0xD8]) {
            return Err("the screenshot is not a JPEG".into());
        }
        Ok(ScreenshotReply {
            jpeg,
            width: whole(result, "width"),
            height: whole(result, "height"),
        })
    }
}

impl DeviceOp for StateRequest {
    fn to_args(&self) -> Value {
        json!({})
    }
    fn from_args(_: &Value) -> Result<Self, String> {
        Ok(Self { session: None })
    }
    fn reply_to_result(reply: &StateReply) -> Value {
        json!({"url": reply.url, "title": reply.title, "width": reply.width,
               "height": reply.height, "loading": reply.loading,
               "user_control": reply.user_control, "host": reply.host})
    }
    fn reply_from_result(result: &Value) -> Result<StateReply, String> {
        Ok(StateReply {
            url: text(result, "url"),
            title: text(result, "title"),
            width: whole(result, "width"),
            height: whole(result, "height"),
            loading: flag(result, "loading"),
            user_control: flag(result, "user_control"),
            host: text(result, "host"),
        })
    }
}

impl DeviceOp for FetchRequest {
    fn to_args(&self) -> Value {
        json!({"url": self.url, "method": self.method, "headers": headers_to_json(&self.headers),
               "body": BASE64.encode(&self.body)})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "url", "a string")?;
        Ok(Self {
            session: None,
            url: text(args, "url"),
            method: text(args, "method"),
            headers: headers_from_json(args),
            body: bytes(args, "body")?,
        })
    }
    fn reply_to_result(reply: &FetchReply) -> Value {
        json!({"status": reply.status, "headers": headers_to_json(&reply.headers),
               "body": BASE64.encode(&reply.body), "url": reply.url})
    }
    fn reply_from_result(result: &Value) -> Result<FetchReply, String> {
        Ok(FetchReply {
            status: whole(result, "status"),
            headers: headers_from_json(result),
            body: bytes(result, "body")?,
            url: text(result, "url"),
        })
    }
}

impl DeviceOp for ProfileRequest {
    fn to_args(&self) -> Value {
        profile_to_json(&self.user_agent, self.width, self.height, self.mobile)
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        Ok(Self {
            session: None,
            user_agent: text(args, "user_agent"),
            width: whole(args, "width"),
            height: whole(args, "height"),
            mobile: flag(args, "mobile"),
        })
    }
    empty_reply!();
}

impl DeviceOp for CloseRequest {
    fn to_args(&self) -> Value {
        json!({})
    }
    fn from_args(_: &Value) -> Result<Self, String> {
        Ok(Self { session: None })
    }
    empty_reply!();
}

impl DeviceOp for UploadRequest {
    fn to_args(&self) -> Value {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| {
                json!({"name": f.name, "mime_type": f.mime_type,
                            "content": BASE64.encode(&f.content)})
            })
            .collect();
        json!({"x": self.x, "y": self.y, "files": files})
    }
    fn from_args(args: &Value) -> Result<Self, String> {
        needed(Self::NAME, args, "x", "a number")?;
        needed(Self::NAME, args, "y", "a number")?;
        let files = needed(Self::NAME, args, "files", "a list")?
            .as_array()
            .ok_or("upload needs files (a list)")?
            .iter()
            .map(|f| {
                needed(Self::NAME, f, "name", "a string")?;
                Ok(UploadFile {
                    name: text(f, "name"),
                    mime_type: text(f, "mime_type"),
                    content: bytes(f, "content")?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self {
            session: None,
            x: number(args, "x"),
            y: number(args, "y"),
            files,
        })
    }
    fn reply_to_result(reply: &UploadReply) -> Value {
        json!({"multiple": reply.multiple})
    }
    fn reply_from_result(result: &Value) -> Result<UploadReply, String> {
        Ok(UploadReply {
            multiple: flag(result, "multiple"),
        })
    }
}

/// An error code of `PROTOCOL.md` for a backend error (the shared vocabulary's name), and back.
pub fn code_of(error: &BackendError) -> &'static str {
    error.code().name()
}

pub fn error_of(code: Option<&str>, message: String) -> BackendError {
    let code = code
        .and_then(ErrorCode::from_name)
        .unwrap_or(ErrorCode::Internal);
    BackendError::from_code(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An op's request and reply survive the trip through JSON.
    fn round_trip<Op: DeviceOp + PartialEq + std::fmt::Debug>(request: Op, reply: Op::Reply)
    where
        Op::Reply: PartialEq + std::fmt::Debug,
    {
        assert_eq!(Op::from_args(&request.to_args()).unwrap(), request);
        let result = Op::reply_to_result(&reply);
        assert_eq!(Op::reply_from_result(&result).unwrap(), reply, "{result}");
    }

    #[test]
    fn a_settle_carries_its_window_change_and_a_phone_that_says_none_changed_nothing() {
        for window in [
            WindowChange::None,
            WindowChange::Opened,
            WindowChange::Closed,
        ] {
            round_trip(
                SettleRequest {
                    session: None,
                    timeout_ms: 500,
                },
                SettleReply {
                    settled: true,
                    window: window as i32,
                    ..Default::default()
                },
            );
        }
        let told = |result: Value| SettleRequest::reply_from_result(&result).unwrap();
        assert_eq!(told(json!({})).window(), WindowChange::None);
        assert_eq!(
            told(json!({"settled": false, "window": "sideways"})).window(),
            WindowChange::None
        );
        assert_eq!(
            SettleRequest::reply_to_result(&told(json!({"settled": true}))),
            json!({"settled": true})
        );
    }

    #[test]
    fn every_op_reads_back_what_it_wrote() {
        let page = Some(PageInfo {
            url: "https://example.com/".into(),
            title: "Example".into(),
            width: 412,
            height: 915,
            loading: false,
        });
        round_trip(
            OpenRequest {
                session: None,
                user_agent: "UA".into(),
                width: 412,
                height: 915,
                mobile: true,
            },
            OpenReply { page: page.clone() },
        );
        round_trip(
            NavigateRequest {
                session: None,
                url: "https://example.com/".into(),
                timeout_ms: 5,
            },
            NavigateReply {
                page: page.clone(),
                status: 200,
                download: String::new(),
                refused: Vec::new(),
            },
        );
        round_trip(
            EvaluateRequest {
                session: None,
                js: "(a) => a.n + 1".into(),
                arg_json: r#"{"n":1}"#.into(),
            },
            EvaluateReply {
                value_json: r#"{"listing":[1,2]}"#.into(),
            },
        );
        round_trip(
            TapRequest {
                session: None,
                x: 10.5,
                y: 20.0,
                ..Default::default()
            },
            TapReply {},
        );
        round_trip(
            TapRequest {
                session: None,
                x: 1.0,
                y: 2.0,
                count: 2,
            },
            TapReply {},
        );
        round_trip(
            UploadRequest {
                session: None,
                x: 12.0,
                y: 34.5,
                files: vec![UploadFile {
                    name: "id card.pdf".into(),
                    mime_type: "application/pdf".into(),
                    content: (0..=255).collect(),
                }],
            },
            UploadReply { multiple: true },
        );
        round_trip(
            ScreenshotRequest {
                session: None,
                quality: 70,
            },
            ScreenshotReply {
                jpeg: vec![0xFF, 0xD8, 0xFF, 0xD9],
                width: 412,
                height: 915,
            },
        );
        round_trip(
            FetchRequest {
                session: None,
                url: "https://example.com/api".into(),
                method: "POST".into(),
                headers: vec![Header {
                    name: "content-type".into(),
                    value: "application/json".into(),
                }],
                body: b"{}".to_vec(),
            },
            FetchReply {
                status: 201,
                headers: vec![Header {
                    name: "set-cookie".into(),
                    value: "a=1".into(),
                }],
                body: vec![0, 1, 2],
                url: "https://example.com/api".into(),
            },
        );
        round_trip(
            StateRequest { session: None },
            StateReply {
                url: "u".into(),
                title: "t".into(),
                width: 1,
                height: 2,
                loading: true,
                user_control: true,
                host: "pixel".into(),
            },
        );
    }

    #[test]
    fn malformed_requests_and_results_say_what_is_wrong() {
        assert_eq!(
            NavigateRequest::from_args(&json!({})).unwrap_err(),
            "navigate needs url (a string)"
        );
        assert!(
            TapRequest::from_args(&json!({"x": "1", "y": 2}))
                .unwrap_err()
                .contains("x")
        );
        assert!(
            ScreenshotRequest::reply_from_result(&json!({"jpeg": "!!"}))
                .unwrap_err()
                .contains("base64")
        );
        // A phone that sends evaluate's value as JSON itself is understood.
        let reply = EvaluateRequest::reply_from_result(&json!({"value": {"a": 1}})).unwrap();
        assert_eq!(reply.value_json, r#"{"a":1}"#);
        assert!(matches!(
            error_of(Some("not_found"), "no page".into()),
            BackendError::NotFound(_)
        ));
    }
}
