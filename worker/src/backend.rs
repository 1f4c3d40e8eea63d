//! [`ChromiumBackend`]: the 15 ops of the contract on this worker's Chromium browsers. Every op
//! finds its page, runs alone on it, within a bound, and — when it may have changed the page —
//! saves the profile's cookies so a crash cannot lose them.

use std::sync::Arc;
use std::time::Duration;

use nanomuse_proto::*;
use tracing::Instrument as _;

use crate::config::WorkerConfig;
use crate::error::{Result, WorkerError};
use crate::ops;
use crate::page::PageHandle;
use crate::profiles::Pool;

/// The worker's backend: each op in a span of its own (named for the op, with the session's
/// tenant, workspace and page), carried out by the [`Engine`].
pub struct ChromiumBackend {
    engine: Engine,
    pub pool: Arc<Pool>,
}

/// The 15 ops themselves on this worker's browsers.
struct Engine {
    config: Arc<WorkerConfig>,
    pool: Arc<Pool>,
}

/// What an op may do to the profile's cookies, and so when the snapshot is saved.
#[derive(Clone, Copy, PartialEq)]
enum Changes {
    /// Waits for responses (navigate, back, settle, fetch): their Set-Cookies are in the jar
    /// when the op ends, so the snapshot is saved before the reply.
    Cookies,
    /// Starts something (tap, key, type, upload) whose cookies arrive while the next settle
    /// waits; the snapshot is saved beside the reply.
    Page,
    /// Runs a script (evaluate): an action begins as for `Page`, but no snapshot is taken.
    /// The controller's scripts only look (the listing, the text, the waits' checks) and run
    /// once or more per action, each read of the jar costing Chromium ~2 ms; what the page's
    /// own scripts set meanwhile the next settle's snapshot takes.
    Script,
    Nothing,
}

impl ChromiumBackend {
    pub fn new(config: Arc<WorkerConfig>) -> Self {
        let pool = Arc::new(Pool::new(config.clone()));
        Self {
            engine: Engine {
                config,
                pool: pool.clone(),
            },
            pool,
        }
    }

    pub fn config(&self) -> &WorkerConfig {
        &self.engine.config
    }

    async fn traced<R: Op>(&self, request: R) -> Result<R::Reply, BackendError> {
        // The session as span fields, not a dump of the whole message (its URL policy says
        // nothing a trace needs).
        let session = request.session();
        let field = |get: fn(&Session) -> &str| session.map_or("", get);
        let span = tracing::info_span!(
            "op",
            otel.name = R::NAME,
            op = R::NAME,
            tenant = field(|s| &s.tenant),
            workspace = field(|s| &s.workspace),
            page = field(|s| &s.page),
        );
        request.run(&self.engine).instrument(span).await
    }
}

nanomuse_proto::backend_through!(ChromiumBackend, traced);

impl Engine {
    /// The bound of one whole op: the longest inner wait plus room to report it.
    fn op_bound(&self) -> Duration {
        self.config.timeout().max(ops::settle::MAX_SETTLE) + Duration::from_secs(5)
    }

    /// Runs `op` on the session's page, after the page's other ops.
    async fn on_page<T>(
        &self,
        session: Option<&Session>,
        op: &'static str,
        changes: Changes,
        run: impl AsyncFnOnce(&PageHandle) -> Result<T>,
    ) -> Result<T, BackendError> {
        self.on_page_as(session, op, changes, Runs::Alone, run)
            .await
    }

    /// Runs `op` on the session's page, as `runs` says.
    async fn on_page_as<T>(
        &self,
        session: Option<&Session>,
        op: &'static str,
        changes: Changes,
        runs: Runs,
        run: impl AsyncFnOnce(&PageHandle) -> Result<T>,
    ) -> Result<T, BackendError> {
        let (page, _in_use) = self.pool.page(session).await?;
        let outcome = self.on(&page, op, changes, runs, run).await;
        outcome.unwrap_or_else(|| Err(lost(op, "the window closed").into()))
    }

    /// [`Self::on_page_as`] on `page`; `None` when the op should look again on the thread's
    /// new front page (a popup of `page` that closed under it).
    async fn on<T>(
        &self,
        page: &PageHandle,
        op: &'static str,
        changes: Changes,
        runs: Runs,
        run: impl AsyncFnOnce(&PageHandle) -> Result<T>,
    ) -> Option<Result<T, BackendError>> {
        let _alone = match runs {
            Runs::Alone | Runs::FollowingTheFront => Some(page.op_lock.lock().await),
            Runs::BesideOthers => None,
        };
        // What starts something on the page begins an action: a settle after it is quiet at
        // once only if no request came since.
        if matches!(changes, Changes::Page | Changes::Script) {
            page.tracker.mark_action();
        }
        let bound = self.op_bound();
        let outcome = tokio::select! {
            biased;
            outcome = tokio::time::timeout(bound, run(page)) => {
                outcome.unwrap_or_else(|_| Err(WorkerError::timeout(op, bound.as_millis() as u64)))
            }
            // A crashed renderer or a dead browser answers nothing: the op fails now, saying so.
            why = page.until_lost() => Err(lost(op, &why)),
        };
        if runs == Runs::FollowingTheFront && page.closed_as_window() {
            return None;
        }
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
            Changes::Script | Changes::Nothing => {}
        }
        Some(outcome.map_err(|error| {
            tracing::debug!(op, %error, "op failed");
            BackendError::from(error)
        }))
    }
}

