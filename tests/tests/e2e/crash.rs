//! What a reply promises survives a SIGKILL of the controller right after it: the listing a
//! later `click n` uses and the frame id the reply names (its picture may never have been
//! taken, which GetFrame then says; the id is never handed out again). The `controller` binary
//! as a process of its own, a worker beside it, killed five times right after a navigate.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;

async fn start_controller(address: SocketAddr, data: &Path) -> (tokio::process::Child, Tool) {
    let mut command = tokio::process::Command::new(built_binary("controller"));
    command
        .args(["--listen", &address.to_string()])
        .arg("--data")
        .arg(data);
    let mut child = spawn_quiet(command);
    let endpoint = format!("http://{address}");
    let tool = until_up(&mut child, "controller", || Tool::connect(endpoint.clone())).await;
    (child, tool)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sigkill_right_after_a_reply_loses_neither_its_listing_nor_its_frame_id() {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("controller");
    let address = free_address();
    let (mut controller, mut tool) = start_controller(address, &data).await;
    let worker = Worker::start(registered_worker_config(
        &dir.path().join("w1"),
        "w1",
        address,
        4,
    ))
    .await;
    // The first action needs the worker registered (later ones wait for it to come back).
    wait_for_workers(address, &["w1"]).await;
    let mut frame_ids = HashSet::new();
    for round in 1..=5 {
        let page = tool
            .act(act("crashing", navigate(format!("http://{site}/page"))))
            .await
            .map(tonic::Response::into_inner)
            .unwrap_or_else(|status| panic!("round {round}: navigate: {status}"));
        let frame = page.frame.clone().expect("a navigate names its frame").id;
        assert!(
            frame_ids.insert(frame.clone()),
            "round {round}: frame id {frame} handed out twice"
        );
        // At once after the reply, before the picture is surely taken.
        controller.start_kill().unwrap();
        controller.wait().await.unwrap();

        (controller, tool) = start_controller(address, &data).await;
        let pressed = tool
            .act(act(
                "crashing",
                Action::Click(ClickAction {
                    n: element(&page, "Press"),
                    ..Default::default()
                }),
            ))
            .await
            .map(tonic::Response::into_inner)
            .unwrap_or_else(|status| {
                panic!("round {round}: click by the listing before the crash: {status}")
            });
        assert!(pressed.text.contains("Clicked 'Press'"), "{}", pressed.text);
        let clicked_frame = pressed.frame.expect("a click names its frame").id;
        assert!(
            frame_ids.insert(clicked_frame.clone()),
            "round {round}: frame id {clicked_frame} handed out again after the restart"
        );
        match tool
            .get_frame(GetFrameRequest {
                thread: "crashing".into(),
                frame_id: frame.clone(),
            })
            .await
        {
            Ok(found) => assert_eq!(found.into_inner().id, frame),
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::NotFound);
                assert!(
                    status.message().contains("never made"),
                    "round {round}: {}",
                    status.message()
                );
            }
        }
    }
    controller.start_kill().unwrap();
    controller.wait().await.unwrap();
    worker.stop().await;
}
