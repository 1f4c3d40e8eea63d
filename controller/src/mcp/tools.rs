//! The MCP tools, one per action of the browser tool: their input schemas (with the
//! contract's bounds and descriptions written for a model) and the reading of a call's
//! arguments into the [`Action`] the controller's `act` takes. Arguments are named as the
//! CLI's; every tool also takes the optional `thread` and `workspace`.

use std::sync::{Arc, LazyLock};

use nanomuse_common::limits::{SCROLL_MAX_PX, TYPE_TEXT_MAX_CHARS, VIEWPORT_PX};
use nanomuse_proto::act_request::Action;
use nanomuse_proto::profile_action::Kind;
use nanomuse_proto::*;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::actions::MAX_WAIT_SECONDS;
use crate::holds::REASON_MAX;

/// Which page a call acts on; both optional, read before the action's own arguments.
#[derive(Debug, Default, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct Target {
    /// The conversation whose page to act on. Leave it out to use this MCP session's own
    /// thread (or the one its connection was set up with); name one (1-128 of A-Z a-z 0-9 - _ .) to keep several pages apart, or to come
    /// back to a page in a later session.
    pub thread: Option<String>,
    /// The workspace (the logged-in browser profile: cookies, storage) a new thread uses;
    /// threads of one workspace share its logins. Default: "default". A thread keeps its
    /// workspace.
    pub workspace: Option<String>,
}

