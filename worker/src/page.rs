//! One page of a profile's browser: the chromiumoxide page (for its file choosers and
//! screencast), our side-channel session on it (for every command, [`PageHandle::cdp`], the
//! scripts of every document, the events of its network tracker and its dialogs), its settings.
//! Ops on one page run one at a time.

use std::sync::{Arc, Mutex};

use chromiumoxide::Page;
use serde_json::{Value, json};
use tokio::sync::watch;

use nanomuse_proto::scripts::DIALOG_SAID;

use crate::cdp::{self, SideChannel};
use crate::cookies::CookieSnapshots;
use crate::downloads::Downloads;
use crate::egress::{Egress, origin_of_url};
use crate::emulation::{self, PageSettings};
use crate::error::{Result, WorkerError};
use crate::preloaded;
use crate::tracker::NetworkTracker;

/// What the worker remembers of a page across browser relaunches.
#[derive(Debug, Clone)]
pub struct PageSpec {
    pub settings: PageSettings,
    pub last_url: Arc<Mutex<Option<String>>>,
}

pub struct PageHandle {
    /// chromiumoxide's page: its events, and closing it.
    pub page: Page,
    pub target_id: String,
    /// Our flat session on this target, on the browser's [`SideChannel`].
    side_session: String,
    side: Arc<SideChannel>,
    pub downloads: Arc<Downloads>,
    /// The browser's cookie snapshot, saved after page-changing ops.
    pub cookies: Arc<CookieSnapshots>,
    /// The browser's URL-policy proxy: the policy in force and what it refused.
    pub egress: Arc<Egress>,
    pub tracker: Arc<NetworkTracker>,
    pub settings: Mutex<PageSettings>,
    pub chrome_major: String,
    /// Serialises the ops on this page.
    pub op_lock: tokio::sync::Mutex<()>,
    /// Why the page is gone, once it is: its renderer crashed, or its whole browser stopped.
    /// An op in flight fails at once with the reason; the next op replaces the page.
    lost: watch::Sender<Option<String>>,
    dialogs_task: tokio::task::JoinHandle<()>,
    /// How many popups deep the page is: 0 for a thread's own page, 1 for the popup it opened
    /// (see [`Windows`]), …
    pub popup_depth: usize,
    pub windows: Mutex<Windows>,
    /// How the thread came onto this page, not yet told: as a popup just made a page of ours,
    /// or back from its popup that closed. The next settle's reply tells it.
    pub arrival: Mutex<nanomuse_proto::WindowChange>,
    /// Counts the moves of the thread's front page off this one: a window it opened, or its own
    /// closing as a window. An op that follows the front (a settle) looks again then.
    front_moves: watch::Sender<u64>,
}

/// How deep popups may open popups: a page that opens one from each (a storm, from a frame's
/// own `window.open`) has the rest loaded in their openers.
pub const MAX_POPUP_DEPTH: usize = 3;

/// The popup a page opened (`window.open` with a size or a place, its opener reachable: a
/// related object's form, a sign-in). The thread acts on it until it closes, as a person
/// would, and the page that opened it stays as it was behind it. One at a time: more windows
/// load in their opener, as links to a new window do.
#[derive(Default)]
pub struct Windows {
    /// The popup's target, not yet made a page of ours (the next op on the thread does).
    pub opened: Option<String>,
    /// The popup, made a page of ours.
    pub popup: Option<Arc<PageHandle>>,
}

