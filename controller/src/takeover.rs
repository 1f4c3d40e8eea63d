//! The user's own input on a page they hold: taps on the picture, typing into the focused
//! field, keys, opening a URL, back and scroll. It does not take the thread's lock (the agent's
//! action waiting for the hold has it). Over the HTTP API each input is answered with a fresh
//! frame; over the live view ([`Controller::live_input`]) it returns at once, the stream showing
//! its result.

use std::sync::Arc;

use nanomuse_common::limits::SCROLL_MAX_PX;
use nanomuse_proto::screencast::Screencast;
use nanomuse_proto::*;

use crate::actions::Ctx;
use crate::app::Controller;
use crate::error::{ControllerError, Result};
use crate::frames::FrameMeta;

/// The longest text one input types.
const TEXT_MAX: usize = 10_000;

/// The longest text one live input types, a key press per character (a paste, an IME's word).
const LIVE_TEXT_MAX: usize = 1_000;

/// How long the page may take to settle after the user's input before its picture is taken.
const INPUT_SETTLE_MS: u32 = 3_000;

#[derive(Debug, Clone, PartialEq)]
pub enum UserInput {
    /// A tap at (x, y) in CSS px of the frame (the viewport).
    Tap {
        x: f64,
        y: f64,
    },
    /// Text typed into the focused field.
    Type {
        text: String,
    },
    Key {
        key: String,
    },
    Open {
        url: String,
    },
    Back,
    Scroll {
        dy: f64,
    },
}

impl UserInput {
    /// Refuses what cannot be carried out on a `width`×`height` viewport, before anything runs.
    fn check(&self, (width, height): (u32, u32)) -> Result<()> {
        let bad = |message: String| Err(ControllerError::InvalidArgument(message));
        match self {
            UserInput::Tap { x, y } => {
                let inside = |v: f64, max: u32| v.is_finite() && v >= 0.0 && v < max as f64;
                if !inside(*x, width) || !inside(*y, height) {
                    return bad(format!(
                        "the tap ({x}, {y}) is outside the page's {width}×{height} viewport \
                         (CSS px of the frame)"
                    ));
                }
            }
            UserInput::Type { text } if text.is_empty() => {
                return bad("there is no text to type".into());
            }
            UserInput::Type { text } if text.chars().count() > TEXT_MAX => {
                return bad(format!("type at most {TEXT_MAX} characters at a time"));
            }
            UserInput::Key { key } if key.trim().is_empty() => {
                return bad(
                    "name a key: Enter, Tab, Escape, Backspace, an arrow, Control+a, …".into(),
                );
            }
            UserInput::Key { key } => crate::app::check_key(key)?,
            UserInput::Open { url } => {
                let shown = nanomuse_common::limits::excerpt(url);
                if url.len() > nanomuse_common::limits::URL_MAX_BYTES {
                    return bad(format!(
                        "the URL is {} bytes long; a URL may have at most {} bytes",
                        url.len(),
                        nanomuse_common::limits::URL_MAX_BYTES
                    ));
                }
                let parsed = url::Url::parse(url.trim()).map_err(|e| {
                    ControllerError::InvalidArgument(format!("{shown:?} is not a URL: {e}"))
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return bad(format!(
                        "only http and https URLs can be opened, not {shown:?}"
                    ));
                }
            }
            UserInput::Scroll { dy } if !dy.is_finite() || dy.abs() > SCROLL_MAX_PX => {
                return bad(format!("scroll by at most {SCROLL_MAX_PX} px, not {dy}"));
            }
            _ => {}
        }
        Ok(())
    }

    /// The action a recording names for the frame after it.
    fn action(&self) -> &'static str {
        match self {
            UserInput::Tap { .. } => "user_tap",
            UserInput::Type { .. } => "user_type",
            UserInput::Key { .. } => "user_key",
            UserInput::Open { .. } => "user_open",
            UserInput::Back => "user_back",
            UserInput::Scroll { .. } => "user_scroll",
        }
    }

