//! Prometheus metrics of every binary, in one place: one registry per process, served as
//! `GET /metrics` on the service's own port. Each service registers its families once at start
//! (so every series is listed from the first scrape) and may add a hook that refreshes its
//! gauges at scrape time. Labels never hold a tenant, a thread or a URL.

use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::Duration;

use prometheus_client::encoding::text::encode;
pub use prometheus_client::metrics::counter::Counter;
pub use prometheus_client::metrics::family::Family;
pub use prometheus_client::metrics::gauge::Gauge;
pub use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};

type ScrapeHook = Box<dyn Fn() + Send + Sync>;

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);
static HOOKS: LazyLock<Mutex<Vec<ScrapeHook>>> = LazyLock::new(Default::default);

/// Labels of one series: a fixed set of names, values from a small known set.
pub type Labels<const N: usize> = [(&'static str, String); N];
pub type CounterFamily<const N: usize> = Family<Labels<N>, Counter>;
pub type HistogramFamily<const N: usize> = Family<Labels<N>, Histogram, fn() -> Histogram>;

/// Registers `metric` under `name` and hands it back (metrics are cheap shared handles).
pub fn register<M: Metric + Clone>(name: &str, help: &str, metric: M) -> M {
    REGISTRY
        .lock()
        .unwrap()
        .register(name, help, metric.clone());
    metric
}

/// A histogram family with the given bucket bounds (seconds).
pub fn histograms<const N: usize>(name: &str, help: &str, kind: Buckets) -> HistogramFamily<N> {
    let make: fn() -> Histogram = match kind {
        Buckets::Latency => || Histogram::new(LATENCY_BUCKETS.iter().copied()),
        Buckets::Wait => || Histogram::new(WAIT_BUCKETS.iter().copied()),
    };
    register(name, help, Family::new_with_constructor(make))
}

/// The bucket bounds of a histogram.
#[derive(Debug, Clone, Copy)]
pub enum Buckets {
    /// Actions and calls: 5 ms to a minute.
    Latency,
    /// A person's turn: a second to half an hour.
    Wait,
}

const LATENCY_BUCKETS: [f64; 13] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];
pub const WAIT_BUCKETS: [f64; 9] = [1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0];

/// Runs `hook` before each scrape, to bring gauges read from live state up to date.
pub fn on_scrape(hook: impl Fn() + Send + Sync + 'static) {
    HOOKS.lock().unwrap().push(Box::new(hook));
}

/// The exposition text of every registered series.
pub fn render() -> String {
    for hook in HOOKS.lock().unwrap().iter() {
        hook();
    }
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &REGISTRY.lock().unwrap());
    text
}

/// `GET /metrics`, to merge into a service's router.
pub fn router() -> axum::Router {
    axum::Router::new().route(
        "/metrics",
        axum::routing::get(|| async {
            (
                [(
                    http::header::CONTENT_TYPE,
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                )],
                render(),
            )
        }),
    )
}

/// The calls a process serves and makes, counted by the trace layers.
#[derive(Debug)]
pub struct RpcMetrics {
    served: CounterFamily<3>,
    serve_time: HistogramFamily<2>,
    called: CounterFamily<3>,
}

impl RpcMetrics {
    pub(crate) fn served(&self, service: &str, method: &str, code: tonic::Code, took: Duration) {
        // A method nobody serves would otherwise add a series per made-up name.
        let method = if code == tonic::Code::Unimplemented {
            "unknown"
        } else {
            method
        };
        self.served
            .get_or_create(&[
                ("service", service.to_string()),
                ("method", method.to_string()),
                ("code", code_name(code).to_string()),
            ])
            .inc();
        self.serve_time
            .get_or_create(&[
                ("service", service.to_string()),
                ("method", method.to_string()),
            ])
            .observe(took.as_secs_f64());
    }

    pub(crate) fn called(&self, service: &str, method: &str, code: tonic::Code) {
        self.called
            .get_or_create(&[
                ("service", service.to_string()),
                ("method", method.to_string()),
                ("code", code_name(code).to_string()),
            ])
            .inc();
    }
}

static RPC: OnceLock<RpcMetrics> = OnceLock::new();

