//! Traces and logs of every binary, in one place. Spans go to OpenTelemetry (exported over
//! OTLP/gRPC when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and only then) and log lines to stderr as
//! text or JSON; a line written inside a span carries that span's trace id. The W3C trace
//! context crosses every hop: [`ServerTraceLayer`] and [`ClientTraceLayer`] carry it in gRPC
//! metadata, [`current_traceparent`] and [`set_remote_parent`] inside the phone's messages.

use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::dispatcher::WeakDispatch;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::{LookupSpan, Registry};
use tracing_subscriber::util::SubscriberInitExt;

use crate::metrics;

/// Keeps the tracer alive; dropping it flushes the spans not yet exported.
#[must_use = "dropping the guard flushes and stops the trace export"]
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // Nothing to say when nothing is exported or the collector is gone at exit.
        let _ = self.provider.shutdown();
    }
}

/// chromiumoxide warns about every CDP event its types do not know (Chromium adds some with each
/// release), on every action: noise a user reads as a fault. Its errors stay; `RUST_LOG` naming
/// chromiumoxide brings the rest back.
fn quiet_cdp_noise(filter: tracing_subscriber::EnvFilter) -> tracing_subscriber::EnvFilter {
    if std::env::var("RUST_LOG").is_ok_and(|value| value.contains("chromiumoxide")) {
        return filter;
    }
    ["chromiumoxide::handler=error", "chromiumoxide::conn=error"]
        .into_iter()
        .fold(filter, |filter, directive| {
            filter.add_directive(directive.parse().expect("a valid directive"))
        })
}

/// Installs tracing for `service` (the OpenTelemetry `service.name` unless
/// `OTEL_SERVICE_NAME` says otherwise); `default_filter` applies when `RUST_LOG` is unset.
/// Must be called inside the Tokio runtime (the OTLP exporter is a tonic client).
pub fn init(service: &'static str, json_logs: bool, default_filter: &str) -> Telemetry {
    let mut resource = opentelemetry_sdk::Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(service);
    }
    let mut provider = SdkTracerProvider::builder().with_resource(resource.build());
    let mut export_problem = None;
    if std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || std::env::var_os("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some()
    {
        match opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .build()
        {
            Ok(exporter) => provider = provider.with_batch_exporter(exporter),
            Err(error) => export_problem = Some(error.to_string()),
        }
    }
    let provider = provider.build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let tracer = provider.tracer(service);

    // Spans have a filter of their own: a quiet `RUST_LOG` must not silence the traces.
    let traces = tracing_subscriber::EnvFilter::try_from_env("NANOMUSE_TRACE_FILTER")
        .unwrap_or_else(|_| TRACE_FILTER.into());
    let logs_filter = quiet_cdp_noise(
        tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| default_filter.into()),
    );
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let logs: Box<dyn Layer<Registry> + Send + Sync> = if json_logs {
        logs.event_format(WithTraceId {
            inner: tracing_subscriber::fmt::format().json(),
            json: true,
        })
        .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
        .with_filter(logs_filter)
        .boxed()
    } else {
        logs.event_format(WithTraceId {
            inner: tracing_subscriber::fmt::format(),
            json: false,
        })
        .with_filter(logs_filter)
        .boxed()
    };
    let spans = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(traces)
        .boxed();
    // A second call (tests that start several services in one process) keeps the first.
    let _ = tracing_subscriber::registry()
        .with(vec![spans, logs])
        .try_init();
    tracing::dispatcher::get_default(|dispatch| {
        let _ = DISPATCH.set(dispatch.downgrade());
    });
    metrics::init(service);
    if let Some(problem) = export_problem {
        tracing::warn!(%problem, "traces are not exported");
    }
    Telemetry { provider }
}

/// What goes into traces unless `NANOMUSE_TRACE_FILTER` says otherwise: this project's spans,
/// not the transport's own nor the exporter's (which would trace its own exports).
const TRACE_FILTER: &str = "info,h2=off,hyper=off,hyper_util=off,tower=off,tonic=off,\
    opentelemetry=off,opentelemetry_sdk=off,opentelemetry_otlp=off,chromiumoxide=off,sled=off";

static DISPATCH: OnceLock<WeakDispatch> = OnceLock::new();

/// The trace and span ids of a span, from the OpenTelemetry layer's own record of it.
fn otel_ids(span: &tracing::span::Id) -> Option<(String, String)> {
    let dispatch = DISPATCH.get()?.upgrade()?;
    let context = tracing_opentelemetry::get_otel_context(span, &dispatch)?;
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| {
        (
            span_context.trace_id().to_string(),
            span_context.span_id().to_string(),
        )
    })
}

