//! A real worker on a real socket: as a task of this process or as the `worker` binary.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use nanomuse_proto::GrpcBackend;
use nanomuse_worker::WorkerConfig;
use tokio_util::sync::CancellationToken;

use crate::processes::{Running, free_address, logs, spawn_quiet, until_up};
use crate::site::serve_site;

/// The test site and a worker on a fresh profiles folder (kept alive by the returned dir).
pub async fn site_and_worker() -> (SocketAddr, tempfile::TempDir, Worker) {
    logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let worker = Worker::start(test_config(dir.path())).await;
    (site, dir, worker)
}

/// A worker served on its own socket, stopped cleanly by [`Worker::stop`].
pub struct Worker {
    pub name: String,
    pub address: SocketAddr,
    pub backend: GrpcBackend,
    pub profiles: PathBuf,
    running: Running,
}

pub fn test_config(profiles: &Path) -> WorkerConfig {
    WorkerConfig {
        name: "test-worker".into(),
        profiles_root: profiles.to_path_buf(),
        timeout_ms: 15_000,
        // A browser launched ahead is one more Chromium per test; the warm pool's own tests
        // (and every test of the `serve` binary, on its defaults) turn it on.
        warm_browsers: 0,
        ..WorkerConfig::default()
    }
}

impl Worker {
    /// Runs the worker as a task of this process.
    pub async fn start(config: WorkerConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let profiles = config.profiles_root.clone();
        let name = config.name.clone();
        let task = tokio::spawn(nanomuse_worker::run(config, listener, shutdown.clone()));
        let backend = GrpcBackend::connect(format!("http://{address}"))
            .await
            .expect("worker reachable");
        Self {
            name,
            address,
            backend,
            profiles,
            running: Running::Task { shutdown, task },
        }
    }

    /// Runs the `worker` binary at `binary` as a process of its own, as it is deployed; its
    /// configuration goes in a file beside the profiles folder.
    pub async fn spawn(binary: &Path, config: WorkerConfig) -> Self {
        let address = free_address();
        let file = config.profiles_root.with_extension("toml");
        let toml = toml::to_string(&std::collections::BTreeMap::from([("worker", &config)]))
            .expect("worker config as TOML");
        std::fs::write(&file, toml).unwrap();
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("--config")
            .arg(&file)
            .args(["--listen", &address.to_string()]);
        let mut child = spawn_quiet(command);
        let endpoint = format!("http://{address}");
        let backend = until_up(&mut child, "worker", || {
            GrpcBackend::connect(endpoint.clone())
        })
        .await;
        Self {
            name: config.name,
            address,
            backend,
            profiles: config.profiles_root,
            running: Running::Process(child),
        }
    }

    /// Stops taking calls, closes the browsers cleanly and waits for the worker to end.
    pub async fn stop(self) {
        self.running.stop().await;
    }
}

/// A worker that registers with the controller at `controller`.
pub fn registered_worker_config(
    profiles: &Path,
    name: &str,
    controller: SocketAddr,
    capacity: u32,
) -> WorkerConfig {
    WorkerConfig {
        name: name.into(),
        controller: format!("http://{controller}"),
        capacity,
        ..test_config(profiles)
    }
}
