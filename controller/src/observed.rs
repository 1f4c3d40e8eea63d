//! A backend seen from the controller: each op call gets a span (child of the action's) and is
//! counted and timed by backend kind, whatever carries it — a worker over gRPC, a phone through
//! the gateway, or the embedded worker in this process.

use std::sync::Arc;
use std::time::Instant;

use nanomuse_proto::metrics::outcome_of;
use nanomuse_proto::*;
use tracing::Instrument;

use crate::metrics::metrics;

/// `inner`, with every op traced and counted under `kind` (`worker` or `device`).
pub struct Observed {
    inner: Arc<dyn Backend>,
    kind: &'static str,
}

impl Observed {
    pub fn wrap(inner: Arc<dyn Backend>, kind: &'static str) -> Arc<dyn Backend> {
        Arc::new(Self { inner, kind })
    }

    async fn call<T>(
        &self,
        op: &'static str,
        call: impl std::future::Future<Output = Result<T, BackendError>>,
    ) -> Result<T, BackendError> {
        let span = tracing::info_span!(
            "op",
            otel.name = format!("op {op}"),
            op,
            backend = self.kind,
            otel.status_code = tracing::field::Empty,
        );
        let started = Instant::now();
        let result = call.instrument(span.clone()).await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(error) => {
                let code = tonic::Status::from(error.clone()).code();
                nanomuse_proto::telemetry::mark_if_fault(&span, code);
                outcome_of(code)
            }
        };
        metrics().op_done(self.kind, op, outcome, started.elapsed());
        result
    }
}

macro_rules! observe {
    ($($method:ident($request:ty) -> $reply:ty, $name:literal;)*) => {
        #[tonic::async_trait]
        impl Backend for Observed {
            $(
                async fn $method(&self, request: $request) -> Result<$reply, BackendError> {
                    self.call($name, self.inner.$method(request)).await
                }
            )*
        }
    };
}

observe! {
    open(OpenRequest) -> OpenReply, "open";
    navigate(NavigateRequest) -> NavigateReply, "navigate";
    evaluate(EvaluateRequest) -> EvaluateReply, "evaluate";
    tap(TapRequest) -> TapReply, "tap";
    r#type(TypeRequest) -> TypeReply, "type";
    key(KeyRequest) -> KeyReply, "key";
    scroll(ScrollRequest) -> ScrollReply, "scroll";
    back(BackRequest) -> BackReply, "back";
    settle(SettleRequest) -> SettleReply, "settle";
    screenshot(ScreenshotRequest) -> ScreenshotReply, "screenshot";
    state(StateRequest) -> StateReply, "state";
    fetch(FetchRequest) -> FetchReply, "fetch";
    profile(ProfileRequest) -> ProfileReply, "profile";
    close(CloseRequest) -> CloseReply, "close";
}
