//! `back`: one step back — in the tab's history, or by the thread's trail of pages
//! ([`Listing::trail`]) where the tab's history is not the thread's: a tab opened anew after a
//! restart, an idle close or a crash has none, and one that went back by an address holds the
//! way it went there.
//!
//! [`Listing::trail`]: crate::listing::Listing::trail

use nanomuse_proto::{ActReply, BackRequest, BackendError, NavigateRequest};

use super::{BackBy, Ctx};
use crate::error::Result;

const NO_EARLIER_PAGE: &str = "there is no earlier page in this tab's history to go back to";

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let listing = ctx.store.listing(ctx.tenant, ctx.thread)?;
    let earlier = listing
        .as_ref()
        .and_then(|listing| listing.trail.last().cloned())
        .filter(|url| url.starts_with("http://") || url.starts_with("https://"));
    let tab_knows_it = listing.is_none_or(|listing| listing.steps_in_tab != Some(0));
    ctx.going_back = Some(BackBy::Tab);
    if tab_knows_it {
        match ctx
            .op(BackRequest {
                session: ctx.session(),
            })
            .await
        {
            Ok(reply) => {
                ctx.note_refused(reply.refused);
                let page = reply.page.unwrap_or_default();
                let head = format!("Went back to {}", super::titled(&page.title, &page.url));
                return ctx.after_change("Went back".into(), head).await;
            }
            // The tab was opened anew without the controller knowing (the worker brought a
            // crashed page back): the trail still knows the way.
            Err(BackendError::FailedPrecondition(_)) if earlier.is_some() => {}
            Err(error) => return Err(super::explained(error).into()),
        }
    }
    let Some(url) = earlier else {
        return Err(BackendError::FailedPrecondition(NO_EARLIER_PAGE.into()).into());
    };
    ctx.going_back = Some(BackBy::Address);
    let reply = ctx
        .op(NavigateRequest {
            session: ctx.session(),
            url,
            timeout_ms: ctx.navigate_ms,
        })
        .await?;
    ctx.note_refused(reply.refused);
    let page = reply.page.unwrap_or_default();
    let head = format!(
        "Went back to {}{} (loaded again: this tab was opened anew since)",
        super::titled(&page.title, &page.url),
        super::error_status(reply.status)
    );
    ctx.after_change("Went back".into(), head).await
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{
        BackAction, BackReply, BackRequest, BackendError, EvaluateRequest, NavigateAction,
        NavigateReply, NavigateRequest, WaitAction,
    };

    use crate::error::ControllerError;
    use crate::listing::Listing;
    use crate::testing::*;

    #[tokio::test]
    async fn goes_back_and_names_the_page_it_reached() {
        let h = Harness::showing(&FakePage::new(
            "https://x.example/",
            "Home",
            &[("link", "Docs")],
        ));
        h.backend.reply::<BackRequest>(BackReply {
            page: page_info("https://x.example/", "Home"),
            refused: vec![],
        });
        let (reply, frame) = h.ok(Action::Back(BackAction {})).await;
        assert_eq!(h.backend.ops(), ["back", "settle", "evaluate"]);
        assert_eq!(h.backend.requests::<BackRequest>()[0].session, session());
        assert_eq!(
            reply.text,
            "Went back to Home — https://x.example/\n[1] link \"Docs\""
        );
        assert_eq!(frame.unwrap().caption, "Went back");
    }

    #[tokio::test]
    async fn no_earlier_page_lists_nothing() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "Home", &[]));
        h.backend
            .fail::<BackRequest>(BackendError::FailedPrecondition(
                "there is no earlier page in this tab's history".into(),
            ));
        let (reply, frame) = h.act(Action::Back(BackAction {})).await;
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::FailedPrecondition(
                _
            )))
        ));
        assert!(frame.is_none());
        assert_eq!(h.backend.ops(), ["back"]);
    }

    fn navigate(url: &str) -> Action {
        Action::Navigate(NavigateAction { url: url.into() })
    }

    fn back() -> Action {
        Action::Back(BackAction {})
    }

    fn listing(h: &Harness) -> Listing {
        h.store.listing(TENANT, THREAD).unwrap().unwrap()
    }

    fn arrived(url: &str, title: &str) -> NavigateReply {
        NavigateReply {
            page: page_info(url, title),
            ..Default::default()
        }
    }

    /// A thread that went from x.example/ to /docs to /docs/api, its tab showing `page`.
    async fn three_pages_in(page: &FakePage) -> Harness {
        let h = Harness::showing(page);
        for (url, title) in [
            ("https://x.example/", "Home"),
            ("https://x.example/docs", "Docs"),
            ("https://x.example/docs/api", "API"),
        ] {
            page.set(url, title, &[]);
            h.ok(navigate(url)).await;
        }
        let last = listing(&h);
        assert_eq!(last.trail, ["https://x.example/", "https://x.example/docs"]);
        assert_eq!(last.steps_in_tab, None, "the tab's history is its own");
        h.backend.forget_calls();
        h
    }

    #[tokio::test]
    async fn a_tab_without_the_threads_history_goes_back_along_the_trail() {
        let page = FakePage::new("https://x.example/", "Home", &[]);
        let h = three_pages_in(&page).await;

        // The worker brought the tab back after a crash: its history starts at the API page.
        h.backend
            .fail::<BackRequest>(BackendError::FailedPrecondition(
                "there is no earlier page in this tab's history to go back to".into(),
            ));
        h.backend
            .reply::<NavigateRequest>(arrived("https://x.example/docs", "Docs"));
        page.set("https://x.example/docs", "Docs", &[]);
        let (reply, frame) = h.ok(back()).await;
        assert_eq!(h.backend.ops(), ["back", "navigate", "settle", "evaluate"]);
        assert_eq!(
            h.backend.requests::<NavigateRequest>()[0].url,
            "https://x.example/docs"
        );
        assert!(
            reply.text.starts_with(
                "Went back to Docs — https://x.example/docs (loaded again: this tab was opened \
                 anew since)"
            ),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Went back");
        let last = listing(&h);
        assert_eq!(last.trail, ["https://x.example/"]);
        assert_eq!(last.steps_in_tab, Some(0));

        // The tab now holds the way it went (API, then Docs): the trail goes on, the tab is
        // not asked.
        h.backend.forget_calls();
        h.backend
            .reply::<NavigateRequest>(arrived("https://x.example/", "Home"));
        page.set("https://x.example/", "Home", &[]);
        h.ok(back()).await;
        assert_eq!(h.backend.ops(), ["navigate", "settle", "evaluate"]);
        assert!(listing(&h).trail.is_empty());

        // At the trail's start there is no earlier page, whatever the tab holds.
        h.backend.forget_calls();
        let (reply, frame) = h.act(back()).await;
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::FailedPrecondition(
                _
            )))
        ));
        assert!(frame.is_none());
        assert!(h.backend.ops().is_empty(), "{:?}", h.backend.ops());

        // A page reached from there is one step back in the tab.
        page.set("https://x.example/blog", "Blog", &[]);
        h.ok(navigate("https://x.example/blog")).await;
        assert_eq!(listing(&h).steps_in_tab, Some(1));
        h.backend.forget_calls();
        h.backend.reply::<BackRequest>(BackReply {
            page: page_info("https://x.example/", "Home"),
            refused: vec![],
        });
        page.set("https://x.example/", "Home", &[]);
        h.ok(back()).await;
        assert_eq!(h.backend.ops(), ["back", "settle", "evaluate"]);
        assert_eq!(listing(&h).steps_in_tab, Some(0));
    }

    #[tokio::test]
    async fn a_page_the_controller_opened_anew_goes_back_by_the_trail_without_asking_the_tab() {
        let page = FakePage::new("https://x.example/", "Home", &[]);
        let h = three_pages_in(&page).await;
        // A restart: the page is gone, and the next listing opens it anew where it was.
        h.backend
            .fail::<EvaluateRequest>(BackendError::NotFound("no page".into()));
        h.ok(Action::Wait(WaitAction::default())).await;
        assert!(h.backend.ops().contains(&"open"), "{:?}", h.backend.ops());
        assert_eq!(listing(&h).steps_in_tab, Some(0));

        h.backend.forget_calls();
        h.backend
            .reply::<NavigateRequest>(arrived("https://x.example/docs", "Docs"));
        page.set("https://x.example/docs", "Docs", &[]);
        h.ok(back()).await;
        assert_eq!(h.backend.ops(), ["navigate", "settle", "evaluate"]);
        assert_eq!(listing(&h).trail, ["https://x.example/"]);
    }

    #[tokio::test]
    async fn the_trail_keeps_the_last_pages_only() {
        let page = FakePage::new("https://x.example/0", "0", &[]);
        let h = Harness::showing(&page);
        for n in 0..=crate::listing::TRAIL_MAX + 3 {
            let url = format!("https://x.example/{n}");
            page.set(&url, "n", &[]);
            h.ok(navigate(&url)).await;
        }
        let trail = listing(&h).trail;
        assert_eq!(trail.len(), crate::listing::TRAIL_MAX);
        assert_eq!(trail[0], "https://x.example/3");
        assert_eq!(
            trail.last().unwrap(),
            &format!("https://x.example/{}", crate::listing::TRAIL_MAX + 2)
        );
    }
}
