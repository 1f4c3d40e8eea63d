//! `nanomuse-browser mcp`: MCP over stdin/stdout for local agents. It forwards every message
//! to a server's `/mcp` (`--server`, `--token`, as the other commands) through the SDK's
//! Streamable HTTP client, so the tools, holds, progress and cancellation are the server's
//! own. Without `--server` it uses the embedded server on `--listen`, and starts it in this
//! process (as `serve` would, state under `--data`) when nothing answers there.

use std::net::SocketAddr;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio_util::sync::CancellationToken;

use crate::cli::ServeArgs;
use nanomuse_controller::mcp::server::{THREAD_HEADER, WORKSPACE_HEADER};

const NAME: &str = "nanomuse-browser mcp";

/// What `nanomuse-browser mcp` was asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct StdioOptions {
    /// The server to forward to; `None`: the embedded one on `embedded.listen`.
    pub server: Option<String>,
    pub token: Option<String>,
    /// The thread and workspace of calls that name none (else the session's own thread).
    pub thread: Option<String>,
    pub workspace: Option<String>,
    /// Where the embedded server listens and keeps its state, when it is started.
    pub embedded: ServeArgs,
}

/// Runs until the client closes standard input; the exit code.
pub async fn main(options: StdioOptions) -> i32 {
    // Standard output is the protocol's: logs go to stderr only.
    let _telemetry = nanomuse_common::telemetry::init("nanomuse-browser", false, "warn");
    match run(options).await {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("{NAME}: {error:#}");
            1
        }
    }
}

async fn run(options: StdioOptions) -> anyhow::Result<()> {
    let listen = options.embedded.listen.clone();
    if let Some(server) = &options.server {
        return relay(&mcp_url(server), &options).await;
    }
    if tokio::net::TcpStream::connect(&listen).await.is_ok() {
        return relay(&format!("http://{listen}/mcp"), &options).await;
    }
    let config = crate::serve::embedded_config(&options.embedded.clone().into_options())?;
    let shutdown = CancellationToken::new();
    let (ready, address) = tokio::sync::oneshot::channel::<SocketAddr>();
    let served = crate::serve::run_embedded(config, &listen, shutdown.clone(), move |address| {
        let _ = ready.send(address);
    });
    let relayed = async {
        // No address: the server stopped before listening, and says why.
        let Ok(address) = address.await else {
            return Ok(());
        };
        eprintln!(
            "{NAME}: started the embedded server on http://{address} (browser card: \
             http://{address}/browser/<thread>, data: {})",
            options.embedded.data.display()
        );
        let relayed = relay(&format!("http://{address}/mcp"), &options).await;
        shutdown.cancel();
        relayed
    };
    let (served, relayed) = tokio::join!(served, relayed);
    served.and(relayed)
}

/// `http://host:port/mcp` of a server given as the other commands take it.
fn mcp_url(server: &str) -> String {
    let server = server.trim_end_matches('/');
    let server = if server.contains("://") {
        server.to_string()
    } else {
        format!("http://{server}")
    };
    if server.ends_with("/mcp") {
        server
    } else {
        format!("{server}/mcp")
    }
}

/// Moves the client's messages to the server and the server's back, until the client closes
/// standard input.
async fn relay(url: &str, options: &StdioOptions) -> anyhow::Result<()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = &options.token {
        config = config.auth_header(token);
    }
    let mut defaults = std::collections::HashMap::new();
    for (header, value) in [
        (THREAD_HEADER, &options.thread),
        (WORKSPACE_HEADER, &options.workspace),
    ] {
        if let Some(value) = value {
            let value = http::HeaderValue::from_str(value)
                .map_err(|_| anyhow::anyhow!("{value:?} cannot be sent in a header"))?;
            defaults.insert(http::HeaderName::from_static(header), value);
        }
    }
    config = config.custom_headers(defaults);
    let mut server = StreamableHttpClientTransport::from_config(config);
    let mut client =
        AsyncRwTransport::<RoleServer, _, _>::new_server(tokio::io::stdin(), tokio::io::stdout());
    loop {
        tokio::select! {
            message = client.receive() => {
                let Some(message) = message else { break };
                let id = match &message {
                    ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
                    _ => None,
                };
                let message = match read_upload_paths(message) {
                    Ok(message) => message,
                    Err(error) => {
                        let error = ErrorData::invalid_params(format!("browser_upload: {error}"), None);
                        if let Some(id) = id {
                            client.send(ServerJsonRpcMessage::error(error, Some(id))).await?;
                        }
                        continue;
                    }
                };
                if let Err(error) = server.send(message).await {
                    tracing::warn!(%error, url, "forwarding to the server failed");
                    // The client is told why its request got no answer.
                    if let Some(id) = id {
                        let why = if unreachable(&error) {
                            format!(
                                "{NAME}: the server at {url} is not answering (stopped, or \
                                 starting again): call again once it is up"
                            )
                        } else {
                            format!("{NAME}: the server at {url} did not take the request: {error}")
                        };
                        let error = ErrorData::internal_error(why, None);
                        client.send(ServerJsonRpcMessage::error(error, Some(id))).await?;
                    }
                }
            }
            message = server.receive() => {
                let Some(message) = message else {
                    anyhow::bail!("the connection to the server at {url} ended");
                };
                client.send(message).await?;
            }
        }
    }
    let _ = server.close().await;
    Ok(())
}

