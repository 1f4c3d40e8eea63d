//! Uploads in a real Chromium: `upload n FILE…` taps element n and answers the file chooser it
//! opens; the page's own form then posts the files to a server here, which parses the multipart
//! body (axum's `Multipart`, over multer) and must receive the same bytes. A plain file input,
//! a hidden `multiple` one under its label (two files), a button that calls `input.click()`, a
//! file from the workspace's downloads, and the HTTP route and the MCP tool (over stdio, with a
//! local path). Refused: an element that opens no chooser, two files for a single-file input —
//! and the page is left as it was.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Multipart, State};
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use base64::Engine as _;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::json;

/// One file part the server received: the form field, the file's name, its bytes.
#[derive(Debug, Clone, PartialEq)]
struct Part {
    field: String,
    file_name: String,
    bytes: Vec<u8>,
}

type Received = Arc<Mutex<Vec<Vec<Part>>>>;

const PLAIN: &str = r#"<!doctype html><title>ID check</title>
<form method="post" action="/submit" enctype="multipart/form-data">
<label>Your document <input type="file" name="doc"></label>
<button type="submit">Send</button>
<button type="button">Does nothing</button>
</form>"#;

const HIDDEN: &str = r#"<!doctype html><title>Photos</title>
<style>label.pick { display: inline-block; padding: 12px; border: 1px solid #888; cursor: pointer }</style>
<form method="post" action="/submit" enctype="multipart/form-data">
<label class="pick">Add photos<input type="file" name="photos" multiple style="display:none"></label>
<button type="submit">Send</button>
</form>"#;

const STYLED: &str = r#"<!doctype html><title>Attach</title>
<form method="post" action="/submit" enctype="multipart/form-data">
<input type="file" id="file" name="attachment" hidden>
<button type="button" onclick="document.getElementById('file').click()">Attach a file</button>
<button type="submit">Send</button>
</form>"#;

const FILES: &str = r#"<!doctype html><title>Reports</title>
<a href="/files/report.bin" style="display:block;width:200px;height:40px">Export report</a>"#;

/// Every byte value, so a text decoding anywhere on the way would show.
fn binary(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(31).wrapping_add(seed) % 256) as u8)
        .collect()
}

fn report() -> Vec<u8> {
    binary(70_000, 5)
}

async fn submit(State(received): State<Received>, mut form: Multipart) -> impl IntoResponse {
    let mut parts = Vec::new();
    while let Some(field) = form.next_field().await.unwrap() {
        let field_name = field.name().unwrap_or_default().to_string();
        let Some(file_name) = field.file_name().map(str::to_string) else {
            continue;
        };
        let bytes = field.bytes().await.unwrap().to_vec();
        parts.push(Part {
            field: field_name,
            file_name,
            bytes,
        });
    }
    let count = parts.len();
    received.lock().unwrap().push(parts);
    Html(format!(
        "<!doctype html><title>Received</title><p>Received {count} files</p>"
    ))
}

async fn serve_forms() -> (SocketAddr, Received) {
    let received = Received::default();
    let app = Router::new()
        .route("/plain", get(|| async { Html(PLAIN) }))
        .route("/hidden", get(|| async { Html(HIDDEN) }))
        .route("/styled", get(|| async { Html(STYLED) }))
        .route("/files", get(|| async { Html(FILES) }))
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
                    report(),
                )
            }),
        )
        // The largest upload's form is over axum's default 2 MB.
        .route(
            "/submit",
            post(submit).layer(axum::extract::DefaultBodyLimit::max(64 * 1024 * 1024)),
        )
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, received)
}

fn file(name: &str, bytes: Vec<u8>) -> UploadFile {
    UploadFile {
        name: name.into(),
        mime_type: String::new(),
        content: bytes,
    }
}

fn upload(n: i64, files: Vec<UploadFile>) -> Action {
    Action::Upload(UploadAction {
        n,
        files,
        downloads: vec![],
    })
}

async fn try_act(tool: &mut Tool, thread: &str, action: Action) -> Result<ActReply, tonic::Status> {
    tool.act(act(thread, action)).await.map(|r| r.into_inner())
}

