//! `nanomuse-browser serve` as a process of its own, for the rows that count its CPU and its
//! cold start: the controller, its in-process worker and the egress proxy are that one
//! process, its Chromiums are its children, and the benchmark's agents stay outside it.

use std::net::SocketAddr;
use std::path::Path;

use nanomuse_tests::{free_address, spawn_quiet, until_up};

use crate::Tool;

pub struct Served {
    child: tokio::process::Child,
    pub address: SocketAddr,
}

impl Served {
    /// Starts `binary serve` with its data under `data` and `config` (TOML) as its
    /// configuration file; returns once it answers.
    pub async fn spawn(binary: &Path, data: &Path, config: &str) -> Self {
        std::fs::create_dir_all(data).unwrap();
        let config_file = data.join("serve.toml");
        std::fs::write(&config_file, config).unwrap();
        let address = free_address();
        let mut command = tokio::process::Command::new(binary);
        command
            .args(["serve", "--listen", &address.to_string()])
            .arg("--data")
            .arg(data)
            .arg("--config")
            .arg(&config_file);
        let mut child = spawn_quiet(command);
        let endpoint = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap();
        until_up(&mut child, "nanomuse-browser serve", || endpoint.connect()).await;
        Self { child, address }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("still running")
    }

    pub async fn tool(&self) -> Tool {
        crate::connect(self.address).await
    }

    /// SIGTERM, so that it closes its browsers, and waits for it to end.
    pub async fn stop(mut self) {
        let pid = self.pid().to_string();
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status();
        if let Err(error) = self.child.wait().await {
            eprintln!("nanomuse-browser serve ({pid}) did not end cleanly: {error}");
        }
    }
}
