//! A worker's drain across processes, as Kubernetes stops a pod: deploy/local/run.sh starts the
//! controller, three workers and the gateway with their config files; a workspace logs in on a
//! site served here, and its worker gets SIGTERM in the middle of a slow navigation. The
//! navigation completes, the worker exits with 0 within its drain bound, no new workspace is
//! placed on it, and the drained workspace's next action runs on another worker, still logged
//! in, its reply saying it moved there.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::response::Html;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::worker_registry_client::WorkerRegistryClient;
use nanomuse_proto::*;
use nanomuse_tests::*;
use tokio::io::AsyncBufReadExt as _;
use tonic::transport::Channel;

/// How long the slow page takes to answer.
const SLOW: Duration = Duration::from_secs(3);

/// deploy/local/run.sh, stopped with SIGTERM even when the test fails half way.
struct LocalRun {
    child: tokio::process::Child,
}

impl Drop for LocalRun {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
    }
}

/// A page that answers after [`SLOW`], and says when its request arrived.
async fn serve_slow_page(arrived: Arc<AtomicBool>) -> std::net::SocketAddr {
    let app = axum::Router::new().route(
        "/slow",
        axum::routing::get(move || {
            let arrived = arrived.clone();
            async move {
                arrived.store(true, Ordering::SeqCst);
                tokio::time::sleep(SLOW).await;
                Html("<!doctype html><title>Slow page</title><p>finally</p>")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

fn worker_of(reply: &ActReply) -> String {
    reply
        .backend
        .strip_prefix("worker:")
        .unwrap_or_else(|| panic!("not on a worker: {}", reply.backend))
        .to_string()
}

async fn workers(registry: &mut WorkerRegistryClient<Channel>) -> Vec<WorkerStatus> {
    registry
        .list_workers(ListWorkersRequest {})
        .await
        .unwrap()
        .into_inner()
        .workers
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_drained_mid_action_finishes_it_and_its_workspace_moves_logged_in() {
    tokio::time::timeout(Duration::from_secs(110), scenario())
        .await
        .expect("the drain scenario takes under 110 s");
}

async fn scenario() {
    let site = nanomuse_tests::serve_site().await;
    let slow_arrived = Arc::new(AtomicBool::new(false));
    let slow = serve_slow_page(slow_arrived.clone()).await;

    // The five processes, from the built binaries.
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let bin_dir = nanomuse_tests::built_binary("worker")
        .parent()
        .unwrap()
        .to_path_buf();
    nanomuse_tests::built_binary("controller");
    nanomuse_tests::built_binary("device-gateway");
    let run_log = dir.path().join("run.sh.log");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut local = LocalRun {
        child: tokio::process::Command::new(repo.join("deploy/local/run.sh"))
            .arg("--no-build")
            .arg("--bin-dir")
            .arg(&bin_dir)
            .args(["--base-port", "auto", "--dir"])
            .arg(&run_dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&run_log).unwrap())
            .spawn()
            .expect("deploy/local/run.sh starts"),
    };
    let log = || std::fs::read_to_string(&run_log).unwrap_or_default();
    let mut lines = tokio::io::BufReader::new(local.child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("run.sh not ready within 60 s:\n{}", log()))
        .unwrap();
    assert_eq!(ready.as_deref(), Some("ready"), "{}", log());
    let server = std::fs::read_to_string(run_dir.join("env"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("NANOMUSE_SERVER=").map(String::from))
        .unwrap();
    let channel = Channel::from_shared(server)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut tool = Tool::new(channel.clone()).max_decoding_message_size(64 * 1024 * 1024);
    let mut registry = WorkerRegistryClient::new(channel);

    // Logged in on workspace "shop", whose profile is on one worker: the victim.
    let login = acted(
        &mut tool,
        act_in("t-login", "shop", navigate(format!("http://{site}/login"))),
    )
    .await;
    let victim = worker_of(&login);
    let inputs: Vec<i64> = login
        .elements
        .iter()
        .filter(|e| e.kind.starts_with("input"))
        .map(|e| e.n as i64)
        .collect();
    assert_eq!(inputs.len(), 2, "{:#?}", login.elements);
    let mut typed = ActReply::default();
    for (n, text) in [(inputs[0], "ada"), (inputs[1], "s3cret")] {
        let typing = Action::Type(TypeAction {
            n,
            text: text.into(),
        });
        typed = acted(&mut tool, act("t-login", typing)).await;
    }
    let sign_in = element(&typed, "Sign in");
    let submitted = acted(
        &mut tool,
        act(
            "t-login",
            Action::Click(ClickAction {
                n: sign_in,
                ..Default::default()
            }),
        ),
    )
    .await;
    assert!(submitted.url.ends_with("/account"), "{}", submitted.url);
    let account = acted(&mut tool, act("t-login", Action::Extract(ExtractAction {}))).await;
    assert!(account.text.contains("ada"), "{}", account.text);

    let config: toml::Table = toml::from_str(
        &std::fs::read_to_string(run_dir.join(format!("config/{victim}.toml"))).unwrap(),
    )
    .unwrap();
    let drain_bound = Duration::from_millis(
        config["worker"]["drain_timeout_ms"]
            .as_integer()
            .expect("worker.drain_timeout_ms") as u64,
    );
    let pid: u32 = std::fs::read_to_string(run_dir.join(format!("{victim}.pid")))
        .unwrap()
        .trim()
        .parse()
        .unwrap();

    // A slow navigation on the workspace (another thread of it), and SIGTERM to its worker
    // once the page's request is under way.
    let mut slow_tool = tool.clone();
    let slow_action = tokio::spawn(async move {
        slow_tool
            .act(act_in(
                "t-slow",
                "shop",
                navigate(format!("http://{slow}/slow")),
            ))
            .await
    });
    assert!(
        nanomuse_tests::eventually(Duration::from_secs(20), || slow_arrived
            .load(Ordering::SeqCst))
        .await,
        "the slow page was never asked for"
    );
    let signalled = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    // When the worker's process ends, watched while the test goes on.
    let exit = tokio::spawn(async move {
        nanomuse_tests::eventually(drain_bound, || nanomuse_tests::process_ended(pid))
            .await
            .then(|| signalled.elapsed())
    });

    // The controller hears of the drain at once: the worker is no longer live.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let fleet = workers(&mut registry).await;
        let status = fleet.iter().find(|w| w.name == victim).unwrap();
        if !status.live {
            assert_ne!(status.state, "down", "{fleet:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{victim} still live 5 s after SIGTERM: {fleet:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // New workspaces during the drain go to the other workers, although the victim would be
    // the least loaded once each of them has one.
    for i in 0..3 {
        let thread = format!("t-new-{i}");
        let workspace = format!("fresh-{i}");
        let reply = acted(
            &mut tool,
            act_in(&thread, &workspace, navigate(format!("http://{site}/page"))),
        )
        .await;
        assert_ne!(
            worker_of(&reply),
            victim,
            "a new workspace was placed on the draining worker"
        );
    }

    // The action under way when the signal came finishes.
    let slow_reply = slow_action
        .await
        .unwrap()
        .unwrap_or_else(|status| panic!("the navigation under way at SIGTERM failed: {status}"))
        .into_inner();
    assert_eq!(slow_reply.title, "Slow page", "{}", slow_reply.text);
    assert_eq!(worker_of(&slow_reply), victim);

    // The worker exits with 0 within its bound.
    let took = exit.await.unwrap().unwrap_or_else(|| {
        panic!(
            "{victim} still runs {} s after SIGTERM:\n{}",
            drain_bound.as_secs(),
            log()
        )
    });
    let ended = format!("{victim} (pid {pid}) ended with status");
    assert!(
        nanomuse_tests::eventually(Duration::from_secs(5), || log().contains(&ended)).await,
        "{}",
        log()
    );
    assert!(
        log().contains(&format!("{ended} 0")),
        "{victim} did not exit with 0:\n{}\n{}",
        log(),
        std::fs::read_to_string(run_dir.join(format!("{victim}.log"))).unwrap_or_default()
    );
    eprintln!("{victim} drained and exited {took:?} after SIGTERM");
    let fleet = workers(&mut registry).await;
    let status = fleet.iter().find(|w| w.name == victim).unwrap();
    assert_eq!(status.state, "drained", "{fleet:?}");

    // After the drain too, new workspaces go elsewhere.
    let reply = acted(
        &mut tool,
        act_in(
            "t-after",
            "fresh-after",
            navigate(format!("http://{site}/page")),
        ),
    )
    .await;
    assert_ne!(worker_of(&reply), victim);

    // The drained workspace's next action runs on another worker, with its profile: still
    // logged in, and the reply says it moved.
    let moved = acted(
        &mut tool,
        act("t-login", navigate(format!("http://{site}/account"))),
    )
    .await;
    let now_on = worker_of(&moved);
    assert_ne!(now_on, victim);
    assert!(
        moved.text.contains(&format!(
            "moved from worker {victim} (drained) to worker {now_on} with its profile"
        )),
        "{}",
        moved.text
    );
    let account = acted(&mut tool, act("t-login", Action::Extract(ExtractAction {}))).await;
    assert!(
        account.text.contains("ada") && !account.text.contains("nobody"),
        "the session cookie did not move with the profile: {}",
        account.text
    );
    assert_eq!(worker_of(&account), now_on);
    // And it stays there: no note on the action after.
    assert!(!account.text.contains("moved from"), "{}", account.text);
    // The other thread of the workspace follows it.
    let slow_thread = acted(&mut tool, act("t-slow", Action::Extract(ExtractAction {}))).await;
    assert_eq!(worker_of(&slow_thread), now_on);

    let pid = local.child.id().unwrap().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    tokio::time::timeout(Duration::from_secs(60), local.child.wait())
        .await
        .unwrap_or_else(|_| panic!("run.sh did not end within 60 s of SIGTERM:\n{}", log()))
        .unwrap();
}

/// A worker process on `address` with `config`, as deployed (its config in a file).
async fn spawn_worker(
    config: &nanomuse_worker::WorkerConfig,
    address: std::net::SocketAddr,
) -> tokio::process::Child {
    let file = config.profiles_root.with_extension("toml");
    let toml = toml::to_string(&std::collections::BTreeMap::from([("worker", config)])).unwrap();
    std::fs::write(&file, toml).unwrap();
    let mut command = tokio::process::Command::new(nanomuse_tests::built_binary("worker"));
    command
        .arg("--config")
        .arg(&file)
        .args(["--listen", &address.to_string()]);
    let mut child = nanomuse_tests::spawn_quiet(command);
    let endpoint = format!("http://{address}");
    nanomuse_tests::until_up(&mut child, "worker", || {
        nanomuse_proto::GrpcBackend::connect(endpoint.clone())
    })
    .await;
    child
}

async fn state_of(controller: &nanomuse_tests::ControllerProcess, name: &str) -> String {
    let fleet = controller.workers().await;
    fleet
        .iter()
        .find(|w| w.name == name)
        .map_or_else(|| "unknown".into(), |w| w.state.clone())
}

/// A worker that dies without a drain (SIGKILL: a crash, a node lost) keeps its workspaces:
/// their actions wait for it, bounded, rather than moving without their profiles.
#[tokio::test(flavor = "multi_thread")]
async fn a_workspace_whose_worker_is_down_waits_for_it_then_gives_a_clear_error() {
    tokio::time::timeout(Duration::from_secs(100), down_scenario())
        .await
        .expect("the scenario takes under 100 s");
}

async fn down_scenario() {
    nanomuse_tests::logs();
    let site = nanomuse_tests::serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = nanomuse_tests::controller_config(&dir.path().join("controller"));
    config.controller.worker_return_ms = 5_000;
    let controller = nanomuse_tests::ControllerProcess::start(config, "127.0.0.1:0").await;
    let w1_config = nanomuse_tests::registered_worker_config(
        &dir.path().join("w1"),
        "w1",
        controller.address,
        2,
    );
    let w1_address = nanomuse_tests::free_address();
    let mut w1 = spawn_worker(&w1_config, w1_address).await;
    let w2 = nanomuse_tests::Worker::start(nanomuse_tests::registered_worker_config(
        &dir.path().join("w2"),
        "w2",
        controller.address,
        2,
    ))
    .await;
    controller.wait_for_workers(&["w1", "w2"]).await;
    let mut tool = controller.tool().await;

    // Two workers, no workspace yet: the tie goes to w1 by name.
    let first = acted(
        &mut tool,
        act_in("t", "ws", navigate(format!("http://{site}/page"))),
    )
    .await;
    assert_eq!(first.backend, "worker:w1");

    // Killed: no drain, so the profile is only on w1's disk.
    w1.kill().await.unwrap();
    let until_down = Instant::now() + Duration::from_secs(10);
    while state_of(&controller, "w1").await != "down" {
        assert!(
            Instant::now() < until_down,
            "w1 not down 10 s after SIGKILL"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The next action waits; w1 comes back (same name, same disk) and it runs there.
    let mut waiting_tool = tool.clone();
    let waiting = tokio::spawn(async move {
        waiting_tool
            .act(act("t", Action::Extract(ExtractAction {})))
            .await
    });
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(!waiting.is_finished(), "the action did not wait for w1");
    let mut w1 = spawn_worker(&w1_config, w1_address).await;
    let reply = waiting
        .await
        .unwrap()
        .unwrap_or_else(|status| panic!("the action that waited for w1 failed: {status}"))
        .into_inner();
    assert_eq!(reply.backend, "worker:w1");
    assert!(
        reply
            .text
            .contains("for worker w1, which has this workspace's profile, to come back"),
        "{}",
        reply.text
    );
    assert!(
        reply.text.contains("Waited "),
        "the reply says it waited: {}",
        reply.text
    );
    // New workspaces still go anywhere; this one stays with w1.
    let again = acted(&mut tool, act("t", Action::Extract(ExtractAction {}))).await;
    assert_eq!(again.backend, "worker:w1");
    assert!(!again.text.contains("Waited "), "{}", again.text);

    // Killed again and not back: after worker_return_ms the action is refused, clearly.
    w1.kill().await.unwrap();
    let until_down = Instant::now() + Duration::from_secs(10);
    while state_of(&controller, "w1").await != "down" {
        assert!(
            Instant::now() < until_down,
            "w1 not down 10 s after SIGKILL"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let asked = Instant::now();
    let refused = tool
        .act(act("t", Action::Extract(ExtractAction {})))
        .await
        .expect_err("no worker has the profile");
    assert!(
        asked.elapsed() >= Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(refused.code(), tonic::Code::Unavailable);
    assert!(
        refused
            .message()
            .contains("lives on worker w1, which is down; waited"),
        "{}",
        refused.message()
    );

    // The killed worker's Chromium outlived it; nothing else will end it.
    let profile = dir.path().join("w1/local/ws/browser-profile");
    if let Some(pid) = nanomuse_tests::chromium_pid(&profile) {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    controller.stop().await;
    w2.stop().await;
}

/// A worker that gets SIGTERM right after the controller restarted, before its next heartbeat
/// told the new controller about it, still hands its profiles over: the drain names the
/// worker's address, and the controller takes it on for the drain.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_drained_right_after_a_controller_restart_hands_its_profiles_over() {
    nanomuse_tests::logs();
    let site = nanomuse_tests::serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    // Slow heartbeats: the drain comes long before the worker's next one.
    let config = || {
        let mut config = nanomuse_tests::controller_config(&dir.path().join("controller"));
        config.controller.heartbeat_interval_ms = 5_000;
        config.controller.heartbeat_timeout_ms = 15_000;
        config
    };
    let controller = nanomuse_tests::ControllerProcess::start(config(), "127.0.0.1:0").await;
    let address = controller.address;
    let worker_config = |name: &str| {
        nanomuse_tests::registered_worker_config(&dir.path().join(name), name, address, 4)
    };
    let w1 = nanomuse_tests::Worker::start(worker_config("w1")).await;
    controller.wait_for_workers(&["w1"]).await;
    let mut tool = controller.tool().await;
    let set = acted(
        &mut tool,
        act_in(
            "t",
            "moving",
            navigate(format!("http://{site}/set-cookies")),
        ),
    )
    .await;
    assert_eq!(worker_of(&set), "w1");
    let w2 = nanomuse_tests::Worker::start(worker_config("w2")).await;
    controller.wait_for_workers(&["w1", "w2"]).await;

    controller.stop().await;
    let controller = nanomuse_tests::ControllerProcess::start(config(), &address.to_string()).await;
    assert!(
        controller.workers().await.is_empty(),
        "the restarted controller knows no worker yet"
    );
    // SIGTERM, as in-process: the worker drains before it ends.
    w1.stop().await;

    controller.wait_for_workers(&["w2"]).await;
    let mut tool = controller.tool().await;
    let moved = acted(
        &mut tool,
        act_in(
            "t",
            "moving",
            navigate(format!("http://{site}/echo-cookies")),
        ),
    )
    .await;
    assert_eq!(worker_of(&moved), "w2", "{}", moved.text);
    assert!(
        moved.text.contains("moved from worker w1"),
        "{}",
        moved.text
    );
    let page = acted(&mut tool, act("t", Action::Extract(ExtractAction {}))).await;
    assert!(page.text.contains("persistent=kept"), "{}", page.text);
    controller.stop().await;
    w2.stop().await;
}
