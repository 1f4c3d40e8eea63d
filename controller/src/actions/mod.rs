//! The browser tool's actions, written once over the 15 backend ops ([`Backend`]), so the
//! workers and the phones give the same numbered elements, the same frames, the same replies.
//! One module per action; [`run`] dispatches.

mod back;
mod click;
mod close;
pub mod downloads;
mod drawn_dropdown;
mod extract;
mod fetch;
pub mod hand_over;
mod key;
mod navigate;
mod profile;
mod screenshot;
mod scroll;
mod state;
mod type_text;
pub mod upload;
mod wait;

pub use wait::MAX_WAIT_SECONDS;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use nanomuse_proto::act_request::Action;
use nanomuse_proto::*;
use serde_json::{Value, json};

use crate::error::{ControllerError, Result};
use crate::frames::{FrameHub, FrameMeta};
use crate::listing::{self, Listing, Resolved};
use crate::store::{Store, ThreadRecord};

/// How many elements a listing shows at most.
const LISTING_MAX: u32 = 80;

/// A frame an action promised in its reply; it is captured right after the reply goes out,
/// before the thread's next action may start — or was asked for right after the settle,
/// beside the listing (`early`, see [`Ctx::settle_for_look`]).
#[derive(Debug)]
pub struct PendingFrame {
    pub id: String,
    pub caption: String,
    pub url: String,
    pub title: String,
    pub early: Option<EarlyShot>,
}

/// A picture asked for beside a settle, still on its way.
pub type EarlyShot = tokio::task::JoinHandle<std::result::Result<ScreenshotReply, BackendError>>;

/// What an action does with the element it finds (see `Ctx::element`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aim {
    /// Taps it: refused where something lies over it.
    Tap,
    /// Double-clicks it: a toggle's label, where it has one (the item the label names).
    DoubleTap,
    /// Types into it through its focus.
    Focus,
}

/// What an action works with: the thread, its backend and the controller's stores.
pub struct Ctx<'a> {
    pub backend: Arc<dyn Backend>,
    pub backend_name: String,
    pub store: &'a dyn Store,
    pub frames: &'a FrameHub,
    pub tenant: &'a str,
    pub thread: &'a str,
    pub record: ThreadRecord,
    pub settle_ms: u32,
    /// The bound of a navigation (the spec's `browser.timeout_ms`).
    pub navigate_ms: u32,
    pub pending_frame: Option<PendingFrame>,
    /// The tenant's URL policy, carried to the backend by every op's session.
    pub url_policy: UrlPolicy,
    /// What the URL policy refused while this action ran (reported by the backend), for the
    /// head of the reply.
    pub refused: std::sync::Mutex<Vec<String>>,
    /// Files the page's downloads saved while this action ran (reported by the settle).
    pub downloaded: std::sync::Mutex<Vec<String>>,
    /// What the page's dialogs said, as this action's listings found it, for the head of the
    /// reply (a listing the reply does not show may have taken it from the page).
    pub said: std::sync::Mutex<Vec<listing::Said>>,
    /// Whether this action has opened the page anew already (see [`Ctx::op`]).
    pub reopened: tokio::sync::Mutex<bool>,
    /// Whether a page found quiet at once by a settle is pictured while it is listed (a
    /// worker's screenshot waits for no other op); a phone's comes after the reply.
    pub frame_beside_listing: bool,
    /// The picture asked for right after the last settle, which found the page quiet at once
    /// (so it shows the page the listing reads).
    pub early_shot: std::sync::Mutex<Option<EarlyShot>>,
    /// How the thread's page changed windows during this action's settles (a popup opened, or
    /// the one it was on closed).
    pub window: std::sync::Mutex<WindowChange>,
    /// Whether this action goes back a page, and how: its listing steps back on the thread's
    /// trail instead of adding to it.
    pub going_back: Option<BackBy>,
}

