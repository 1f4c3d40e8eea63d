//! `wait [seconds] [--text T]`: a pause of up to 15 s for a page that is still drawing itself,
//! then the page state. `wait N` pauses N seconds; `wait` alone waits until the page is quiet
//! — no request in flight *and* no change to its DOM for a moment, since a single-page app
//! draws from timers and scripts long after the network is idle; `wait --text T` waits until T
//! is on the page. The DOM is watched by a script run through `evaluate`, so a worker and a
//! phone wait alike.

use std::time::Duration;

use nanomuse_proto::{ActReply, WaitAction};
use serde_json::json;
use tokio::time::Instant;

use super::Ctx;
use crate::error::{ControllerError, Result};

pub const MAX_WAIT_SECONDS: f64 = 15.0;

/// How long the DOM must stay unchanged for the page to count as quiet.
const QUIET_MS: u64 = 500;

/// The watchers fail when a navigation replaces their document; a failure this many times in a
/// row is the page's own, and reported.
const MAX_FAILURES: u32 = 3;

/// The longest text `--text` looks for (the listing cuts labels far shorter).
const MAX_TEXT_CHARS: usize = 1_000;

/// `({quiet_ms, timeout_ms}) => quiet`: true once nothing in the document changed for
/// `quiet_ms`, false when `timeout_ms` passed first.
const DOM_QUIET_JS: &str = nanomuse_proto::scripts::DOM_QUIET;

/// `({text, timeout_ms}) => found`: true once the page's visible text (whitespace collapsed)
/// holds `text`, false when `timeout_ms` passed first. Looked at after changes, at most every
/// 100 ms, and every 250 ms regardless (text can appear by layout alone).
const TEXT_JS: &str = nanomuse_proto::scripts::TEXT_APPEARS;

pub async fn run(ctx: &mut Ctx<'_>, action: WaitAction) -> Result<ActReply> {
    let seconds = action.seconds;
    if !seconds.is_finite() || !(0.0..=MAX_WAIT_SECONDS).contains(&seconds) {
        return Err(ControllerError::InvalidArgument(format!(
            "wait takes 0 to {MAX_WAIT_SECONDS} seconds, not {seconds}"
        )));
    }
    let text = action.text.trim();
    if action.text.contains('\0') || text.chars().count() > MAX_TEXT_CHARS {
        return Err(ControllerError::InvalidArgument(format!(
            "wait --text takes a text of at most {MAX_TEXT_CHARS} characters without NUL"
        )));
    }
    if !action.text.is_empty() && text.is_empty() {
        return Err(ControllerError::InvalidArgument(
            "wait --text needs some text to wait for, not only spaces".into(),
        ));
    }
    let bound = Duration::from_secs_f64(if seconds > 0.0 {
        seconds
    } else {
        MAX_WAIT_SECONDS
    });
    let head = if !text.is_empty() {
        until_text(ctx, text, bound).await?
    } else if seconds > 0.0 {
        tokio::time::sleep(bound).await;
        format!("Waited {seconds:.1} s.")
    } else {
        until_quiet(ctx, bound).await?
    };
    // Whatever the page started meanwhile finishes as after any action, briefly.
    ctx.settle_for_look(ctx.settle_ms.min(2_000)).await?;
    let (listing, frame) = ctx.look("Waited".into()).await?;
    Ok(ctx.page_reply(
        format!("{head} {} — {}", listing.title, listing.url),
        listing,
        frame,
    ))
}

/// Until no request is in flight and the DOM has not changed for [`QUIET_MS`], within `bound`.
async fn until_quiet(ctx: &Ctx<'_>, bound: Duration) -> Result<String> {
    let deadline = Instant::now() + bound;
    let mut failures = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        if !ctx.settle(millis(left)).await? {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let args = json!({"quiet_ms": QUIET_MS, "timeout_ms": millis(left)});
        // A navigation replaces the document under the watcher: look again at the new one.
        let quiet = match ctx.evaluate(DOM_QUIET_JS, args).await {
            Ok(quiet) => {
                failures = 0;
                quiet
            }
            Err(error) => {
                failures += 1;
                if failures == MAX_FAILURES {
                    return Err(error);
                }
                continue;
            }
        };
        // The DOM stood still; so must the network, which a change may have set off.
        if quiet.as_bool() == Some(true) && ctx.settle(millis(left).min(1_000)).await? {
            return Ok("The page is quiet.".into());
        }
    }
    Ok(format!(
        "Waited {:.0} s; the page never stopped changing.",
        bound.as_secs_f64()
    ))
}

