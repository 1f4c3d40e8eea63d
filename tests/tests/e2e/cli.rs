//! The CLI as a user types it, against `nanomuse-browser serve` on its defaults (its worker
//! keeps a browser launched ahead): a thread named alone is reached in whatever workspace it
//! was made, and a new workspace's first action gets the browser launched ahead.

use std::path::Path;
use std::process::Output;

use nanomuse_tests::*;

async fn cli(server: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(built_binary("nanomuse-browser"))
        .arg("--server")
        .arg(server)
        .args(args)
        .env_remove("NANOMUSE_WORKSPACE")
        .env_remove("NANOMUSE_THREAD")
        .output()
        .await
        .expect("the CLI runs")
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_named_alone_is_reached_in_its_own_workspace_and_a_new_one_gets_a_browser_launched_ahead()
 {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut serve, address) = spawn_serve(dir.path()).await;
    let server = format!("http://{address}");

    let page = format!("http://{site}/page");
    let opened = cli(
        &server,
        &["--thread", "t2", "--workspace", "shop", "navigate", &page],
    )
    .await;
    assert!(opened.status.success(), "{}", said(&opened));
    assert!(
        is_link(&dir.path().join("profiles").join("local").join("shop")),
        "the new workspace did not get the browser launched ahead"
    );

    let read = cli(&server, &["--thread", "t2", "extract"]).await;
    assert!(read.status.success(), "{}", said(&read));
    assert!(said(&read).contains("Test page"), "{}", said(&read));

    // A picture written where it was asked, and said so: a JPEG whatever the name says.
    let file = dir.path().join("page.png");
    let shot = cli(
        &server,
        &[
            "--thread",
            "t2",
            "screenshot",
            "--out",
            file.to_str().unwrap(),
        ],
    )
    .await;
    assert!(shot.status.success(), "{}", said(&shot));
    let jpeg = std::fs::read(&file).unwrap();
    assert!(jpeg.starts_with(&[0xFF, 0xD8]), "not a JPEG");
    assert!(
        said(&shot).contains(&format!(
            "Wrote the picture to {} (JPEG, {} bytes).",
            file.display(),
            jpeg.len()
        )),
        "{}",
        said(&shot)
    );

    let elsewhere = cli(
        &server,
        &["--thread", "t2", "--workspace", "bank", "extract"],
    )
    .await;
    assert!(!elsewhere.status.success());
    assert!(
        said(&elsewhere).contains("thread \"t2\" uses workspace \"shop\""),
        "{}",
        said(&elsewhere)
    );

    // A hand-over says where the user takes the page, and the card answers there.
    let handed = cli(&server, &["--thread", "t2", "hand-over", "sign in"]).await;
    assert!(handed.status.success(), "{}", said(&handed));
    let card = format!("{server}/browser/t2");
    assert!(
        said(&handed).contains(&format!("The user takes the page at {card} (")),
        "{}",
        said(&handed)
    );
    let answered = reqwest::get(&card).await.unwrap();
    assert!(answered.status().is_success(), "{}", answered.status());
    terminate(&mut serve).await;
}
