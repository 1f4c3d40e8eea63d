//! Downloads back: a link on a page served here answers with `Content-Disposition: attachment`;
//! clicked in a real Chromium, the reply names the file, `downloads` lists it with its size and
//! the page it came from, and the HTTP API (and the MCP resource) gives back the same bytes —
//! to its tenant only; names that could leave the folder are refused. Once with the `controller`
//! and `worker` binaries (the files read over the worker's `WorkerDownloads` gRPC service), once
//! with the embedded `nanomuse-browser serve` (read in-process).

use std::net::SocketAddr;

use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use base64::Engine as _;
use nanomuse_common::tokens::token_digest;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::{ActReply, ClickAction, DownloadsAction};
use nanomuse_tests::*;
use serde_json::{Value, json};

const TOKEN_A: &str = "downloads-token-of-tenant-a-0123";
const TOKEN_B: &str = "downloads-token-of-tenant-b-0123";

/// The file's bytes: every byte value, so text decoding anywhere on the way would show.
fn report_bytes() -> Vec<u8> {
    (0..150_000u32).map(|i| (i * 7 % 256) as u8).collect()
}

const FILES_PAGE: &str = r#"<!doctype html><title>Reports</title>
<a href="/files/report.bin" style="display:block;width:200px;height:40px">Export report</a>"#;

