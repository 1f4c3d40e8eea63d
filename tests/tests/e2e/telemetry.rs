//! Traces, logs and metrics across the deployed processes: the `controller`, `worker`,
//! `device-gateway` and `reference-device` binaries, each exporting its spans over OTLP/gRPC
//! to a collector played by this test (a tonic server of the collector's `TraceService`).
//! A `click n` on each backend is one trace from the agent's call to the Chromium or phone that
//! carried it out, with each span's parent in the trace; no span holds the typed text, the
//! cookie or the fetched body; a log line inside an op carries its trace id; and `/metrics` of
//! each service shows the named series with plausible values.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::{Html, IntoResponse};
use axum::routing::get;
use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use nanomuse_tests::*;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use serde_json::{Value, json};
use tokio::sync::Notify;

const TYPED: &str = "typed-secret-91c4";
const COOKIE: &str = "cookie-secret-7f3a";
const DEVICE_TOKEN: &str = "device-token-of-local-001";

/// A page with a button and a field, that sets a cookie; `/echo` answers with the cookie.
async fn serve_secret_site() -> SocketAddr {
    let page = r#"<!doctype html><title>Secret</title><body style="margin:0">
<button id="press" style="position:absolute;left:10px;top:10px;width:200px;height:50px"
  onclick="this.textContent = 'Pressed!'">Press</button>
<input id="field" aria-label="field" style="position:absolute;left:10px;top:120px;width:200px;height:30px">
</body>"#;
    let app =
        axum::Router::new()
            .route(
                "/secret",
                get(move || async move {
                    (
                        [("set-cookie", format!("session={COOKIE}; Path=/"))],
                        Html(page),
                    )
                        .into_response()
                }),
            )
            .route(
                "/echo",
                get(|headers: axum::http::HeaderMap| async move {
                    format!("{:?}", headers.get("cookie"))
                }),
            );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

/// One exported span, with the `service.name` of the process that sent it.
#[derive(Debug, Clone)]
struct Received {
    service: String,
    span: opentelemetry_proto::tonic::trace::v1::Span,
}

impl Received {
    fn trace_id(&self) -> String {
        hex(&self.span.trace_id)
    }
    fn span_id(&self) -> String {
        hex(&self.span.span_id)
    }
    fn parent_id(&self) -> String {
        hex(&self.span.parent_span_id)
    }
    /// Every string in its attributes and its events' attributes.
    fn attribute_texts(&self) -> Vec<String> {
        let mut texts = Vec::new();
        let events = self.span.events.iter().map(|e| (&e.name, &e.attributes));
        for attributes in std::iter::once(&self.span.attributes).chain(events.map(|(_, a)| a)) {
            texts.extend(attributes.iter().map(text_of));
        }
        texts.extend(self.span.events.iter().map(|e| e.name.clone()));
        texts.push(self.span.name.clone());
        texts
    }
}

fn text_of(attribute: &KeyValue) -> String {
    let value = match attribute.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(text)) => text.clone(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    };
    format!("{}={value}", attribute.key)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The collector: keeps every span it is sent and says when more arrive.
#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<Received>>>,
    arrived: Arc<Notify>,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.spans.lock().unwrap();
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|a| a.key == "service.name")
                .map(|a| text_of(a).trim_start_matches("service.name=").to_string())
                .unwrap_or_default();
            for scope in resource_spans.scope_spans {
                for span in scope.spans {
                    spans.push(Received {
                        service: service.clone(),
                        span,
                    });
                }
            }
        }
        self.arrived.notify_waiters();
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Collector {
    async fn start() -> (Self, SocketAddr) {
        let collector = Self::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(collector.clone()))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener));
        tokio::spawn(server);
        (collector, address)
    }

    /// The spans of `trace_id` once `complete` says they are all there (each export wakes the
    /// check); panics after 30 s with what did arrive.
    async fn trace(&self, trace_id: &str, complete: impl Fn(&[Received]) -> bool) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let arrived = self.arrived.notified();
            let spans: Vec<Received> = self
                .spans
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.trace_id() == trace_id)
                .cloned()
                .collect();
            if complete(&spans) {
                return spans;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                panic!(
                    "trace {trace_id} incomplete after 30 s: {:#?}",
                    summary(&spans)
                );
            }
        }
    }

    fn all(&self) -> Vec<Received> {
        self.spans.lock().unwrap().clone()
    }
}

