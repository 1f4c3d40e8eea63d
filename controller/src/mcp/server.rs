//! The MCP server: `tools/list` gives the sixteen tools, `tools/call` reads the call into an
//! action and hands it to the controller's one [`Controller::act`], the same path as gRPC's
//! `BrowserTool.Act`. The reply is what the model reads: the reply's text (the numbered
//! listing) and the frame as an image; a refused action is a tool result with `isError` and
//! the sentence the CLI prints. While the call waits for the user (a hold), it reports progress
//! to a client that asked for it; a client's cancellation ends the wait.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::{ActReply, ActRequest};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::http::Tenant;
use super::{downloads, frames, tools};
use crate::app::Controller;

/// How often a call waiting for the user reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Headers that name the thread and workspace of the calls that name none (`nanomuse-browser
/// mcp --thread`, or an HTTP client's configuration).
pub const THREAD_HEADER: &str = "nanomuse-thread";
pub const WORKSPACE_HEADER: &str = "nanomuse-workspace";

/// The thread of calls made outside a session (a client that keeps none) that name none.
pub const SESSIONLESS_THREAD: &str = "mcp";

const INSTRUCTIONS: &str = "A real web browser. Each conversation has its own page (its \
    thread); browser_navigate opens a page and lists its interactive elements as [n], which \
    browser_click and browser_type take. Every reply that changes the page lists it again with \
    a picture of the viewport; use the newest numbers. For a login, a one-time code or a \
    CAPTCHA, call browser_hand_over and tell the user the card's address: your next call waits \
    until they hand the page back. The thread's last pictures are resources \
    (nanomuse://frames/<thread>/<id>), and so are the workspace's downloaded files \
    (nanomuse://downloads/<workspace>/<name>; browser_downloads lists them).";

/// One MCP session's (or one sessionless request's) server.
pub struct BrowserMcp {
    controller: Arc<Controller>,
}

impl BrowserMcp {
    pub fn new(controller: Arc<Controller>) -> Self {
        Self { controller }
    }