impl PageHandle {
    /// Makes `page`, a blank tab of the browser's window (the one it started with, or one
    /// opened for it), a page of ours with `spec`'s settings. Every page emulates focus, which
    /// also keeps a tab that is not the window's front one drawn (an undrawn page would never
    /// settle) — as Playwright's pages are; tabs cost the browser less than a window each.
    #[allow(clippy::too_many_arguments)]
    pub async fn create(
        page: Page,
        side: Arc<SideChannel>,
        downloads: Arc<Downloads>,
        cookies: Arc<CookieSnapshots>,
        egress: Arc<Egress>,
        spec: &PageSpec,
        chrome_major: &str,
        popup_depth: usize,
    ) -> Result<Arc<Self>> {
        let target_id = page.target_id().inner().clone();
        // A download this page starts records the page it came from.
        downloads.track_page(&target_id, spec.last_url.clone());
        let side_session = match side.attach(&target_id).await {
            Ok(session) => session,
            Err(error) => {
                let _ = page.close().await;
                return Err(error);
            }
        };
        // chromiumoxide's own set-up of its session (ten round trips, one after another) holds
        // every command sent on it until it ends: what a page needs before its first op comes
        // on our session, and chromiumoxide's is quietened whenever it is ready.
        tokio::spawn(quieten_chromiumoxide_session(page.clone()));
        // Listening before the events are enabled: none is missed.
        let tracker = Arc::new(NetworkTracker::new(
            target_id.clone(),
            spec.last_url.clone(),
        ));
        let (dialogs, opening) = tokio::sync::mpsc::unbounded_channel();
        let sink = tracker.clone();
        side.listen(
            &side_session,
            Arc::new(move |method: &str, params: &Value| {
                if method == "Page.javascriptDialogOpening" {
                    let _ = dialogs.send(params.clone());
                }
                sink.on_event(method, params)
            }),
        );
        let dialogs_task = answer_dialogs(side.clone(), side_session.clone(), opening);
        let handle = Arc::new(Self {
            page,
            target_id,
            side_session,
            side,
            downloads,
            cookies,
            egress,
            tracker,
            settings: Mutex::new(spec.settings.clone()),
            chrome_major: chrome_major.to_string(),
            op_lock: tokio::sync::Mutex::new(()),
            lost: watch::channel(None).0,
            dialogs_task,
            popup_depth,
            windows: Mutex::default(),
            arrival: Mutex::new(nanomuse_proto::WindowChange::None),
            front_moves: watch::channel(0).0,
        });
        let setup = async {
            let focus = handle.cdp(
                "Emulation.setFocusEmulationEnabled",
                json!({"enabled": true}),
            );
            let emulation = emulation::apply(&handle, &spec.settings, chrome_major);
            // The scripts of every document after Page.enable, without which Chromium does
            // not run them.
            let enabling = NetworkTracker::enabling();
            let scripts = every_document_scripts();
            let commands: Vec<(&str, Value)> = enabling
                .into_iter()
                .chain(scripts.iter().map(|source| {
                    (
                        "Page.addScriptToEvaluateOnNewDocument",
                        json!({"source": source, "runImmediately": true}),
                    )
                }))
                .collect();
            let tracked = handle.cdp_in_order(&commands);
            tokio::try_join!(focus, emulation, tracked).map(|_| ())
        };
        if let Err(error) = setup.await {
            let _ = handle.close().await;
            return Err(error);
        }
        Ok(handle)
    }

    /// Marks the page gone (the first reason stays): its renderer crashed or its browser died.
    pub fn mark_lost(&self, why: impl Into<String>) {
        let why = why.into();
        self.lost.send_if_modified(|lost| {
            if lost.is_some() {
                return false;
            }
            *lost = Some(why);
            true
        });
    }

    /// Whether the page is a window another page of ours opened (see [`Windows`]).
    pub fn is_popup(&self) -> bool {
        self.popup_depth > 0
    }

    /// Takes `target`, a window this page just opened, as its popup-to-be, unless it has one
    /// open already, or is itself [`MAX_POPUP_DEPTH`] popups deep (see [`Windows`]); true when
    /// taken.
    pub fn take_window(&self, target: &str) -> bool {
        if self.popup_depth >= MAX_POPUP_DEPTH {
            return false;
        }
        let mut windows = self.windows.lock().unwrap();
        let open = windows.opened.is_some()
            || windows
                .popup
                .as_ref()
                .is_some_and(|popup| popup.lost().is_none());
        if open {
            return false;
        }
        windows.opened = Some(target.to_string());
        drop(windows);
        self.front_moves.send_modify(|n| *n += 1);
        true
    }

