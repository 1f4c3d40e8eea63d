//! `nanomuse-browser`: the browser tool from a shell or a script. Each action is one `Act` call
//! on the controller's `BrowserTool` service; `serve` runs the controller itself.
//!
//! The pure parts — [`parse`], [`to_request`], [`render_json`], [`render_error_json`] — are
//! separate from the I/O in [`main_with`] so they can be tested without a server.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use nanomuse_common::telemetry::{TracedChannel, traced};
use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::profile_action::Kind;
use nanomuse_proto::{
    ActReply, ActRequest, BackAction, ClickAction, CloseAction, CustomProfile, DownloadsAction,
    ExtractAction, FetchAction, GetFrameRequest, HandOverAction, Header, KeyAction, NavigateAction,
    ProfileAction, ScreenshotAction, ScrollAction, StateAction, TypeAction, UploadAction,
    UploadFile, WaitAction,
};
use serde_json::{Map, Value, json};
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Endpoint;
use tracing::Instrument;

/// Where the controller listens unless told otherwise.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:50051";
pub const DEFAULT_THREAD: &str = "cli";

const NAME: &str = "nanomuse-browser";
// Frames are JPEGs of a whole viewport; tonic's 4 MiB default is too tight for a large one.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// One action of the browser tool.
    Act(ActInvocation),
    /// Run the controller.
    Serve(ServeArgs),
    /// Speak MCP on stdin/stdout (see [`crate::mcp_stdio`]).
    Mcp(crate::mcp_stdio::StdioOptions),
    /// Print a token's digest for a token file; the token from the command line, or `None`:
    /// from standard input.
    HashToken(Option<String>),
}

/// An action with everything needed to send it: the global flags resolved against the
/// environment and their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ActInvocation {
    pub server: String,
    pub token: Option<String>,
    pub thread: String,
    pub workspace: String,
    /// The backend of a new thread; empty: the server's configuration.
    pub backend: String,
    pub json: bool,
    /// Start a trace for the action (exported where `OTEL_EXPORTER_OTLP_ENDPOINT` says).
    pub trace: bool,
    pub action: ActionCommand,
}

/// The browser tool's actions as the command line spells them.
#[derive(Debug, Clone, PartialEq, Subcommand)]
pub enum ActionCommand {
    /// Open a page; the reply lists its interactive elements, numbered.
    Navigate { url: String },
    /// The page's text.
    Extract,
    /// Click element N of the last listing.
    Click {
        // A negative number is a number, answered by the action's own error, not a flag.
        #[arg(allow_negative_numbers = true)]
        n: i64,
        /// A double-click (a double tap on a phone): opens a file manager's row, edits a
        /// grid's cell, selects a word.
        #[arg(long = "double")]
        double_click: bool,
    },
    /// Fill element N with TEXT, with the page's own input events.
    Type {
        #[arg(allow_negative_numbers = true)]
        n: i64,
        // Text to type may well start with a dash ("-5", "--").
        #[arg(allow_hyphen_values = true)]
        text: String,
    },
    /// Press a key: Enter, Tab, Escape, F5, … or a combination: Shift+Enter, Control+a.
    Key { key: String },
    /// Scroll by DY pixels, negative for up.
    Scroll {
        #[arg(allow_negative_numbers = true, value_parser = parse_finite)]
        dy: f64,
    },
    /// One step back in history.
    Back,
    /// Pause SECONDS (at most 15), or without them until the page is quiet (no request, no
    /// change to the page for a moment; at most 15 s), then report the page's state.
    Wait {
        #[arg(allow_negative_numbers = true, value_parser = parse_seconds)]
        seconds: Option<f64>,
        /// Wait until TEXT is on the page instead (at most SECONDS, or 15 s).
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        text: Option<String>,
    },
    /// A fresh picture of the page.
    Screenshot {
        /// Also write the picture (JPEG) to FILE.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// An HTTP request with the browser's cookies, no page rendered.
    Fetch {
        url: String,
        /// GET when omitted.
        method: Option<String>,
        #[arg(allow_hyphen_values = true)]
        body: Option<String>,
        /// A request header, `NAME: VALUE` (again for more): an API's key or token. A body's
        /// Content-Type is set from what it reads as unless given.
        #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", value_parser = parse_header)]
        headers: Vec<(String, String)>,
    },
    /// Present as a phone or a computer, or a custom user agent and size.
    Profile(ProfileArgs),
    /// Close the page; the profile and its cookies stay.
    Close,
    /// Hand the page to the user (sign in, solve a CAPTCHA, …); the next action waits for Done.
    #[command(alias = "hand_over")]
    HandOver {
        #[arg(allow_hyphen_values = true)]
        reason: String,
    },
    /// The page's URL, title and whether the user has it.
    State,
    /// The workspace's downloaded files: name, size, when, the page each came from.
    Downloads,
    /// Tap element N (a file input, its label, or a button that opens a file chooser) and
    /// choose FILEs: local files (read here and sent), or downloads/NAME for one of the
    /// workspace's downloads (./downloads/NAME is a local file). At most 10 files, 10 MiB
    /// each, 20 MiB in all.
    Upload {
        #[arg(allow_negative_numbers = true)]
        n: i64,
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
    },
}

/// What `upload` names as `downloads/NAME`: a file of the workspace's downloads, not a local one.
const DOWNLOADS_PREFIX: &str = "downloads/";

/// A local file as an upload sends it: its name without the folders, its bytes (refused
/// before reading when larger than an upload takes).
pub fn read_local_file(path: &str) -> Result<UploadFile, String> {
    let max = nanomuse_proto::upload::MAX_FILE_BYTES;
    let size = std::fs::metadata(path)
        .map_err(|error| format!("cannot read {path}: {error}"))?
        .len();
    if size > max as u64 {
        return Err(format!(
            "{path} is {}, more than an upload takes per file ({} MiB)",
            nanomuse_proto::upload::human_size(size as usize),
            max >> 20
        ));
    }
    let content = std::fs::read(path).map_err(|error| format!("cannot read {path}: {error}"))?;
    let name = std::path::Path::new(path)
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| format!("{path} names no file"))?
        .to_string();
    Ok(UploadFile {
        name,
        mime_type: String::new(),
        content,
    })
}

/// The local files of an `upload` read into its request (the workspace's downloads it names
/// are the controller's to read).
fn attach_local_files(invocation: &ActInvocation, request: &mut ActRequest) -> Result<(), String> {
    let (ActionCommand::Upload { files, .. }, Some(Action::Upload(upload))) =
        (&invocation.action, request.action.as_mut())
    else {
        return Ok(());
    };
    if files.len() > nanomuse_proto::upload::MAX_FILES {
        return Err(format!(
            "{} files is too many for one upload: at most {}",
            files.len(),
            nanomuse_proto::upload::MAX_FILES
        ));
    }
    for path in files.iter().filter(|f| !f.starts_with(DOWNLOADS_PREFIX)) {
        upload.files.push(read_local_file(path)?);
    }
    Ok(())
}