/// How `back` reaches the earlier page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BackBy {
    /// A step back in the tab's own history.
    Tab,
    /// Loaded again by its address, from the thread's trail.
    Address,
}

/// Carries out one action on its thread.
pub async fn run(ctx: &mut Ctx<'_>, action: Action) -> Result<ActReply> {
    let mut reply = match action {
        Action::Navigate(a) => navigate::run(ctx, a).await,
        Action::Extract(_) => extract::run(ctx).await,
        Action::Click(a) => click::run(ctx, a).await,
        Action::Type(a) => type_text::run(ctx, a).await,
        Action::Key(a) => key::run(ctx, a).await,
        Action::Scroll(a) => scroll::run(ctx, a).await,
        Action::Back(_) => back::run(ctx).await,
        Action::Wait(a) => wait::run(ctx, a).await,
        Action::Screenshot(_) => screenshot::run(ctx).await,
        Action::Fetch(a) => fetch::run(ctx, a).await,
        Action::Profile(a) => profile::run(ctx, a).await,
        Action::Close(_) => close::run(ctx).await,
        Action::State(_) => state::run(ctx).await,
        Action::HandOver(_) => unreachable!("hand_over needs no backend; Controller::act runs it"),
        Action::Downloads(_) => unreachable!("downloads needs no page; Controller::act runs it"),
        Action::Upload(a) => upload::run(ctx, a).await,
    }?;
    reply.backend = ctx.backend_name.clone();
    Ok(reply)
}

/// The action's name, as the CLI spells it (traces and metrics).
pub fn name_of(action: &Action) -> &'static str {
    match action {
        Action::Navigate(_) => "navigate",
        Action::Extract(_) => "extract",
        Action::Click(_) => "click",
        Action::Type(_) => "type",
        Action::Key(_) => "key",
        Action::Scroll(_) => "scroll",
        Action::Back(_) => "back",
        Action::Wait(_) => "wait",
        Action::Screenshot(_) => "screenshot",
        Action::Fetch(_) => "fetch",
        Action::Profile(_) => "profile",
        Action::Close(_) => "close",
        Action::State(_) => "state",
        Action::HandOver(_) => "hand_over",
        Action::Downloads(_) => "downloads",
        Action::Upload(_) => "upload",
    }
}

/// A listing id no page has seen before.
fn new_listing_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{nanos:x}-{:x}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The page is not open there: NOT_FOUND is how every backend says so (a worker restarted, a
/// phone whose page was closed, a new thread).
pub(crate) fn is_not_open(error: &BackendError) -> bool {
    matches!(error, BackendError::NotFound(_))
}

/// Shortens `text` to `max` characters, saying how much was left out.
pub fn truncate(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            (
                format!("{}\n[… {rest} more characters]", &text[..cut]),
                true,
            )
        }
        None => (text.to_string(), false),
    }
}

/// A failed load's network error in words, as the worker says it; a phone names it by its code
/// alone.
fn explained(error: BackendError) -> BackendError {
    match error {
        BackendError::FailedPrecondition(message) => {
            BackendError::FailedPrecondition(nanomuse_common::net_errors::explained(&message))
        }
        other => other,
    }
}

/// The error of an element number on a page never listed.
pub(crate) fn no_listing() -> ControllerError {
    ControllerError::StaleListing(
        "there is no listing of this page yet: navigate, wait or screenshot first, then use the \
         element numbers it gives"
            .into(),
    )
}

/// Why element `n` cannot be pressed in a listing of `count` elements.
fn not_listed(n: i64, count: usize) -> String {
    match count {
        0 => format!(
            "element {n} is not in the last listing, which has no elements in view: scroll, \
             wait or navigate, then use the numbers the new listing gives"
        ),
        _ => format!("element {n} is not in the last listing, which numbers 1 to {count}"),
    }
}

/// What a reply's head adds after a page's title when its document came with an error status
/// (" (HTTP 404)"); nothing otherwise.
fn error_status(status: u32) -> String {
    match status {
        400.. => format!(" (HTTP {status})"),
        _ => String::new(),
    }
}

