//! Configuration: a TOML file with the spec's `[browser]` section plus `[controller]`, then the environment (`NANOMUSE_BROWSER_ENABLED`, `NANOMUSE_BROWSER_BACKEND`,
//! the secrets `NANOMUSE_TOKENS_FILE` and `NANOMUSE_HOP_SECRET`), then flags. Validated once at start; a bad value stops the program with the key's name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nanomuse_common::HopSecret;
use nanomuse_common::hop::HOP_SECRET_ENV;
use nanomuse_common::tokens::{self, Plaintext, TokenTable};
use nanomuse_proto::UrlPolicy;
use serde::{Deserialize, Serialize};

/// Which browser a thread's actions run in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// The tenant's phone when one with a browser is connected, else the Chromium workers.
    #[default]
    Auto,
    /// The Chromium workers on the server: the spec's `playwright`, accepted as its alias.
    #[serde(alias = "playwright")]
    Chromium,
    /// The tenant's phone.
    Device,
}

impl BackendChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Chromium => "chromium",
            Self::Device => "device",
        }
    }
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "chromium" | "playwright" => Ok(Self::Chromium),
            "device" => Ok(Self::Device),
            _ => Err(format!(
                "backend {:?} is not one of auto, chromium (the server's browser; the spec's \
                 playwright) or device (the phone's)",
                nanomuse_common::limits::excerpt(text)
            )),
        }
    }
}

impl std::fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The profile of a new thread: the spec's `mobile | desktop | ""`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileChoice {
    /// `""`: the backend's own — mobile on a phone, desktop on a worker.
    #[default]
    #[serde(rename = "")]
    Own,
    Mobile,
    Desktop,
}

/// The spec's `[browser]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BrowserSection {
    pub enabled: bool,
    pub backend: BackendChoice,
    pub profile: ProfileChoice,
    /// The spec's "Playwright only": the workers run Chromium headless, always (a person sees
    /// the page on the browser card), so only `true` is taken.
    pub headless: bool,
    /// The bound of a navigation, sent with each one (a backend keeps to its own bound when
    /// that is shorter).
    pub timeout_ms: u64,
}

