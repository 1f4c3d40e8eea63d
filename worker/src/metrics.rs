//! The worker's Prometheus series: its browsers and pages, its capacity, Chromium's memory and
//! launches. Ops are counted by the gRPC layer every service shares. Gauges are read from the
//! pool at scrape time.

use std::sync::{OnceLock, Weak};

use nanomuse_common::metrics::{Counter, Gauge, descendants_resident_bytes, on_scrape, register};

use crate::profiles::Pool;

pub struct WorkerMetrics {
    pub launches: Counter,
    browsers: Gauge,
    browsers_ahead: Gauge,
    pages: Gauge,
    capacity: Gauge,
    chromium_memory: Gauge,
}

static METRICS: OnceLock<WorkerMetrics> = OnceLock::new();

/// The worker's series, registered on first use.
pub fn metrics() -> &'static WorkerMetrics {
    METRICS.get_or_init(|| WorkerMetrics {
        launches: register(
            "nanomuse_worker_browser_launches",
            "Chromium launches (first use of a profile, after idling, after a crash)",
            Counter::default(),
        ),
        browsers: register(
            "nanomuse_worker_browsers",
            "Chromium browsers running (one per profile in use)",
            Gauge::default(),
        ),
        browsers_ahead: register(
            "nanomuse_worker_browsers_ahead",
            "Browsers launched ahead, ready for a workspace that has no profile yet",
            Gauge::default(),
        ),
        pages: register("nanomuse_worker_pages", "Pages open", Gauge::default()),
        capacity: register(
            "nanomuse_worker_capacity",
            "Actions this worker carries out at once",
            Gauge::default(),
        ),
        chromium_memory: register(
            "nanomuse_worker_chromium_memory_bytes",
            "Resident memory of the worker's Chromium processes",
            Gauge::default(),
        ),
    })
}

/// Registers the series and reads `pool` at each scrape (while it lives).
pub fn watch(pool: Weak<Pool>, capacity: u32) {
    let metrics = metrics();
    metrics.capacity.set(i64::from(capacity));
    on_scrape(move || {
        if let Some(pool) = pool.upgrade() {
            let (browsers, pages) = pool.counts();
            metrics.browsers.set(browsers as i64);
            metrics.browsers_ahead.set(pool.warm.ready() as i64);
            metrics.pages.set(pages as i64);
            metrics
                .chromium_memory
                .set(descendants_resident_bytes() as i64);
        }
    });
}