/// `profile mobile|desktop` or `profile --width W --height H [--user-agent UA] [--mobile]`.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct ProfileArgs {
    /// A ready-made profile.
    #[arg(
        value_enum,
        required_unless_present_any = ["user_agent", "width", "height"],
        conflicts_with_all = ["user_agent", "width", "height", "mobile"]
    )]
    pub preset: Option<Preset>,
    /// The custom profile's user agent (by default a desktop's, or a phone's with --mobile).
    #[arg(long, value_name = "UA", requires_all = ["width", "height"])]
    pub user_agent: Option<String>,
    /// The custom viewport's width in CSS pixels.
    #[arg(long, value_name = "W", requires = "height",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub width: Option<u32>,
    /// The custom viewport's height in CSS pixels.
    #[arg(long, value_name = "H", requires = "width",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub height: Option<u32>,
    /// Touch and a mobile viewport for the custom profile.
    #[arg(long, requires = "width")]
    pub mobile: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// 412×915, a phone's user agent, touch.
    Mobile,
    /// 1280×900.
    Desktop,
}

/// `NAME: VALUE` as curl's `-H` takes it.
fn parse_header(raw: &str) -> Result<(String, String), String> {
    match raw.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!(
            "{raw:?} is not a header: write NAME: VALUE, e.g. \"Authorization: Bearer abc\""
        )),
    }
}

/// `serve [--data DIR] [--listen ADDR] [--config FILE]`; kept apart from
/// [`crate::serve::ServeOptions`] so parsing does not depend on that type's derives.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct ServeArgs {
    /// Where the controller keeps its state.
    #[arg(long, value_name = "DIR", default_value = "./data")]
    pub data: PathBuf,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50051")]
    pub listen: String,
    /// A TOML configuration file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl ServeArgs {
    pub fn into_options(self) -> crate::serve::ServeOptions {
        crate::serve::ServeOptions {
            data: self.data,
            listen: self.listen,
            config: self.config,
        }
    }
}

// The environment is resolved by hand rather than with clap's `env`, which reads the process
// environment directly: tests could not vary it (setting variables is `unsafe` in edition
// 2024, and the workspace forbids unsafe code).
#[derive(Debug, Parser)]
#[command(
    name = NAME,
    version,
    about = "The nanoMuse browser tool from the shell: one action per call, on a thread's page.",
    subcommand_required = true,
    arg_required_else_help = true
)]
struct Cli {
    /// The controller's address [env: NANOMUSE_SERVER] [default: http://127.0.0.1:50051]
    #[arg(long, global = true, value_name = "URL")]
    server: Option<String>,
    /// Sent as `authorization: Bearer <T>` [env: NANOMUSE_TOKEN]
    #[arg(long, global = true, value_name = "T")]
    token: Option<String>,
    /// The conversation whose page to act on [env: NANOMUSE_THREAD] [default: cli]
    #[arg(long, global = true, value_name = "ID")]
    thread: Option<String>,
    /// The workspace whose profile a new thread uses; a thread keeps its own
    /// [env: NANOMUSE_WORKSPACE] [default: the thread's; for a new thread, default]
    #[arg(long, global = true, value_name = "W")]
    workspace: Option<String>,
    /// A new thread's browser: auto, playwright (the server's) or device (the phone's)
    /// [env: NANOMUSE_BACKEND] [default: the server's configuration]
    #[arg(long, global = true, value_name = "B")]
    backend: Option<String>,
    /// Print one JSON object instead of the reply's text.
    #[arg(long, global = true)]
    json: bool,
    /// Trace the action across every hop and print its trace id on stderr; spans go to
    /// OTEL_EXPORTER_OTLP_ENDPOINT.
    #[arg(long, global = true)]
    trace: bool,
    #[command(subcommand)]
    command: CliCommand,
}

#[derive(Debug, Subcommand)]
enum CliCommand {
    #[command(flatten)]
    Act(ActionCommand),
    /// Run the controller.
    Serve(ServeArgs),
    /// The browser tool as an MCP server on stdin/stdout, for a local agent: forwarded to
    /// --server, or to the embedded server on --listen, started when nothing answers there.
    Mcp(ServeArgs),
    /// Print the digest a token file keeps for TOKEN (`"sha256:<hex>" = "tenant"`); without
    /// TOKEN, the first line of standard input (which, unlike an argument, no shell history
    /// or process list shows).
    HashToken { token: Option<String> },
}

/// Parses the command line (`args[0]` is the program name), taking defaults from the process
/// environment.
pub fn parse<I, T>(args: I) -> Result<Invocation, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    parse_with_env(args, |name| std::env::var(name).ok())
}

/// [`parse`] with the environment given as a lookup.
pub fn parse_with_env<I, T>(
    args: I,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Invocation, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = Cli::command().try_get_matches_from(args)?;
    let cli = Cli::from_arg_matches(&matches)?;
    // An empty variable counts as unset, so `NANOMUSE_TOKEN=` does not send "Bearer ".
    let resolve = |flag: Option<String>, var: &str| {
        flag.or_else(|| env(var).filter(|value| !value.is_empty()))
    };
    let action = match cli.command {
        CliCommand::Serve(serve) => return Ok(Invocation::Serve(serve)),
        CliCommand::Mcp(embedded) => {
            return Ok(Invocation::Mcp(crate::mcp_stdio::StdioOptions {
                server: resolve(cli.server, "NANOMUSE_SERVER"),
                token: resolve(cli.token, "NANOMUSE_TOKEN"),
                thread: resolve(cli.thread, "NANOMUSE_THREAD"),
                workspace: resolve(cli.workspace, "NANOMUSE_WORKSPACE"),
                embedded,
            }));
        }
        CliCommand::HashToken { token } => return Ok(Invocation::HashToken(token)),
        CliCommand::Act(action) => action,
    };
    Ok(Invocation::Act(ActInvocation {
        server: resolve(cli.server, "NANOMUSE_SERVER").unwrap_or_else(|| DEFAULT_SERVER.into()),
        token: resolve(cli.token, "NANOMUSE_TOKEN"),
        thread: resolve(cli.thread, "NANOMUSE_THREAD").unwrap_or_else(|| DEFAULT_THREAD.into()),
        // Unsaid: the thread's own (the server gives a new thread `default`), so naming only
        // `--thread` reaches a thread made in another workspace.
        workspace: resolve(cli.workspace, "NANOMUSE_WORKSPACE").unwrap_or_default(),
        backend: resolve(cli.backend, "NANOMUSE_BACKEND").unwrap_or_default(),
        json: cli.json,
        trace: cli.trace,
        action,
    }))
}

