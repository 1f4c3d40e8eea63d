//! [`ChromiumBackend`]: the 14 ops of the contract on this worker's Chromium browsers. Every op
//! finds its page, runs alone on it, within a bound, and — when it may have changed the page —
//! saves the profile's cookies so a crash cannot lose them.

use std::sync::Arc;
use std::time::Duration;

use nanomuse_proto::*;
use tracing::instrument;

use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::ops;
use crate::page::PageHandle;
use crate::profiles::Pool;

pub struct ChromiumBackend {
    config: Arc<WorkerConfig>,
    pub pool: Arc<Pool>,
}

/// What an op may do to the profile's cookies, and so when the snapshot is saved.
#[derive(Clone, Copy, PartialEq)]
enum Changes {
    /// Waits for responses (navigate, back, settle, fetch): their Set-Cookies are in the jar
    /// when the op ends, so the snapshot is saved before the reply.
    Cookies,
    /// Starts something (tap, key, type, evaluate) whose cookies arrive while the next settle
    /// waits; the snapshot is saved beside the reply.
    Page,
    Nothing,
}

impl ChromiumBackend {
    pub fn new(config: Arc<WorkerConfig>) -> Self {
        Self {
            pool: Arc::new(Pool::new(config.clone())),
            config,
        }
    }

    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }

    /// The bound of one whole op: the longest inner wait plus room to report it.
    fn op_bound(&self) -> Duration {
        self.config.timeout().max(ops::settle::MAX_SETTLE) + Duration::from_secs(5)
    }

    async fn on_page<T>(
        &self,
        session: Option<&Session>,
        op: &'static str,
        changes: Changes,
        run: impl AsyncFnOnce(&PageHandle) -> Result<T>,
    ) -> Result<T, BackendError> {
        let (page, _in_use) = self.pool.page(session).await?;
        let _alone = page.op_lock.lock().await;
        let bound = self.op_bound();
        let outcome = tokio::select! {
            biased;
            outcome = tokio::time::timeout(bound, run(&page)) => {
                outcome.unwrap_or_else(|_| Err(WorkerError::timeout(op, bound.as_millis() as u64)))
            }
            // A crashed renderer or a dead browser answers nothing: the op fails now, saying so.
            why = page.until_lost() => Err(lost(op, &why)),
        };
        // A command cut off by the browser's death may fail before the death is seen: the
        // reason, when it comes at once, is the clearer error.
        let outcome = match outcome {
            Err(WorkerError::BrowserGone(error)) => {
                match tokio::time::timeout(Duration::from_secs(1), page.until_lost()).await {
                    Ok(why) => Err(lost(op, &why)),
                    Err(_) => Err(WorkerError::BrowserGone(error)),
                }
            }
            other => other,
        };
        match changes {
            Changes::Cookies => {
                if let Err(error) = page.cookies.save().await {
                    tracing::warn!(%error, "cookie snapshot failed");
                }
            }
            Changes::Page => page.cookies.save_soon(),
            Changes::Nothing => {}
        }
        outcome.map_err(|error| {
            tracing::debug!(op, %error, "op failed");
            BackendError::from(error)
        })
    }
}

// The session as span fields, not a dump of the whole message (its URL policy says nothing a
// trace needs).
fn tenant(session: &Option<Session>) -> &str {
    session.as_ref().map_or("", |s| s.tenant.as_str())
}

fn workspace(session: &Option<Session>) -> &str {
    session.as_ref().map_or("", |s| s.workspace.as_str())
}

fn page(session: &Option<Session>) -> &str {
    session.as_ref().map_or("", |s| s.page.as_str())
}

/// The error of an op whose page was lost under it.
fn lost(op: &str, why: &str) -> WorkerError {
    WorkerError::PageLost(format!(
        "{op} did not finish: {why}. What it did is unknown: look again before acting"
    ))
}