/// One tool call, read: where and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub target: Target,
    pub action: Action,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Navigate {
    /// The web address to open, e.g. https://example.com/ (http or https).
    url: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Click {
    /// The element's number, [n] in the last listing of this thread.
    #[schemars(range(min = 1))]
    n: i64,
    /// A double-click (a double tap on a phone): opens a file manager's row, edits a grid's
    /// cell, selects a word.
    #[serde(default)]
    double_click: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Type {
    /// The number of the field, [n] in the last listing of this thread.
    #[schemars(range(min = 1))]
    n: i64,
    /// The text to fill it with; what the field held is replaced.
    #[schemars(length(max = TYPE_TEXT_MAX_CHARS))]
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Key {
    /// The key, as the DOM names it: Enter, Tab, Escape, Backspace, ArrowDown, PageDown, F5,
    /// … or one character; with modifiers before it: Shift+Enter, Control+a, Control+Shift+z.
    key: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Scroll {
    /// How far to scroll, in CSS pixels: positive is down, negative up. A screenful is about
    /// the viewport's height (900 on a computer, 915 on a phone).
    #[schemars(range(min = -SCROLL_MAX_PX, max = SCROLL_MAX_PX))]
    dy: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Wait {
    /// At most how long to wait for the page to settle, in seconds (0 to 15). Leave it out
    /// for a short settle.
    #[schemars(range(min = 0.0, max = MAX_WAIT_SECONDS))]
    seconds: Option<f64>,
    /// Wait until this text is on the page instead (at most `seconds`, or 15 s), e.g. the
    /// result you expect.
    text: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Fetch {
    /// The address to request, with the browser's cookies for it.
    url: String,
    /// The HTTP method: GET (the default), POST, PUT, PATCH, DELETE, …
    method: Option<String>,
    /// The request's body, e.g. a=1&b=2 or a JSON text (its Content-Type is set from what it
    /// reads as unless a header gives one).
    body: Option<String>,
    /// Request headers by name, e.g. {"Authorization": "Bearer …", "X-API-Key": "…"}.
    headers: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Preset {
    Mobile,
    Desktop,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Profile {
    /// A ready-made profile: "mobile" (412×915, a phone's user agent, touch) or "desktop"
    /// (1280×900). Give this, or width and height.
    preset: Option<Preset>,
    /// A custom profile's user agent; by default a desktop's, or with mobile a phone's.
    user_agent: Option<String>,
    /// A custom viewport's width in CSS pixels.
    #[schemars(range(min = *VIEWPORT_PX.start(), max = *VIEWPORT_PX.end()))]
    width: Option<u32>,
    /// A custom viewport's height in CSS pixels.
    #[schemars(range(min = *VIEWPORT_PX.start(), max = *VIEWPORT_PX.end()))]
    height: Option<u32>,
    /// Touch and a mobile viewport for the custom profile.
    #[serde(default)]
    mobile: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HandOver {
    /// What the user is to do, in a sentence they read on the card, e.g. "Sign in to
    /// example.com".
    #[schemars(length(min = 1, max = REASON_MAX))]
    reason: String,
}

/// A file sent with `browser_upload`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SentFile {
    /// The file's name as the page sees it, e.g. invoice.pdf (no folders).
    name: String,
    /// The file's bytes, base64.
    content_base64: String,
    /// Its type, e.g. application/pdf; left out, the browser guesses from the name.
    mime_type: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Upload {
    /// The number of the file input, its label or the button that opens a file chooser, [n]
    /// in the last listing of this thread.
    #[schemars(range(min = 1))]
    n: i64,
    /// Files sent with the call.
    files: Option<Vec<SentFile>>,
    /// Files of the workspace's downloads, by the names browser_downloads lists.
    downloads: Option<Vec<String>>,
    /// Local files, by path: only through `nanomuse-browser mcp` (stdio), which reads them on
    /// its machine and sends their bytes.
    paths: Option<Vec<String>>,
}

/// Where `paths` can be read: not on the server.
pub const PATHS_OVER_HTTP: &str = "`paths` name files on the machine of `nanomuse-browser mcp` \
     (stdio), which reads them; over HTTP send the bytes as `files` [{name, content_base64}], \
     or name the workspace's `downloads`";

pub fn read_upload(args: JsonObject) -> Result<Action, String> {
    use base64::Engine as _;
    let Upload {
        n,
        files,
        downloads,
        paths,
    } = read(args)?;
    if paths.is_some_and(|paths| !paths.is_empty()) {
        return Err(PATHS_OVER_HTTP.into());
    }
    let files = files
        .unwrap_or_default()
        .into_iter()
        .map(|file| {
            let content = base64::engine::general_purpose::STANDARD
                .decode(file.content_base64.trim())
                .map_err(|e| format!("the content_base64 of {:?} is not base64: {e}", file.name))?;
            Ok(UploadFile {
                name: file.name,
                mime_type: file.mime_type.unwrap_or_default(),
                content,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(Action::Upload(UploadAction {
        n,
        files,
        downloads: downloads.unwrap_or_default(),
    }))
}

/// A tool that takes no arguments of its own.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// How each tool reads its arguments into an action.
type Reader = fn(JsonObject) -> Result<Action, String>;

struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// Whether the tool leaves the page as it is (MCP's readOnlyHint).
    read_only: bool,
    schema: fn() -> Arc<JsonObject>,
    read: Reader,
}

static SPECS: LazyLock<Vec<Spec>> = LazyLock::new(|| {
    vec![
        Spec {
            name: "browser_navigate",
            title: "Open a web page",
            description: "Open a web page in this thread's browser. The reply is the page's \
                title and URL and its interactive elements, numbered in reading order \
                ([3] input:email \"Email\" (empty), [4] button \"Sign in\", links with their \
                targets), and a picture of the viewport. Use the numbers with browser_click and \
                browser_type.",
            read_only: false,
            schema: schema_of::<Navigate>,
            read: |args| {
                let Navigate { url } = read(args)?;
                Ok(Action::Navigate(NavigateAction { url }))
            },
        },
        Spec {
            name: "browser_click",
            title: "Click an element",
            description: "Click (tap) element n of the last listing of this thread. The reply \
                lists the page again (its elements renumbered: use the new numbers from then on) with \
                a picture. A page \
                that changed since the listing gives an error asking to look again, never a \
                click on the wrong element; an element listed (covered) lies under something \
                else (a dialog, a cookie banner): answer that first. A click on a select \
                names its options; browser_type chooses one. double_click: true double-clicks \
                (a double tap on a phone): a file's row opens, a todo's label edits it.",
            read_only: false,
            schema: schema_of::<Click>,
            read: |args| {
                let Click { n, double_click } = read(args)?;
                Ok(Action::Click(ClickAction { n, double_click }))
            },
        },
        Spec {
            name: "browser_type",
            title: "Fill a field",
            description: "Fill field n of the last listing with text, with the page's own \
                input events (React, Vue and plain forms alike); what it held is replaced, \
                a code editor's text too. \
                A select, a dropdown the page draws too, takes the option its text names. \
                Press Enter with browser_key to submit. The reply lists the page again. \
                Passwords are listed only as (filled).",
            read_only: false,
            schema: schema_of::<Type>,
            read: |args| {
                let Type { n, text } = read(args)?;
                Ok(Action::Type(TypeAction { n, text }))
            },
        },
        Spec {
            name: "browser_key",
            title: "Press a key",
            description: "Press a key on the focused element: Enter (submit), Tab, Escape, \
                Backspace, ArrowDown, F5, …, or a combination: Shift+Enter, Control+a (select \
                all), Control+s. The reply lists the page again.",
            read_only: false,
            schema: schema_of::<Key>,
            read: |args| {
                let Key { key } = read(args)?;
                Ok(Action::Key(KeyAction { key }))
            },
        },
        Spec {
            name: "browser_scroll",
            title: "Scroll the page",
            description: "Scroll by dy CSS pixels (negative: up). The reply lists what is \
                now in view, numbered, with a picture.",
            read_only: false,
            schema: schema_of::<Scroll>,
            read: |args| {
                let Scroll { dy } = read(args)?;
                Ok(Action::Scroll(ScrollAction { dy }))
            },
        },
        Spec {
            name: "browser_back",
            title: "Go back",
            description: "One step back in this thread's history. The reply lists the page.",
            read_only: false,
            schema: schema_of::<Nothing>,
            read: |args| {
                let Nothing {} = read(args)?;
                Ok(Action::Back(BackAction {}))
            },
        },
        Spec {
            name: "browser_wait",
            title: "Wait for the page",
            description: "Wait up to `seconds` (at most 15) for a page that is still loading \
                or drawing itself, or until `text` is on it, then list it. Use it when a \
                listing looks incomplete or a result is still to come.",
            read_only: true,
            schema: schema_of::<Wait>,
            read: |args| {
                let Wait { seconds, text } = read(args)?;
                Ok(Action::Wait(WaitAction {
                    seconds: seconds.unwrap_or(0.0),
                    text: text.unwrap_or_default(),
                }))
            },
        },
        Spec {
            name: "browser_extract",
            title: "Read the page's text",
            description: "The page's readable text (its first several thousand characters), \
                without the numbered elements. Use it to read an article, a result or an \
                order's details.",
            read_only: true,
            schema: schema_of::<Nothing>,
            read: |args| {
                let Nothing {} = read(args)?;
                Ok(Action::Extract(ExtractAction {}))
            },
        },
        Spec {
            name: "browser_screenshot",
            title: "Look at the page",
            description: "A fresh picture of the viewport, as the user sees it, with the \
                page's title and URL.",
            read_only: true,
            schema: schema_of::<Nothing>,
            read: |args| {
                let Nothing {} = read(args)?;
                Ok(Action::Screenshot(ScreenshotAction {}))
            },
        },
        Spec {
            name: "browser_fetch",
            title: "HTTP request with the browser's cookies",
            description: "An HTTP request made with the browser's cookies (so it is logged in \
                where the browser is), no page rendered: the reply is the status, the headers \
                and the body as text (long bodies are cut). Good for JSON APIs and downloads.",
            read_only: false,
            schema: schema_of::<Fetch>,
            read: |args| {
                let Fetch {
                    url,
                    method,
                    body,
                    headers,
                } = read(args)?;
                Ok(Action::Fetch(FetchAction {
                    url,
                    method: method.unwrap_or_default(),
                    body: body.unwrap_or_default(),
                    headers: headers
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(name, value)| nanomuse_proto::Header { name, value })
                        .collect(),
                }))
            },
        },
        Spec {
            name: "browser_profile",
            title: "Phone or computer",
            description: "Present as a phone (preset \"mobile\") or a computer (preset \
                \"desktop\"), or with a custom viewport (width and height; mobile; user_agent, \
                by default a desktop's or with mobile a phone's). It switches the page live, and the thread keeps it for its later \
                pages.",
            read_only: false,
            schema: schema_of::<Profile>,
            read: |args| {
                let profile: Profile = read(args)?;
                let custom = profile.user_agent.is_some()
                    || profile.width.is_some()
                    || profile.height.is_some()
                    || profile.mobile;
                let kind = match (profile.preset, custom) {
                    (Some(_), true) => {
                        return Err("browser_profile takes a preset, or width and height (with \
                                    user_agent and mobile if wanted), not both"
                            .into());
                    }
                    (Some(Preset::Mobile), false) => Kind::Mobile(true),
                    (Some(Preset::Desktop), false) => Kind::Desktop(true),
                    (None, _) => Kind::Custom(CustomProfile {
                        user_agent: profile.user_agent.unwrap_or_default(),
                        width: profile.width.unwrap_or_default(),
                        height: profile.height.unwrap_or_default(),
                        mobile: profile.mobile,
                    }),
                };
                Ok(Action::Profile(ProfileAction { kind: Some(kind) }))
            },
        },
        Spec {
            name: "browser_close",
            title: "Close the page",
            description: "Close this thread's page. The workspace's profile and its cookies \
                stay; the next action opens a new page.",
            read_only: false,
            schema: schema_of::<Nothing>,
            read: |args| {
                let Nothing {} = read(args)?;
                Ok(Action::Close(CloseAction {}))
            },
        },
        Spec {
            name: "browser_hand_over",
            title: "Hand the page to the user",
            description: "Give the page to the user for what only they should do: sign in, \
                enter a one-time code, solve a CAPTCHA, confirm a payment. It returns at once \
                with the address of the card where the user takes the page; tell them that \
                address. Your next browser tool call on this thread waits until they press \
                Done (it reports progress while it waits) and then lists the page as they \
                left it. Never ask the user for passwords or codes yourself.",
            read_only: false,
            schema: schema_of::<HandOver>,
            read: |args| {
                let HandOver { reason } = read(args)?;
                Ok(Action::HandOver(HandOverAction { reason }))
            },
        },
        Spec {
            name: "browser_state",
            title: "Where the page is",
            description: "The page's URL and title, whether it is still loading, its viewport \
                and where it runs, without changing it or making a picture.",
            read_only: true,
            schema: schema_of::<Nothing>,
            read: |args| {
                let Nothing {} = read(args)?;
                Ok(Action::State(StateAction {}))
            },
        },
        Spec {
            name: "browser_downloads",
            title: "The files the browser downloaded",
            description: "The workspace's downloaded files: name, size, when, and the page each \
                came from. A click or navigation that downloads a file says its name; read the \
                file as the resource nanomuse://downloads/<workspace>/<name>. On the phone's \
                browser the files stay on the phone, and this says where.",
            read_only: true,
            schema: schema_of::<Nothing>,
            read: |args| {
                let Nothing {} = read(args)?;
                Ok(Action::Downloads(DownloadsAction {}))
            },
        },
        Spec {
            name: "browser_upload",
            title: "Choose files for a file input",
            description: "Put files into the file input n of the last listing (or the label or \
                button that opens its file chooser), as a person choosing them would: files \
                sent as base64, files of the workspace's downloads by name, or — through \
                `nanomuse-browser mcp` — local paths. At most 10 files, 10 MiB each, 20 MiB in \
                all. The page sends them when its form is submitted (click its button next). \
                The reply lists the page again, the input showing the chosen names.",
            read_only: false,
            schema: schema_of::<Upload>,
            read: read_upload,
        },
    ]
});

/// The tools as `tools/list` gives them.
pub fn tools() -> Vec<Tool> {
    SPECS.iter().map(tool_of).collect()
}

/// The tool named `name`, if there is one.
pub fn tool(name: &str) -> Option<Tool> {
    SPECS.iter().find(|spec| spec.name == name).map(tool_of)
}

fn tool_of(spec: &Spec) -> Tool {
    let mut annotations = ToolAnnotations::with_title(spec.title);
    annotations.read_only_hint = Some(spec.read_only);
    // The page is on the open web.
    annotations.open_world_hint = Some(true);
    Tool::new(spec.name, spec.description, (spec.schema)())
        .with_title(spec.title)
        .annotate(annotations)
}

/// The tool's schema: the action's own arguments and the [`Target`]'s.
fn schema_of<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let action = rmcp::handler::server::tool::schema_for_type::<T>();
    let target = rmcp::handler::server::tool::schema_for_type::<Target>();
    let mut schema = action.as_ref().clone();
    schema.remove("title");
    schema.remove("description");
    let properties = schema
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("a schema's properties are an object");
    if let Some(Value::Object(extra)) = target.get("properties") {
        for (name, property) in extra {
            properties.insert(name.clone(), property.clone());
        }
    }
    Arc::new(schema)
}

/// Reads a call of tool `name` with `arguments`; `Ok(None)`: there is no such tool. A bad
/// argument is an `Err` with a sentence that says what to change.
pub fn read_call(name: &str, arguments: Option<JsonObject>) -> Option<Result<Call, String>> {
    let spec = SPECS.iter().find(|spec| spec.name == name)?;
    Some(read_with(spec, arguments.unwrap_or_default()))
}

fn read_with(spec: &Spec, mut arguments: JsonObject) -> Result<Call, String> {
    let mut target = Target::default();
    for (field, slot) in [
        ("thread", &mut target.thread),
        ("workspace", &mut target.workspace),
    ] {
        match arguments.remove(field) {
            None | Some(Value::Null) => {}
            Some(Value::String(value)) => *slot = Some(value),
            Some(other) => {
                return Err(format!(
                    "{}: `{field}` is a name (a string), not {other}",
                    spec.name
                ));
            }
        }
    }
    let action = (spec.read)(arguments)
        .map_err(|error| format!("{}: {error}; it takes {}", spec.name, takes(spec)))?;
    Ok(Call { target, action })
}

/// The tool's arguments as a sentence's end: "n (required), thread, workspace".
fn takes(spec: &Spec) -> String {
    let schema = (spec.schema)();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .keys()
                .map(|name| {
                    if required.contains(&name.as_str()) {
                        format!("{name} (required)")
                    } else {
                        name.clone()
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    names.join(", ")
}

/// The arguments that are numbers: models often send them as strings ("5") or as whole floats
/// (5.0), which are taken as the number they plainly are.
const NUMBERS: [&str; 5] = ["n", "dy", "seconds", "width", "height"];

/// Deserializes a tool's own arguments, saying in a sentence what is wrong.
fn read<T: DeserializeOwned>(mut arguments: JsonObject) -> Result<T, String> {
    for key in NUMBERS {
        let Some(value) = arguments.get_mut(key) else {
            continue;
        };
        let number = match &*value {
            Value::String(text) => text.trim().parse::<f64>().ok(),
            Value::Number(number) if !number.is_i64() && !number.is_u64() => number.as_f64(),
            _ => None,
        };
        if let Some(number) = number.filter(|n| n.is_finite()) {
            *value = if number.fract() == 0.0 && number.abs() < 1e15 {
                Value::from(number as i64)
            } else {
                Value::from(number)
            };
        }
    }
    serde_json::from_value(Value::Object(arguments)).map_err(|error| {
        // serde's "invalid type: string \"x\", expected i64" names the field too little.
        let error = error.to_string();
        match error.split_once(" at line ") {
            Some((what, _)) => format!("the arguments are not right: {what}"),
            None => format!("the arguments are not right: {error}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: Value) -> Result<Call, String> {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        read_call(name, Some(arguments)).expect("a known tool")
    }

    #[test]
    fn one_tool_per_action() {
        let names: Vec<String> = tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names.len(), 16);
        for action in [
            "navigate",
            "click",
            "type",
            "key",
            "scroll",
            "back",
            "wait",
            "extract",
            "screenshot",
            "fetch",
            "profile",
            "close",
            "hand_over",
            "state",
            "downloads",
            "upload",
        ] {
            assert!(names.contains(&format!("browser_{action}")), "{action}");
        }
        for tool in tools() {
            let properties = tool.input_schema["properties"].as_object().unwrap();
            assert!(properties.contains_key("thread"), "{}", tool.name);
            assert!(properties.contains_key("workspace"), "{}", tool.name);
            assert_eq!(tool.input_schema["type"], "object");
        }
    }

    #[test]
    fn numbers_sent_as_strings_or_whole_floats_are_taken_as_the_numbers_they_are() {
        for n in [json!("5"), json!(" 5 "), json!(5.0), json!(5)] {
            let read = call("browser_click", json!({ "n": n })).unwrap();
            assert_eq!(
                read.action,
                Action::Click(ClickAction {
                    n: 5,
                    ..Default::default()
                }),
                "{n}"
            );
        }
        let read = call("browser_click", json!({"n": 2, "double_click": true})).unwrap();
        assert_eq!(
            read.action,
            Action::Click(ClickAction {
                n: 2,
                double_click: true
            })
        );
        let read = call("browser_scroll", json!({"dy": "-300"})).unwrap();
        assert_eq!(read.action, Action::Scroll(ScrollAction { dy: -300.0 }));
        for n in [json!("five"), json!(5.5), json!(true)] {
            let refused = call("browser_click", json!({ "n": n })).unwrap_err();
            assert!(
                refused.starts_with("browser_click: the arguments are not right: "),
                "{refused}"
            );
        }
    }

    #[test]
    fn upload_reads_sent_files_and_refuses_paths_over_http() {
        let read = call(
            "browser_upload",
            json!({"n": 3, "files": [{"name": "a.txt", "content_base64": "aGk="}],
                   "downloads": ["r.csv"]}),
        )
        .unwrap();
        assert_eq!(
            read.action,
            Action::Upload(UploadAction {
                n: 3,
                files: vec![UploadFile {
                    name: "a.txt".into(),
                    mime_type: String::new(),
                    content: b"hi".to_vec(),
                }],
                downloads: vec!["r.csv".into()],
            })
        );
        let error = call("browser_upload", json!({"n": 3, "paths": ["/etc/passwd"]})).unwrap_err();
        assert!(error.contains(PATHS_OVER_HTTP), "{error}");
        let error = call(
            "browser_upload",
            json!({"n": 3, "files": [{"name": "a", "content_base64": "!!"}]}),
        )
        .unwrap_err();
        assert!(error.contains("is not base64"), "{error}");
    }

    #[test]
    fn schemas_carry_the_bounds() {
        let schema = |name: &str| tool(name).unwrap().input_schema;
        assert_eq!(schema("browser_click")["properties"]["n"]["minimum"], 1);
        assert_eq!(schema("browser_type")["properties"]["n"]["minimum"], 1);
        assert_eq!(
            schema("browser_wait")["properties"]["seconds"]["maximum"],
            15.0
        );
        assert_eq!(
            schema("browser_profile")["properties"]["width"]["maximum"],
            4096
        );
        assert_eq!(
            schema("browser_profile")["properties"]["height"]["minimum"],
            100
        );
        assert_eq!(
            schema("browser_hand_over")["properties"]["reason"]["maxLength"],
            REASON_MAX
        );
        assert_eq!(
            schema("browser_navigate")["required"],
            json!(["url"]),
            "thread and workspace are optional"
        );
    }

    #[test]
    fn arguments_become_the_cli_s_actions() {
        assert_eq!(
            call(
                "browser_type",
                json!({"n": 3, "text": "-5", "thread": "t1"})
            )
            .unwrap(),
            Call {
                target: Target {
                    thread: Some("t1".into()),
                    workspace: None
                },
                action: Action::Type(TypeAction {
                    n: 3,
                    text: "-5".into()
                })
            }
        );
        assert_eq!(
            call("browser_wait", json!({})).unwrap().action,
            Action::Wait(WaitAction {
                seconds: 0.0,
                text: String::new()
            })
        );
        assert_eq!(
            call("browser_profile", json!({"preset": "mobile"}))
                .unwrap()
                .action,
            Action::Profile(ProfileAction {
                kind: Some(Kind::Mobile(true))
            })
        );
        assert_eq!(
            call(
                "browser_fetch",
                json!({"url": "https://example.com/", "method": "POST"})
            )
            .unwrap()
            .action,
            Action::Fetch(FetchAction {
                url: "https://example.com/".into(),
                method: "POST".into(),
                body: String::new(),
                headers: Vec::new(),
            })
        );
        assert!(read_call("browser_fly", None).is_none());
    }

    #[test]
    fn bad_arguments_are_sentences() {
        let error = call("browser_click", json!({"n": "seven"})).unwrap_err();
        assert!(
            error.starts_with("browser_click: the arguments are not right: "),
            "{error}"
        );
        assert!(error.contains("seven"), "{error}");
        assert!(
            error.ends_with("; it takes double_click, n (required), thread, workspace"),
            "{error}"
        );
        let error = call("browser_click", json!({})).unwrap_err();
        assert!(error.contains("missing field `n`"), "{error}");
        let error = call("browser_back", json!({"url": "x"})).unwrap_err();
        assert!(error.contains("unknown field `url`"), "{error}");
        let error = call("browser_state", json!({"thread": 5})).unwrap_err();
        assert!(error.contains("`thread` is a name"), "{error}");
        let error = call(
            "browser_profile",
            json!({"preset": "desktop", "width": 500}),
        )
        .unwrap_err();
        assert!(error.contains("not both"), "{error}");
    }
}