impl Default for BrowserSection {
    fn default() -> Self {
        Self {
            enabled: true,
            backend: BackendChoice::Auto,
            profile: ProfileChoice::Own,
            headless: true,
            timeout_ms: 30_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerSection {
    /// Where sled keeps threads, listings, frames and placements.
    pub data_dir: PathBuf,
    /// A worker silent for this long is down.
    pub heartbeat_timeout_ms: u64,
    /// How often workers are asked to heartbeat.
    pub heartbeat_interval_ms: u64,
    /// How long an action waits for a free worker slot before RESOURCE_EXHAUSTED.
    pub queue_deadline_ms: u64,
    /// How long an action waits for its workspace's worker when that worker is down (or was
    /// drained without its profile moving) before UNAVAILABLE; 0 fails at once.
    pub worker_return_ms: u64,
    /// How many actions may wait for a slot at once; more are refused at once.
    pub queue_limit: usize,
    /// How long an action waits for the page to settle after it acted.
    pub settle_ms: u64,
    /// How long an agent action waits for the user to press Done on a hold.
    pub hold_timeout_ms: u64,
    /// token → tenant: `"sha256:<hex>" = "tenant"` (the token's digest, see
    /// `nanomuse-browser hash-token`), or the token itself (taken with a warning). The secrets
    /// file `NANOMUSE_TOKENS_FILE` adds digests. None at all: every call is the tenant "local"
    /// (the embedded single-user mode, on loopback only).
    pub tokens: HashMap<String, String>,
    /// The deployment's shared secret: sent on every call to workers and gateways, and
    /// required of workers that register. Empty: none, which a controller allows on loopback
    /// only. `NANOMUSE_HOP_SECRET` overrides it.
    pub hop_secret: String,
    /// The device gateways' gRPC addresses (e.g. "http://127.0.0.1:50071"), watched for phones.
    pub gateways: Vec<String>,
    /// The URL policy (the spec's Sentinel) every navigate and fetch passes.
    pub url_policy: UrlPolicySection,
    /// Host names the HTTP API and the card answer to besides the bound address, `localhost`,
    /// 127.0.0.1 and [::1] (with the port): "browser.example.com" (any port) or
    /// "browser.example.com:8443". A request whose `Host` or `Origin` names anything else is
    /// refused (403), so a page that rebinds its own name to this machine reaches nothing.
    /// A deployment reached by a name (an ingress, a Service) lists that name here.
    pub http_hosts: Vec<String>,
    /// What one tenant may hold at once.
    pub quotas: QuotaSection,
    /// Whether threads keep every frame (a replay), and for how long.
    pub recording: RecordingSection,
}

/// `[controller.recording]`: a thread with recording on keeps every frame (its action,
/// caption, URL and time) beyond the card's last dozen, for its replay (`/replay/{thread}`).
/// Each tenant's recorded frames are pruned, oldest first, once older than `days` or past
/// `bytes` in all.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecordingSection {
    /// Whether a thread records when it was not switched itself
    /// (`POST /api/browser/{thread}/recording`).
    pub on: bool,
    /// How many days a recorded frame is kept.
    pub days: u64,
    /// How many bytes of recorded frames one tenant keeps at most.
    pub bytes: u64,
    /// tenant → its own `on`, `days` and `bytes`, each in place of the ones above.
    pub tenants: HashMap<String, TenantRecording>,
}

impl Default for RecordingSection {
    fn default() -> Self {
        Self {
            on: false,
            days: 30,
            bytes: 1 << 30,
            tenants: HashMap::new(),
        }
    }
}

/// `[controller.recording.tenants.<tenant>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TenantRecording {
    pub on: Option<bool>,
    pub days: Option<u64>,
    pub bytes: Option<u64>,
}

/// What [`RecordingSection`] says for one tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Whether its threads record unless switched.
    pub on: bool,
    pub days: u64,
    pub bytes: u64,
}

impl RecordingSection {
    pub fn for_tenant(&self, tenant: &str) -> Retention {
        let own = self.tenants.get(tenant).cloned().unwrap_or_default();
        Retention {
            on: own.on.unwrap_or(self.on),
            days: own.days.unwrap_or(self.days),
            bytes: own.bytes.unwrap_or(self.bytes),
        }
    }

    fn validate(&self) -> Result<(), String> {
        let tenants = self
            .tenants
            .iter()
            .map(|(t, own)| (format!("tenants.{t}."), own));
        let own = TenantRecording {
            on: None,
            days: Some(self.days),
            bytes: Some(self.bytes),
        };
        for (prefix, own) in std::iter::once((String::new(), &own)).chain(tenants) {
            if own.days == Some(0) {
                return Err(format!(
                    "controller.recording.{prefix}days must be above 0 (days a recorded frame \
                     is kept)"
                ));
            }
            if own.bytes == Some(0) {
                return Err(format!(
                    "controller.recording.{prefix}bytes must be above 0 (bytes of recorded \
                     frames a tenant keeps)"
                ));
            }
        }
        Ok(())
    }
}

/// `[controller.quotas]`: per tenant, so one tenant cannot crowd out the others. Reaching one
/// is RESOURCE_EXHAUSTED (HTTP 429) with a sentence naming the quota; nothing changes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuotaSection {
    /// Threads a tenant may have.
    pub threads: usize,
    /// Holds a tenant may have open.
    pub open_holds: usize,
    /// Workspaces (browser profiles) a tenant may have placed on workers.
    pub profiles: usize,
    /// Actions of a tenant under way at once (waiting for a worker slot included).
    pub actions_in_flight: usize,
}

impl Default for QuotaSection {
    fn default() -> Self {
        Self {
            threads: 1_000,
            open_holds: 100,
            profiles: 50,
            actions_in_flight: 64,
        }
    }
}

