//! A real controller on a real socket: as a task of this process or as the `controller`
//! binary, alone or with a registered worker.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::processes::{Running, free_address, spawn_quiet, until_up};
use crate::worker::{Worker, registered_worker_config};

/// A controller served on its own socket, stopped cleanly by [`ControllerProcess::stop`].
pub struct ControllerProcess {
    pub address: SocketAddr,
    running: Running,
}

/// A controller configuration for tests: fast heartbeats, a short queue deadline.
pub fn controller_config(data: &Path) -> nanomuse_controller::Config {
    let mut config = nanomuse_controller::Config::default();
    config.controller.data_dir = data.to_path_buf();
    config.controller.heartbeat_interval_ms = 100;
    config.controller.heartbeat_timeout_ms = 1_000;
    config.controller.queue_deadline_ms = 1_000;
    config
}

/// A controller (its configuration tuned by `tune`) with one registered worker, `w1`, both
/// keeping their state under `dir`.
pub async fn controller_with_worker(
    dir: &Path,
    tune: impl FnOnce(&mut nanomuse_controller::Config),
) -> (ControllerProcess, Worker) {
    let mut config = controller_config(&dir.join("controller"));
    tune(&mut config);
    let controller = ControllerProcess::start(config, "127.0.0.1:0").await;
    let worker_config = registered_worker_config(&dir.join("w1"), "w1", controller.address, 4);
    let worker = Worker::start(worker_config).await;
    controller.wait_for_workers(&["w1"]).await;
    (controller, worker)
}

impl ControllerProcess {
    /// Starts on `listen` (`127.0.0.1:0` for any port), as a task of this process.
    pub async fn start(config: nanomuse_controller::Config, listen: &str) -> Self {
        Self::start_with_local(config, listen, None).await
    }

    /// [`ControllerProcess::start`], with a backend of this process as a worker besides.
    pub async fn start_with_local(
        config: nanomuse_controller::Config,
        listen: &str,
        local: Option<nanomuse_controller::LocalWorker>,
    ) -> Self {
        let listener = tokio::net::TcpListener::bind(listen).await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(nanomuse_controller::run_with_local(
            config,
            listener,
            shutdown.clone(),
            local,
        ));
        Self {
            address,
            running: Running::Task { shutdown, task },
        }
    }

    /// Runs the `controller` binary at `binary` as a process of its own, with its default
    /// configuration (the deployed heartbeats and queue) and its state in `data`.
    pub async fn spawn(binary: &Path, data: &Path) -> Self {
        let address = free_address();
        let mut command = tokio::process::Command::new(binary);
        command
            .args(["--listen", &address.to_string()])
            .arg("--data")
            .arg(data);
        let mut child = spawn_quiet(command);
        let endpoint = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap();
        until_up(&mut child, "controller", || endpoint.connect()).await;
        Self {
            address,
            running: Running::Process(child),
        }
    }

    async fn channel(&self) -> tonic::transport::Channel {
        tonic::transport::Channel::from_shared(format!("http://{}", self.address))
            .unwrap()
            .connect()
            .await
            .expect("controller reachable")
    }

    pub async fn tool(
        &self,
    ) -> nanomuse_proto::browser_tool_client::BrowserToolClient<tonic::transport::Channel> {
        nanomuse_proto::browser_tool_client::BrowserToolClient::new(self.channel().await)
            .max_decoding_message_size(64 * 1024 * 1024)
    }

    pub async fn workers(&self) -> Vec<nanomuse_proto::WorkerStatus> {
        let mut registry =
            nanomuse_proto::worker_registry_client::WorkerRegistryClient::new(self.channel().await);
        registry
            .list_workers(nanomuse_proto::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers
    }

    /// [`wait_for_workers`] on this controller.
    pub async fn wait_for_workers(&self, names: &[&str]) {
        wait_for_workers(self.address, names).await;
    }

    pub async fn stop(self) {
        self.running.stop().await;
    }
}

/// Waits until the controller at `controller` lists `names` all registered and live; there is
/// no event for a worker's registration, so the fleet is read until it is complete. Panics
/// after 30 s.
pub async fn wait_for_workers(controller: SocketAddr, names: &[&str]) {
    let mut registry = nanomuse_proto::worker_registry_client::WorkerRegistryClient::connect(
        format!("http://{controller}"),
    )
    .await
    .expect("controller reachable");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let workers = registry
            .list_workers(nanomuse_proto::ListWorkersRequest {})
            .await
            .unwrap()
            .into_inner()
            .workers;
        let live = |name: &&str| workers.iter().any(|w| w.name == *name && w.live);
        if names.iter().all(live) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "workers {names:?} did not register: {workers:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