    /// Carries out one call for `tenant`; `Err` is a refused action, as the CLI says it.
    async fn call(
        &self,
        tenant: &str,
        thread: String,
        request: ActRequest,
        card: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<ContentBlock>, String> {
        let hand_over = matches!(request.action, Some(Action::HandOver(_)));
        let reply = self
            .act_reporting_holds(tenant, &thread, request, context)
            .await?;
        let mut content = vec![ContentBlock::text(reply.text.clone())];
        if hand_over && let Some(card) = card {
            content.push(ContentBlock::text(format!(
                "The user takes the page at {card} (the browser card: tell them this address)."
            )));
        }
        if let Some(frame) = reply.frame.as_ref().filter(|frame| !frame.id.is_empty()) {
            // Taken right after the reply; `frame` waits for the picture. Without one the
            // action still happened: the model must not be told it failed and do it again.
            match self.controller.frame(tenant, &thread, &frame.id).await {
                Ok(frame) => {
                    let jpeg = base64::engine::general_purpose::STANDARD.encode(&frame.jpeg);
                    content.push(ContentBlock::image(jpeg, "image/jpeg"));
                }
                Err(error) => {
                    tracing::warn!(thread, %error, "MCP reply without its frame");
                    content.push(ContentBlock::text(format!(
                        "(No picture this time: {error}.)"
                    )));
                }
            }
        }
        Ok(content)
    }

    /// [`Controller::act`], telling a client that gave a progress token how long the call has
    /// waited for the user while the thread is held, and ending when the client cancels.
    async fn act_reporting_holds(
        &self,
        tenant: &str,
        thread: &str,
        request: ActRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ActReply, String> {
        let progress = context.meta.get_progress_token();
        let act = self.controller.act(tenant, request);
        tokio::pin!(act);
        let started = Instant::now();
        let mut ticks = tokio::time::interval(PROGRESS_EVERY);
        loop {
            tokio::select! {
                reply = &mut act => return reply.map_err(|error| error.to_string()),
                // Dropping the action gives up its place in the thread's order; the hold
                // stays open for the user.
                () = context.ct.cancelled() => {
                    tracing::info!(thread, "MCP call cancelled by the client");
                    return Err("the call was cancelled".into());
                }
                _ = ticks.tick(), if progress.is_some() => {
                    if let Some(token) = &progress {
                        self.report_hold(tenant, thread, token, started, context).await;
                    }
                }
            }
        }
    }

    async fn report_hold(
        &self,
        tenant: &str,
        thread: &str,
        token: &ProgressToken,
        started: Instant,
        context: &RequestContext<RoleServer>,
    ) {
        if self.controller.holds.open_hold(tenant, thread).is_none() {
            return;
        }
        let waited = started.elapsed().as_secs();
        let timeout = self.controller.holds.timeout().as_secs();
        let notification = ProgressNotificationParam::new(token.clone(), waited as f64)
            .with_total(timeout as f64)
            .with_message(format!(
                "waiting for the user to hand the page back: {waited} s"
            ));
        // A client gone away hears nothing; the call itself goes on until it is cancelled.
        if let Err(error) = context.peer.notify_progress(notification).await {
            tracing::debug!(thread, %error, "progress not sent");
        }
    }
}

/// The HTTP request the call came in (its headers, and the tenant the HTTP layer found).
fn http_parts(context: &RequestContext<RoleServer>) -> Result<&http::request::Parts, ErrorData> {
    context
        .extensions
        .get::<http::request::Parts>()
        .ok_or_else(|| ErrorData::internal_error("the call came without its HTTP request", None))
}

fn header(parts: &http::request::Parts, name: &str) -> Option<String> {
    parts
        .headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

/// The thread of a call that names none: the connection's (its `nanomuse-thread` header),
/// else the session's own.
fn default_thread(parts: &http::request::Parts) -> String {
    header(parts, THREAD_HEADER).unwrap_or_else(|| session_thread(parts))
}

/// The call's tenant, as the HTTP layer authenticated it.
fn tenant(parts: &http::request::Parts) -> Result<String, ErrorData> {
    parts
        .extensions
        .get::<Tenant>()
        .map(|tenant| tenant.0.clone())
        .ok_or_else(|| ErrorData::internal_error("the call has no tenant", None))
}

/// This session's own thread: `mcp-<session id>`; `mcp` for calls outside a session.
fn session_thread(parts: &http::request::Parts) -> String {
    parts
        .headers
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .filter(|id| crate::app::check_id("thread", &format!("mcp-{id}")).is_ok())
        .map_or_else(|| SESSIONLESS_THREAD.to_string(), |id| format!("mcp-{id}"))
}

/// Where the user takes the thread's page: the card on the address the client reached us at.
fn card_url(parts: &http::request::Parts, thread: &str) -> Option<String> {
    let host = parts.headers.get(http::header::HOST)?.to_str().ok()?;
    let scheme = parts
        .headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("http");
    Some(format!("{scheme}://{host}/browser/{thread}"))
}

impl ServerHandler for BrowserMcp {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        let mut info = InitializeResult::new(capabilities);
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.server_info = Implementation::new("nanomuse-browser", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    // The revisions with sessions: a session is a thread. 2026-07-28 has no sessions, so a
    // conversation could not have a page of its own without naming a thread on every call;
    // its clients fall back to the handshake.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::tool(name)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let parts = http_parts(&context)?;
        let tenant = tenant(parts)?;
        let thread = default_thread(parts);
        let mut listed = frames::list(&self.controller, &tenant, &thread)?;
        // The workspace of the connection, else the thread's, else the default one.
        let workspace = header(parts, WORKSPACE_HEADER)
            .or_else(|| {
                self.controller
                    .known_thread(&tenant, &thread)
                    .ok()
                    .map(|record| record.workspace)
            })
            .unwrap_or_else(|| "default".into());
        listed
            .resources
            .extend(downloads::list(&self.controller, &tenant, &workspace).await?);
        Ok(listed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let parts = http_parts(&context)?;
        if request.uri.starts_with(downloads::SCHEME) {
            let file = downloads::read(&self.controller, &tenant(parts)?, &request.uri).await?;
            return Ok(file.into());
        }
        let frame = frames::read(&self.controller, &tenant(parts)?, &request.uri).await?;
        Ok(frame.into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let parts = http_parts(&context)?;
        let tenant = tenant(parts)?;
        let Some(call) = tools::read_call(&request.name, request.arguments) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "there is no tool {:?}: tools/list gives the browser_* tools",
                    request.name
                ),
                None,
            ));
        };
        let call = match call {
            Ok(call) => call,
            Err(sentence) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(sentence)]).into());
            }
        };
        let thread = call.target.thread.unwrap_or_else(|| default_thread(parts));
        let card = card_url(parts, &thread);
        let request = ActRequest {
            thread: thread.clone(),
            workspace: call
                .target
                .workspace
                .or_else(|| header(parts, WORKSPACE_HEADER))
                .unwrap_or_default(),
            backend: String::new(),
            action: Some(call.action),
        };
        let result = match self.call(&tenant, thread, request, card, &context).await {
            Ok(content) => CallToolResult::success(content),
            Err(sentence) => CallToolResult::error(vec![ContentBlock::text(sentence)]),
        };
        Ok(result.into())
    }
}