    /// Forgets `target`, a window this page opened that closed before it became a page.
    pub fn forget_window(&self, target: &str) {
        let mut windows = self.windows.lock().unwrap();
        if windows.opened.as_deref() == Some(target) {
            windows.opened = None;
        }
    }

    /// Marks a popup closed (by its page, or by the person); the thread is back on its opener.
    /// A popup it had open closes with it: no page of the thread could reach it any more, and
    /// a page that opened and closed popups in turn would leave their windows piling up.
    pub fn mark_closed(&self) {
        self.mark_lost("the window closed (its page or the person closed it)");
        self.front_moves.send_modify(|n| *n += 1);
        tokio::spawn(self.close_windows());
    }

    /// Closes the popup this page has open and the window it is opening, if any.
    fn close_windows(&self) -> impl Future<Output = ()> + Send + 'static {
        let (opened, popup) = {
            let mut windows = self.windows.lock().unwrap();
            (windows.opened.take(), windows.popup.take())
        };
        let side = self.side.clone();
        async move {
            if let Some(popup) = popup {
                let _ = Box::pin(popup.close()).await;
            }
            if let Some(target) = opened {
                let _ = side
                    .call(None, "Target.closeTarget", json!({"targetId": target}))
                    .await;
            }
        }
    }

    /// Whether the page was a popup that closed.
    pub fn closed_as_window(&self) -> bool {
        self.is_popup() && self.lost().is_some()
    }

    /// Waits until the thread's front page moves off this one (see [`Self::front_moves`]).
    pub async fn front_moved(&self) {
        let mut moves = self.front_moves.subscribe();
        // A move before the subscription: a window opened since the page was looked up.
        if self.windows.lock().unwrap().opened.is_some() || self.closed_as_window() {
            return;
        }
        let _ = moves.changed().await;
    }

    /// Why the page is gone, if it is.
    pub fn lost(&self) -> Option<String> {
        self.lost.borrow().clone()
    }

    /// Waits until the page is gone; returns why.
    pub async fn until_lost(&self) -> String {
        let mut lost = self.lost.subscribe();
        let why = lost
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|why| why.clone());
        match why {
            Some(why) => why,
            // The sender lives as long as the page: not reached.
            None => std::future::pending().await,
        }
    }

    /// What the URL policy refused for this page since it last reported: the refusals made for
    /// the hosts this page requested (the browser's proxy serves all of its pages), plus those
    /// for `also` (a URL whose request may not have been seen yet).
    pub fn take_refusals(&self, also: Option<&url::Url>) -> Vec<nanomuse_proto::Refusal> {
        let mut origins = self.tracker.take_requested();
        origins.extend(also.and_then(origin_of_url));
        self.egress.claim_refusals(&origins)
    }

    pub fn settings(&self) -> PageSettings {
        self.settings.lock().unwrap().clone()
    }

    /// Runs `(js)(arg)` in the page and returns its JSON value (a promise is awaited).
    pub async fn evaluate(&self, js: &str, arg: &Value) -> Result<Value> {
        if let Some(call) = preloaded::call(js, arg) {
            let value = self.evaluate_expression(&call).await?;
            if !preloaded::was_not_defined(&value) {
                return Ok(value);
            }
        }
        self.evaluate_expression(&format!("({js})({arg})")).await
    }

    async fn evaluate_expression(&self, expression: &str) -> Result<Value> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true,
                       "userGesture": true}),
            )
            .await?;
        if let Some(details) = reply.get("exceptionDetails") {
            let text = details
                .pointer("/exception/description")
                .or_else(|| details.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("an exception");
            return Err(WorkerError::Script(
                text.lines().next().unwrap_or(text).to_string(),
            ));
        }
        Ok(reply
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Sends a command to the page, on our side-channel session.
    pub async fn cdp(&self, method: &str, params: Value) -> Result<Value> {
        let call = self.side.call(Some(&self.side_session), method, params);
        // A navigation waits for its server, not for the page's script (its op bounds it, and
        // ends a script that holds it then: `ops::quiet`).
        if method.starts_with("Page.") {
            return call.await;
        }
        self.answered(call).await
    }

    /// Sends `commands` to the page back to back and waits for all (see
    /// [`SideChannel::call_in_order`]): the events of one input, so it takes one frame.
    pub async fn cdp_in_order(&self, commands: &[(&str, Value)]) -> Result<()> {
        self.answered(self.side.call_in_order(&self.side_session, commands))
            .await
    }

    /// `call`'s answer. A command the page leaves unanswered for [`UNANSWERED_AFTER`] has it
    /// asked whether its script still yields: one that does not (an endless loop a click
    /// started) is ended, or every later op on the page would wait for it in vain; the command
    /// then fails saying so.
    async fn answered<T>(&self, call: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        tokio::pin!(call);
        if let Ok(answer) = tokio::time::timeout(UNANSWERED_AFTER, &mut call).await {
            return answer;
        }
        // (Boxed: the probe is a command to the page too.)
        if !Box::pin(crate::ops::end_runaway_script(self)).await {
            return call.await;
        }
        // Its answer comes once the script is ended; what the script was doing is cut short.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), call).await;
        Err(WorkerError::FailedPrecondition(format!(
            "the page's script ran for {} s without yielding (an endless loop?), holding the \
             page, so it was stopped: what the page was doing is cut short; look again",
            UNANSWERED_AFTER.as_secs()
        )))
    }

    /// Closes the page's target.
    pub async fn close(&self) -> Result<()> {
        // Its popup goes with it, as a person's would with the tab that opened it.
        self.close_windows().await;
        self.side.forget(&self.side_session);
        self.dialogs_task.abort();
        self.page.clone().close().await?;
        Ok(())
    }
}

impl Drop for PageHandle {
    fn drop(&mut self) {
        self.side.forget(&self.side_session);
        self.dialogs_task.abort();
    }
}

/// How long a command to the page may go unanswered before its script is suspected of never
/// yielding: an input or a script of ours answers in milliseconds, a listing of 50,000 links
/// in about 2 s.
const UNANSWERED_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// More dialogs than this within [`DIALOG_STORM_WINDOW`] is a storm, not a page asking.
const DIALOG_STORM_COUNT: usize = 10;
const DIALOG_STORM_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);
/// How many dialogs' words may wait to be kept in the page (the page keeps as many).
const DIALOGS_KEPT: usize = 20;
/// How long what a dialog said may wait for the page's script to yield before it is dropped.
const DIALOG_KEPT_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);
/// What a page's dialogs become after a storm: `alert` nothing, `confirm` no, `prompt` none.
const SILENCE_DIALOGS: &str = "window.alert = () => undefined; \
    window.confirm = () => false; window.prompt = () => null;";

