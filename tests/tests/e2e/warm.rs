//! The warm pool: browsers launched ahead on fresh folders, handed to workspaces that have no
//! profile yet, on a real worker and real Chromium. What matters to a user: the workspace is
//! its own (no other tenant's cookies), it keeps its login across a restart, a relaunch (which
//! the pool yields to) does not keep the next new workspace from its browser, and nothing a
//! previous run launched and never handed over is left on disk.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nanomuse_proto::*;
use nanomuse_tests::*;
use nanomuse_worker::WorkerConfig;

fn warm_config(profiles: &Path) -> WorkerConfig {
    WorkerConfig {
        warm_browsers: 1,
        ..test_config(profiles)
    }
}

async fn page_text(backend: &GrpcBackend, session: &Option<Session>, url: String) -> String {
    backend
        .open(OpenRequest {
            session: session.clone(),
            ..Default::default()
        })
        .await
        .expect("open");
    let reply = backend
        .navigate(NavigateRequest {
            session: session.clone(),
            url,
            timeout_ms: 0,
        })
        .await
        .expect("navigate");
    assert_eq!(reply.status, 200);
    let text = backend
        .evaluate(EvaluateRequest {
            session: session.clone(),
            js: "() => document.body.innerText".into(),
            arg_json: String::new(),
        })
        .await
        .expect("evaluate");
    serde_json::from_str(&text.value_json).unwrap()
}

/// The folder under `+warm` the workspace's folder links to, or a panic saying what it is.
fn warm_folder(profiles: &Path, tenant: &str, workspace: &str) -> PathBuf {
    let root = profiles.join(tenant).join(workspace);
    let metadata = std::fs::symlink_metadata(&root).expect("the workspace has a folder");
    assert!(
        metadata.file_type().is_symlink(),
        "{} is not a browser launched ahead, handed over",
        root.display()
    );
    let real = std::fs::canonicalize(&root).unwrap();
    let pool = std::fs::canonicalize(profiles.join("+warm")).unwrap();
    assert_eq!(real.parent(), Some(pool.as_path()));
    real
}

#[tokio::test(flavor = "multi_thread")]
async fn new_workspaces_get_browsers_launched_ahead_each_their_own_and_keep_them_across_a_restart()
{
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path();
    let worker = Worker::start(warm_config(profiles)).await;
    let ada = Some(Session::new("tenant-a", "work", "p1"));
    let bob = Some(Session::new("tenant-b", "work", "p1"));

    page_text(&worker.backend, &ada, format!("http://{site}/set-cookies")).await;
    let ada_folder = warm_folder(profiles, "tenant-a", "work");
    // The pool refilled behind the first: the second new workspace gets another folder, and
    // sees none of the first one's cookies.
    let bob_cookies = page_text(&worker.backend, &bob, format!("http://{site}/echo-cookies")).await;
    let bob_folder = warm_folder(profiles, "tenant-b", "work");
    assert_ne!(ada_folder, bob_folder);
    assert!(!bob_cookies.contains("persistent"), "{bob_cookies:?}");
    worker.stop().await;

    // What a previous run launched ahead and never handed over.
    let stale = profiles.join("+warm").join("1-0-0");
    std::fs::create_dir_all(stale.join("browser-profile")).unwrap();

    let worker = Worker::start(warm_config(profiles)).await;
    let ada_cookies = page_text(&worker.backend, &ada, format!("http://{site}/echo-cookies")).await;
    assert!(ada_cookies.contains("persistent=kept"), "{ada_cookies:?}");
    assert_eq!(warm_folder(profiles, "tenant-a", "work"), ada_folder);
    // Ada's relaunch stopped the pool for a while; a new workspace right after is handed the
    // browser launched ahead all the same, continued, and it works.
    let carol = Some(Session::new("tenant-c", "work", "p1"));
    page_text(&worker.backend, &carol, format!("http://{site}/page")).await;
    warm_folder(profiles, "tenant-c", "work");
    let deadline = Instant::now() + Duration::from_secs(10);
    while stale.exists() {
        assert!(
            Instant::now() < deadline,
            "a folder nobody took is still there"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(bob_folder.is_dir(), "a folder handed over stays");
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_warm_pool_a_new_workspace_gets_a_folder_of_its_own_name() {
    let (site, dir, worker) = site_and_worker().await;
    let session = session("p1");
    page_text(&worker.backend, &session, format!("http://{site}/page")).await;
    let root = dir.path().join("tenant-a").join("work");
    assert!(std::fs::symlink_metadata(&root).unwrap().is_dir());
    assert!(!dir.path().join("+warm").exists());
    worker.stop().await;
}
