//! The README's first command for real: `nanomuse-browser serve` on a fresh data folder, then
//! the CLI against it on a page served on 127.0.0.1, with `--json` carrying the documented keys.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use serde_json::Value;

const CLI: &str = env!("CARGO_BIN_EXE_nanomuse-browser");

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let _ = self.0.wait();
    }
}

/// Starts `serve` and returns it with the gRPC address it printed.
fn serve(data: &std::path::Path) -> (Served, String) {
    let mut child = Command::new(CLI)
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let served = Served(child);
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(address) = line.split("gRPC (BrowserTool): ").nth(1) {
            // Keep reading what else it prints, as a terminal would.
            std::thread::spawn(move || lines.for_each(drop));
            return (served, address.trim().to_string());
        }
    }
    panic!("serve printed no address");
}

fn cli(server: &str, args: &[&str]) -> (i32, Value) {
    // A case that names its own server must not be given two.
    let server = if args.contains(&"--server") {
        vec![]
    } else {
        vec!["--server", server]
    };
    let output = Command::new(CLI)
        .args(server)
        .args(["--thread", "cli-test", "--json"])
        .args(args)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), json)
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_then_the_cli_navigates_clicks_and_fetches_with_json_output() {
    let app = Router::new()
        .route(
            "/",
            get(|| async {
                Html("<!doctype html><title>Home</title><a href=\"/next\">Next page</a>")
            }),
        )
        .route(
            "/next",
            get(|| async { Html("<!doctype html><title>Next</title><p>hi</p>") }),
        )
        .route("/api", get(|| async { "{\"ok\":true}" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let site = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let data = tempfile::tempdir().unwrap();
    let (_served, server) = tokio::task::spawn_blocking({
        let data = data.path().to_path_buf();
        move || serve(&data)
    })
    .await
    .unwrap();

    let page = format!("http://{site}/");
    let (code, navigated) = tokio::task::spawn_blocking({
        let server = server.clone();
        move || cli(&server, &["navigate", &page])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{navigated}");
    assert_eq!(navigated["ok"], true);
    assert_eq!(navigated["title"], "Home");
    assert!(
        navigated["text"]
            .as_str()
            .unwrap()
            .contains("[1] link \"Next page\"")
    );
    assert_eq!(navigated["elements"][0]["n"], 1);
    assert_eq!(navigated["elements"][0]["label"], "Next page");
    assert_eq!(navigated["elements"][0]["kind"], "link");
    for key in ["id", "caption", "width", "height"] {
        assert!(
            !navigated["frame"][key].is_null(),
            "frame.{key} in {navigated}"
        );
    }

    let (code, clicked) = tokio::task::spawn_blocking({
        let server = server.clone();
        move || cli(&server, &["click", "1"])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{clicked}");
    assert_eq!(clicked["title"], "Next");

    let api = format!("http://{site}/api");
    let (code, fetched) = tokio::task::spawn_blocking({
        let server = server.clone();
        move || cli(&server, &["fetch", &api])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{fetched}");
    assert_eq!(fetched["status"], 200);
    assert_eq!(fetched["body"], "{\"ok\":true}");
    assert!(fetched["headers"].is_object());
    assert!(fetched["frame"].is_null());

    let (code, failed) = tokio::task::spawn_blocking({
        let server = server.clone();
        move || cli(&server, &["click", "99"])
    })
    .await
    .unwrap();
    assert_eq!(code, 1);
    assert_eq!(failed["ok"], false);
    assert!(
        failed["error"].as_str().unwrap().contains("element 99"),
        "{failed}"
    );

    tokio::task::spawn_blocking(move || every_failure_is_one_json_object(&server))
        .await
        .unwrap();
}

/// Every way the CLI can fail — usage errors, the action's refusals, an unreachable server,
/// a bad serve — prints one JSON object `{ok: false, error}` on stdout under `--json`, with
/// the exit code that says which kind of failure it was (2: usage, 1: the action or program).
fn every_failure_is_one_json_object(server: &str) {
    let data = tempfile::tempdir().unwrap();
    let elsewhere = data.path().join("elsewhere").display().to_string();
    let cases: &[(&[&str], i32, &str)] = &[
        // Negative numbers are numbers, answered by the action itself.
        (&["type", "-3", "x"], 1, "element -3"),
        (&["click", "-1"], 1, "element -1"),
        (&["scroll", "up"], 2, "`up` is not a number"),
        (&["wait", "-1"], 2, "negative"),
        (&["wait", "16"], 1, "0 to 15 seconds"),
        (&["wait", "soon"], 2, "`soon` is not a number"),
        (&["click"], 2, "required"),
        (&["scroll"], 2, "<DY>"),
        (&["navigate"], 2, "required"),
        (&["frobnicate"], 2, "frobnicate"),
        (&["profile"], 2, "required"),
        (&["profile", "--width", "5"], 2, "required"),
        (&["profile", "tablet"], 2, "tablet"),
        (&["click", "1", "--bogus"], 2, "--bogus"),
        (&["hash-token", "short"], 1, "characters"),
        (
            &["--server", "http://127.0.0.1:1", "state"],
            1,
            "127.0.0.1:1",
        ),
        (&["--server", "not a url", "state"], 1, "not a url"),
        (
            &["serve", "--listen", "0.0.0.0:0", "--data", &elsewhere],
            1,
            "tokens",
        ),
    ];
    for (args, expected_code, says) in cases {
        let (code, reply) = cli(server, args);
        assert_eq!(code, *expected_code, "{args:?}: {reply}");
        assert_eq!(reply["ok"], false, "{args:?}: {reply}");
        let error = reply["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(says) && !error.contains('\n'),
            "{args:?}: {error:?} should say {says:?} on one line"
        );
    }
}