pub(crate) fn rpc() -> &'static RpcMetrics {
    RPC.get_or_init(|| RpcMetrics {
        served: register(
            "nanomuse_grpc_server_requests",
            "gRPC calls served, by service, method and status code",
            Family::default(),
        ),
        serve_time: histograms(
            "nanomuse_grpc_server_duration_seconds",
            "Time to serve a gRPC call",
            Buckets::Latency,
        ),
        called: register(
            "nanomuse_grpc_client_requests",
            "gRPC calls made to other services, by service, method and status code",
            Family::default(),
        ),
    })
}

/// Registers what every process exports: its build, its memory and the RPC counters.
pub(crate) fn init(service: &'static str) {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let build: Family<Labels<2>, Gauge> = register(
            "nanomuse_build_info",
            "The service and version of this process (always 1)",
            Family::default(),
        );
        build
            .get_or_create(&[
                ("service", service.to_string()),
                ("version", env!("CARGO_PKG_VERSION").to_string()),
            ])
            .set(1);
        let memory: Gauge = register(
            "process_resident_memory_bytes",
            "Resident memory of this process",
            Gauge::default(),
        );
        on_scrape(move || {
            memory.set(resident_bytes(std::process::id()).unwrap_or(0) as i64);
        });
        rpc();
    });
}

/// Resident memory of process `pid`, from `/proc` (Linux).
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

/// Resident memory of every descendant of this process (a worker's Chromium and its helpers).
pub fn descendants_resident_bytes() -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut parent_of = std::collections::HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // The parent is the 4th field of /proc/PID/stat, after the parenthesised name.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if let Some(parent) = parent {
            parent_of.insert(pid, parent);
        }
    }
    let me = std::process::id();
    let descends_from_me = |mut pid: u32| {
        for _ in 0..64 {
            match parent_of.get(&pid) {
                Some(&parent) if parent == me => return true,
                Some(&parent) if parent > 1 => pid = parent,
                _ => return false,
            }
        }
        false
    };
    parent_of
        .keys()
        .filter(|&&pid| descends_from_me(pid))
        .filter_map(|&pid| resident_bytes(pid))
        .sum()
}

/// The outcome label of a failed call or action: the gRPC code's name in snake case.
pub fn outcome_of(code: tonic::Code) -> &'static str {
    match code {
        tonic::Code::Ok => "ok",
        tonic::Code::Cancelled => "cancelled",
        tonic::Code::Unknown => "unknown",
        tonic::Code::InvalidArgument => "invalid_argument",
        tonic::Code::DeadlineExceeded => "deadline_exceeded",
        tonic::Code::NotFound => "not_found",
        tonic::Code::AlreadyExists => "already_exists",
        tonic::Code::PermissionDenied => "permission_denied",
        tonic::Code::ResourceExhausted => "resource_exhausted",
        tonic::Code::FailedPrecondition => "failed_precondition",
        tonic::Code::Aborted => "aborted",
        tonic::Code::OutOfRange => "out_of_range",
        tonic::Code::Unimplemented => "unimplemented",
        tonic::Code::Internal => "internal",
        tonic::Code::Unavailable => "unavailable",
        tonic::Code::DataLoss => "data_loss",
        tonic::Code::Unauthenticated => "unauthenticated",
    }
}

/// The gRPC code as its protocol name (`OK`, `NOT_FOUND`, …).
fn code_name(code: tonic::Code) -> String {
    if code == tonic::Code::Ok {
        return "OK".into();
    }
    outcome_of(code).to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_counter_is_rendered_with_its_labels() {
        let counter: CounterFamily<1> =
            register("nanomuse_test_things", "Things", Family::default());
        counter.get_or_create(&[("kind", "a".to_string())]).inc();
        let text = render();
        assert!(
            text.contains("# TYPE nanomuse_test_things counter"),
            "{text}"
        );
        assert!(
            text.contains("nanomuse_test_things_total{kind=\"a\"} 1"),
            "{text}"
        );
    }

    #[test]
    fn this_process_has_resident_memory() {
        assert!(resident_bytes(std::process::id()).unwrap() > 0);
    }
}