fn parse_finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err(format!("`{text}` is not a number")),
    }
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match parse_finite(text)? {
        seconds if seconds >= 0.0 => Ok(seconds),
        _ => Err(format!("`{text}` is negative")),
    }
}

/// The `Act` request for an action.
pub fn to_request(invocation: &ActInvocation) -> ActRequest {
    let action = match &invocation.action {
        ActionCommand::Navigate { url } => Action::Navigate(NavigateAction { url: url.clone() }),
        ActionCommand::Extract => Action::Extract(ExtractAction {}),
        ActionCommand::Click { n, double_click } => Action::Click(ClickAction {
            n: *n,
            double_click: *double_click,
        }),
        ActionCommand::Type { n, text } => Action::Type(TypeAction {
            n: *n,
            text: text.clone(),
        }),
        ActionCommand::Key { key } => Action::Key(KeyAction { key: key.clone() }),
        ActionCommand::Scroll { dy } => Action::Scroll(ScrollAction { dy: *dy }),
        ActionCommand::Back => Action::Back(BackAction {}),
        ActionCommand::Wait { seconds, text } => Action::Wait(WaitAction {
            seconds: seconds.unwrap_or(0.0),
            text: text.clone().unwrap_or_default(),
        }),
        ActionCommand::Screenshot { .. } => Action::Screenshot(ScreenshotAction {}),
        ActionCommand::Fetch {
            url,
            method,
            body,
            headers,
        } => Action::Fetch(FetchAction {
            url: url.clone(),
            method: method.clone().unwrap_or_default(),
            body: body.clone().unwrap_or_default(),
            headers: headers
                .iter()
                .map(|(name, value)| Header {
                    name: name.clone(),
                    value: value.clone(),
                })
                .collect(),
        }),
        ActionCommand::Profile(profile) => Action::Profile(ProfileAction {
            kind: Some(match profile.preset {
                Some(Preset::Mobile) => Kind::Mobile(true),
                Some(Preset::Desktop) => Kind::Desktop(true),
                None => Kind::Custom(CustomProfile {
                    user_agent: profile.user_agent.clone().unwrap_or_default(),
                    width: profile.width.unwrap_or_default(),
                    height: profile.height.unwrap_or_default(),
                    mobile: profile.mobile,
                }),
            }),
        }),
        ActionCommand::Close => Action::Close(CloseAction {}),
        ActionCommand::HandOver { reason } => Action::HandOver(HandOverAction {
            reason: reason.clone(),
        }),
        ActionCommand::State => Action::State(StateAction {}),
        ActionCommand::Downloads => Action::Downloads(DownloadsAction {}),
        // The local files are read by `attach_local_files`, outside this pure function.
        ActionCommand::Upload { n, files } => Action::Upload(UploadAction {
            n: *n,
            files: Vec::new(),
            downloads: files
                .iter()
                .filter_map(|f| f.strip_prefix(DOWNLOADS_PREFIX))
                .map(str::to_string)
                .collect(),
        }),
    };
    ActRequest {
        thread: invocation.thread.clone(),
        workspace: invocation.workspace.clone(),
        backend: invocation.backend.clone(),
        action: Some(action),
    }
}

/// The `--json` rendering of a reply.
pub fn render_json(reply: &ActReply) -> Value {
    let elements: Vec<Value> = reply
        .elements
        .iter()
        .map(|element| {
            let mut object = json!({
                "n": element.n,
                "label": element.label,
                "kind": element.kind,
            });
            if !element.href.is_empty() {
                object["href"] = json!(element.href);
            }
            if !element.state.is_empty() {
                object["state"] = json!(element.state);
            }
            object
        })
        .collect();
    // An unset message and one with no id both mean "no frame was made".
    let frame = match &reply.frame {
        Some(frame) if !frame.id.is_empty() => json!({
            "id": frame.id,
            "caption": frame.caption,
            "width": frame.width,
            "height": frame.height,
        }),
        _ => Value::Null,
    };
    let mut object = json!({
        "ok": true,
        "text": reply.text,
        "url": reply.url,
        "title": reply.title,
        "elements": elements,
        "frame": frame,
    });
    if let Some(fetch) = &reply.fetch {
        // HTTP header names are case-insensitive; the first spelling seen names the entry.
        let mut headers: Vec<(String, String)> = Vec::new();
        for header in &fetch.headers {
            match headers
                .iter_mut()
                .find(|(name, _)| name.eq_ignore_ascii_case(&header.name))
            {
                Some((_, value)) => {
                    value.push_str(", ");
                    value.push_str(&header.value);
                }
                None => headers.push((header.name.clone(), header.value.clone())),
            }
        }
        let headers: Map<String, Value> = headers
            .into_iter()
            .map(|(name, value)| (name, Value::String(value)))
            .collect();
        object["status"] = json!(fetch.status);
        object["headers"] = Value::Object(headers);
        object["body"] = json!(fetch.body);
        object["truncated"] = json!(fetch.truncated);
        object["body_bytes"] = json!(fetch.body_bytes);
    }
    if !reply.downloads.is_empty() {
        object["downloads"] = reply
            .downloads
            .iter()
            .map(|file| {
                json!({
                    "name": file.name,
                    "size": file.size,
                    "completed_ms": file.completed_ms,
                    "url": file.url,
                    "page": file.page,
                })
            })
            .collect();
    }
    object
}

/// The `--json` rendering of a failure.
pub fn render_error_json(message: &str) -> Value {
    json!({ "ok": false, "error": message })
}

/// Runs the command line (`args[0]` is the program name) and returns the exit code: 0 on
/// success, 1 when the action failed, 2 on bad usage.
pub async fn main_with(args: Vec<String>) -> i32 {
    let json = wants_json(&args);
    let invocation = match parse(args) {
        Ok(invocation) => invocation,
        Err(error) if json && error.exit_code() != 0 => {
            return fail(true, 2, &usage_message(&error));
        }
        Err(error) => {
            // Help and version are "errors" too, printed on stdout with code 0.
            let _ = error.print();
            return error.exit_code();
        }
    };
    match invocation {
        Invocation::Serve(serve) => match crate::serve::serve(serve.into_options()).await {
            Ok(()) => 0,
            Err(error) => fail(json, 1, &format!("{error:#}")),
        },
        Invocation::Mcp(options) => crate::mcp_stdio::main(options).await,
        Invocation::HashToken(token) => match hash_token(token) {
            Ok(digest) => {
                print_stdout(&digest);
                0
            }
            Err(message) => fail(json, 1, &message),
        },
        Invocation::Act(invocation) => match traced_act(&invocation).await {
            Ok(reply) => {
                if invocation.json {
                    print_stdout(&render_json(&reply).to_string());
                } else if !reply.text.is_empty() {
                    print_stdout(&reply.text);
                }
                0
            }
            Err(message) => fail(invocation.json, 1, &message),
        },
    }
}

