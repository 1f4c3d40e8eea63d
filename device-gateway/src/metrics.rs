//! The gateway's Prometheus series: phones connected, ops forwarded to them by op and outcome,
//! requests waiting for an answer, and the WebSocket's connections and errors by kind.

use std::sync::{OnceLock, Weak};
use std::time::Duration;

use nanomuse_common::metrics::{
    Buckets, Counter, CounterFamily, Family, Gauge, HistogramFamily, histograms, on_scrape,
    register,
};

use crate::phones::Phones;

pub struct GatewayMetrics {
    ops: CounterFamily<2>,
    op_time: HistogramFamily<1>,
    pub connections: Counter,
    socket_errors: CounterFamily<1>,
    devices: Gauge,
    pending: Gauge,
}

/// Why a phone's connection went wrong, as the `kind` label says it.
#[derive(Debug, Clone, Copy)]
pub enum SocketError {
    BadHello,
    BadToken,
    Malformed,
    Oversized,
    Silent,
    Replaced,
}

impl GatewayMetrics {
    pub fn op_done(&self, op: &'static str, outcome: &'static str, took: Duration) {
        self.ops
            .get_or_create(&[("op", op.into()), ("outcome", outcome.into())])
            .inc();
        self.op_time
            .get_or_create(&[("op", op.into())])
            .observe(took.as_secs_f64());
    }

    pub fn socket_error(&self, kind: SocketError) {
        let kind = match kind {
            SocketError::BadHello => "bad_hello",
            SocketError::BadToken => "bad_token",
            SocketError::Malformed => "malformed",
            SocketError::Oversized => "oversized",
            SocketError::Silent => "silent",
            SocketError::Replaced => "replaced",
        };
        self.socket_errors
            .get_or_create(&[("kind", kind.into())])
            .inc();
    }
}

static METRICS: OnceLock<GatewayMetrics> = OnceLock::new();

/// The gateway's series, registered on first use.
pub fn metrics() -> &'static GatewayMetrics {
    METRICS.get_or_init(|| GatewayMetrics {
        ops: register(
            "nanomuse_gateway_device_ops",
            "Ops forwarded to phones, by op and outcome",
            Family::default(),
        ),
        op_time: histograms(
            "nanomuse_gateway_device_op_duration_seconds",
            "Time from forwarding an op to the phone's answer, by op",
            Buckets::Latency,
        ),
        connections: register(
            "nanomuse_gateway_websocket_connections",
            "Phone connections admitted",
            Counter::default(),
        ),
        socket_errors: register(
            "nanomuse_gateway_websocket_errors",
            "Phone connections refused or ended in error, and malformed messages, by kind",
            Family::default(),
        ),
        devices: register(
            "nanomuse_gateway_devices_connected",
            "Phones connected",
            Gauge::default(),
        ),
        pending: register(
            "nanomuse_gateway_pending_ops",
            "Ops sent to phones and not answered yet",
            Gauge::default(),
        ),
    })
}

/// Registers the series and reads `phones` at each scrape (while they live).
pub fn watch(phones: Weak<Phones>) {
    let metrics = metrics();
    on_scrape(move || {
        if let Some(phones) = phones.upgrade() {
            let all = phones.all();
            metrics.devices.set(all.len() as i64);
            metrics
                .pending
                .set(all.iter().map(|phone| phone.pending_count()).sum::<usize>() as i64);
        }
    });
}
