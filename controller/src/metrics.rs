//! The controller's Prometheus series: actions by kind and outcome, ops by backend, the fleet's
//! capacity and queue, holds and phones. Counters move where things happen; gauges are read
//! from the live state at scrape time. No tenant, thread or URL in any label.

use std::sync::{OnceLock, Weak};
use std::time::Duration;

use nanomuse_common::metrics::{
    Buckets, Counter, CounterFamily, Family, Gauge, Histogram, HistogramFamily, histograms,
    on_scrape, register,
};

use crate::app::Controller;

pub struct ControllerMetrics {
    actions: CounterFamily<2>,
    action_time: HistogramFamily<1>,
    ops: CounterFamily<3>,
    op_time: HistogramFamily<2>,
    pub queue_rejections: Counter,
    hold_wait: Histogram,
    pub frames_stored: Counter,
    workers_registered: Gauge,
    workers_live: Gauge,
    capacity_slots: Gauge,
    busy_slots: Gauge,
    queue_length: Gauge,
    holds_open: Gauge,
    devices_connected: Gauge,
}

impl ControllerMetrics {
    pub fn action_done(&self, action: &'static str, outcome: &'static str, took: Duration) {
        self.actions
            .get_or_create(&[("action", action.into()), ("outcome", outcome.into())])
            .inc();
        self.action_time
            .get_or_create(&[("action", action.into())])
            .observe(took.as_secs_f64());
    }

    pub fn op_done(&self, backend: &'static str, op: &'static str, outcome: &str, took: Duration) {
        self.ops
            .get_or_create(&[
                ("backend", backend.into()),
                ("op", op.into()),
                ("outcome", outcome.into()),
            ])
            .inc();
        self.op_time
            .get_or_create(&[("backend", backend.into()), ("op", op.into())])
            .observe(took.as_secs_f64());
    }

    pub fn hold_waited(&self, took: Duration) {
        self.hold_wait.observe(took.as_secs_f64());
    }

    fn refresh(&self, controller: &Controller) {
        let workers = controller.scheduler.statuses().unwrap_or_default();
        let live = workers.iter().filter(|worker| worker.live);
        self.workers_registered.set(workers.len() as i64);
        self.workers_live.set(live.clone().count() as i64);
        self.capacity_slots
            .set(live.clone().map(|w| i64::from(w.capacity)).sum());
        self.busy_slots.set(live.map(|w| i64::from(w.busy)).sum());
        self.queue_length.set(controller.scheduler.waiting() as i64);
        self.holds_open.set(controller.holds.open_count() as i64);
        self.devices_connected
            .set(controller.devices.connected_count() as i64);
    }
}

static METRICS: OnceLock<ControllerMetrics> = OnceLock::new();

/// The controller's series, registered on first use.
pub fn metrics() -> &'static ControllerMetrics {
    METRICS.get_or_init(|| ControllerMetrics {
        actions: register(
            "nanomuse_actions",
            "Agent actions, by action and outcome (ok or the error's kind)",
            Family::default(),
        ),
        action_time: histograms(
            "nanomuse_action_duration_seconds",
            "Time from an action's call to its reply, by action",
            Buckets::Latency,
        ),
        ops: register(
            "nanomuse_backend_ops",
            "Ops sent to backends, by backend kind (worker, device), op and outcome",
            Family::default(),
        ),
        op_time: histograms(
            "nanomuse_backend_op_duration_seconds",
            "Time of an op on its backend, by backend kind and op",
            Buckets::Latency,
        ),
        queue_rejections: register(
            "nanomuse_queue_rejections",
            "Actions refused because every browser slot stayed busy or the queue was full",
            Counter::default(),
        ),
        hold_wait: register(
            "nanomuse_hold_wait_seconds",
            "How long agent actions waited for the user to hand a page back",
            Histogram::new(nanomuse_common::metrics::WAIT_BUCKETS),
        ),
        frames_stored: register(
            "nanomuse_frames_stored",
            "Frames (pictures of a page) stored",
            Counter::default(),
        ),
        workers_registered: register(
            "nanomuse_workers_registered",
            "Workers known to the controller",
            Gauge::default(),
        ),
        workers_live: register(
            "nanomuse_workers_live",
            "Workers heard from within the heartbeat timeout",
            Gauge::default(),
        ),
        capacity_slots: register(
            "nanomuse_worker_capacity_slots",
            "Actions the live workers can carry at once",
            Gauge::default(),
        ),
        busy_slots: register(
            "nanomuse_worker_busy_slots",
            "Actions in flight on the workers",
            Gauge::default(),
        ),
        queue_length: register(
            "nanomuse_queue_length",
            "Actions waiting for a worker slot",
            Gauge::default(),
        ),
        holds_open: register(
            "nanomuse_holds_open",
            "Pages with the user now (open holds)",
            Gauge::default(),
        ),
        devices_connected: register(
            "nanomuse_devices_connected",
            "Phones with a browser connected, as the controller sees them",
            Gauge::default(),
        ),
    })
}

/// Registers the series and reads `controller`'s state at each scrape (while it lives).
pub fn watch(controller: Weak<Controller>) {
    let metrics = metrics();
    on_scrape(move || {
        if let Some(controller) = controller.upgrade() {
            metrics.refresh(&controller);
        }
    });
}
