//! The gateway's configuration: a `[gateway]` table in TOML, then flags. Validated once at
//! start; a bad value stops the program naming the key.

use std::collections::HashMap;

use nanomuse_common::HopSecret;
use nanomuse_common::tokens::{Plaintext, TokenTable};
use serde::Deserialize;

use crate::protocol;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayConfig {
    /// device token → tenant: `"sha256:<hex>" = "tenant"` (the token's digest), or the token
    /// itself (taken with a warning). A secrets file (`NANOMUSE_DEVICE_TOKENS_FILE`) adds
    /// digests.
    pub device_tokens: HashMap<String, String>,
    /// The deployment's shared secret: the controller's gRPC calls must carry it. Empty: calls
    /// are taken without it, which [`crate::run`] allows on loopback only.
    /// `NANOMUSE_HOP_SECRET` overrides it.
    pub hop_secret: String,
    /// How long an op may wait for the phone's answer (an op's own longer bound wins).
    pub op_timeout_ms: u64,
    /// Requests waiting for one phone's answers at most.
    pub max_pending: usize,
    /// The largest WebSocket message accepted from a phone.
    pub max_message_bytes: usize,
    pub ping_interval_ms: u64,
    /// A phone silent (not even a pong) for this long is dropped.
    pub silence_limit_ms: u64,
    /// How long a new connection has to say hello.
    pub hello_within_ms: u64,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            device_tokens: HashMap::new(),
            hop_secret: String::new(),
            op_timeout_ms: 30_000,
            max_pending: protocol::MAX_PENDING,
            max_message_bytes: protocol::MAX_MESSAGE_BYTES,
            ping_interval_ms: protocol::PING_INTERVAL_MS,
            silence_limit_ms: protocol::SILENCE_LIMIT_MS,
            hello_within_ms: protocol::HELLO_WITHIN_MS,
        }
    }
}

impl GatewayConfig {
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            ("gateway.op_timeout_ms", self.op_timeout_ms),
            ("gateway.ping_interval_ms", self.ping_interval_ms),
            ("gateway.silence_limit_ms", self.silence_limit_ms),
            ("gateway.hello_within_ms", self.hello_within_ms),
            ("gateway.max_pending", self.max_pending as u64),
        ] {
            if value == 0 {
                return Err(format!("{name} must be above 0"));
            }
        }
        if self.max_message_bytes < 64 * 1024 {
            return Err("gateway.max_message_bytes must be at least 65536".into());
        }
        if self.silence_limit_ms <= self.ping_interval_ms {
            return Err("gateway.silence_limit_ms must be above ping_interval_ms".into());
        }
        self.device_token_table()?;
        self.hop_secret()?;
        Ok(())
    }

    /// The device tokens, by digest.
    pub fn device_token_table(&self) -> Result<TokenTable, String> {
        TokenTable::from_entries(
            &self.device_tokens,
            "gateway.device_tokens",
            Plaintext::Allowed,
        )
    }

    /// The hop secret, when one is set.
    pub fn hop_secret(&self) -> Result<Option<HopSecret>, String> {
        HopSecret::parse(&self.hop_secret, "gateway.hop_secret")
    }
}