/// A log format that adds the trace and span id to a line written inside a span.
struct WithTraceId<F> {
    inner: F,
    json: bool,
}

impl<S, N, F> FormatEvent<S, N> for WithTraceId<F>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let ids = context.parent_span().and_then(|span| otel_ids(&span.id()));
        let Some((trace_id, span_id)) = ids else {
            return self.inner.format_event(context, writer, event);
        };
        let mut line = String::new();
        self.inner
            .format_event(context, Writer::new(&mut line), event)?;
        let body = line.trim_end_matches('\n');
        if self.json && body.starts_with('{') {
            writeln!(
                writer,
                "{{\"trace_id\":\"{trace_id}\",\"span_id\":\"{span_id}\",{}",
                &body[1..]
            )
        } else {
            writeln!(writer, "{body} trace_id={trace_id} span_id={span_id}")
        }
    }
}

/// The trace id of `span`, once tracing is installed.
pub fn trace_id_of(span: &Span) -> Option<String> {
    let context = span.context();
    let span_context = context.span().span_context().clone();
    // An unsampled trace (`OTEL_TRACES_SAMPLER=always_off`) is exported nowhere: its id would
    // name nothing anyone can find.
    (span_context.is_valid() && span_context.is_sampled())
        .then(|| span_context.trace_id().to_string())
}

/// The W3C `traceparent` of the current span, for a hop that is not gRPC (the phone's socket).
pub fn current_traceparent() -> Option<String> {
    let mut carrier = std::collections::HashMap::new();
    TraceContextPropagator::new().inject_context(&Span::current().context(), &mut carrier);
    carrier.remove("traceparent")
}

/// Makes `span` a child of the W3C context in `traceparent` (a message from another process).
pub fn set_remote_parent(span: &Span, traceparent: &str) {
    let carrier =
        std::collections::HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_remote() {
        let _ = span.set_parent(parent);
    }
}

struct HeaderCarrier<'a>(&'a mut http::HeaderMap);

impl Injector for HeaderCarrier<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            http::header::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

struct HeaderReader<'a>(&'a http::HeaderMap);

impl Extractor for HeaderReader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}

/// `/package.Service/Method` of a gRPC request, or `None` for plain HTTP.
fn rpc_of<B>(request: &http::Request<B>) -> Option<(String, String)> {
    let is_grpc = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|kind| kind.as_bytes().starts_with(b"application/grpc"));
    is_grpc.then(|| service_and_method(request.uri().path()))?
}

/// `("package.Service", "Method")` of a gRPC path.
fn service_and_method(path: &str) -> Option<(String, String)> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    Some((service.to_string(), method.to_string()))
}

/// Calls that run all the time without an agent behind them: no span, only the counters.
fn is_housekeeping(service: &str, method: &str) -> bool {
    matches!(
        (service, method),
        ("grpc.health.v1.Health", _)
            | ("nanomuse.browser.v1.WorkerRegistry", _)
            | ("nanomuse.browser.v1.DeviceGateway", "WatchDevices")
    )
}

/// The gRPC code of a reply: in the headers when the call failed at once (tonic answers an
/// error as trailers-only), otherwise OK (the code then travels in the trailers).
fn status_of<B>(response: &http::Response<B>) -> tonic::Code {
    response
        .headers()
        .get("grpc-status")
        .and_then(|code| code.to_str().ok())
        .and_then(|code| code.parse::<i32>().ok())
        .map_or(tonic::Code::Ok, tonic::Code::from_i32)
}

fn record_status(span: &Span, code: tonic::Code) {
    span.record("rpc.grpc.status_code", code as i64);
    mark_if_fault(span, code);
}

/// Marks `span` an ERROR when `code` is a fault (see [`is_fault`]); the span must declare
/// `otel.status_code`.
pub fn mark_if_fault(span: &Span, code: tonic::Code) {
    if is_fault(code) {
        span.record("otel.status_code", "ERROR");
    }
}

/// Whether a gRPC code is a fault rather than an answer: "not found" (a page a backend does
/// not have open yet, which the controller opens), a refused argument or a stale listing is
/// the call working as it should, and its span is not marked an error; the caller that fails
/// because of it marks its own.
pub fn is_fault(code: tonic::Code) -> bool {
    !matches!(
        code,
        tonic::Code::Ok
            | tonic::Code::NotFound
            | tonic::Code::InvalidArgument
            | tonic::Code::FailedPrecondition
            | tonic::Code::AlreadyExists
            | tonic::Code::OutOfRange
    )
}