fn summary(spans: &[Received]) -> Vec<String> {
    spans
        .iter()
        .map(|s| {
            format!(
                "{} {} id={} parent={}",
                s.service,
                s.span.name,
                s.span_id(),
                s.parent_id()
            )
        })
        .collect()
}

/// A process of ours, exporting to the collector, its stderr kept in `log`.
fn spawn(binary: &str, args: &[&str], collector: SocketAddr, log: &Path) -> tokio::process::Child {
    let mut command = tokio::process::Command::new(built_binary(binary));
    command
        .args(args)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{collector}"))
        // Export within a tenth of a second rather than the default five.
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("RUST_LOG", "info,chromiumoxide=error")
        .env("NANOMUSE_LOG_JSON", "true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .kill_on_drop(true);
    command.spawn().expect("cannot start the binary")
}

/// A W3C parent for an action: the agent's own span, in a trace of the test's choosing.
fn traceparent(trace: u8) -> (String, String, String) {
    let trace_id = format!("{trace:02x}{}", "ab".repeat(15));
    let parent_id = format!("{trace:02x}{}", "cd".repeat(7));
    (format!("00-{trace_id}-{parent_id}-01"), trace_id, parent_id)
}

struct Agent {
    tool: nanomuse_proto::browser_tool_client::BrowserToolClient<tonic::transport::Channel>,
}

impl Agent {
    async fn act(&mut self, thread: &str, backend: &str, action: Action, trace: u8) -> ActReply {
        let mut request = tonic::Request::new(act_on(thread, backend, action));
        let (traceparent, _, _) = traceparent(trace);
        request
            .metadata_mut()
            .insert("traceparent", traceparent.parse().unwrap());
        self.tool
            .act(request)
            .await
            .unwrap_or_else(|e| panic!("{thread}: {e}"))
            .into_inner()
    }
}

/// Navigate, type the secret, fetch with the cookie, then the click, each in a trace of its
/// own: the click's is `trace`, the others' follow it.
async fn scenario(agent: &mut Agent, site: SocketAddr, thread: &str, backend: &str, trace: u8) {
    let page = agent
        .act(
            thread,
            backend,
            Action::Navigate(NavigateAction {
                url: format!("http://{site}/secret"),
            }),
            trace + 1,
        )
        .await;
    let field = element(&page, "field");
    agent
        .act(
            thread,
            backend,
            Action::Type(TypeAction {
                n: field,
                text: TYPED.into(),
            }),
            trace + 2,
        )
        .await;
    let fetched = agent
        .act(
            thread,
            backend,
            Action::Fetch(FetchAction {
                url: format!("http://{site}/echo"),
                ..Default::default()
            }),
            trace + 3,
        )
        .await;
    assert!(
        fetched.text.contains(COOKIE),
        "the fetch sent the cookie: {}",
        fetched.text
    );
    let press = element(&page, "Press");
    let clicked = agent
        .act(
            thread,
            backend,
            Action::Click(ClickAction {
                n: press,
                ..Default::default()
            }),
            trace,
        )
        .await;
    assert!(clicked.text.contains("Pressed!"), "{}", clicked.text);
}

/// Every span of the trace has its parent in the trace, or is the child of the agent's span:
/// no hop lost the context (and every parent has arrived).
fn linked(spans: &[Received], agent_span: &str) -> bool {
    let ids: HashSet<String> = spans.iter().map(Received::span_id).collect();
    spans
        .iter()
        .all(|span| span.parent_id() == agent_span || ids.contains(&span.parent_id()))
}

/// The span named `name` from `service`, whose parent is named `parent_name` from
/// `parent_service`.
fn assert_child(
    spans: &[Received],
    (service, name): (&str, &str),
    (parent_service, parent_name): (&str, &str),
) {
    let by_id: HashMap<String, &Received> = spans.iter().map(|s| (s.span_id(), s)).collect();
    let found = spans.iter().any(|s| {
        named(s, service, name)
            && by_id
                .get(&s.parent_id())
                .is_some_and(|p| p.service == parent_service && p.span.name == parent_name)
    });
    assert!(
        found,
        "no {service} '{name}' under {parent_service} '{parent_name}': {:#?}",
        summary(spans)
    );
}

/// A span's name is `name`, or starts with it (the CDP spans name every command they send).
fn named(span: &Received, service: &str, name: &str) -> bool {
    span.service == service && span.span.name.starts_with(name)
}

fn has(spans: &[Received], service: &str, name: &str) -> bool {
    spans.iter().any(|s| named(s, service, name))
}

/// The value of the first sample of `name` whose labels include all of `labels`.
fn sample(metrics: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (series_name, series_labels) = match series.split_once('{') {
            Some((n, l)) => (n, l),
            None => (series, ""),
        };
        (series_name == name
            && labels
                .iter()
                .all(|(k, v)| series_labels.contains(&format!("{k}=\"{v}\""))))
        .then(|| value.parse().ok())?
    })
}