/// A page with a link to a file the server sends as an attachment.
async fn serve_files() -> SocketAddr {
    let app = Router::new()
        .route("/files", get(|| async { Html(FILES_PAGE) }))
        .route(
            "/files/report.bin",
            get(|| async {
                (
                    [
                        (header::CONTENT_TYPE, "application/octet-stream"),
                        (
                            header::CONTENT_DISPOSITION,
                            "attachment; filename=\"report.bin\"",
                        ),
                    ],
                    report_bytes(),
                )
                    .into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

async fn act(address: SocketAddr, token: Option<&str>, thread: &str, action: Action) -> ActReply {
    let mut tool = BrowserToolClient::connect(format!("http://{address}"))
        .await
        .unwrap();
    let what = format!("{action:?}");
    tool.act(bearer(nanomuse_tests::act(thread, action), token))
        .await
        .unwrap_or_else(|status| panic!("{what}: {:?} {}", status.code(), status.message()))
        .into_inner()
}

async fn get_path(address: SocketAddr, path: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(format!("http://{address}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

/// The status of a GET whose path is sent exactly as given (no client normalising it).
async fn raw_get_status(address: SocketAddr, path: &str, token: Option<&str>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let authorization = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    let request = format!(
        "GET {path} HTTP/1.1\r\nhost: {address}\r\n{authorization}connection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"))
}

async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).expect("a JSON answer")
}

/// The scenario on a running server at `address` (tokens of A and B, or none): click the link,
/// list, fetch back, refuse.
async fn click_list_and_fetch(address: SocketAddr, token_a: Option<&str>, site: SocketAddr) {
    let page = format!("http://{site}/files");
    let listed = act(address, token_a, "dl", navigate(page.as_str())).await;
    let n = element(&listed, "Export report");

    let clicked = act(
        address,
        token_a,
        "dl",
        Action::Click(ClickAction {
            n,
            ..Default::default()
        }),
    )
    .await;
    assert!(
        clicked
            .text
            .contains("Downloaded report.bin to the workspace's downloads/ folder"),
        "the click's reply names the file: {}",
        clicked.text
    );
    assert_eq!(clicked.url, page, "the page stays");

    let downloads = act(
        address,
        token_a,
        "dl",
        Action::Downloads(DownloadsAction {}),
    )
    .await;
    assert_eq!(downloads.downloads.len(), 1, "{}", downloads.text);
    let file = &downloads.downloads[0];
    assert_eq!(file.name, "report.bin");
    assert_eq!(file.size, report_bytes().len() as u64);
    assert_eq!(file.page, page, "the page it came from");
    assert_eq!(file.url, format!("http://{site}/files/report.bin"));
    let age = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - file.completed_ms;
    assert!(
        (0..120_000).contains(&age),
        "completed just now: {age} ms ago"
    );
    assert!(
        downloads
            .text
            .contains(&format!("- report.bin — {} bytes", report_bytes().len()))
            && downloads.text.contains(&format!("from the page {page}")),
        "{}",
        downloads.text
    );

    // The bytes, whole, streamed as an attachment.
    let response = get_path(
        address,
        "/api/workspaces/default/downloads/report.bin",
        token_a,
    )
    .await;
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(
        headers[header::CONTENT_DISPOSITION.as_str()],
        "attachment; filename*=UTF-8''report%2Ebin"
    );
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(
        response.bytes().await.unwrap().as_ref(),
        report_bytes().as_slice()
    );
    let listing =
        json_of(get_path(address, "/api/workspaces/default/downloads", token_a).await).await;
    assert_eq!(listing["downloads"][0]["name"], "report.bin");
    assert_eq!(listing["downloads"][0]["page"], json!(page));

    // Names that could leave the folder: 400, before any worker is asked.
    for name in [
        "..%2F..%2Fbrowser-profile%2FCookies",
        "..%2Fdownloads%2Freport.bin",
        "%2Fetc%2Fpasswd",
        ".nanomuse-downloads.json",
    ] {
        let path = format!("/api/workspaces/default/downloads/{name}");
        let response = get_path(address, &path, token_a).await;
        let status = response.status().as_u16();
        let body = json_of(response).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("not a download's name"),
            "{body}"
        );
    }
    // A literal `..` (a client would resolve it first; sent raw, as an attacker would).
    assert_eq!(
        raw_get_status(address, "/api/workspaces/default/downloads/..", token_a).await,
        400
    );
    // A name the folder does not have.
    let response = get_path(
        address,
        "/api/workspaces/default/downloads/absent.bin",
        token_a,
    )
    .await;
    assert_eq!(response.status(), 404);
}

/// Writes a tokens file of tenants A and B; its path.
fn tokens_file(dir: &std::path::Path) -> std::path::PathBuf {
    let tokens = dir.join("tokens.toml");
    std::fs::write(
        &tokens,
        format!(
            "\"{}\" = \"tenant-a\"\n\"{}\" = \"tenant-b\"\n",
            token_digest(TOKEN_A),
            token_digest(TOKEN_B)
        ),
    )
    .unwrap();
    tokens
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clicked_download_is_listed_and_fetched_back_over_grpc_http_and_mcp_by_its_tenant_only() {
    logs();
    let site = serve_files().await;
    let dir = tempfile::tempdir().unwrap();
    let address = free_address();
    let mut command = tokio::process::Command::new(built_binary("controller"));
    command
        .args(["--listen", &address.to_string()])
        .arg("--data")
        .arg(dir.path().join("controller"))
        .env("NANOMUSE_TOKENS_FILE", tokens_file(dir.path()));
    let mut controller = spawn_quiet(command);
    let endpoint = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap();
    until_up(&mut controller, "controller", || endpoint.connect()).await;
    let worker = Worker::spawn(
        &built_binary("worker"),
        registered_worker_config(&dir.path().join("w1"), "w1", address, 4),
    )
    .await;
    wait_for_workers(address, &["w1"]).await;

    click_list_and_fetch(address, Some(TOKEN_A), site).await;

    // Tenant B: the same workspace name is B's own, with nothing in it.
    let response = get_path(
        address,
        "/api/workspaces/default/downloads/report.bin",
        Some(TOKEN_B),
    )
    .await;
    assert_eq!(response.status(), 404, "B gets nothing of A's file");
    let unknown = json_of(response).await;
    let response = get_path(
        address,
        "/api/workspaces/default/downloads/nobodys.bin",
        Some(TOKEN_B),
    )
    .await;
    let nobodys = json_of(response).await;
    assert_eq!(
        unknown["error"]
            .as_str()
            .unwrap()
            .replace("report.bin", "X"),
        nobodys["error"]
            .as_str()
            .unwrap()
            .replace("nobodys.bin", "X"),
        "A's file answers B as a file nobody has"
    );
    let listed = act(
        address,
        Some(TOKEN_B),
        "dl",
        Action::Downloads(DownloadsAction {}),
    )
    .await;
    assert!(listed.downloads.is_empty(), "{}", listed.text);
    assert!(listed.text.contains("has no downloads"), "{}", listed.text);
    let response = get_path(
        address,
        "/api/workspaces/default/downloads/report.bin",
        None,
    )
    .await;
    assert_eq!(response.status(), 401, "no token, no file");

    // MCP: the tool lists it, the resource gives the same bytes; B's read finds nothing.
    let uri = "nanomuse://downloads/default/report%2Ebin";
    let mcp = format!("http://{address}/mcp");
    let plan = json!({
        "steps": [{"tool": "browser_downloads", "args": {}}],
        "read_resources": [uri],
        "list_resources": true,
    });
    let report =
        super::mcp::client(&super::mcp::http_client(&mcp, Some(TOKEN_A)), plan.clone()).await;
    let step = &report["steps"][0];
    assert_eq!(step["is_error"], json!(false), "{step}");
    assert!(
        step["texts"][0].as_str().unwrap().contains("report.bin"),
        "{step}"
    );
    let resources = report["resources"].as_array().unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == uri && r["mime"] == "application/octet-stream"),
        "{resources:?}"
    );
    let read = &report["reads"][0];
    assert_eq!(read["uri"], uri, "{read}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(read["data"].as_str().unwrap_or_else(|| panic!("{read}")))
        .unwrap();
    assert_eq!(bytes, report_bytes());
    let report = super::mcp::client(&super::mcp::http_client(&mcp, Some(TOKEN_B)), plan).await;
    let read = &report["reads"][0];
    assert!(read["error"].as_str().is_some(), "B reads nothing: {read}");
    assert!(
        report["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["uri"] != uri),
        "B lists none of A's files"
    );

    worker.stop().await;
    terminate(&mut controller).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_embedded_serve_lists_and_serves_its_downloads_in_process() {
    logs();
    let site = serve_files().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut serve, address) = spawn_serve(dir.path()).await;

    click_list_and_fetch(address, None, site).await;

    // A navigation straight to the file says its name too, and the listing keeps one file.
    let url = format!("http://{site}/files/report.bin");
    let navigated = act(address, None, "dl", navigate(url.as_str())).await;
    assert!(
        navigated.text.contains("is a download: saved report.bin"),
        "{}",
        navigated.text
    );
    let listed = act(address, None, "dl", Action::Downloads(DownloadsAction {})).await;
    assert_eq!(listed.downloads.len(), 1, "{}", listed.text);
    terminate(&mut serve).await;
}