/// A page as a reply heads it: `Title — URL`, or the URL alone for a page without a title
/// (`about:blank`, a page between two of its drawings).
fn titled(title: &str, url: &str) -> String {
    if title.trim().is_empty() {
        url.to_string()
    } else {
        format!("{title} — {url}")
    }
}

/// An element of the listing as a reply names it: its label quoted, or where it has none its
/// number and kind (`[34] textarea`), which say which one it was.
fn element_named(n: i64, kind: &str, label: &str) -> String {
    if label.is_empty() {
        format!("[{n}] {kind}")
    } else {
        quoted(label)
    }
}

/// A label as the model and the captions quote it.
fn quoted(label: &str) -> String {
    let label = if label.is_empty() {
        "(no label)"
    } else {
        label
    };
    format!("'{}'", label.replace('\'', "\u{2019}"))
}

impl Ctx<'_> {
    pub fn session(&self) -> Option<Session> {
        Some(Session {
            url_policy: Some(self.url_policy.clone()),
            ..Session::new(self.tenant, self.record.workspace.as_str(), self.thread)
        })
    }

    /// Keeps what the backend says the URL policy refused, for the reply.
    pub(crate) fn note_refused(&self, refused: Vec<String>) {
        let mut noted = self.refused.lock().unwrap();
        for sentence in refused {
            if !noted.contains(&sentence) {
                noted.push(sentence);
            }
        }
    }

    /// Runs `request` on the thread's page, opening the page first when the backend has none
    /// (a new thread, or a worker, a phone or `serve` that restarted) — where the thread last
    /// saw it, unless `request` navigates anyway.
    pub(crate) async fn op<R: Op + Clone>(
        &self,
        request: R,
    ) -> std::result::Result<R::Reply, BackendError> {
        match request.clone().run(&*self.backend).await {
            Err(error) if is_not_open(&error) => {
                self.reopen(R::NAME != NavigateRequest::NAME).await?;
                request.run(&*self.backend).await
            }
            other => other,
        }
    }

    /// Opens the thread's page anew — where the thread last saw it, when `back` — once per
    /// action, however many of its ops found it gone (the listing and the picture are asked for
    /// together).
    async fn reopen(&self, back: bool) -> std::result::Result<(), BackendError> {
        let mut reopened = self.reopened.lock().await;
        if !*reopened {
            self.open().await?;
            if back {
                self.back_where_it_was().await;
            }
            *reopened = true;
        }
        Ok(())
    }

    /// Loads a page opened anew at the URL of the thread's last listing, so that `state`,
    /// `screenshot` or `extract` after a restart answer of that page, not of a blank one. At
    /// best: a page that no longer loads (or is refused now) leaves it blank and the action
    /// goes on; `close` forgets the listing, so a closed page comes back blank.
    async fn back_where_it_was(&self) {
        let Ok(Some(listing)) = self.store.listing(self.tenant, self.thread) else {
            return;
        };
        // A popup the thread was on is gone with its browser: back to its opener.
        let url = listing.opener.unwrap_or(listing.url);
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return;
        }
        let back = async {
            NavigateRequest {
                session: self.session(),
                url,
                timeout_ms: self.navigate_ms,
            }
            .run(&*self.backend)
            .await?;
            SettleRequest {
                session: self.session(),
                timeout_ms: self.settle_ms,
            }
            .run(&*self.backend)
            .await
        };
        if let Err(error) = back.await {
            // Not the URL: it is the page's, and may carry a token.
            tracing::info!(%error, "the reopened page did not load where the thread left it");
        }
    }

    /// Opens the thread's page with its profile (a no-op re-profile when it is open).
    pub(crate) async fn open(&self) -> std::result::Result<(), BackendError> {
        let profile = &self.record.profile;
        self.backend
            .open(OpenRequest {
                session: self.session(),
                user_agent: profile.user_agent.clone(),
                width: profile.width,
                height: profile.height,
                mobile: profile.mobile,
            })
            .await?;
        Ok(())
    }

    async fn evaluate(&self, js: &str, arg: Value) -> Result<Value> {
        let reply = self
            .op(EvaluateRequest {
                session: self.session(),
                js: js.to_string(),
                arg_json: arg.to_string(),
            })
            .await?;
        serde_json::from_str(&reply.value_json).map_err(|e| {
            // The browser's answer, not the controller's store: a bad gateway.
            BackendError::Internal(format!("the page answered with bad JSON: {e}")).into()
        })
    }

    /// Lets the page finish what the action started, within the configured bound.
    pub(crate) async fn settle(&self, timeout_ms: u32) -> Result<bool> {
        Ok(self.settle_reply(timeout_ms).await?.settled)
    }

    async fn settle_reply(&self, timeout_ms: u32) -> Result<SettleReply> {
        let mut reply = self
            .op(SettleRequest {
                session: self.session(),
                timeout_ms,
            })
            .await?;
        self.note_refused(std::mem::take(&mut reply.refused));
        if reply.window() != WindowChange::None {
            *self.window.lock().unwrap() = reply.window();
        }
        self.downloaded.lock().unwrap().append(&mut reply.downloads);
        Ok(reply)
    }

    /// Settles before a [`Ctx::look`]; when the page was quiet at the settle's first look and
    /// needed no response since the action began, its picture is asked for at once, to be
    /// taken while the page is listed, instead of after the reply. Asked for only after the
    /// settle: a capture still pending when a renderer dies takes Chromium's browser process
    /// down with it (SIGSEGV, Chromium 156), and a settle is when a page is still at work.
    pub(crate) async fn settle_for_look(&self, timeout_ms: u32) -> Result<SettleReply> {
        let reply = self.settle_reply(timeout_ms).await?;
        if self.frame_beside_listing && reply.at_once {
            let backend = self.backend.clone();
            let request = ScreenshotRequest {
                session: self.session(),
                quality: 0,
            };
            let shot = tokio::spawn(async move { backend.screenshot(request).await });
            *self.early_shot.lock().unwrap() = Some(shot);
        }
        Ok(reply)
    }

    /// Lists the page (stored as the thread's last listing).
    async fn list(&self) -> Result<Listing> {
        let id = new_listing_id();
        let value = self
            .evaluate(
                listing::LIST_JS,
                json!({"listing_id": id, "max": LISTING_MAX}),
            )
            .await?;
        let mut listing = Listing::from_page(&id, value).map_err(ControllerError::Store)?;
        self.said.lock().unwrap().append(&mut listing.said);
        let last = self.store.listing(self.tenant, self.thread)?;
        listing.opener = self.opener(last.as_ref()).await;
        (listing.trail, listing.steps_in_tab) = self.trail_to(last, &listing.url).await;
        self.store
            .put_listing(self.tenant, self.thread, Some(&listing))?;
        // The reply hands out these numbers: a `click n` after a crash must find them.
        self.store.flush().await?;
        Ok(listing)
    }

    /// The opener of the popup the thread is on (see [`Listing::opener`]): the page this action
    /// began on when it opened one, none when the one it was on closed or the page was opened
    /// anew (its popup went with its browser), else as before.
    async fn opener(&self, last: Option<&Listing>) -> Option<String> {
        if *self.reopened.lock().await {
            return None;
        }
        let window = *self.window.lock().unwrap();
        match window {
            WindowChange::Opened => last.map(|last| last.url.clone()),
            WindowChange::Closed => None,
            WindowChange::None => last.and_then(|last| last.opener.clone()),
        }
    }

    /// The pages the thread was on before reaching `url`, and how many of them the tab's history
    /// holds (see [`Listing::steps_in_tab`]): the last listing's trail, plus the page it listed
    /// when the thread moved on from there, less that page's last step when going back to it.
    async fn trail_to(&self, last: Option<Listing>, url: &str) -> (Vec<String>, Option<usize>) {
        let Some(last) = last else {
            return (Vec::new(), None);
        };
        let (mut trail, mut steps) = (last.trail, last.steps_in_tab);
        if last.url != url {
            if self.going_back.is_some() && trail.last().is_some_and(|earlier| earlier == url) {
                trail.pop();
                steps = steps.map(|n| n.saturating_sub(1));
            } else {
                trail.push(last.url);
                steps = steps.map(|n| n + 1);
                if trail.len() > listing::TRAIL_MAX {
                    trail.remove(0);
                }
            }
        }
        let tab_anew = *self.reopened.lock().await || self.going_back == Some(BackBy::Address);
        if tab_anew {
            steps = Some(0);
        }
        let steps = steps.map(|n| n.min(trail.len()));
        (trail, steps)
    }

    /// Lists the page and promises its frame: the reply does not wait for the picture, which
    /// is taken as soon as the reply is out (see [`PendingFrame`]).
    async fn look(&mut self, caption: String) -> Result<(Listing, FrameRef)> {
        let listing = self.list().await?;
        let (width, height) = self.record.profile.size();
        let frame = FrameRef {
            id: self.frames.reserve_id(self.tenant, self.thread)?,
            caption: caption.clone(),
            width,
            height,
        };
        self.pending_frame = Some(PendingFrame {
            id: frame.id.clone(),
            caption,
            url: listing.url.clone(),
            title: listing.title.clone(),
            early: self.early_shot.lock().unwrap().take(),
        });
        Ok((listing, frame))
    }

    /// Lists the page and takes its frame, in parallel, before the reply (for `screenshot`,
    /// whose picture is the point of the reply).
    async fn look_now(&self, caption: String) -> Result<(Listing, FrameRef)> {
        let listing = self.list();
        let shot = async {
            self.op(ScreenshotRequest {
                session: self.session(),
                quality: 0,
            })
            .await
            .map_err(ControllerError::from)
        };
        let (listing, shot) = tokio::join!(listing, shot);
        let listing = listing?;
        let frame = self
            .frames
            .publish(
                self.tenant,
                self.thread,
                self.frames.reserve_id(self.tenant, self.thread)?,
                shot?,
                FrameMeta {
                    caption,
                    url: &listing.url,
                    title: &listing.title,
                },
            )
            .await?;
        Ok((listing, crate::frames::reference(&frame)))
    }

    /// The reply of a page-changing action: what the URL policy refused meanwhile, if anything,
    /// a first line, then the listing.
    fn page_reply(&self, head: String, listing: Listing, frame: FrameRef) -> ActReply {
        let refused = std::mem::take(&mut *self.refused.lock().unwrap());
        let head = if refused.is_empty() {
            head
        } else {
            format!("{}\n{head}", refused.join("\n"))
        };
        let said = std::mem::take(&mut *self.said.lock().unwrap());
        let head = said_lines(head, &said);
        let downloaded = std::mem::take(&mut *self.downloaded.lock().unwrap());
        let head = match downloaded.as_slice() {
            [] => head,
            names => format!(
                "{head}\nDownloaded {} to the workspace's downloads/ folder (`downloads` lists \
                 it; the page stays).",
                names.join(", ")
            ),
        };
        ActReply {
            text: format!("{head}\n{}", listing.render()),
            url: listing.url.clone(),
            title: listing.title.clone(),
            elements: listing
                .elements
                .iter()
                .map(|e| Element {
                    n: e.n,
                    label: e.label.clone(),
                    kind: e.kind.clone(),
                    href: e.href.clone(),
                    state: e.state.clone(),
                })
                .collect(),
            frame: Some(frame),
            ..Default::default()
        }
    }

    /// Settles, lists and frames the page after an action; the reply starts with `head`.
    async fn after_change(&mut self, caption: String, head: String) -> Result<ActReply> {
        self.after_change_told(caption, |_| head).await
    }

    /// [`Ctx::after_change`], its reply's head told from the new listing.
    async fn after_change_told(
        &mut self,
        caption: String,
        head: impl FnOnce(&Listing) -> String,
    ) -> Result<ActReply> {
        self.settle_for_look(self.settle_ms).await?;
        let (listing, frame) = self.look(caption).await?;
        Ok(self.page_reply(head(&listing), listing, frame))
    }

    /// After an input that may have taken the page elsewhere (a click, a key): settles, lists
    /// the page and, when its URL or its title changed (a form posted back to its own URL
    /// shows another page there), says where it is now (with the status of an error page) —
    /// the new listing tells, no op of its own; without a listing before, where the page was
    /// is unknown and nothing is said. A `note` follows that first line.
    async fn after_input(&mut self, caption: String, note: Option<String>) -> Result<ActReply> {
        self.after_input_telling(caption, note, |_| None).await
    }

    /// [`Self::after_input`], with what `tell` says of the listing when the page stayed the
    /// document it was (where the focus went after a key).
    async fn after_input_telling(
        &mut self,
        caption: String,
        note: Option<String>,
        tell: impl FnOnce(&Listing) -> Option<String>,
    ) -> Result<ActReply> {
        let before = self
            .store
            .listing(self.tenant, self.thread)?
            .map(|l| (l.url, l.title, l.document));
        let settled = self.settle_for_look(self.settle_ms).await?;
        let (listing, frame) = self.look(caption.clone()).await?;
        let moved = before
            .as_ref()
            .is_some_and(|(url, title, _)| *url != listing.url || *title != listing.title);
        // Opened anew before the input (its browser had closed): another document, but by the
        // reopening, not by the input.
        let reopened = before.is_some() && *self.reopened.lock().await;
        // A form posted back to its own address, answered with the same title: the page is
        // another one all the same (its fields emptied, a message shown).
        let loaded_again = !reopened
            && before.as_ref().is_some_and(|(_, _, document)| {
                *document != 0.0 && listing.document != 0.0 && *document != listing.document
            });
        let head = if moved {
            format!(
                "{caption} → now at {} ({}){}",
                listing.url,
                listing.title,
                error_status(settled.status)
            )
        } else if loaded_again {
            format!(
                "{caption} → the page loaded again at the same address{}: `extract` reads what \
                 it says now.",
                error_status(settled.status)
            )
        } else {
            match tell(&listing) {
                Some(told) => format!("{caption}. {told}"),
                None => format!("{caption}."),
            }
        };
        let head = match settled.window() {
            WindowChange::Opened => format!(
                "{head} It is a window the page opened (a popup): the thread acts on it until it \
                 closes, then on the page that opened it, as that page was left."
            ),
            WindowChange::Closed => format!(
                "{head} The window closed: the thread is back on the page that opened it, which \
                 stayed open behind it (what was typed there is kept)."
            ),
            WindowChange::None => head,
        };
        // The reply would read as the action's outcome; the page is still at work.
        let head = if settled.settled {
            head
        } else {
            format!(
                "{head} The page was still busy after {} s (loading, or changing as a stream \
                 does): what is listed may not be the end; `wait` lets it finish.",
                self.settle_ms.div_ceil(1000)
            )
        };
        let head = if reopened {
            format!(
                "{head} The page was loaded anew at its address first (its browser had closed: \
                 idle, or a restart), so what was typed into it before is gone."
            )
        } else {
            head
        };
        let head = match note {
            Some(note) => format!("{head} {note}"),
            None => head,
        };
        Ok(self.page_reply(head, listing, frame))
    }

    /// Finds element `n` of the thread's last listing on the page: scrolled into view, and
    /// focused when that is the aim. Element numbers of a listing the page no longer has are
    /// refused.
    async fn element(&self, n: i64, aim: Aim) -> Result<listing::Found> {
        let Some(listing) = self.store.listing(self.tenant, self.thread)? else {
            return Err(no_listing());
        };
        let count = listing.elements.len();
        if n < 1 || n as usize > count {
            return Err(ControllerError::InvalidArgument(not_listed(n, count)));
        }
        let value = self
            .evaluate(
                listing::RESOLVE_JS,
                // A field is typed into through its focus, which nothing over it blocks; a tap
                // lands on what lies over the element.
                json!({"listing_id": listing.id, "n": n, "scroll": true,
                    "focus": aim == Aim::Focus, "tap": aim != Aim::Focus,
                    "double": aim == Aim::DoubleTap}),
            )
            .await?;
        let mut why = if *self.reopened.lock().await {
            // What the page held (a form half filled) is gone too: worth knowing before typing
            // into it again.
            "the page was loaded again since the last listing (its browser had closed: idle, or \
             a restart): its numbers are gone, and what was typed into it too"
        } else {
            "the page changed since the last listing"
        };
        // Another document at the listed address (a stale answer says when the page's began,
        // and where it is): reloaded, or brought back after a restart of this controller, which
        // does not know it reopened it.
        if listing.document != 0.0
            && value["url"].as_str() == Some(listing.url.as_str())
            && value["began"]
                .as_f64()
                .is_some_and(|began| began != listing.document)
        {
            why = "the page was loaded again at its address since the last listing (reloaded, \
                   or brought back after a restart): its numbers are gone, and what was typed \
                   into it too";
        }
        let resolved = listing::parse_resolved(value).map_err(ControllerError::Store)?;
        let stale = || {
            ControllerError::StaleListing(format!(
                "{why}; element {n} may be another one now: look again (wait or screenshot) \
                 and use the new numbers"
            ))
        };
        // Named only in the refusals that need it.
        let listed = listing.elements.iter().find(|e| i64::from(e.n) == n);
        let label = || quoted(listed.map_or("", |e| e.label.as_str()));
        match resolved {
            Resolved::At(found) => Ok(listing::Found {
                row: listed.and_then(listing::ListedElement::row),
                ..found
            }),
            Resolved::Stale | Resolved::Detached => Err(stale()),
            Resolved::Missing { count } => Err(ControllerError::InvalidArgument(not_listed(
                n,
                count as usize,
            ))),
            Resolved::Hidden => Err(ControllerError::InvalidArgument(format!(
                "element {n} is not visible any more; scroll or look again"
            ))),
            Resolved::Unfocused { by } if by.is_empty() => {
                Err(ControllerError::InvalidArgument(format!(
                    "element {n} ({}) takes no focus, so nothing can be typed into it",
                    label()
                )))
            }
            Resolved::Unfocused { by } => Err(ControllerError::Conflict(format!(
                "element {n} ({}) cannot take the focus: the page keeps it on {} (an open menu \
                 or dialog: key Escape closes most, or answer it); nothing was typed",
                label(),
                quoted(&by)
            ))),
            Resolved::Covered { by } => Err(ControllerError::Conflict(format!(
                "element {n} is covered: a tap on it would press what lies over it ({}); \
                 close or answer that first (key Escape closes an open list or menu, a click on \
                 another field most pickers; a dialog's button, a banner's close), then look \
                 again",
                quoted(&by)
            ))),
        }
    }
}

/// How many of the page's dialogs a reply quotes; the rest are counted.
const SAID_QUOTED: usize = 5;

/// `head`, then a line for each dialog the page opened (the first few).
fn said_lines(head: String, said: &[listing::Said]) -> String {
    let mut lines = vec![head];
    lines.extend(said.iter().take(SAID_QUOTED).map(listing::Said::render));
    if said.len() > SAID_QUOTED {
        lines.push(format!(
            "(and {} more of its dialogs, each answered the same way)",
            said.len() - SAID_QUOTED
        ));
    }
    lines.join("\n")
}