/// Until `text` is on the page, within `bound`.
async fn until_text(ctx: &Ctx<'_>, text: &str, bound: Duration) -> Result<String> {
    let deadline = Instant::now() + bound;
    let quoted = super::quoted(text);
    let mut failures = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let args = json!({"text": text, "timeout_ms": millis(left)});
        match ctx.evaluate(TEXT_JS, args).await {
            Ok(found) if found.as_bool() == Some(true) => {
                return Ok(format!("{quoted} is on the page."));
            }
            Ok(_) => break,
            // The document was replaced while the script watched it: watch the new one.
            Err(_) if Instant::now() < deadline && failures + 1 < MAX_FAILURES => {
                failures += 1;
                ctx.settle(millis(deadline.saturating_duration_since(Instant::now())))
                    .await?;
            }
            Err(error) => return Err(error),
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    Ok(format!(
        "Waited {:.1} s; {quoted} did not appear on the page.",
        bound.as_secs_f64()
    ))
}

fn millis(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{EvaluateRequest, SettleReply, SettleRequest, WaitAction};
    use serde_json::{Value, json};
    use tokio::time::Instant;

    use super::*;
    use crate::testing::*;

    fn wait(seconds: f64, text: &str) -> Action {
        Action::Wait(WaitAction {
            seconds,
            text: text.into(),
        })
    }

    fn page() -> FakePage {
        FakePage::new("https://x.example/", "X", &[("button", "Buy")])
    }

    /// A backend whose page has no request in flight.
    fn settled() -> Harness {
        let h = Harness::showing(&page());
        h.backend.on::<SettleRequest>(|_| {
            Ok(SettleReply {
                settled: true,
                ..Default::default()
            })
        });
        h
    }

    #[tokio::test(start_paused = true)]
    async fn wait_n_pauses_that_long_then_lists_the_page() {
        let h = Harness::showing(&page());
        let started = Instant::now();
        let (reply, frame) = h.ok(wait(2.5, "")).await;
        assert!(started.elapsed() >= Duration::from_millis(2_500));
        assert_eq!(h.backend.ops(), ["settle", "evaluate"]);
        // Afterwards the page settles as after any action, at most 2 s.
        assert_eq!(h.backend.requests::<SettleRequest>()[0].timeout_ms, 1_000);
        assert_eq!(
            reply.text,
            "Waited 2.5 s. X — https://x.example/\n[1] button \"Buy\""
        );
        assert_eq!(frame.unwrap().caption, "Waited");
    }

    #[tokio::test(start_paused = true)]
    async fn wait_alone_ends_when_the_network_and_the_dom_are_quiet() {
        let h = settled();
        h.backend.reply::<EvaluateRequest>(evaluated(json!(true)));
        let (reply, _) = h.ok(wait(0.0, "")).await;
        assert_eq!(
            h.backend.ops(),
            ["settle", "evaluate", "settle", "settle", "evaluate"]
        );
        let watcher = &h.backend.requests::<EvaluateRequest>()[0];
        assert_eq!(watcher.js, DOM_QUIET_JS);
        let arg: Value = serde_json::from_str(&watcher.arg_json).unwrap();
        assert_eq!(arg["quiet_ms"], QUIET_MS);
        assert!(
            reply
                .text
                .starts_with("The page is quiet. X — https://x.example/")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_that_never_stops_changing_is_waited_for_15_s() {
        let h = settled();
        // The DOM watcher reports a change every time, after its quiet time.
        let page = page();
        h.backend.on::<EvaluateRequest>(move |request| {
            Ok(if request.js == DOM_QUIET_JS {
                evaluated(json!(false))
            } else {
                page.evaluate(request)
            })
        });
        h.backend
            .delay::<EvaluateRequest>(Duration::from_millis(QUIET_MS));
        let started = Instant::now();
        let (reply, _) = h.ok(wait(0.0, "")).await;
        let waited = started.elapsed();
        assert!(
            (Duration::from_secs(15)..Duration::from_secs(17)).contains(&waited),
            "{waited:?}"
        );
        assert!(
            reply
                .text
                .starts_with("Waited 15 s; the page never stopped changing. X —"),
            "{}",
            reply.text
        );
    }

    #[tokio::test(start_paused = true)]
    async fn wait_text_ends_when_the_text_is_on_the_page_or_says_it_never_came() {
        let h = Harness::showing(&page());
        h.backend.reply::<EvaluateRequest>(evaluated(json!(true)));
        let (reply, _) = h.ok(wait(0.0, "  Sold out ")).await;
        let watcher = &h.backend.requests::<EvaluateRequest>()[0];
        assert_eq!(watcher.js, TEXT_JS);
        let arg: Value = serde_json::from_str(&watcher.arg_json).unwrap();
        assert_eq!(arg["text"], "Sold out");
        assert_eq!(arg["timeout_ms"], 15_000);
        assert!(reply.text.starts_with("'Sold out' is on the page. X —"));
        h.backend.reply::<EvaluateRequest>(evaluated(json!(false)));
        let (reply, _) = h.ok(wait(3.0, "Sold out")).await;
        assert!(
            reply
                .text
                .starts_with("Waited 3.0 s; 'Sold out' did not appear on the page."),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn bad_bounds_or_texts_change_nothing() {
        let h = Harness::showing(&page());
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        for (seconds, text) in [
            (15.5, ""),
            (-1.0, ""),
            (f64::NAN, ""),
            (f64::INFINITY, ""),
            (0.0, "a\0b"),
            (0.0, "   "),
            (0.0, long.as_str()),
        ] {
            let (reply, _) = h.act(wait(seconds, text)).await;
            assert!(
                matches!(reply, Err(ControllerError::InvalidArgument(_))),
                "{seconds} {text:?}: {reply:?}"
            );
        }
        assert!(h.backend.ops().is_empty());
    }
}