/// `[controller.url_policy]`: the deployment's URL policy, and per-tenant host lists merged
/// into it (see `nanomuse_proto::url_policy` for what each field does).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UrlPolicySection {
    /// Refuse internal names and non-public addresses. Unset: true when the controller listens
    /// on an address other than loopback (a deployment others reach), false on loopback (the
    /// embedded single-user `serve`, whose user may well browse their own machine).
    pub hosted: Option<bool>,
    /// Not empty: only these hosts ("example.com"; ".example.com" with its subdomains).
    pub allow_hosts: Vec<String>,
    /// Never these hosts.
    pub deny_hosts: Vec<String>,
    /// Address ranges (CIDR) hosted mode lets through all the same: an escape hatch for a known
    /// internal service (a corporate proxy, a test server). Use sparingly: every browser of
    /// every tenant can reach them.
    pub allow_addresses: Vec<String>,
    /// tenant → host lists of its own, added to the ones above.
    pub tenants: HashMap<String, TenantHosts>,
}

/// `[controller.url_policy.tenants.<tenant>]`: one tenant's hosts. Its allow list joins the
/// global one (a tenant with an allow list and a deployment without one reaches only its
/// list); its deny list joins the global one.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TenantHosts {
    pub allow_hosts: Vec<String>,
    pub deny_hosts: Vec<String>,
}

impl UrlPolicySection {
    /// The policy of `tenant`: the global one with the tenant's lists added. `hosted` must
    /// have been decided ([`UrlPolicySection::decide_hosted`]); undecided counts as not hosted.
    pub fn for_tenant(&self, tenant: &str) -> UrlPolicy {
        let mut policy = UrlPolicy {
            hosted: self.hosted.unwrap_or(false),
            allow_hosts: self.allow_hosts.clone(),
            deny_hosts: self.deny_hosts.clone(),
            allow_addresses: self.allow_addresses.clone(),
        };
        if let Some(own) = self.tenants.get(tenant) {
            policy.allow_hosts.extend(own.allow_hosts.iter().cloned());
            policy.deny_hosts.extend(own.deny_hosts.iter().cloned());
        }
        policy
    }

    /// Decides `hosted` when the configuration left it unset, from where the controller listens.
    pub fn decide_hosted(&mut self, listening: std::net::SocketAddr) {
        self.hosted.get_or_insert(!listening.ip().is_loopback());
    }

    fn validate(&self) -> Result<(), String> {
        self.for_tenant("")
            .validate()
            .map_err(|e| format!("controller.url_policy.{e}"))?;
        for tenant in self.tenants.keys() {
            self.for_tenant(tenant)
                .validate()
                .map_err(|e| format!("controller.url_policy.tenants.{tenant}.{e}"))?;
        }
        Ok(())
    }
}

impl Default for ControllerSection {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("data/controller"),
            heartbeat_timeout_ms: 3_000,
            heartbeat_interval_ms: 1_000,
            queue_deadline_ms: 10_000,
            worker_return_ms: 30_000,
            queue_limit: 256,
            settle_ms: 5_000,
            hold_timeout_ms: 600_000,
            tokens: HashMap::new(),
            hop_secret: String::new(),
            gateways: Vec::new(),
            url_policy: UrlPolicySection::default(),
            http_hosts: Vec::new(),
            quotas: QuotaSection::default(),
            recording: RecordingSection::default(),
        }
    }
}