#[tonic::async_trait]
impl Backend for ChromiumBackend {
    #[instrument(name = "open", skip_all, fields(op = "open", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn open(&self, request: OpenRequest) -> Result<OpenReply, BackendError> {
        Ok(ops::open::run(&self.pool, &request).await?)
    }

    #[instrument(name = "navigate", skip_all, fields(op = "navigate", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn navigate(&self, request: NavigateRequest) -> Result<NavigateReply, BackendError> {
        let timeout = self.config.timeout();
        self.on_page(
            request.session.as_ref(),
            "navigate",
            Changes::Cookies,
            async |page| ops::navigate::run(page, &request, timeout).await,
        )
        .await
    }

    #[instrument(name = "evaluate", skip_all, fields(op = "evaluate", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn evaluate(&self, request: EvaluateRequest) -> Result<EvaluateReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "evaluate",
            Changes::Page,
            async |page| ops::evaluate::run(page, &request).await,
        )
        .await
    }

    #[instrument(name = "tap", skip_all, fields(op = "tap", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn tap(&self, request: TapRequest) -> Result<TapReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "tap",
            Changes::Page,
            async |page| ops::tap::run(page, &request).await,
        )
        .await
    }

    #[instrument(name = "type", skip_all, fields(op = "type", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn r#type(&self, request: TypeRequest) -> Result<TypeReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "type",
            Changes::Page,
            async |page| ops::type_text::run(page, &request).await,
        )
        .await
    }

    #[instrument(name = "key", skip_all, fields(op = "key", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn key(&self, request: KeyRequest) -> Result<KeyReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "key",
            Changes::Page,
            async |page| ops::key::run(page, &request).await,
        )
        .await
    }

    #[instrument(name = "scroll", skip_all, fields(op = "scroll", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn scroll(&self, request: ScrollRequest) -> Result<ScrollReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "scroll",
            Changes::Nothing,
            async |page| ops::scroll::run(page, &request).await,
        )
        .await
    }

    #[instrument(name = "back", skip_all, fields(op = "back", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn back(&self, request: BackRequest) -> Result<BackReply, BackendError> {
        let timeout = self.config.timeout();
        self.on_page(
            request.session.as_ref(),
            "back",
            Changes::Cookies,
            async |page| ops::back::run(page, &request, timeout).await,
        )
        .await
    }

    #[instrument(name = "settle", skip_all, fields(op = "settle", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn settle(&self, request: SettleRequest) -> Result<SettleReply, BackendError> {
        let timeout = self.config.timeout();
        self.on_page(
            request.session.as_ref(),
            "settle",
            Changes::Cookies,
            async |page| ops::settle::run(page, &request, timeout).await,
        )
        .await
    }

    #[instrument(name = "screenshot", skip_all, fields(op = "screenshot", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn screenshot(
        &self,
        request: ScreenshotRequest,
    ) -> Result<ScreenshotReply, BackendError> {
        let quality = self.config.jpeg_quality;
        self.on_page(
            request.session.as_ref(),
            "screenshot",
            Changes::Nothing,
            async |page| ops::screenshot::run(page, &request, quality).await,
        )
        .await
    }

    #[instrument(name = "state", skip_all, fields(op = "state", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn state(&self, request: StateRequest) -> Result<StateReply, BackendError> {
        let host = self.config.name.clone();
        self.on_page(
            request.session.as_ref(),
            "state",
            Changes::Nothing,
            async |page| ops::state::run(page, &request, &host).await,
        )
        .await
    }

    #[instrument(name = "fetch", skip_all, fields(op = "fetch", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn fetch(&self, request: FetchRequest) -> Result<FetchReply, BackendError> {
        let max_bytes = self.config.fetch_max_bytes;
        self.on_page(
            request.session.as_ref(),
            "fetch",
            Changes::Cookies,
            async |page| ops::fetch::run(page, &request, max_bytes).await,
        )
        .await
    }

    #[instrument(name = "profile", skip_all, fields(op = "profile", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn profile(&self, request: ProfileRequest) -> Result<ProfileReply, BackendError> {
        Ok(ops::profile::run(&self.pool, &request).await?)
    }

    #[instrument(name = "close", skip_all, fields(op = "close", tenant = tenant(&request.session), workspace = workspace(&request.session), page = page(&request.session)))]
    async fn close(&self, request: CloseRequest) -> Result<CloseReply, BackendError> {
        Ok(ops::close::run(&self.pool, &request).await?)
    }
}