/// The scripts run in every document of a page: the one that keeps the page's links in this
/// tab (`ONE_TAB`, told that this browser opens popups as windows, see [`Windows`]), the one
/// that keeps the short timers input began (`INPUT_TIMERS`), and the step scripts' definitions
/// ([`preloaded`]).
fn every_document_scripts() -> [String; 3] {
    [
        format!(
            "window.__nanomusePopupsOpen = true;\n{}",
            nanomuse_proto::scripts::ONE_TAB
        ),
        nanomuse_proto::scripts::INPUT_TIMERS.to_string(),
        preloaded::DEFINITIONS.to_string(),
    ]
}

/// Turns off the domains chromiumoxide's session enables whose events nothing here reads: each
/// sends the page's every console message, context, metric and request over the socket (the
/// network's events come on our session, see [`crate::tracker`]). A page closed meanwhile has
/// nothing left to quieten.
async fn quieten_chromiumoxide_session(page: Page) {
    let disabled = [
        "Performance.disable",
        "Log.disable",
        "Runtime.disable",
        "Network.disable",
    ]
    .map(|method| cdp::call_page(&page, method, json!({})));
    if let Err(error) = futures::future::try_join_all(disabled).await {
        tracing::debug!(%error, "chromiumoxide's session on a page was not quietened");
    }
}