/// Says what went wrong on stderr, and with `--json` as one JSON object on stdout too, so a
/// program reading stdout always gets JSON; returns the exit code.
fn fail(json: bool, code: i32, message: &str) -> i32 {
    let message = one_line(message);
    eprintln!("{NAME}: {message}");
    if json {
        print_stdout(&render_error_json(&message).to_string());
    }
    code
}

/// Whether the command line asks for `--json`, read before parsing so that a usage error is
/// JSON too: the flag anywhere before a `--` that ends the options.
fn wants_json(args: &[String]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|arg| arg.as_str() != "--")
        .any(|arg| arg == "--json")
}

/// clap's message for a usage error without its `error: ` prefix and usage block, plus the
/// way to the help.
fn usage_message(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    // What clap says before its usage block, e.g. "the following required arguments were not
    // provided: <DY>", on one line.
    let said: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .filter(|line| !line.is_empty())
        .collect();
    let said = said.join(" ");
    let said = said.strip_prefix("error: ").unwrap_or(&said);
    let said = if said.is_empty() { "bad usage" } else { said };
    format!("{said} (see `{NAME} --help`)")
}

/// The digest of `token` (or of standard input's first line) as a token file keeps it.
fn hash_token(token: Option<String>) -> Result<String, String> {
    let token = match token {
        Some(token) => token,
        None => {
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map_err(|e| format!("cannot read the token from standard input: {e}"))?;
            line.trim_end_matches(['\n', '\r']).to_string()
        }
    };
    if token.chars().count() < nanomuse_common::tokens::TOKEN_MIN_CHARS {
        return Err(format!(
            "a token needs {}+ characters (e.g. `openssl rand -hex 32`)",
            nanomuse_common::tokens::TOKEN_MIN_CHARS
        ));
    }
    Ok(nanomuse_common::tokens::token_digest(&token))
}

/// The action, inside a new trace when `--trace` asks for one.
async fn traced_act(invocation: &ActInvocation) -> Result<ActReply, String> {
    if !invocation.trace {
        return act(invocation).await;
    }
    let telemetry = nanomuse_common::telemetry::init(NAME, false, "warn");
    let request = to_request(invocation);
    let name = request
        .action
        .as_ref()
        .map_or("none", nanomuse_controller::actions::name_of);
    let span = tracing::info_span!(
        "nanomuse-browser",
        otel.name = format!("{NAME} {name}"),
        otel.kind = "client",
        action = name,
        otel.status_code = tracing::field::Empty,
    );
    if let Some(trace_id) = nanomuse_common::telemetry::trace_id_of(&span) {
        eprintln!("{NAME}: trace {trace_id}");
    }
    let reply = act(invocation).instrument(span.clone()).await;
    if reply.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    drop(span);
    // Flushes the spans before the process exits.
    drop(telemetry);
    reply
}

async fn act(invocation: &ActInvocation) -> Result<ActReply, String> {
    let token = match &invocation.token {
        Some(token) => Some(
            format!("Bearer {token}")
                .parse::<AsciiMetadataValue>()
                .map_err(|_| "the token has characters a header cannot carry".to_string())?,
        ),
        None => None,
    };
    let mut request = to_request(invocation);
    attach_local_files(invocation, &mut request)?;
    let mut client = connect(&invocation.server).await?;

    let mut reply = client
        .act(authorized(request, token.as_ref()))
        .await
        .map_err(|status| status_message(&status))?
        .into_inner();

    if matches!(invocation.action, ActionCommand::HandOver { .. }) {
        // As MCP's reply says it: the user needs somewhere to go.
        reply.text.push_str(&format!(
            "\nThe user takes the page at {} (the browser card: tell them this address).",
            card_address(&invocation.server, &invocation.thread)
        ));
    }
    if let ActionCommand::Screenshot { out: Some(path) } = &invocation.action {
        let frame_id = match &reply.frame {
            Some(frame) if !frame.id.is_empty() => frame.id.clone(),
            // Asking for "the latest frame" instead could write an older picture.
            _ => return Err("the screenshot made no frame to save".into()),
        };
        let frame = client
            .get_frame(authorized(
                GetFrameRequest {
                    thread: invocation.thread.clone(),
                    frame_id,
                },
                token.as_ref(),
            ))
            .await
            .map_err(|status| status_message(&status))?
            .into_inner();
        tokio::fs::write(path, &frame.jpeg)
            .await
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        // Said, and what it is: a JPEG whatever the file's name says.
        reply.text.push_str(&format!(
            "\nWrote the picture to {} (JPEG, {} bytes).",
            path.display(),
            frame.jpeg.len()
        ));
    }
    Ok(reply)
}

/// The server's address with a scheme: `127.0.0.1:50051` is what people type.
fn with_scheme(server: &str) -> String {
    if server.contains("://") {
        server.to_string()
    } else {
        format!("http://{server}")
    }
}

/// Where a user takes the thread's page: its card, served beside the API.
fn card_address(server: &str, thread: &str) -> String {
    format!(
        "{}/browser/{thread}",
        with_scheme(server).trim_end_matches('/')
    )
}

async fn connect(server: &str) -> Result<BrowserToolClient<TracedChannel>, String> {
    let url = with_scheme(server);
    let channel = Endpoint::from_shared(url)
        .map_err(|error| format!("bad server address {server}: {error}"))?
        .connect_timeout(CONNECT_TIMEOUT)
        .connect()
        .await
        .map_err(|error| format!("cannot reach {server}: {}", error_chain(&error)))?;
    Ok(BrowserToolClient::new(traced(channel))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
}

fn authorized<T>(message: T, token: Option<&AsciiMetadataValue>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", token.clone());
    }
    request
}

fn status_message(status: &tonic::Status) -> String {
    if status.message().is_empty() {
        status.code().description().to_string()
    } else {
        status.message().to_string()
    }
}

// Transport errors repeat themselves down the chain ("tcp connect error: tcp connect error: …").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(error) = next {
        let part = error.to_string();
        if parts.last() != Some(&part) {
            parts.push(part);
        }
        next = error.source();
    }
    parts.join(": ")
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

