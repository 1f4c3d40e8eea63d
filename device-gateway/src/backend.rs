//! [`GatewayBackend`]: the 14 ops of `BrowserBackend`, each forwarded to the tenant's phone as
//! a `device_request` and answered from its `device_result`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nanomuse_proto::metrics::outcome_of;
use nanomuse_proto::telemetry;
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
    async fn forward<Op: DeviceOp>(
        &self,
        session: &Option<Session>,
        request: Op,
    ) -> Result<Op::Reply, BackendError> {
        let span = tracing::info_span!(
            "device op",
            otel.name = format!("device {}", Op::NAME),
            otel.kind = "client",
            rpc.system = "nanomuse-device",
            rpc.method = Op::NAME,
            device = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let started = Instant::now();
        let result = self
            .forward_to_phone(session, request)
            .instrument(span.clone())
            .await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(error) => {
                let code = tonic::Status::from(error.clone()).code();
                nanomuse_proto::telemetry::mark_if_fault(&span, code);
                outcome_of(code)
            }
        };
        metrics().op_done(Op::NAME, outcome, started.elapsed());
        result
    }

    async fn forward_to_phone<Op: DeviceOp>(
        &self,
        session: &Option<Session>,
        request: Op,
    ) -> Result<Op::Reply, BackendError> {
        let session = session.as_ref().ok_or_else(|| {
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
                Op::NAME,
                request.to_args(),
                &session.page,
                Duration::from_millis(timeout),
                trace,
            )
            .await?;
        Op::reply_from_result(&result).map_err(|e| {
            BackendError::Internal(format!(
                "the phone {} answered {} with a malformed result: {e}",
                phone.device_id,
                Op::NAME
            ))
        })
    }
}

#[tonic::async_trait]
impl Backend for GatewayBackend {
    async fn open(&self, request: OpenRequest) -> Result<OpenReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn navigate(&self, request: NavigateRequest) -> Result<NavigateReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn evaluate(&self, request: EvaluateRequest) -> Result<EvaluateReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn tap(&self, request: TapRequest) -> Result<TapReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn r#type(&self, request: TypeRequest) -> Result<TypeReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn key(&self, request: KeyRequest) -> Result<KeyReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn scroll(&self, request: ScrollRequest) -> Result<ScrollReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn back(&self, request: BackRequest) -> Result<BackReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn settle(&self, request: SettleRequest) -> Result<SettleReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn screenshot(
        &self,
        request: ScreenshotRequest,
    ) -> Result<ScreenshotReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn state(&self, request: StateRequest) -> Result<StateReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn fetch(&self, request: FetchRequest) -> Result<FetchReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn profile(&self, request: ProfileRequest) -> Result<ProfileReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
    async fn close(&self, request: CloseRequest) -> Result<CloseReply, BackendError> {
        self.forward(&request.session.clone(), request).await
    }
}