    /// What a frame after it says; never the typed text.
    pub(crate) fn caption(&self) -> String {
        match self {
            UserInput::Tap { x, y } => format!("You tapped at ({}, {})", x.round(), y.round()),
            // What the user typed may be a password: never in a caption.
            UserInput::Type { text } => format!("You typed {} characters", text.chars().count()),
            UserInput::Key { key } => format!("You pressed {key}"),
            UserInput::Open { url } => format!("You opened {}", url.trim()),
            UserInput::Back => "You went back".into(),
            UserInput::Scroll { dy } => format!("You scrolled {} px", dy.round()),
        }
    }
}

impl Controller {
    /// Carries out the holder's `input` on `thread`'s page and returns the frame after it,
    /// once the page settled (the HTTP API: each input is answered with its picture).
    pub async fn user_input(&self, tenant: &str, thread: &str, input: UserInput) -> Result<Frame> {
        let (record, route) = self.input_route(tenant, thread, &input).await?;
        let ctx = self.ctx(tenant, thread, record, &route);
        carry_out(&ctx, &input).await?;
        ctx.settle(INPUT_SETTLE_MS).await?;
        let session = || ctx.session();
        let (shot, state) = tokio::join!(
            ctx.backend.screenshot(ScreenshotRequest {
                session: session(),
                quality: 0,
            }),
            ctx.backend.state(StateRequest { session: session() }),
        );
        let state = state?;
        let meta = FrameMeta {
            caption: input.caption(),
            url: &state.url,
            title: &state.title,
        };
        let id = self.frames().reserve_id(tenant, thread)?;
        let published = self.frames().publish(tenant, thread, id, shot?, meta);
        crate::frames::acting(input.action(), published).await
    }

    /// Carries out the holder's `input` and returns as soon as the page has it: no settle, no
    /// picture (the live view shows what it did), so keys go through as they are typed.
    pub async fn live_input(&self, tenant: &str, thread: &str, input: UserInput) -> Result<()> {
        if let UserInput::Type { text } = &input
            && text.chars().count() > LIVE_TEXT_MAX
        {
            return Err(ControllerError::InvalidArgument(format!(
                "type at most {LIVE_TEXT_MAX} characters at a time on the live view; longer \
                 text goes through POST /api/browser/{thread}/type"
            )));
        }
        let (record, route) = self.input_route(tenant, thread, &input).await?;
        let ctx = self.ctx(tenant, thread, record, &route);
        let UserInput::Type { text } = &input else {
            return carry_out(&ctx, &input).await;
        };
        // Typed as a keyboard types: each character pressed at the caret (the `type` op fills
        // the whole field, which is what a form's "Type" means, not a keystroke).
        for key in text.chars().filter_map(key_of) {
            ctx.op(KeyRequest {
                session: ctx.session(),
                key,
            })
            .await?;
        }
        Ok(())
    }

    /// The thread and where its page is, for `input` by the hold's holder: refused (and
    /// nothing run) without an open hold or for input that cannot be carried out.
    async fn input_route(
        &self,
        tenant: &str,
        thread: &str,
        input: &UserInput,
    ) -> Result<(crate::store::ThreadRecord, crate::app::Route)> {
        let record = self.known_thread(tenant, thread)?;
        if self.holds.open_hold(tenant, thread).is_none() {
            return Err(no_hold(thread));
        }
        input.check(record.profile.size())?;
        if let UserInput::Open { url } = input {
            self.url_policies.check(tenant, url).await?;
        }
        let route = self.route(tenant, &record).await?;
        Ok((record, route))
    }

    /// Where `thread`'s page is watched live, and the request that watches it: only while a
    /// hold is open (the live view is the holder's).
    pub async fn live_source(
        &self,
        tenant: &str,
        thread: &str,
    ) -> Result<(Arc<dyn Screencast>, WatchScreenRequest)> {
        let record = self.known_thread(tenant, thread)?;
        if self.holds.open_hold(tenant, thread).is_none() {
            return Err(no_hold(thread));
        }
        let route = self.route(tenant, &record).await?;
        let Some(screencast) = route.screencast.clone() else {
            return Err(ControllerError::Unavailable(format!(
                "the page of thread {thread:?} is on {}, which has no live stream; its picture \
                 is refreshed instead (GET /api/browser/{thread}/live)",
                route.name
            )));
        };
        let ctx = self.ctx(tenant, thread, record, &route);
        Ok((
            screencast,
            WatchScreenRequest {
                session: ctx.session(),
                ..Default::default()
            },
        ))
    }

