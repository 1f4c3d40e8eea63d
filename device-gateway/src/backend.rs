//! [`GatewayBackend`]: the 15 ops of `BrowserBackend`, each forwarded to the tenant's phone as
//! a `device_request` and answered from its `device_result`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nanomuse_common::metrics::outcome_of;
use nanomuse_common::telemetry;
use nanomuse_proto::*;
use tracing::Instrument;

use crate::config::GatewayConfig;
use crate::metrics::metrics;
use crate::ops::DeviceOp;
use crate::phones::Phones;
use crate::protocol::Trace;

/// How much longer than an op's own bound the phone may take to answer it.
const ANSWER_MARGIN_MS: u64 = 5_000;

pub struct GatewayBackend {
    phones: Arc<Phones>,
    config: Arc<GatewayConfig>,
}

impl GatewayBackend {
    pub fn new(phones: Arc<Phones>, config: Arc<GatewayConfig>) -> Self {
        Self { phones, config }
    }

    /// Forwards one op to the phone: a span of its own, whose context travels in the message,
    /// and the op counted by outcome.
    async fn forward<R: DeviceOp>(&self, request: R) -> Result<R::Reply, BackendError> {
        let span = tracing::info_span!(
            "device op",
            otel.name = format!("device {}", R::NAME),
            otel.kind = "client",
            rpc.system = "nanomuse-device",
            rpc.method = R::NAME,
            device = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let started = Instant::now();
        let result = self
            .forward_to_phone(request)
            .instrument(span.clone())
            .await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(error) => {
                let code = error.code().grpc();
                nanomuse_common::telemetry::mark_if_fault(&span, code);
                outcome_of(code)
            }
        };
        metrics().op_done(R::NAME, outcome, started.elapsed());
        result
    }

    async fn forward_to_phone<R: DeviceOp>(&self, request: R) -> Result<R::Reply, BackendError> {
        let session = request.session().cloned().ok_or_else(|| {
            BackendError::InvalidArgument(
                "every op needs a session (tenant, workspace, page)".into(),
            )
        })?;
        let phone = self.phones.browser_of(&session.tenant).ok_or_else(|| {
            BackendError::Unavailable(
                "no phone with a browser is connected for this user; open the nanoMuse app on \
                 the phone, or use the server's browser"
                    .into(),
            )
        })?;
        tracing::Span::current().record("device", phone.device_id.as_str());
        let trace = telemetry::current_traceparent().map(|traceparent| Trace {
            traceparent,
            tracestate: String::new(),
        });
        let timeout = self
            .config
            .op_timeout_ms
            .max(request.own_timeout_ms() + ANSWER_MARGIN_MS);
        let result = phone
            .request(
                R::NAME,
                request.to_args(),
                &session.page,
                Duration::from_millis(timeout),
                trace,
            )
            .await?;
        R::reply_from_result(&result).map_err(|e| {
            BackendError::Internal(format!(
                "the phone {} answered {} with a malformed result: {e}",
                phone.device_id,
                R::NAME
            ))
        })
    }
}

nanomuse_proto::backend_through!(GatewayBackend, forward);