/// Whether `error` is the server not answering at all (nothing listening, the connection
/// cut), rather than an answer it gave: an I/O error of the connection, at any depth. (The
/// SDK's transport error keeps its HTTP client's error in its text but not as its source:
/// that client's words for a request that got no answer are read too.)
fn unreachable(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind::*;
    if error.to_string().contains("error sending request") {
        return true;
    }
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(error) = error.downcast_ref::<std::io::Error>()
            && matches!(
                error.kind(),
                ConnectionRefused | ConnectionReset | ConnectionAborted | NotConnected | TimedOut
            )
        {
            return true;
        }
        cause = error.source();
    }
    false
}

/// A `browser_upload` call's local `paths`, read on this machine into `files` with their
/// bytes (the server cannot read the client's disk); any other message as it is.
fn read_upload_paths(message: ClientJsonRpcMessage) -> Result<ClientJsonRpcMessage, String> {
    use base64::Engine as _;
    let is_upload = matches!(&message, ClientJsonRpcMessage::Request(request)
        if matches!(&request.request, rmcp::model::ClientRequest::CallToolRequest(call)
            if call.params.name == "browser_upload"));
    if !is_upload {
        return Ok(message);
    }
    let mut value = serde_json::to_value(&message).map_err(|e| e.to_string())?;
    let Some(arguments) = value
        .pointer_mut("/params/arguments")
        .and_then(|a| a.as_object_mut())
    else {
        return Ok(message);
    };
    let Some(paths) = arguments.remove("paths") else {
        return Ok(message);
    };
    let paths: Vec<String> = serde_json::from_value(paths)
        .map_err(|_| "`paths` is a list of local file paths (strings)".to_string())?;
    let files = arguments
        .entry("files")
        .or_insert_with(|| serde_json::json!([]))
        .as_array_mut()
        .ok_or("`files` is a list")?;
    for path in &paths {
        let file = crate::cli::read_local_file(path)?;
        files.push(serde_json::json!({
            "name": file.name,
            "content_base64": base64::engine::general_purpose::STANDARD.encode(&file.content),
        }));
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::mcp_url;

    #[test]
    fn a_server_that_does_not_answer_is_told_from_one_that_refuses() {
        #[derive(Debug)]
        struct Wrapped(std::io::Error);
        impl std::fmt::Display for Wrapped {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("client error")
            }
        }
        impl std::error::Error for Wrapped {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused = Wrapped(std::io::ErrorKind::ConnectionRefused.into());
        assert!(super::unreachable(&refused));
        let other = Wrapped(std::io::Error::other("401 Unauthorized"));
        assert!(!super::unreachable(&other));
    }

    #[test]
    fn an_upload_s_local_paths_are_sent_as_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("note.txt");
        std::fs::write(&path, b"hello").unwrap();
        let message: rmcp::model::ClientJsonRpcMessage =
            serde_json::from_value(serde_json::json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "browser_upload", "arguments": {"n": 2, "paths": [path]}}
            }))
            .unwrap();
        let read = super::read_upload_paths(message).unwrap();
        let value = serde_json::to_value(&read).unwrap();
        assert_eq!(
            value["params"]["arguments"],
            serde_json::json!({"n": 2, "files": [{"name": "note.txt", "content_base64": "aGVsbG8="}]})
        );
        let missing: rmcp::model::ClientJsonRpcMessage = serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "browser_upload", "arguments": {"n": 2, "paths": ["/nonexistent"]}}
        }))
        .unwrap();
        assert!(
            super::read_upload_paths(missing)
                .unwrap_err()
                .starts_with("cannot read /nonexistent")
        );
    }

    #[test]
    fn the_mcp_url_of_a_server() {
        assert_eq!(mcp_url("127.0.0.1:50051"), "http://127.0.0.1:50051/mcp");
        assert_eq!(mcp_url("http://h:1/"), "http://h:1/mcp");
        assert_eq!(mcp_url("https://h/mcp"), "https://h/mcp");
    }
}