    /// A picture of `thread`'s page as it is now, not stored: the card's live view while the
    /// user has the page.
    pub async fn live_picture(&self, tenant: &str, thread: &str) -> Result<ScreenshotReply> {
        let record = self.known_thread(tenant, thread)?;
        let route = self.route(tenant, &record).await?;
        let ctx = self.ctx(tenant, thread, record, &route);
        Ok(ctx
            .op(ScreenshotRequest {
                session: ctx.session(),
                quality: 0,
            })
            .await?)
    }
}

/// The key that types `c`; none for a control character no key types.
fn key_of(c: char) -> Option<String> {
    match c {
        '\n' | '\r' => Some("Enter".into()),
        '\t' => Some("Tab".into()),
        c if c.is_control() => None,
        c => Some(c.to_string()),
    }
}

fn no_hold(thread: &str) -> ControllerError {
    ControllerError::Conflict(format!(
        "nobody has taken over thread {thread:?}: take over first (POST \
         /api/browser/{thread}/control {{\"action\": \"take_over\"}})"
    ))
}

/// The op that carries out `input` on the page.
async fn carry_out(ctx: &Ctx<'_>, input: &UserInput) -> Result<()> {
    let session = || ctx.session();
    match input {
        UserInput::Tap { x, y } => {
            ctx.op(TapRequest {
                session: session(),
                x: *x,
                y: *y,
                count: 1,
            })
            .await?;
        }
        UserInput::Type { text } => {
            ctx.op(TypeRequest {
                session: session(),
                text: text.clone(),
            })
            .await?;
        }
        UserInput::Key { key } => {
            ctx.op(KeyRequest {
                session: session(),
                key: key.trim().to_string(),
            })
            .await?;
        }
        UserInput::Open { url } => {
            ctx.op(NavigateRequest {
                session: session(),
                url: url.trim().to_string(),
                timeout_ms: 0,
            })
            .await?;
        }
        UserInput::Back => {
            ctx.op(BackRequest { session: session() }).await?;
        }
        UserInput::Scroll { dy } => {
            ctx.op(ScrollRequest {
                session: session(),
                dy: *dy,
            })
            .await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_that_cannot_be_carried_out_is_refused_with_the_reason() {
        let size = (412, 915);
        let refused = |input: UserInput| input.check(size).unwrap_err().to_string();
        assert!(refused(UserInput::Tap { x: 412.0, y: 10.0 }).contains("outside"));
        assert!(refused(UserInput::Tap { x: -1.0, y: 10.0 }).contains("412×915"));
        assert!(
            refused(UserInput::Tap {
                x: f64::NAN,
                y: 1.0
            })
            .contains("outside")
        );
        assert!(refused(UserInput::Type { text: "".into() }).contains("no text"));
        assert!(
            refused(UserInput::Open {
                url: "file:///etc/passwd".into()
            })
            .contains("http")
        );
        assert!(
            refused(UserInput::Open {
                url: "not a url".into()
            })
            .contains("not a URL")
        );
        assert!(refused(UserInput::Scroll { dy: f64::INFINITY }).contains("scroll"));
        UserInput::Tap { x: 411.5, y: 0.0 }.check(size).unwrap();
        UserInput::Open {
            url: " https://example.com/ ".into(),
        }
        .check(size)
        .unwrap();
    }

    #[test]
    fn a_caption_never_holds_the_typed_text() {
        let caption = UserInput::Type {
            text: "hunter2".into(),
        }
        .caption();
        assert!(!caption.contains("hunter2"), "{caption}");
    }
}