/// The TOML file at `path` as a table; an empty one without a file.
pub fn read_table(path: Option<&Path>) -> Result<toml::Table, String> {
    let Some(path) = path else {
        return Ok(toml::Table::new());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub browser: BrowserSection,
    pub controller: ControllerSection,
}

impl Config {
    /// Reads `path` (when given), then applies the environment; validates.
    pub fn load(path: Option<&Path>) -> Result<Self, String> {
        Self::from_table(read_table(path)?, path)
    }

    /// The configuration in `table` (read from `path`, named in errors), then the environment;
    /// validated. A section this program does not have (a worker's `[worker]`) is refused.
    pub fn from_table(table: toml::Table, path: Option<&Path>) -> Result<Self, String> {
        let named = |what: String| match path {
            Some(path) => format!("{}: {what}", path.display()),
            None => what,
        };
        if table.contains_key("worker") {
            return Err(named(
                "[worker] is a worker's section: give it to `worker --config` (or to \
                 `nanomuse-browser serve`, which runs one); the controller takes [browser] and \
                 [controller]"
                    .into(),
            ));
        }
        let mut config = Config::deserialize(table).map_err(|e| named(e.to_string()))?;
        config.apply_env(|name| std::env::var(name).ok())?;
        config.validate()?;
        Ok(config)
    }

    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        if let Some(value) = var("NANOMUSE_BROWSER_ENABLED") {
            self.browser.enabled = match value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" | "" => false,
                other => {
                    return Err(format!(
                        "NANOMUSE_BROWSER_ENABLED={other:?}: use 1 or 0 (true or false)"
                    ));
                }
            };
        }
        if let Some(value) = var("NANOMUSE_BROWSER_BACKEND") {
            self.browser.backend = value
                .parse()
                .map_err(|e| format!("NANOMUSE_BROWSER_BACKEND: {e}"))?;
        }
        if let Some(path) = var("NANOMUSE_TOKENS_FILE").filter(|p| !p.trim().is_empty()) {
            let path = PathBuf::from(path.trim());
            let entries = tokens::read_token_file(&path)?;
            let source = format!("NANOMUSE_TOKENS_FILE={}", path.display());
            tokens::merge_token_entries(&mut self.controller.tokens, entries, &source)?;
        }
        if let Some(secret) = var(HOP_SECRET_ENV).filter(|s| !s.trim().is_empty()) {
            self.controller.hop_secret = secret;
        }
        Ok(())
    }

    /// The tenant tokens, by digest.
    pub fn token_table(&self) -> Result<TokenTable, String> {
        TokenTable::from_entries(
            &self.controller.tokens,
            "controller.tokens",
            Plaintext::Allowed,
        )
    }

    /// The hop secret, when one is set.
    pub fn hop_secret(&self) -> Result<Option<HopSecret>, String> {
        HopSecret::parse(&self.controller.hop_secret, "controller.hop_secret")
    }

    pub fn validate(&self) -> Result<(), String> {
        if !self.browser.headless {
            return Err(
                "browser.headless = false: the workers run Chromium headless only; a \
                        person sees and takes over the page on the browser card"
                    .into(),
            );
        }
        if self.browser.timeout_ms == 0 || self.browser.timeout_ms > u32::MAX as u64 {
            return Err("browser.timeout_ms must be above 0 (milliseconds)".into());
        }
        let c = &self.controller;
        for (name, value) in [
            ("controller.heartbeat_timeout_ms", c.heartbeat_timeout_ms),
            ("controller.heartbeat_interval_ms", c.heartbeat_interval_ms),
            ("controller.queue_deadline_ms", c.queue_deadline_ms),
            ("controller.hold_timeout_ms", c.hold_timeout_ms),
        ] {
            if value == 0 {
                return Err(format!("{name} must be above 0"));
            }
        }
        if c.heartbeat_interval_ms >= c.heartbeat_timeout_ms {
            return Err(
                "controller.heartbeat_interval_ms must be below heartbeat_timeout_ms".into(),
            );
        }
        if let Some(bad) = c
            .gateways
            .iter()
            .find(|g| !(g.starts_with("http://") || g.starts_with("https://")))
        {
            return Err(format!(
                "controller.gateways: {bad:?} is not a gRPC address like http://host:port"
            ));
        }
        for (name, value) in [
            ("controller.quotas.threads", c.quotas.threads),
            ("controller.quotas.open_holds", c.quotas.open_holds),
            ("controller.quotas.profiles", c.quotas.profiles),
            (
                "controller.quotas.actions_in_flight",
                c.quotas.actions_in_flight,
            ),
        ] {
            if value == 0 {
                return Err(format!("{name} must be above 0"));
            }
        }
        if let Some(bad) = c
            .http_hosts
            .iter()
            .find(|h| crate::http::guard::HostName::parse(h).is_none())
        {
            return Err(format!(
                "controller.http_hosts: {bad:?} is not a host name like \"browser.example.com\" \
                 or \"browser.example.com:8443\""
            ));
        }
        self.token_table()?;
        self.hop_secret()?;
        c.url_policy.validate()?;
        c.recording.validate()?;
        Ok(())
    }

    pub fn worker_return(&self) -> Duration {
        Duration::from_millis(self.controller.worker_return_ms)
    }

    pub fn heartbeat_timeout(&self) -> Duration {
        Duration::from_millis(self.controller.heartbeat_timeout_ms)
    }

    pub fn queue_deadline(&self) -> Duration {
        Duration::from_millis(self.controller.queue_deadline_ms)
    }

    pub fn settle(&self) -> Duration {
        Duration::from_millis(self.controller.settle_ms)
    }

    pub fn hold_timeout(&self) -> Duration {
        Duration::from_millis(self.controller.hold_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_overrides_the_file_and_bad_values_name_their_key() {
        let mut config: Config =
            toml::from_str("[browser]\nbackend = \"device\"\nprofile = \"mobile\"\n").unwrap();
        config
            .apply_env(|name| (name == "NANOMUSE_BROWSER_BACKEND").then(|| "playwright".into()))
            .unwrap();
        assert_eq!(config.browser.backend, BackendChoice::Chromium);
        assert_eq!(config.browser.profile, ProfileChoice::Mobile);

        let error = toml::from_str::<Config>("[browser]\nbackend = \"firefox\"\n").unwrap_err();
        assert!(error.to_string().contains("backend"), "{error}");
        let error = Config::default()
            .apply_env(|name| (name == "NANOMUSE_BROWSER_BACKEND").then(|| "firefox".into()))
            .unwrap_err();
        assert!(error.contains("NANOMUSE_BROWSER_BACKEND") && error.contains("chromium"));
        let spec: Config = toml::from_str(
            "[browser]\nenabled = true\nbackend = \"auto\"\nprofile = \"\"\nheadless = true\n\
             timeout_ms = 30000\n",
        )
        .unwrap();
        spec.validate().unwrap();
        let mut with_worker = toml::Table::new();
        with_worker.insert("worker".into(), toml::Table::new().into());
        let error = Config::from_table(with_worker, None).unwrap_err();
        assert!(error.contains("worker --config"), "{error}");
        assert_eq!(spec.browser.profile, ProfileChoice::Own);
        let mut headed = spec.clone();
        headed.browser.headless = false;
        assert!(headed.validate().unwrap_err().contains("headless"));

        let error = toml::from_str::<Config>("[browser]\nbackendd = \"auto\"\n").unwrap_err();
        assert!(error.to_string().contains("backendd"), "{error}");

        let error = Config::default()
            .apply_env(|name| (name == "NANOMUSE_BROWSER_ENABLED").then(|| "maybe".into()))
            .unwrap_err();
        assert!(error.contains("NANOMUSE_BROWSER_ENABLED"));
    }

    #[test]
    fn the_secrets_come_from_the_environment_and_the_tokens_file_holds_digests_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens.toml");
        let digest = tokens::token_digest("token-of-tenant-a-0001");
        std::fs::write(&file, format!("\"{digest}\" = \"tenant-a\"\n")).unwrap();
        let env = |name: &str| match name {
            "NANOMUSE_TOKENS_FILE" => Some(file.display().to_string()),
            "NANOMUSE_HOP_SECRET" => Some("a-hop-secret-0123456789\n".into()),
            _ => None,
        };
        let mut config = Config::default();
        config.apply_env(env).unwrap();
        config.validate().unwrap();
        let table = config.token_table().unwrap();
        assert_eq!(table.tenant_of("token-of-tenant-a-0001"), Some("tenant-a"));
        assert_eq!(table.plaintext_count(), 0);
        assert!(config.hop_secret().unwrap().is_some());

        std::fs::write(&file, "\"token-of-tenant-a-0001\" = \"tenant-a\"\n").unwrap();
        let error = Config::default().apply_env(env).unwrap_err();
        assert!(
            error.contains("tokens.toml") && error.contains("plaintext"),
            "{error}"
        );
    }

    #[test]
    fn recording_is_off_by_default_and_a_tenant_may_have_its_own_retention() {
        let config: Config = toml::from_str(
            "[controller.recording]\n\
             days = 7\n\
             [controller.recording.tenants.acme]\n\
             on = true\n\
             bytes = 5000\n",
        )
        .unwrap();
        config.validate().unwrap();
        let recording = &config.controller.recording;
        assert_eq!(
            recording.for_tenant("acme"),
            Retention {
                on: true,
                days: 7,
                bytes: 5000
            }
        );
        assert_eq!(
            recording.for_tenant("other"),
            Retention {
                on: false,
                days: 7,
                bytes: 1 << 30
            }
        );
        let bad: Config =
            toml::from_str("[controller.recording.tenants.acme]\ndays = 0\n").unwrap();
        let error = bad.validate().unwrap_err();
        assert!(
            error.starts_with("controller.recording.tenants.acme.days"),
            "{error}"
        );
        let error = toml::from_str::<Config>("[controller.recording]\nkeep = 1\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("keep"), "{error}");
    }

    #[test]
    fn the_url_policy_merges_tenant_lists_and_defaults_hosted_by_address() {
        let mut config: Config = toml::from_str(
            "[controller.url_policy]\n\
             deny_hosts = [\"evil.example\"]\n\
             allow_addresses = [\"10.9.0.0/16\"]\n\
             [controller.url_policy.tenants.acme]\n\
             allow_hosts = [\".acme.example\"]\n\
             deny_hosts = [\"old.acme.example\"]\n",
        )
        .unwrap();
        config.validate().unwrap();
        let section = &mut config.controller.url_policy;
        let acme = section.for_tenant("acme");
        assert!(!acme.hosted);
        assert_eq!(acme.allow_hosts, vec![".acme.example".to_string()]);
        assert_eq!(
            acme.deny_hosts,
            vec!["evil.example".to_string(), "old.acme.example".to_string()]
        );
        assert_eq!(acme.allow_addresses, vec!["10.9.0.0/16".to_string()]);
        let other = section.for_tenant("other");
        assert!(other.allow_hosts.is_empty());
        assert_eq!(other.deny_hosts, vec!["evil.example".to_string()]);

        section.decide_hosted("127.0.0.1:50051".parse().unwrap());
        assert_eq!(section.hosted, Some(false));
        section.hosted = None;
        section.decide_hosted("[::1]:50051".parse().unwrap());
        assert_eq!(section.hosted, Some(false));
        section.hosted = None;
        section.decide_hosted("0.0.0.0:50051".parse().unwrap());
        assert_eq!(section.hosted, Some(true));
        assert!(section.for_tenant("acme").hosted);
        // Set by hand, it stays, wherever the controller listens.
        section.hosted = Some(false);
        section.decide_hosted("10.0.0.2:50051".parse().unwrap());
        assert_eq!(section.hosted, Some(false));

        let bad: Config = toml::from_str(
            "[controller.url_policy.tenants.acme]\ndeny_hosts = [\"https://x.example/\"]\n",
        )
        .unwrap();
        let error = bad.validate().unwrap_err();
        assert!(
            error.starts_with("controller.url_policy.tenants.acme.deny_hosts"),
            "{error}"
        );
        let error = toml::from_str::<Config>("[controller.url_policy]\nhostd = true\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("hostd"), "{error}");
    }
}
