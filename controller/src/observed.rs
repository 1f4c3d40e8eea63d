//! A backend seen from the controller: each op call gets a span (child of the action's) and is
//! counted and timed by backend kind, whatever carries it — a worker over gRPC, a phone through
//! the gateway, or the embedded worker in this process.

use std::sync::Arc;
use std::time::Instant;

use nanomuse_common::metrics::outcome_of;
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

    /// One op on the inner backend, in its own span, counted by outcome.
    async fn observe<R: Op>(&self, request: R) -> Result<R::Reply, BackendError> {
        let op = R::NAME;
        let span = tracing::info_span!(
            "op",
            otel.name = format!("op {op}"),
            op,
            backend = self.kind,
            otel.status_code = tracing::field::Empty,
        );
        let started = Instant::now();
        let result = request.run(&*self.inner).instrument(span.clone()).await;
        let outcome = match &result {
            Ok(_) => "ok",
            Err(error) => {
                let code = error.code().grpc();
                nanomuse_common::telemetry::mark_if_fault(&span, code);
                outcome_of(code)
            }
        };
        metrics().op_done(self.kind, op, outcome, started.elapsed());
        result
    }
}

nanomuse_proto::backend_through!(Observed, observe);