/// How an op runs on its page.
#[derive(Clone, Copy, PartialEq)]
enum Runs {
    /// After the page's other ops.
    Alone,
    /// Beside them: an op that only reads the picture (the controller asks for it alongside a
    /// settle).
    BesideOthers,
    /// Alone, and again on the thread's new front page when the popup it ran on closes
    /// meanwhile (a settle also when the page opens one, see `Backend::settle`).
    FollowingTheFront,
}

/// How many moves of the front one op follows: a page that opens and closes windows on and on
/// does not hold it past that.
const FRONT_MOVES_FOLLOWED: u32 = 4;

/// The error of an op whose page was lost under it.
fn lost(op: &str, why: &str) -> WorkerError {
    WorkerError::PageLost(format!(
        "{op} did not finish: {why}. What it did is unknown: look again before acting"
    ))
}

#[tonic::async_trait]
impl Backend for Engine {
    async fn open(&self, request: OpenRequest) -> Result<OpenReply, BackendError> {
        Ok(ops::open::run(&self.pool, &request).await?)
    }

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

    async fn evaluate(&self, request: EvaluateRequest) -> Result<EvaluateReply, BackendError> {
        // A popup that closes under the script (its page handed its opener what it made, and
        // closed): the script runs on the opener, where the thread is now.
        let session = request.session.as_ref();
        loop {
            let (page, _in_use) = self.pool.page(session).await?;
            let outcome = self
                .on(
                    &page,
                    "evaluate",
                    Changes::Script,
                    Runs::FollowingTheFront,
                    async |page| ops::evaluate::run(page, &request).await,
                )
                .await;
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    async fn tap(&self, request: TapRequest) -> Result<TapReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "tap",
            Changes::Page,
            async |page| ops::tap::run(page, &request).await,
        )
        .await
    }

    async fn r#type(&self, request: TypeRequest) -> Result<TypeReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "type",
            Changes::Page,
            async |page| ops::type_text::run(page, &request).await,
        )
        .await
    }

    async fn key(&self, request: KeyRequest) -> Result<KeyReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "key",
            Changes::Page,
            async |page| ops::key::run(page, &request).await,
        )
        .await
    }

    async fn scroll(&self, request: ScrollRequest) -> Result<ScrollReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "scroll",
            Changes::Nothing,
            async |page| ops::scroll::run(page, &request).await,
        )
        .await
    }

    async fn back(&self, request: BackRequest) -> Result<BackReply, BackendError> {
        let timeout = self.config.timeout();
        let session = request.session.as_ref();
        let closed = self
            .on_page(session, "back", Changes::Nothing, async |page| {
                ops::back::close_first_popup(page).await
            })
            .await?;
        self.on_page(
            session,
            "back",
            Changes::Cookies,
            async |page| match closed {
                // On the opener now, as it was.
                true => Ok(BackReply {
                    page: Some(ops::page_info(page).await?),
                    refused: Vec::new(),
                }),
                false => ops::back::run(page, &request, timeout).await,
            },
        )
        .await
    }

    async fn settle(&self, request: SettleRequest) -> Result<SettleReply, BackendError> {
        let timeout = self.config.timeout();
        let session = request.session.as_ref();
        let mut moves = 0;
        loop {
            let (page, _in_use) = self.pool.page(session).await?;
            let follows = moves < FRONT_MOVES_FOLLOWED;
            let settling = self.on(
                &page,
                "settle",
                Changes::Cookies,
                if follows {
                    Runs::FollowingTheFront
                } else {
                    Runs::Alone
                },
                async |page| ops::settle::run(page, &request, timeout).await,
            );
            let moved = async {
                match follows {
                    true => page.front_moved().await,
                    false => std::future::pending().await,
                }
            };
            tokio::select! {
                outcome = settling => if let Some(outcome) = outcome {
                    let arrival = std::mem::take(&mut *page.arrival.lock().unwrap());
                    return outcome.map(|reply| SettleReply {
                        window: arrival as i32,
                        ..reply
                    });
                },
                () = moved => {}
            }
            moves += 1;
        }
    }

    async fn screenshot(
        &self,
        request: ScreenshotRequest,
    ) -> Result<ScreenshotReply, BackendError> {
        let quality = self.config.jpeg_quality;
        self.on_page_as(
            request.session.as_ref(),
            "screenshot",
            Changes::Nothing,
            Runs::BesideOthers,
            async |page| ops::screenshot::run(page, &request, quality).await,
        )
        .await
    }

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

    async fn fetch(&self, request: FetchRequest) -> Result<FetchReply, BackendError> {
        let max_bytes = self.config.fetch_max_bytes;
        self.on_page(
            request.session.as_ref(),
            "fetch",
            // A fetch knows whether a response set cookies: it saves the snapshot then (see
            // `ops::fetch`), not after every fetch.
            Changes::Nothing,
            async |page| ops::fetch::run(page, &request, max_bytes).await,
        )
        .await
    }

    async fn upload(&self, request: UploadRequest) -> Result<UploadReply, BackendError> {
        self.on_page(
            request.session.as_ref(),
            "upload",
            Changes::Page,
            async |page| ops::upload::run(page, &request).await,
        )
        .await
    }

    async fn profile(&self, request: ProfileRequest) -> Result<ProfileReply, BackendError> {
        Ok(ops::profile::run(&self.pool, &request).await?)
    }

    async fn close(&self, request: CloseRequest) -> Result<CloseReply, BackendError> {
        Ok(ops::close::run(&self.pool, &request).await?)
    }
}