// `println!` panics when stdout is a closed pipe (`| head`); a CLI should just stop talking.
fn print_stdout(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::error::ErrorKind;
    use nanomuse_proto::{Element, FetchResult, FrameRef, Header};

    use super::*;

    fn parse_env(args: &[&str], env: &[(&str, &str)]) -> Result<Invocation, clap::Error> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        let argv = std::iter::once(NAME).chain(args.iter().copied());
        parse_with_env(argv, move |name| env.get(name).cloned())
    }

    fn act(args: &[&str]) -> ActInvocation {
        match parse_env(args, &[]) {
            Ok(Invocation::Act(invocation)) => invocation,
            other => panic!("{args:?} parsed as {other:?}"),
        }
    }

    fn action(args: &[&str]) -> Action {
        to_request(&act(args)).action.expect("an action")
    }

    fn usage_error(args: &[&str]) -> ErrorKind {
        let error = parse_env(args, &[]).expect_err("a usage error");
        assert_eq!(error.exit_code(), 2, "{args:?}");
        error.kind()
    }

    #[test]
    fn navigate() {
        assert_eq!(
            action(&["navigate", "https://example.com/a?b=c"]),
            Action::Navigate(NavigateAction {
                url: "https://example.com/a?b=c".into()
            })
        );
        usage_error(&["navigate"]);
    }

    #[test]
    fn actions_without_arguments() {
        assert_eq!(action(&["extract"]), Action::Extract(ExtractAction {}));
        assert_eq!(action(&["back"]), Action::Back(BackAction {}));
        assert_eq!(action(&["close"]), Action::Close(CloseAction {}));
        assert_eq!(action(&["state"]), Action::State(StateAction {}));
        assert_eq!(
            action(&["downloads"]),
            Action::Downloads(DownloadsAction {})
        );
        assert_eq!(
            action(&["screenshot"]),
            Action::Screenshot(ScreenshotAction {})
        );
        assert_eq!(
            usage_error(&["extract", "more"]),
            ErrorKind::UnknownArgument
        );
    }

    #[test]
    fn upload_reads_local_files_and_names_downloads() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("id card.pdf");
        std::fs::write(&local, b"%PDF-1.7 bytes").unwrap();
        let local = local.to_str().unwrap();
        let invocation = act(&["upload", "4", local, "downloads/report.csv"]);
        let mut request = to_request(&invocation);
        assert_eq!(
            request.action,
            Some(Action::Upload(UploadAction {
                n: 4,
                files: vec![],
                downloads: vec!["report.csv".into()],
            }))
        );
        attach_local_files(&invocation, &mut request).unwrap();
        let Some(Action::Upload(upload)) = request.action else {
            panic!()
        };
        assert_eq!(upload.files.len(), 1);
        assert_eq!(upload.files[0].name, "id card.pdf");
        assert_eq!(upload.files[0].content, b"%PDF-1.7 bytes");
        assert_eq!(
            usage_error(&["upload", "4"]),
            ErrorKind::MissingRequiredArgument
        );
        let missing = act(&["upload", "1", "/nonexistent/file.txt"]);
        let error = attach_local_files(&missing, &mut to_request(&missing)).unwrap_err();
        assert!(
            error.starts_with("cannot read /nonexistent/file.txt"),
            "{error}"
        );
    }

    #[test]
    fn click() {
        assert_eq!(
            action(&["click", "7"]),
            Action::Click(ClickAction {
                n: 7,
                ..Default::default()
            })
        );
        assert_eq!(usage_error(&["click", "seven"]), ErrorKind::ValueValidation);
        // The action answers a number below 1 (with what the listing has).
        assert_eq!(
            action(&["click", "-1"]),
            Action::Click(ClickAction {
                n: -1,
                ..Default::default()
            })
        );
        usage_error(&["click"]);
        assert_eq!(
            action(&["click", "7", "--double"]),
            Action::Click(ClickAction {
                n: 7,
                double_click: true
            })
        );
    }

    #[test]
    fn type_text() {
        assert_eq!(
            action(&["type", "3", "hello world"]),
            Action::Type(TypeAction {
                n: 3,
                text: "hello world".into()
            })
        );
        // Text starting with a dash is still text, not a flag.
        assert_eq!(
            action(&["type", "3", "-5"]),
            Action::Type(TypeAction {
                n: 3,
                text: "-5".into()
            })
        );
        usage_error(&["type", "3"]);
        usage_error(&["type", "x", "hello"]);
    }

    #[test]
    fn key() {
        assert_eq!(
            action(&["key", "Enter"]),
            Action::Key(KeyAction {
                key: "Enter".into()
            })
        );
        usage_error(&["key"]);
    }

    #[test]
    fn scroll_takes_negative_and_fractional_pixels() {
        assert_eq!(
            action(&["scroll", "-400"]),
            Action::Scroll(ScrollAction { dy: -400.0 })
        );
        assert_eq!(
            action(&["scroll", "250"]),
            Action::Scroll(ScrollAction { dy: 250.0 })
        );
        assert_eq!(
            action(&["--thread", "t", "scroll", "-12.5"]),
            Action::Scroll(ScrollAction { dy: -12.5 })
        );
        assert_eq!(usage_error(&["scroll", "up"]), ErrorKind::ValueValidation);
        assert_eq!(usage_error(&["scroll", "NaN"]), ErrorKind::ValueValidation);
        usage_error(&["scroll"]);
    }

    #[test]
    fn wait() {
        let wait = |seconds: f64, text: &str| {
            Action::Wait(WaitAction {
                seconds,
                text: text.into(),
            })
        };
        assert_eq!(action(&["wait"]), wait(0.0, ""));
        assert_eq!(action(&["wait", "2.5"]), wait(2.5, ""));
        assert_eq!(action(&["wait", "--text", "Saved"]), wait(0.0, "Saved"));
        assert_eq!(
            action(&["wait", "4", "--text", "-1 item"]),
            wait(4.0, "-1 item")
        );
        assert_eq!(usage_error(&["wait", "-1"]), ErrorKind::ValueValidation);
        assert_eq!(usage_error(&["wait", "soon"]), ErrorKind::ValueValidation);
    }

    #[test]
    fn screenshot_out() {
        let invocation = act(&["screenshot", "--out", "page.jpg"]);
        assert_eq!(
            invocation.action,
            ActionCommand::Screenshot {
                out: Some(PathBuf::from("page.jpg"))
            }
        );
        assert_eq!(
            to_request(&invocation).action,
            Some(Action::Screenshot(ScreenshotAction {}))
        );
        usage_error(&["screenshot", "--out"]);
    }

    #[test]
    fn fetch() {
        assert_eq!(
            action(&["fetch", "https://example.com/api/orders"]),
            Action::Fetch(FetchAction {
                url: "https://example.com/api/orders".into(),
                method: String::new(),
                body: String::new(),
                headers: Vec::new(),
            })
        );
        assert_eq!(
            action(&["fetch", "https://example.com/form", "POST", "a=1&b=2"]),
            Action::Fetch(FetchAction {
                url: "https://example.com/form".into(),
                method: "POST".into(),
                body: "a=1&b=2".into(),
                headers: Vec::new(),
            })
        );
        assert_eq!(
            action(&["fetch", "https://example.com", "DELETE"]),
            Action::Fetch(FetchAction {
                url: "https://example.com".into(),
                method: "DELETE".into(),
                body: String::new(),
                headers: Vec::new(),
            })
        );
        assert_eq!(
            action(&[
                "fetch",
                "https://example.com/pets",
                "-H",
                "X-API-Key: k1",
                "--header",
                "Authorization:Bearer t",
            ]),
            Action::Fetch(FetchAction {
                url: "https://example.com/pets".into(),
                method: String::new(),
                body: String::new(),
                headers: vec![
                    Header {
                        name: "X-API-Key".into(),
                        value: "k1".into()
                    },
                    Header {
                        name: "Authorization".into(),
                        value: "Bearer t".into()
                    },
                ],
            })
        );
        usage_error(&["fetch"]);
        usage_error(&["fetch", "u", "POST", "body", "extra"]);
        usage_error(&["fetch", "u", "-H", "no colon"]);
    }

    fn profile_kind(args: &[&str]) -> Kind {
        match action(args) {
            Action::Profile(ProfileAction { kind: Some(kind) }) => kind,
            other => panic!("{args:?} made {other:?}"),
        }
    }

    #[test]
    fn profile() {
        assert_eq!(profile_kind(&["profile", "mobile"]), Kind::Mobile(true));
        assert_eq!(profile_kind(&["profile", "desktop"]), Kind::Desktop(true));
        assert_eq!(
            profile_kind(&[
                "profile",
                "--user-agent",
                "Agent/1.0",
                "--width",
                "800",
                "--height",
                "600"
            ]),
            Kind::Custom(CustomProfile {
                user_agent: "Agent/1.0".into(),
                width: 800,
                height: 600,
                mobile: false,
            })
        );
        assert_eq!(
            profile_kind(&[
                "profile",
                "--width",
                "390",
                "--height",
                "844",
                "--mobile",
                "--user-agent",
                "Phone/2"
            ]),
            Kind::Custom(CustomProfile {
                user_agent: "Phone/2".into(),
                width: 390,
                height: 844,
                mobile: true,
            })
        );
        // A size alone: the controller gives it the user agent of its kind.
        assert_eq!(
            profile_kind(&["profile", "--width", "390", "--height", "844", "--mobile"]),
            Kind::Custom(CustomProfile {
                user_agent: String::new(),
                width: 390,
                height: 844,
                mobile: true,
            })
        );
    }

    #[test]
    fn profile_misuse() {
        usage_error(&["profile"]);
        usage_error(&["profile", "tablet"]);
        usage_error(&["profile", "mobile", "--width", "400"]);
        usage_error(&["profile", "desktop", "--mobile"]);
        usage_error(&["profile", "--user-agent", "A", "--width", "400"]);
        usage_error(&["profile", "--width", "400"]);
        usage_error(&["profile", "--mobile"]);
        usage_error(&[
            "profile",
            "--user-agent",
            "A",
            "--width",
            "0",
            "--height",
            "800",
        ]);
    }

    #[test]
    fn the_card_address_is_beside_the_api_whatever_form_the_server_was_given_in() {
        assert_eq!(
            card_address("127.0.0.1:50051", "t1"),
            "http://127.0.0.1:50051/browser/t1"
        );
        assert_eq!(
            card_address("https://browser.example/", "cli"),
            "https://browser.example/browser/cli"
        );
    }

    #[test]
    fn hand_over() {
        let expected = Action::HandOver(HandOverAction {
            reason: "sign in to 12306".into(),
        });
        assert_eq!(action(&["hand-over", "sign in to 12306"]), expected);
        assert_eq!(action(&["hand_over", "sign in to 12306"]), expected);
        usage_error(&["hand-over"]);
    }

    #[test]
    fn serve() {
        assert_eq!(
            parse_env(&["serve"], &[]).unwrap(),
            Invocation::Serve(ServeArgs {
                data: PathBuf::from("./data"),
                listen: "127.0.0.1:50051".into(),
                config: None,
            })
        );
        assert_eq!(
            parse_env(
                &[
                    "serve",
                    "--data",
                    "/var/lib/nanomuse",
                    "--listen",
                    "0.0.0.0:6000",
                    "--config",
                    "/etc/nanomuse.toml"
                ],
                &[]
            )
            .unwrap(),
            Invocation::Serve(ServeArgs {
                data: PathBuf::from("/var/lib/nanomuse"),
                listen: "0.0.0.0:6000".into(),
                config: Some(PathBuf::from("/etc/nanomuse.toml")),
            })
        );
        let options = ServeArgs {
            data: PathBuf::from("d"),
            listen: "l".into(),
            config: Some(PathBuf::from("c")),
        }
        .into_options();
        assert_eq!(options.data, PathBuf::from("d"));
        assert_eq!(options.listen, "l");
        assert_eq!(options.config, Some(PathBuf::from("c")));
    }

    #[test]
    fn hash_token_prints_the_digest_a_token_file_keeps() {
        assert_eq!(
            parse_env(&["hash-token", "token-of-tenant-a-0001"], &[]).unwrap(),
            Invocation::HashToken(Some("token-of-tenant-a-0001".into()))
        );
        assert_eq!(
            parse_env(&["hash-token"], &[]).unwrap(),
            Invocation::HashToken(None)
        );
        assert_eq!(
            hash_token(Some("token-of-tenant-a-0001".into())).unwrap(),
            nanomuse_common::tokens::token_digest("token-of-tenant-a-0001")
        );
        assert!(
            hash_token(Some("short".into()))
                .unwrap_err()
                .contains("16+")
        );
    }

    #[test]
    fn defaults_without_environment() {
        let invocation = act(&["state"]);
        assert_eq!(invocation.server, "http://127.0.0.1:50051");
        assert_eq!(invocation.token, None);
        assert_eq!(invocation.thread, "cli");
        assert_eq!(invocation.workspace, "");
        assert!(!invocation.json);
        let request = to_request(&invocation);
        assert_eq!(request.thread, "cli");
        // The server's default for a new thread, the thread's own for one it has.
        assert_eq!(request.workspace, "");
    }

    const ENV: &[(&str, &str)] = &[
        ("NANOMUSE_SERVER", "http://controller:7000"),
        ("NANOMUSE_TOKEN", "secret"),
        ("NANOMUSE_THREAD", "chat-42"),
        ("NANOMUSE_WORKSPACE", "shopping"),
    ];

    #[test]
    fn defaults_from_environment() {
        let Ok(Invocation::Act(invocation)) = parse_env(&["extract"], ENV) else {
            panic!("not an action");
        };
        assert_eq!(invocation.server, "http://controller:7000");
        assert_eq!(invocation.token.as_deref(), Some("secret"));
        assert_eq!(invocation.thread, "chat-42");
        assert_eq!(invocation.workspace, "shopping");
        let request = to_request(&invocation);
        assert_eq!(request.thread, "chat-42");
        assert_eq!(request.workspace, "shopping");
    }

    #[test]
    fn flags_beat_environment() {
        let Ok(Invocation::Act(invocation)) = parse_env(
            &[
                "--server",
                "http://elsewhere:1",
                "--token",
                "mine",
                "--thread",
                "t1",
                "--workspace",
                "w1",
                "--json",
                "back",
            ],
            ENV,
        ) else {
            panic!("not an action");
        };
        assert_eq!(invocation.server, "http://elsewhere:1");
        assert_eq!(invocation.token.as_deref(), Some("mine"));
        assert_eq!(invocation.thread, "t1");
        assert_eq!(invocation.workspace, "w1");
        assert!(invocation.json);
        assert_eq!(invocation.action, ActionCommand::Back);
    }

    #[test]
    fn empty_environment_counts_as_unset() {
        let Ok(Invocation::Act(invocation)) = parse_env(
            &["state"],
            &[
                ("NANOMUSE_SERVER", ""),
                ("NANOMUSE_TOKEN", ""),
                ("NANOMUSE_THREAD", ""),
                ("NANOMUSE_WORKSPACE", ""),
            ],
        ) else {
            panic!("not an action");
        };
        assert_eq!(invocation.server, DEFAULT_SERVER);
        assert_eq!(invocation.token, None);
        assert_eq!(invocation.thread, DEFAULT_THREAD);
        assert_eq!(invocation.workspace, "");
    }

    #[test]
    fn global_flags_may_also_follow_the_action() {
        let invocation = act(&["click", "2", "--thread", "t9", "--json"]);
        assert_eq!(invocation.thread, "t9");
        assert!(invocation.json);
        assert_eq!(
            invocation.action,
            ActionCommand::Click {
                n: 2,
                double_click: false
            }
        );
    }

    #[test]
    fn bad_usage() {
        assert_eq!(
            usage_error(&[]),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        assert_eq!(usage_error(&["fly"]), ErrorKind::InvalidSubcommand);
        assert_eq!(
            usage_error(&["--bogus", "state"]),
            ErrorKind::UnknownArgument
        );
        assert_eq!(
            usage_error(&["--server"]),
            ErrorKind::InvalidValue,
            "a flag missing its value"
        );
        // Help is not a failure.
        let help = parse_env(&["--help"], &[]).unwrap_err();
        assert_eq!(help.kind(), ErrorKind::DisplayHelp);
        assert_eq!(help.exit_code(), 0);
    }

    fn object_keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn json_of_a_navigate_reply() {
        let reply = ActReply {
            text: "Example Domain\n[1] link 'More information…'".into(),
            url: "https://example.com/".into(),
            title: "Example Domain".into(),
            elements: vec![
                Element {
                    n: 1,
                    label: "More information…".into(),
                    kind: "link".into(),
                    href: "https://www.iana.org/domains/example".into(),
                    state: String::new(),
                },
                Element {
                    n: 2,
                    label: "Search".into(),
                    kind: "input".into(),
                    href: String::new(),
                    state: "= \"cats\"".into(),
                },
            ],
            frame: Some(FrameRef {
                id: "f-1".into(),
                caption: "Opened example.com".into(),
                width: 1280,
                height: 900,
            }),
            fetch: None,
            backend: "worker:w0".into(),
            downloads: Vec::new(),
        };
        let value = render_json(&reply);
        assert_eq!(
            object_keys(&value),
            ["elements", "frame", "ok", "text", "title", "url"]
        );
        assert_eq!(
            value,
            json!({
                "ok": true,
                "text": "Example Domain\n[1] link 'More information…'",
                "url": "https://example.com/",
                "title": "Example Domain",
                "elements": [
                    {
                        "n": 1,
                        "label": "More information…",
                        "kind": "link",
                        "href": "https://www.iana.org/domains/example"
                    },
                    {"n": 2, "label": "Search", "kind": "input", "state": "= \"cats\""}
                ],
                "frame": {
                    "id": "f-1",
                    "caption": "Opened example.com",
                    "width": 1280,
                    "height": 900
                }
            })
        );
        // One line on stdout, whatever the text holds.
        assert!(!value.to_string().contains('\n'));
    }

    #[test]
    fn json_without_a_frame_has_null() {
        let value = render_json(&ActReply {
            text: "https://example.com/ — Example Domain".into(),
            ..Default::default()
        });
        assert_eq!(value["frame"], Value::Null);
        assert_eq!(value["elements"], json!([]));
        assert_eq!(value["ok"], json!(true));
        assert!(value.get("error").is_none());
        assert!(value.get("status").is_none());

        let empty_frame = render_json(&ActReply {
            frame: Some(FrameRef::default()),
            ..Default::default()
        });
        assert_eq!(empty_frame["frame"], Value::Null);
    }

    #[test]
    fn json_of_a_fetch_reply() {
        let header = |name: &str, value: &str| Header {
            name: name.into(),
            value: value.into(),
        };
        let reply = ActReply {
            text: "200 OK, 17 bytes".into(),
            url: "https://example.com/api/orders".into(),
            fetch: Some(FetchResult {
                status: 200,
                headers: vec![
                    header("content-type", "application/json"),
                    header("set-cookie", "a=1"),
                    header("Set-Cookie", "b=2"),
                    header("vary", "Accept"),
                ],
                body: r#"{"orders": []}"#.into(),
                truncated: false,
                body_bytes: 14,
            }),
            ..Default::default()
        };
        let value = render_json(&reply);
        assert_eq!(
            object_keys(&value),
            [
                "body",
                "body_bytes",
                "elements",
                "frame",
                "headers",
                "ok",
                "status",
                "text",
                "title",
                "truncated",
                "url"
            ]
        );
        assert_eq!(value["ok"], json!(true));
        assert_eq!(value["status"], json!(200));
        assert_eq!(
            value["headers"],
            json!({
                "content-type": "application/json",
                "set-cookie": "a=1, b=2",
                "vary": "Accept"
            })
        );
        assert_eq!(value["body"], json!(r#"{"orders": []}"#));
        assert_eq!(value["truncated"], json!(false));
        assert_eq!(value["body_bytes"], json!(14));
        assert_eq!(value["frame"], Value::Null);
        assert_eq!(value["text"], json!("200 OK, 17 bytes"));
    }

    #[test]
    fn json_of_an_error() {
        let value = render_error_json("no element 12 in the last listing");
        assert_eq!(
            value,
            json!({"ok": false, "error": "no element 12 in the last listing"})
        );
    }

    #[test]
    fn messages_fit_on_one_line() {
        assert_eq!(one_line("first\nsecond  third\r\n"), "first second third");
        assert_eq!(
            status_message(&tonic::Status::not_found("no such thread")),
            "no such thread"
        );
        assert_eq!(
            status_message(&tonic::Status::unavailable("")),
            tonic::Code::Unavailable.description()
        );
    }

    #[test]
    fn repeated_error_causes_are_said_once() {
        #[derive(Debug)]
        struct Layer(&'static str, Option<Box<Layer>>);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|layer| layer as _)
            }
        }
        let error = Layer(
            "transport error",
            Some(Box::new(Layer(
                "tcp connect error",
                Some(Box::new(Layer(
                    "tcp connect error",
                    Some(Box::new(Layer("refused", None))),
                ))),
            ))),
        );
        assert_eq!(
            error_chain(&error),
            "transport error: tcp connect error: refused"
        );
    }

    mod against_a_fake_server {
        use std::pin::Pin;
        use std::sync::{Arc, Mutex};

        use nanomuse_proto::browser_tool_server::{BrowserTool, BrowserToolServer};
        use nanomuse_proto::{Frame, WatchFramesRequest};
        use tokio_stream::wrappers::TcpListenerStream;
        use tonic::{Request, Response, Status};

        use super::*;

        #[derive(Default)]
        struct Seen {
            acts: Vec<(ActRequest, Option<String>)>,
            frames: Vec<(GetFrameRequest, Option<String>)>,
        }

        #[derive(Clone, Default)]
        struct Fake(Arc<Mutex<Seen>>);

        fn authorization<T>(request: &Request<T>) -> Option<String> {
            request
                .metadata()
                .get("authorization")
                .map(|value| value.to_str().unwrap().to_string())
        }

        #[tonic::async_trait]
        impl BrowserTool for Fake {
            async fn act(
                &self,
                request: Request<ActRequest>,
            ) -> Result<Response<ActReply>, Status> {
                let token = authorization(&request);
                let act = request.into_inner();
                self.0.lock().unwrap().acts.push((act.clone(), token));
                match act.action {
                    Some(Action::Click(ClickAction { n: 99, .. })) => {
                        Err(Status::not_found("no element 99 in the last listing"))
                    }
                    Some(Action::Screenshot(_)) => Ok(Response::new(ActReply {
                        text: "Took a screenshot".into(),
                        frame: Some(FrameRef {
                            id: "frame-7".into(),
                            caption: "Screenshot".into(),
                            width: 412,
                            height: 915,
                        }),
                        ..Default::default()
                    })),
                    _ => Ok(Response::new(ActReply {
                        text: "done".into(),
                        ..Default::default()
                    })),
                }
            }

            type WatchFramesStream =
                Pin<Box<dyn futures::Stream<Item = Result<Frame, Status>> + Send>>;

            async fn watch_frames(
                &self,
                _request: Request<WatchFramesRequest>,
            ) -> Result<Response<Self::WatchFramesStream>, Status> {
                Err(Status::unimplemented("not in this fake"))
            }

            async fn get_frame(
                &self,
                request: Request<GetFrameRequest>,
            ) -> Result<Response<Frame>, Status> {
                let token = authorization(&request);
                let get = request.into_inner();
                self.0.lock().unwrap().frames.push((get.clone(), token));
                Ok(Response::new(Frame {
                    id: get.frame_id,
                    thread: get.thread,
                    jpeg: b"\xff\xd8 a jpeg \xff\xd9".to_vec(),
                    ..Default::default()
                }))
            }
        }

        async fn start(fake: Fake) -> String {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(BrowserToolServer::new(fake))
                    .serve_with_incoming(TcpListenerStream::new(listener)),
            );
            format!("http://{address}")
        }

        fn argv(args: &[&str]) -> Vec<String> {
            std::iter::once(NAME)
                .chain(args.iter().copied())
                .map(String::from)
                .collect()
        }

        #[tokio::test]
        async fn sends_the_action_with_the_token() {
            let fake = Fake::default();
            let server = start(fake.clone()).await;
            let code = main_with(argv(&[
                "--server", &server, "--token", "t0k", "--thread", "th", "scroll", "-400",
            ]))
            .await;
            assert_eq!(code, 0);
            let seen = fake.0.lock().unwrap();
            let (request, token) = &seen.acts[0];
            assert_eq!(token.as_deref(), Some("Bearer t0k"));
            assert_eq!(request.thread, "th");
            assert_eq!(
                request.action,
                Some(Action::Scroll(ScrollAction { dy: -400.0 }))
            );
        }

        #[tokio::test]
        async fn no_token_no_header() {
            let fake = Fake::default();
            let server = start(fake.clone()).await;
            // Without a scheme, as people type it.
            let server = server.trim_start_matches("http://").to_string();
            assert_eq!(main_with(argv(&["--server", &server, "state"])).await, 0);
            assert_eq!(fake.0.lock().unwrap().acts[0].1, None);
        }

        #[tokio::test]
        async fn a_failed_action_exits_1() {
            let server = start(Fake::default()).await;
            let code = main_with(argv(&["--server", &server, "--json", "click", "99"])).await;
            assert_eq!(code, 1);
        }

        #[tokio::test]
        async fn screenshot_out_writes_the_frame() {
            let fake = Fake::default();
            let server = start(fake.clone()).await;
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("page.jpg");
            let code = main_with(argv(&[
                "--server",
                &server,
                "--token",
                "t0k",
                "--thread",
                "th",
                "screenshot",
                "--out",
                out.to_str().unwrap(),
            ]))
            .await;
            assert_eq!(code, 0);
            assert_eq!(std::fs::read(&out).unwrap(), b"\xff\xd8 a jpeg \xff\xd9");
            let seen = fake.0.lock().unwrap();
            let (request, token) = &seen.frames[0];
            assert_eq!(request.thread, "th");
            assert_eq!(request.frame_id, "frame-7");
            assert_eq!(token.as_deref(), Some("Bearer t0k"));
        }

        #[tokio::test]
        async fn an_unreachable_server_exits_1() {
            // A port that was just free is, almost surely, still closed.
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let address = listener.local_addr().unwrap();
            drop(listener);
            let server = format!("http://{address}");
            assert_eq!(main_with(argv(&["--server", &server, "state"])).await, 1);
        }

        #[tokio::test]
        async fn bad_usage_exits_2() {
            assert_eq!(main_with(argv(&["scroll"])).await, 2);
            assert_eq!(main_with(argv(&["--help"])).await, 0);
        }
    }
}