/// Clicks `Send` and returns the parts the server received for that post.
async fn send(tool: &mut Tool, thread: &str, listed: &ActReply, received: &Received) -> Vec<Part> {
    let before = received.lock().unwrap().len();
    let n = element(listed, "Send");
    let sent = acted(
        tool,
        act(
            thread,
            Action::Click(ClickAction {
                n,
                ..Default::default()
            }),
        ),
    )
    .await;
    assert_eq!(sent.title, "Received", "the form was posted: {}", sent.text);
    let received = received.lock().unwrap();
    assert_eq!(received.len(), before + 1, "one post");
    received[before].clone()
}

/// The listing's line of element `n`.
fn line_of(reply: &ActReply, n: i64) -> String {
    let prefix = format!("[{n}] ");
    reply
        .text
        .lines()
        .find(|line| line.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no [{n}] in {}", reply.text))
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_uploaded_file_is_posted_by_the_page_s_own_form_byte_for_byte() {
    logs();
    let (site, received) = serve_forms().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, _worker) = controller_with_worker(dir.path(), |_| {}).await;
    let mut tool = controller.tool().await;

    let listed = acted(
        &mut tool,
        act("up", navigate(format!("http://{site}/plain"))),
    )
    .await;
    let n = element(&listed, "Your document");
    assert!(
        line_of(&listed, n).contains("input:file"),
        "{}",
        listed.text
    );
    let bytes = binary(150_000, 1);
    let uploaded = acted(
        &mut tool,
        act("up", upload(n, vec![file("id card.pdf", bytes.clone())])),
    )
    .await;
    assert!(
        uploaded.text.starts_with(&format!(
            "Uploaded id card.pdf (150.0 KB) to [{n}] 'Your document'"
        )),
        "{}",
        uploaded.text
    );
    assert!(
        line_of(&uploaded, n).contains("= \"id card.pdf\""),
        "the input shows the chosen file: {}",
        uploaded.text
    );
    assert!(
        uploaded.frame.is_some(),
        "a page-changing action has a frame"
    );
    let parts = send(&mut tool, "up", &uploaded, &received).await;
    assert_eq!(
        parts,
        vec![Part {
            field: "doc".into(),
            file_name: "id card.pdf".into(),
            bytes,
        }]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_multiple_input_is_listed_at_its_label_and_takes_two_files() {
    logs();
    let (site, received) = serve_forms().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, _worker) = controller_with_worker(dir.path(), |_| {}).await;
    let mut tool = controller.tool().await;

    let listed = acted(
        &mut tool,
        act("photos", navigate(format!("http://{site}/hidden"))),
    )
    .await;
    let n = element(&listed, "Add photos");
    let (one, two) = (binary(40_000, 2), binary(1_234, 3));
    let uploaded = acted(
        &mut tool,
        act(
            "photos",
            upload(
                n,
                vec![file("one.jpg", one.clone()), file("two.png", two.clone())],
            ),
        ),
    )
    .await;
    assert!(
        line_of(&uploaded, n).contains("= \"one.jpg, two.png\""),
        "{}",
        uploaded.text
    );
    let parts = send(&mut tool, "photos", &uploaded, &received).await;
    assert_eq!(
        parts,
        vec![
            Part {
                field: "photos".into(),
                file_name: "one.jpg".into(),
                bytes: one,
            },
            Part {
                field: "photos".into(),
                file_name: "two.png".into(),
                bytes: two,
            },
        ]
    );

    // A button that calls input.click() opens the chooser too.
    let listed = acted(
        &mut tool,
        act("photos", navigate(format!("http://{site}/styled"))),
    )
    .await;
    let n = element(&listed, "Attach a file");
    let uploaded = acted(
        &mut tool,
        act(
            "photos",
            upload(n, vec![file("notes.txt", b"some notes\n".to_vec())]),
        ),
    )
    .await;
    let parts = send(&mut tool, "photos", &uploaded, &received).await;
    assert_eq!(
        parts,
        vec![Part {
            field: "attachment".into(),
            file_name: "notes.txt".into(),
            bytes: b"some notes\n".to_vec(),
        }]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_element_that_opens_no_chooser_and_too_many_files_are_refused_and_change_nothing() {
    logs();
    let (site, received) = serve_forms().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, _worker) = controller_with_worker(dir.path(), |_| {}).await;
    let mut tool = controller.tool().await;

    let url = format!("http://{site}/plain");
    let listed = acted(&mut tool, act("no", navigate(url.as_str()))).await;
    let nothing = element(&listed, "Does nothing");
    let status = try_act(
        &mut tool,
        "no",
        upload(nothing, vec![file("a.txt", b"a".to_vec())]),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains(
            "opened no file chooser within 2 s — upload needs a file input, its label, or a \
             control that opens one"
        ),
        "{}",
        status.message()
    );

    // The form's submit button is refused before it is tapped (a tap would send the form).
    let send_button = element(&listed, "Send");
    let status = try_act(
        &mut tool,
        "no",
        upload(send_button, vec![file("a.txt", b"a".to_vec())]),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().contains(&format!(
            "element {send_button} 'Send' submits its form: upload chooses files for a file input"
        )),
        "{}",
        status.message()
    );

    let input = element(&listed, "Your document");
    let status = try_act(
        &mut tool,
        "no",
        upload(
            input,
            vec![file("a.txt", b"a".to_vec()), file("b.txt", b"b".to_vec())],
        ),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(
        status
            .message()
            .contains("takes one file, and 2 were given"),
        "{}",
        status.message()
    );

    // The page as it was: same address, the input still empty, nothing posted.
    let looked = acted(
        &mut tool,
        act("no", Action::Screenshot(ScreenshotAction {})),
    )
    .await;
    assert_eq!(looked.url, url);
    assert!(
        line_of(&looked, input).contains("(empty)"),
        "{}",
        looked.text
    );
    assert!(received.lock().unwrap().is_empty());

    // Nothing was left pending either: the next upload to the same input goes through.
    let uploaded = acted(
        &mut tool,
        act("no", upload(input, vec![file("b.txt", b"bee".to_vec())])),
    )
    .await;
    let parts = send(&mut tool, "no", &uploaded, &received).await;
    assert_eq!(parts[0].bytes, b"bee");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_download_of_the_workspace_and_files_over_http_and_mcp_stdio_are_uploaded() {
    logs();
    let (site, received) = serve_forms().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, _worker) = controller_with_worker(dir.path(), |_| {}).await;
    let mut tool = controller.tool().await;

    // downloads/NAME: a file the workspace downloaded a moment ago.
    let listed = acted(
        &mut tool,
        act("ws", navigate(format!("http://{site}/files"))),
    )
    .await;
    let n = element(&listed, "Export report");
    let clicked = acted(
        &mut tool,
        act(
            "ws",
            Action::Click(ClickAction {
                n,
                ..Default::default()
            }),
        ),
    )
    .await;
    assert!(
        clicked.text.contains("Downloaded report.bin"),
        "{}",
        clicked.text
    );
    let listed = acted(
        &mut tool,
        act("ws", navigate(format!("http://{site}/plain"))),
    )
    .await;
    let n = element(&listed, "Your document");
    let missing = try_act(
        &mut tool,
        "ws",
        Action::Upload(UploadAction {
            n,
            files: vec![],
            downloads: vec!["absent.bin".into()],
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound, "{missing:?}");
    let uploaded = acted(
        &mut tool,
        act(
            "ws",
            Action::Upload(UploadAction {
                n,
                files: vec![],
                downloads: vec!["report.bin".into()],
            }),
        ),
    )
    .await;
    assert!(
        uploaded.text.starts_with("Uploaded report.bin (70.0 KB)"),
        "{}",
        uploaded.text
    );
    let parts = send(&mut tool, "ws", &uploaded, &received).await;
    assert_eq!(parts[0].bytes, report());

    // HTTP: the same action as JSON, the bytes in base64.
    let listed = acted(
        &mut tool,
        act("ws", navigate(format!("http://{site}/plain"))),
    )
    .await;
    let n = element(&listed, "Your document");
    let bytes = binary(5_000, 9);
    let response = reqwest::Client::new()
        .post(format!(
            "http://{}/api/browser/ws/upload",
            controller.address
        ))
        .header("content-type", "application/json")
        .body(
            json!({"n": n, "files": [{"name": "over-http.bin",
                   "content_base64": base64::engine::general_purpose::STANDARD.encode(&bytes)}]})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let status = response.status();
    let reply: serde_json::Value =
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(status, 200, "{reply}");
    assert!(
        reply["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Uploaded over-http.bin (5.0 KB) to [{n}]")),
        "{reply}"
    );
    let listed = acted(
        &mut tool,
        act("ws", Action::Screenshot(ScreenshotAction {})),
    )
    .await;
    let parts = send(&mut tool, "ws", &listed, &received).await;
    assert_eq!(parts[0].file_name, "over-http.bin");
    assert_eq!(parts[0].bytes, bytes);

    // MCP over stdio: a local path, read by `nanomuse-browser mcp` and sent as bytes.
    let local = dir.path().join("from-disk.bin");
    let on_disk = binary(9_999, 4);
    std::fs::write(&local, &on_disk).unwrap();
    let stdio = vec![
        "stdio".to_string(),
        built_binary("nanomuse-browser").display().to_string(),
        "mcp".to_string(),
        "--server".to_string(),
        format!("http://{}", controller.address),
    ];
    let plan = json!({"steps": [
        {"tool": "browser_navigate", "args": {"thread": "ws", "url": format!("http://{site}/plain")}},
        {"tool": "browser_upload", "args": {"thread": "ws", "n": {"$element": "Your document"},
                                            "paths": [local]}},
    ]});
    let report = super::mcp::client(&stdio, plan).await;
    let step = &report["steps"][1];
    assert_eq!(step["is_error"], json!(false), "{step}");
    assert!(
        step["texts"][0]
            .as_str()
            .unwrap()
            .starts_with("Uploaded from-disk.bin (10.0 KB)"),
        "{step}"
    );
    let listed = acted(
        &mut tool,
        act("ws", Action::Screenshot(ScreenshotAction {})),
    )
    .await;
    let parts = send(&mut tool, "ws", &listed, &received).await;
    assert_eq!(parts[0].file_name, "from-disk.bin");
    assert_eq!(parts[0].bytes, on_disk);
}

/// The bounds hold on every hop: a file of exactly 10 MiB goes through gRPC (controller and
/// worker) and through the HTTP route (as base64, past the API's usual 2 MB body), one byte
/// more is refused before anything is tapped.
#[tokio::test(flavor = "multi_thread")]
async fn the_largest_file_an_upload_takes_goes_through_and_one_byte_more_is_refused() {
    logs();
    let (site, received) = serve_forms().await;
    let dir = tempfile::tempdir().unwrap();
    let (controller, _worker) = controller_with_worker(dir.path(), |_| {}).await;
    let mut tool = controller.tool().await;
    let max = nanomuse_proto::upload::MAX_FILE_BYTES;

    let listed = acted(
        &mut tool,
        act("big", navigate(format!("http://{site}/plain"))),
    )
    .await;
    let n = element(&listed, "Your document");
    let too_big = try_act(
        &mut tool,
        "big",
        upload(n, vec![file("big.bin", binary(max + 1, 1))]),
    )
    .await
    .unwrap_err();
    assert_eq!(
        too_big.code(),
        tonic::Code::ResourceExhausted,
        "{too_big:?}"
    );
    assert!(
        too_big.message().contains("per file"),
        "{}",
        too_big.message()
    );

    let largest = binary(max, 2);
    let uploaded = acted(
        &mut tool,
        act("big", upload(n, vec![file("big.bin", largest.clone())])),
    )
    .await;
    assert!(
        line_of(&uploaded, n).contains("= \"big.bin\""),
        "{}",
        uploaded.text
    );
    let parts = send(&mut tool, "big", &uploaded, &received).await;
    assert!(parts[0].bytes == largest, "the 10 MiB arrived whole");

    let listed = acted(
        &mut tool,
        act("big", navigate(format!("http://{site}/plain"))),
    )
    .await;
    let n = element(&listed, "Your document");
    let largest = binary(max, 3);
    let response = reqwest::Client::new()
        .post(format!(
            "http://{}/api/browser/big/upload",
            controller.address
        ))
        .header("content-type", "application/json")
        .body(
            json!({"n": n, "files": [{"name": "big.bin",
                   "content_base64": base64::engine::general_purpose::STANDARD.encode(&largest)}]})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // One byte more over HTTP: 413, with the bound in the sentence.
    let refused = reqwest::Client::new()
        .post(format!("http://{}/api/browser/big/upload", controller.address))
        .header("content-type", "application/json")
        .body(
            json!({"n": n, "files": [{"name": "bigger.bin",
                   "content_base64": base64::engine::general_purpose::STANDARD.encode(binary(max + 1, 4))}]})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 413);
    let said: serde_json::Value = serde_json::from_slice(&refused.bytes().await.unwrap()).unwrap();
    assert!(
        said["error"]
            .as_str()
            .unwrap()
            .contains("more than an upload takes per file (10 MiB)"),
        "{said}"
    );
    let listed = acted(
        &mut tool,
        act("big", Action::Screenshot(ScreenshotAction {})),
    )
    .await;
    let parts = send(&mut tool, "big", &listed, &received).await;
    assert!(
        parts[0].bytes == largest,
        "the 10 MiB arrived whole over HTTP"
    );
}

/// The same upload on the phone (the phone's own Kotlin code, a headless Chromium standing in
/// for the WebView, behind the real gateway) as on a worker: the same reply, the same bytes
/// posted by the page's form, the same refusal of a tap that opens no chooser.
#[tokio::test(flavor = "multi_thread")]
async fn the_same_upload_on_the_kotlin_phone_as_on_a_worker() {
    const TOKEN: &str = "device-token-of-local-upload";
    logs();
    let (site, received) = serve_forms().await;
    let dir = tempfile::tempdir().unwrap();
    let mut gateway_config = nanomuse_device_gateway::GatewayConfig::default();
    // The embedded controller has no tokens: its one tenant is "local".
    gateway_config
        .device_tokens
        .insert(TOKEN.into(), "local".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway_address = listener.local_addr().unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let gateway = tokio::spawn(nanomuse_device_gateway::run(
        gateway_config,
        listener,
        shutdown.clone(),
    ));
    let (controller, _worker) = controller_with_worker(dir.path(), |config| {
        config.controller.gateways = vec![format!("http://{gateway_address}")];
    })
    .await;
    let phone =
        nanomuse_tests::phone::KotlinPhone::connect(gateway_address, "up-phone", TOKEN).await;
    // The gateway tells the controller of the phone on its own schedule; /api/state shows when.
    let state = format!("http://{}/api/state", controller.address);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let seen: serde_json::Value =
            serde_json::from_slice(&reqwest::get(&state).await.unwrap().bytes().await.unwrap())
                .unwrap();
        if seen["devices"] == json!(["up-phone"]) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no phone in {seen}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mut tool = controller.tool().await;

    let bytes = binary(60_000, 7);
    let mut seen = Vec::new();
    for backend in ["playwright", "device"] {
        let thread = format!("up-{backend}");
        let on = |action: Action| act_on(&thread, backend, action);
        let listed = acted(&mut tool, on(navigate(format!("http://{site}/hidden")))).await;
        let n = element(&listed, "Add photos");
        let uploaded = acted(
            &mut tool,
            on(upload(
                n,
                vec![
                    file("scan.pdf", bytes.clone()),
                    file("back.pdf", b"2".to_vec()),
                ],
            )),
        )
        .await;
        let expected = if backend == "device" {
            "device:up-phone"
        } else {
            "worker:w1"
        };
        assert_eq!(uploaded.backend, expected);
        let send = element(&uploaded, "Send");
        let before = received.lock().unwrap().len();
        let sent = acted(
            &mut tool,
            on(Action::Click(ClickAction {
                n: send,
                ..Default::default()
            })),
        )
        .await;
        assert_eq!(sent.title, "Received", "{backend}: {}", sent.text);
        let parts = received.lock().unwrap()[before].clone();
        assert_eq!(
            parts
                .iter()
                .map(|p| (p.file_name.as_str(), p.bytes.clone()))
                .collect::<Vec<_>>(),
            vec![("scan.pdf", bytes.clone()), ("back.pdf", b"2".to_vec())],
            "{backend}"
        );
        let listed = acted(&mut tool, on(navigate(format!("http://{site}/plain")))).await;
        let nothing = element(&listed, "Does nothing");
        let refused = tool
            .act(on(upload(nothing, vec![file("a.txt", b"a".to_vec())])))
            .await
            .unwrap_err();
        seen.push((
            uploaded.text.lines().next().unwrap().to_string(),
            uploaded.elements.clone(),
            refused.code(),
            refused.message().to_string(),
        ));
    }
    assert_eq!(seen[0], seen[1], "the worker and the phone agree");
    assert_eq!(seen[0].2, tonic::Code::FailedPrecondition);
    assert!(
        seen[0].3.contains("opened no file chooser"),
        "{}",
        seen[0].3
    );
    phone.stop().await;
    shutdown.cancel();
    let _ = gateway.await;
}