/// Answers every JavaScript dialog of the page of `session` (its `Page.javascriptDialogOpening`
/// events come in `opening`) at once, as no one is there to, as the phone
/// does: OK — a `confirm` the agent's own action brought up agrees with what it asked for, a
/// `prompt` gets its own default text, a `beforeunload` lets the page go — and keeps what each
/// said and how it was answered in the page ([`DIALOG_SAID`]), for the next listing to report.
/// A dialog left open would block the page's script, its navigations and every evaluate until
/// the op's timeout.
fn answer_dialogs(
    side: Arc<SideChannel>,
    session: String,
    mut opening: tokio::sync::mpsc::UnboundedReceiver<Value>,
) -> tokio::task::JoinHandle<()> {
    let call = move |method: &'static str, params: Value| {
        let (side, session) = (side.clone(), session.clone());
        async move { side.call(Some(&session), method, params).await }
    };
    // Kept in the page one after another, apart from the answering: an evaluate sent while the
    // page's script runs on (to its next dialog) waits for it to yield. A page that never
    // yields fills the queue, and what more its dialogs say is dropped.
    let (said_tx, mut said_rx) = tokio::sync::mpsc::channel::<Value>(DIALOGS_KEPT);
    let keeping = {
        let call = call.clone();
        async move {
            while let Some(entry) = said_rx.recv().await {
                let expression = format!("({DIALOG_SAID})({entry})");
                let kept = call("Runtime.evaluate", json!({"expression": expression}));
                if tokio::time::timeout(DIALOG_KEPT_WITHIN, kept)
                    .await
                    .is_err()
                {
                    tracing::debug!("the page's script did not yield to keep what its dialog said");
                }
            }
        }
    };
    let answering = async move {
        let mut recent = std::collections::VecDeque::new();
        while let Some(dialog) = opening.recv().await {
            let kind = dialog["type"].as_str().unwrap_or("alert").to_string();
            tracing::debug!(kind, "javascript dialog answered");
            // A page that opens dialog after dialog (a loop, or one re-armed by a timer) keeps
            // its renderer busy enough that a navigation away never commits: its dialogs are
            // turned off, as a browser's "prevent this page from creating more dialogs" does.
            // (Run once the script yields; one that never does is ended by the op's timeout.)
            let now = std::time::Instant::now();
            recent.push_back(now);
            while recent
                .front()
                .is_some_and(|at| now.duration_since(*at) > DIALOG_STORM_WINDOW)
            {
                recent.pop_front();
            }
            if recent.len() > DIALOG_STORM_COUNT {
                tracing::warn!("the page opens dialogs without end; turning them off");
                recent.clear();
                let silenced = call("Runtime.evaluate", json!({"expression": SILENCE_DIALOGS}));
                tokio::spawn(async move {
                    if tokio::time::timeout(std::time::Duration::from_secs(30), silenced)
                        .await
                        .is_err()
                    {
                        tracing::debug!("the page's script did not yield to silence its dialogs");
                    }
                });
            }
            let prompt_text = dialog["defaultPrompt"].as_str().unwrap_or_default();
            let answered = call(
                "Page.handleJavaScriptDialog",
                json!({"accept": true, "promptText": prompt_text}),
            )
            .await;
            match answered {
                Err(error) => tracing::debug!(%error, "javascript dialog already gone"),
                // Leaving needs no word: the next page is the answer.
                Ok(_) if kind == "beforeunload" => {}
                Ok(_) => {
                    let answer = if kind == "prompt" { prompt_text } else { "OK" };
                    let entry =
                        json!({"kind": kind, "message": dialog["message"], "answer": answer});
                    let _ = said_tx.try_send(entry);
                }
            }
        }
    };
    tokio::spawn(async move {
        futures::join!(answering, keeping);
    })
}