async fn scrape(address: SocketAddr) -> String {
    let response = reqwest::get(format!("http://{address}/metrics"))
        .await
        .unwrap();
    assert!(response.status().is_success(), "/metrics of {address}");
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_trace_per_click_on_either_backend_without_secrets_and_metrics_on_each_service() {
    let (collector, collector_address) = Collector::start().await;
    let site = serve_secret_site().await;
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();

    let gateway_address = free_address();
    let gateway_arg = gateway_address.to_string();
    let token_arg = format!("{DEVICE_TOKEN}=local");
    let mut gateway = spawn(
        "device-gateway",
        &["--listen", &gateway_arg, "--device-token", &token_arg],
        collector_address,
        &logs.join("gateway.log"),
    );
    let controller_address = free_address();
    let config = logs.join("controller.toml");
    std::fs::write(
        &config,
        format!(
            "[controller]\nheartbeat_interval_ms = 100\nheartbeat_timeout_ms = 2000\n\
             gateways = [\"http://{gateway_address}\"]\n"
        ),
    )
    .unwrap();
    let mut controller = spawn(
        "controller",
        &[
            "--listen",
            &controller_address.to_string(),
            "--data",
            logs.join("controller").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        collector_address,
        &logs.join("controller.log"),
    );
    let endpoint =
        tonic::transport::Channel::from_shared(format!("http://{controller_address}")).unwrap();
    let channel = until_up(&mut controller, "controller", || endpoint.connect()).await;
    let worker_address = free_address();
    let worker_config = logs.join("worker.toml");
    let worker_settings = registered_worker_config(&logs.join("w1"), "w1", controller_address, 4);
    std::fs::write(
        &worker_config,
        toml::to_string(&std::collections::BTreeMap::from([(
            "worker",
            &worker_settings,
        )]))
        .unwrap(),
    )
    .unwrap();
    let worker = spawn(
        "worker",
        &[
            "--listen",
            &worker_address.to_string(),
            "--config",
            worker_config.to_str().unwrap(),
        ],
        collector_address,
        &logs.join("worker.log"),
    );
    let device = spawn(
        "reference-device",
        &[
            "--gateway",
            &format!("ws://{gateway_address}/device"),
            "--device-id",
            "reference-phone",
            "--token",
            DEVICE_TOKEN,
            "--profiles",
            logs.join("phone").to_str().unwrap(),
            "--timeout-ms",
            "15000",
        ],
        collector_address,
        &logs.join("device.log"),
    );
    let http = reqwest::Client::new();
    let state_url = format!("http://{controller_address}/api/state");
    // Registration and the phone's arrival have no event to wait on from here: poll the state.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let state = http
            .get(&state_url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let state: Value = serde_json::from_str(&state).unwrap();
        let workers =
            nanomuse_proto::worker_registry_client::WorkerRegistryClient::new(channel.clone())
                .list_workers(ListWorkersRequest {})
                .await
                .unwrap()
                .into_inner()
                .workers;
        if state["devices"] == json!(["reference-phone"]) && workers.iter().any(|w| w.live) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "worker or phone missing: {state} {workers:?}"
        );
        assert!(gateway.try_wait().unwrap().is_none(), "the gateway exited");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut agent = Agent {
        tool: nanomuse_proto::browser_tool_client::BrowserToolClient::new(channel.clone()),
    };
    scenario(&mut agent, site, "t-worker", "playwright", 0x10).await;
    scenario(&mut agent, site, "t-device", "device", 0x20).await;

    // The click on the worker: agent → controller (gRPC server, action, op, gRPC client) →
    // worker (gRPC server, the op, its CDP commands).
    const TAP: &str = "nanomuse.browser.v1.BrowserBackend/Tap";
    // Mouse events on the desktop profile, touch events on the phone.
    const INPUT: &str = "Input.dispatch";
    let (_, trace_id, agent_span) = traceparent(0x10);
    let spans = collector
        .trace(&trace_id, |spans| {
            linked(spans, &agent_span)
                && has(spans, "controller", "action click")
                && has(spans, "worker", TAP)
                && has(spans, "worker", INPUT)
        })
        .await;
    assert!(
        spans.iter().any(|s| s.service == "controller"
            && s.span.name == "nanomuse.browser.v1.BrowserTool/Act"
            && s.parent_id() == agent_span),
        "the controller's call is the child of the agent's span: {:#?}",
        summary(&spans)
    );
    let act = ("controller", "nanomuse.browser.v1.BrowserTool/Act");
    assert_child(&spans, ("controller", "action click"), act);
    assert_child(
        &spans,
        ("controller", "op tap"),
        ("controller", "action click"),
    );
    assert_child(&spans, ("controller", TAP), ("controller", "op tap"));
    assert_child(&spans, ("worker", TAP), ("controller", TAP));
    assert_child(&spans, ("worker", "tap"), ("worker", TAP));
    assert_child(&spans, ("worker", INPUT), ("worker", "tap"));
    assert!(
        spans.iter().any(|s| s.service == "worker"
            && s.span.name == TAP
            && s.attribute_texts().iter().any(|t| t == "rpc.method=Tap")
            && s.attribute_texts().iter().any(|t| t == "rpc.system=grpc")),
        "OpenTelemetry's RPC attributes: {:#?}",
        summary(&spans)
    );

    // The click on the phone: controller → gateway (gRPC server, device op) → reference device
    // (device op, the op, its CDP commands).
    let (_, trace_id, agent_span) = traceparent(0x20);
    let spans = collector
        .trace(&trace_id, |spans| {
            linked(spans, &agent_span)
                && has(spans, "controller", "action click")
                && has(spans, "device-gateway", "device tap")
                && has(spans, "reference-device", INPUT)
        })
        .await;
    assert_child(&spans, ("controller", "action click"), act);
    assert_child(&spans, ("device-gateway", TAP), ("controller", TAP));
    assert_child(
        &spans,
        ("device-gateway", "device tap"),
        ("device-gateway", TAP),
    );
    assert_child(
        &spans,
        ("reference-device", "device tap"),
        ("device-gateway", "device tap"),
    );
    assert_child(
        &spans,
        ("reference-device", "tap"),
        ("reference-device", "device tap"),
    );
    assert_child(
        &spans,
        ("reference-device", INPUT),
        ("reference-device", "tap"),
    );

    // `nanomuse-browser --trace` starts the trace itself and says its id.
    let traced = |action: &'static [&'static str], sampler: Option<&'static str>| {
        let mut command = tokio::process::Command::new(built_binary("nanomuse-browser"));
        command
            .args(["--server", &format!("http://{controller_address}")])
            .args(["--thread", "t-worker", "--trace"])
            .args(action)
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://{collector_address}"),
            );
        if let Some(sampler) = sampler {
            command.env("OTEL_TRACES_SAMPLER", sampler);
        }
        async move {
            let output = command.output().await.unwrap();
            let said = String::from_utf8_lossy(&output.stderr).to_string();
            let trace = said
                .lines()
                .find_map(|line| line.strip_prefix("nanomuse-browser: trace "))
                .map(|id| id.trim().to_string());
            (output.status.code(), trace, said)
        }
    };
    let (code, trace, said) = traced(&["extract"], None).await;
    assert_eq!(code, Some(0), "{said}");
    let cli_trace = trace.unwrap_or_else(|| panic!("no trace id on stderr: {said}"));
    let spans = collector
        .trace(&cli_trace, |spans| {
            has(spans, "nanomuse-browser", "nanomuse-browser extract")
                && has(
                    spans,
                    "worker",
                    "nanomuse.browser.v1.BrowserBackend/Evaluate",
                )
                && linked(spans, "")
        })
        .await;
    assert_child(
        &spans,
        ("controller", "nanomuse.browser.v1.BrowserTool/Act"),
        ("nanomuse-browser", "nanomuse.browser.v1.BrowserTool/Act"),
    );

    // No span of any trace holds the typed text, the cookie or the fetched body.
    let all = collector.all();
    assert!(
        all.len() > 20,
        "spans of every action arrived: {}",
        all.len()
    );
    for span in &all {
        for text in span.attribute_texts() {
            assert!(
                !text.contains(TYPED) && !text.contains(COOKIE),
                "{} '{}' holds a secret: {text}",
                span.service,
                span.span.name
            );
        }
    }

    // Spans say what they are: ops named as the README says, the session as fields, not a
    // dump, and ERROR only where the caller saw an error — every action here succeeded, the
    // threads' first navigates included, whose first ops found no page open yet.
    let is_error = |span: &Received| span.span.status.as_ref().is_some_and(|s| s.code == 2);
    for span in &all {
        let name = format!("{} '{}'", span.service, span.span.name);
        assert!(!span.span.name.contains("r#"), "{name}");
        assert!(
            span.attribute_texts()
                .iter()
                .all(|text| !text.contains("Session {")),
            "{name} dumps the session: {:?}",
            span.attribute_texts()
        );
        if span.trace_id() != cli_trace {
            assert!(
                !is_error(span),
                "{name} is an ERROR though its action succeeded"
            );
        }
    }
    let typed = all
        .iter()
        .find(|span| span.service == "worker" && span.span.name == "type")
        .unwrap_or_else(|| panic!("no worker span named type: {:?}", summary(&all)));
    for field in ["tenant=local", "workspace=default", "page=t-worker"] {
        assert!(
            typed.attribute_texts().iter().any(|text| text == field),
            "{field} in {:?}",
            typed.attribute_texts()
        );
    }

    // The CLI's span fails with its action; an unsampled trace has no id to print.
    let (code, trace, said) = traced(&["click", "999"], None).await;
    assert_eq!(code, Some(1), "{said}");
    let failed_trace = trace.unwrap_or_else(|| panic!("no trace id on stderr: {said}"));
    let spans = collector
        .trace(&failed_trace, |spans| {
            has(spans, "nanomuse-browser", "nanomuse-browser click")
        })
        .await;
    let root = spans
        .iter()
        .find(|span| named(span, "nanomuse-browser", "nanomuse-browser click"))
        .unwrap();
    assert!(
        is_error(root),
        "the CLI's span of a failed click is an ERROR"
    );
    let (code, trace, said) = traced(&["state"], Some("always_off")).await;
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(trace, None, "an unsampled trace's id: {said}");

    // Metrics of each service, with no thread, tenant or URL in a label.
    let controller_metrics = scrape(controller_address).await;
    let worker_metrics = scrape(worker_address).await;
    let gateway_metrics = scrape(gateway_address).await;
    for text in [&controller_metrics, &worker_metrics, &gateway_metrics] {
        for secret in ["t-worker", "t-device", "127.0.0.1", "local\""] {
            assert!(!text.contains(secret), "a label holds {secret}:\n{text}");
        }
        assert!(sample(text, "process_resident_memory_bytes", &[]).unwrap() > 1e6);
    }
    let at_least = |text: &str, name: &str, labels: &[(&str, &str)], least: f64| {
        let value =
            sample(text, name, labels).unwrap_or_else(|| panic!("no {name}{labels:?} in\n{text}"));
        assert!(value >= least, "{name}{labels:?} = {value} < {least}");
    };
    let c = controller_metrics.as_str();
    at_least(
        c,
        "nanomuse_actions_total",
        &[("action", "click"), ("outcome", "ok")],
        2.0,
    );
    at_least(
        c,
        "nanomuse_actions_total",
        &[("action", "navigate"), ("outcome", "ok")],
        2.0,
    );
    at_least(
        c,
        "nanomuse_action_duration_seconds_count",
        &[("action", "type")],
        2.0,
    );
    at_least(
        c,
        "nanomuse_backend_ops_total",
        &[("backend", "worker"), ("op", "tap")],
        1.0,
    );
    at_least(
        c,
        "nanomuse_backend_ops_total",
        &[("backend", "device"), ("op", "tap")],
        1.0,
    );
    at_least(c, "nanomuse_frames_stored_total", &[], 4.0);
    assert_eq!(sample(c, "nanomuse_workers_live", &[]), Some(1.0));
    assert_eq!(sample(c, "nanomuse_worker_capacity_slots", &[]), Some(4.0));
    assert_eq!(sample(c, "nanomuse_devices_connected", &[]), Some(1.0));
    assert_eq!(sample(c, "nanomuse_holds_open", &[]), Some(0.0));
    assert_eq!(sample(c, "nanomuse_queue_length", &[]), Some(0.0));
    at_least(
        c,
        "nanomuse_grpc_server_requests_total",
        &[("method", "Act"), ("code", "OK")],
        8.0,
    );
    let w = worker_metrics.as_str();
    at_least(
        w,
        "nanomuse_grpc_server_requests_total",
        &[("method", "Tap"), ("code", "OK")],
        1.0,
    );
    assert_eq!(sample(w, "nanomuse_worker_browsers", &[]), Some(1.0));
    at_least(w, "nanomuse_worker_pages", &[], 1.0);
    at_least(w, "nanomuse_worker_browser_launches_total", &[], 1.0);
    assert_eq!(sample(w, "nanomuse_worker_capacity", &[]), Some(4.0));
    at_least(w, "nanomuse_worker_chromium_memory_bytes", &[], 1e7);
    let g = gateway_metrics.as_str();
    assert_eq!(
        sample(g, "nanomuse_gateway_devices_connected", &[]),
        Some(1.0)
    );
    at_least(
        g,
        "nanomuse_gateway_device_ops_total",
        &[("op", "tap"), ("outcome", "ok")],
        1.0,
    );
    at_least(g, "nanomuse_gateway_websocket_connections_total", &[], 1.0);
    assert_eq!(sample(g, "nanomuse_gateway_pending_ops", &[]), Some(0.0));

    // A log line written inside the worker's op carries the op's trace id.
    let (_, navigate_trace, _) = traceparent(0x11);
    let worker_log = std::fs::read_to_string(logs.join("worker.log")).unwrap();
    let launched = worker_log
        .lines()
        .find(|line| line.contains("chromium launched"))
        .unwrap_or_else(|| panic!("no launch logged:\n{worker_log}"));
    let launched: Value = serde_json::from_str(launched).unwrap();
    assert_eq!(launched["trace_id"], json!(navigate_trace), "{launched}");

    // SIGTERM, so that the worker and the device close their Chromium (a kill would orphan it).
    for mut child in [device, worker, controller, gateway] {
        let pid = child.id().expect("still running").to_string();
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        child.wait().await.unwrap();
    }
}