/// The service that was made ready, for a call that outlives `&mut self`; a fresh clone takes
/// its place for the next `poll_ready`.
fn take_ready<S: Clone>(inner: &mut S) -> S {
    let clone = inner.clone();
    std::mem::replace(inner, clone)
}

type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// A tower layer for a server: a span per gRPC call, child of the caller's `traceparent`,
/// with OpenTelemetry's RPC attributes, and the call counted in the RPC metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerTraceLayer;

impl<S> tower::Layer<S> for ServerTraceLayer {
    type Service = ServerTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ServerTrace { inner }
    }
}

#[derive(Debug, Clone)]
pub struct ServerTrace<S> {
    inner: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for ServerTrace<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Result<S::Response, S::Error>>;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let Some((service, method)) = rpc_of(&request) else {
            return Box::pin(inner.call(request));
        };
        let span = if is_housekeeping(&service, &method) {
            Span::none()
        } else {
            let span = tracing::info_span!(
                "grpc server",
                otel.name = format!("{service}/{method}"),
                otel.kind = "server",
                rpc.system = "grpc",
                rpc.service = %service,
                rpc.method = %method,
                rpc.grpc.status_code = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
            );
            let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
                propagator.extract(&HeaderReader(request.headers()))
            });
            if parent.span().span_context().is_remote() {
                let _ = span.set_parent(parent);
            }
            span
        };
        let started = Instant::now();
        Box::pin(async move {
            let result = inner.call(request).instrument(span.clone()).await;
            let code = match &result {
                Ok(response) => status_of(response),
                Err(_) => tonic::Code::Internal,
            };
            record_status(&span, code);
            metrics::rpc().served(&service, &method, code, started.elapsed());
            result
        })
    }
}

/// A tower layer for a client channel: inside a traced call, a client span whose context goes
/// to the server as `traceparent`; every call is counted in the RPC metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientTraceLayer;

impl<S> tower::Layer<S> for ClientTraceLayer {
    type Service = ClientTrace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientTrace { inner }
    }
}

#[derive(Debug, Clone)]
pub struct ClientTrace<S> {
    inner: S,
}

/// A gRPC channel that traces and counts its calls.
pub type TracedChannel = ClientTrace<tonic::transport::Channel>;

/// Wraps a channel in [`ClientTraceLayer`].
pub fn traced(channel: tonic::transport::Channel) -> TracedChannel {
    ClientTrace { inner: channel }
}

impl<S, B, R> tower::Service<http::Request<B>> for ClientTrace<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Result<S::Response, S::Error>>;

    fn poll_ready(
        &mut self,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let mut inner = take_ready(&mut self.inner);
        let (service, method) = service_and_method(request.uri().path()).unwrap_or_default();
        let span = if Span::current().is_none() || is_housekeeping(&service, &method) {
            Span::none()
        } else {
            tracing::info_span!(
                "grpc client",
                otel.name = format!("{service}/{method}"),
                otel.kind = "client",
                rpc.system = "grpc",
                rpc.service = %service,
                rpc.method = %method,
                rpc.grpc.status_code = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
            )
        };
        if !span.is_none() {
            let context = span.context();
            opentelemetry::global::get_text_map_propagator(|propagator| {
                propagator.inject_context(&context, &mut HeaderCarrier(request.headers_mut()))
            });
        }
        Box::pin(async move {
            let result = inner.call(request).instrument(span.clone()).await;
            let code = match &result {
                Ok(response) => status_of(response),
                Err(_) => tonic::Code::Unavailable,
            };
            record_status(&span, code);
            metrics::rpc().called(&service, &method, code);
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rpc_of_a_grpc_request_is_its_service_and_method() {
        let request = http::Request::builder()
            .uri("http://worker/nanomuse.browser.v1.BrowserBackend/Tap")
            .header("content-type", "application/grpc")
            .body(())
            .unwrap();
        assert_eq!(
            rpc_of(&request),
            Some(("nanomuse.browser.v1.BrowserBackend".into(), "Tap".into()))
        );
        let page = http::Request::builder()
            .uri("http://controller/api/state")
            .body(())
            .unwrap();
        assert_eq!(rpc_of(&page), None);
    }

    #[test]
    fn a_failed_call_reads_its_code_from_the_headers() {
        let failed = http::Response::builder()
            .header("grpc-status", "5")
            .body(())
            .unwrap();
        assert_eq!(status_of(&failed), tonic::Code::NotFound);
        let ok = http::Response::builder().body(()).unwrap();
        assert_eq!(status_of(&ok), tonic::Code::Ok);
    }
}
