//! The worker's configuration: a TOML file, then environment, then flags (see `main.rs`),
//! validated once at start.

use std::path::PathBuf;
use std::time::Duration;

use nanomuse_proto::UrlPolicy;
use serde::{Deserialize, Serialize};

/// Chromium flags that would let a browser's requests around the URL policy's proxy.
const POLICY_FLAGS: &[&str] = &[
    "--proxy-server",
    "--proxy-bypass-list",
    "--no-proxy-server",
    "--proxy-auto-detect",
    "--proxy-pac-url",
    "--host-resolver-rules",
    "--host-rules",
    "--force-webrtc-ip-handling-policy",
];

/// The most browsers a worker may keep launched ahead.
pub const WARM_BROWSERS_MAX: usize = 16;

/// How a worker runs its browsers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerConfig {
    /// This worker's name, reported as `host` in `state`.
    pub name: String,
    /// The Chromium binary.
    pub chromium: PathBuf,
    /// Profiles live at `<profiles_root>/<tenant>/<workspace>/browser-profile/`.
    pub profiles_root: PathBuf,
    /// A browser with no op for this long is closed; its profile stays on disk.
    pub idle_timeout_ms: u64,
    /// The bound of a navigation, a back and a settle when the request gives none.
    pub timeout_ms: u64,
    /// The largest response body `fetch` returns.
    pub fetch_max_bytes: usize,
    /// JPEG quality when a screenshot request gives none.
    pub jpeg_quality: u32,
    /// Extra Chromium flags, after the ones the worker always sets.
    pub chromium_args: Vec<String>,
    /// The controller to register with (e.g. `http://127.0.0.1:50051`); empty: none.
    pub controller: String,
    /// The address the controller reaches this worker at; empty: `http://<bound address>`.
    pub advertise: String,
    /// How many actions this worker carries out at once. Default: 8 per core. An action
    /// spends most of its time waiting (for a frame to be drawn, a response, the page's
    /// script), so fewer in flight leave cores idle under load: on 2 cores, 16 agents made
    /// 8.9 navigations/s at 16 against 7.1 at 8, with a fifth less CPU per action
    /// (BENCHMARKS.md).
    pub capacity: u32,
    /// Browsers kept launched ahead on fresh profile folders, handed to workspaces that have
    /// no profile yet so their first action does not wait for Chromium to start; 0: none.
    pub warm_browsers: usize,
    /// The deployment's shared secret: the controller's calls must carry it, and the
    /// registration sends it. Empty: calls are taken without it, which [`crate::run`] allows on
    /// loopback only. `NANOMUSE_HOP_SECRET` overrides it.
    pub hop_secret: String,
    /// The URL policy's floor: what every browser of this worker is held to whatever policy a
    /// request carries. `hosted = true` cannot be lowered by a request; `deny_hosts` are added
    /// to the request's; under a hosted floor only the `allow_addresses` listed here are let
    /// through. Set `hosted = true` here as well as on the controller in hosted deployments
    /// (defense in depth). Allow lists belong to the controller's tenants, not here.
    pub url_policy: UrlPolicy,
    /// On SIGTERM, the bound of the whole drain: the controller moving this worker's profiles
    /// off it, the calls in flight finishing and the browsers closing. Below the pod's
    /// `terminationGracePeriodSeconds` (120 s).
    pub drain_timeout_ms: u64,
}

/// The default [`WorkerConfig::capacity`] per core.
pub const ACTIONS_PER_CORE: u32 = 8;

/// The cores this process may run on.
fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            name: "worker".into(),
            chromium: PathBuf::from("/usr/bin/chromium"),
            profiles_root: PathBuf::from("data/profiles"),
            idle_timeout_ms: 10 * 60 * 1000,
            timeout_ms: 30_000,
            fetch_max_bytes: 10 * 1024 * 1024,
            jpeg_quality: 70,
            chromium_args: Vec::new(),
            controller: String::new(),
            advertise: String::new(),
            capacity: ACTIONS_PER_CORE * cores(),
            warm_browsers: 1,
            hop_secret: String::new(),
            url_policy: UrlPolicy::default(),
            drain_timeout_ms: 90_000,
        }
    }
}

impl WorkerConfig {
    /// Checks what can be checked before any browser starts; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("worker.name must not be empty".into());
        }
        if !self.chromium.exists() {
            return Err(format!(
                "worker.chromium: {} does not exist (install Debian's chromium or set the path)",
                self.chromium.display()
            ));
        }
        if self.timeout_ms == 0 {
            return Err("worker.timeout_ms must be above 0".into());
        }
        if self.idle_timeout_ms == 0 {
            return Err("worker.idle_timeout_ms must be above 0".into());
        }
        if !(1..=100).contains(&self.jpeg_quality) {
            return Err("worker.jpeg_quality must be within 1..=100".into());
        }
        if self.capacity == 0 {
            return Err("worker.capacity must be above 0".into());
        }
        if self.warm_browsers > WARM_BROWSERS_MAX {
            return Err(format!(
                "worker.warm_browsers must be at most {WARM_BROWSERS_MAX} (each is a running \
                 Chromium waiting for a new workspace)"
            ));
        }
        if self.drain_timeout_ms == 0 {
            return Err("worker.drain_timeout_ms must be above 0".into());
        }
        if self.fetch_max_bytes == 0 {
            return Err("worker.fetch_max_bytes must be above 0".into());
        }
        self.hop_secret()?;
        self.url_policy
            .validate()
            .map_err(|e| format!("worker.url_policy.{e}"))?;
        if !self.url_policy.allow_hosts.is_empty() {
            return Err(
                "worker.url_policy.allow_hosts: allow lists are the controller's \
                        ([controller.url_policy], per tenant); a worker's floor has hosted, \
                        deny_hosts and allow_addresses"
                    .into(),
            );
        }
        if let Some(flag) = self.chromium_args.iter().find(|arg| {
            POLICY_FLAGS
                .iter()
                .any(|flag| arg.split('=').next() == Some(flag))
        }) {
            return Err(format!(
                "worker.chromium_args: {flag} is the worker's own (every request of a browser \
                 goes through its URL-policy proxy)"
            ));
        }
        Ok(())
    }

    /// The hop secret, when one is set.
    pub fn hop_secret(&self) -> Result<Option<nanomuse_common::HopSecret>, String> {
        nanomuse_common::HopSecret::parse(&self.hop_secret, "worker.hop_secret")
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub fn drain_timeout(&self) -> Duration {
        Duration::from_millis(self.drain_timeout_ms)
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }
}
