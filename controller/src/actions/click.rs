//! `click n`: taps the centre of element n of the last listing (scrolled into view first), as a
//! finger would, then lists the page again. A double-click taps twice in a row, at once.

use nanomuse_proto::{ActReply, ClickAction, TapRequest};

use super::{Aim, Ctx, element_named};
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: ClickAction) -> Result<ActReply> {
    let aim = if action.double_click {
        Aim::DoubleTap
    } else {
        Aim::Tap
    };
    let found = ctx.element(action.n, aim).await?;
    ctx.op(TapRequest {
        session: ctx.session(),
        x: found.x,
        y: found.y,
        count: if action.double_click { 2 } else { 1 },
    })
    .await?;
    // The list a tap opens on a select is drawn by the browser outside the page: no picture
    // shows it, and nothing is chosen until an option is.
    let choose = (!found.options.is_empty()).then(|| {
        let quoted: Vec<String> = found.options.iter().map(|o| format!("{o:?}")).collect();
        let unnamed = found
            .option_count
            .saturating_sub(found.options.len() as u32);
        let more = if unnamed > 0 {
            format!(" and {unnamed} more")
        } else {
            String::new()
        };
        format!(
            "Its options: {}{more}; typing one into [{}] chooses it.",
            quoted.join(", "),
            action.n
        )
    });
    let row = found
        .row
        .as_ref()
        .map_or(String::new(), |words| format!(" (in \"{words}\")"));
    let verb = if action.double_click {
        "Double-clicked"
    } else {
        "Clicked"
    };
    let named = element_named(action.n, &found.kind, &found.label);
    ctx.after_input(format!("{verb} {named}{row}"), choose)
        .await
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{
        BackendError, ClickAction, EvaluateRequest, ScreenshotReply, ScreenshotRequest,
        SettleReply, SettleRequest, TapReply, TapRequest,
    };

    use crate::error::ControllerError;
    use crate::listing::RESOLVE_JS;
    use crate::testing::*;

    fn click(n: i64) -> Action {
        Action::Click(ClickAction {
            n,
            ..Default::default()
        })
    }

    fn shop() -> FakePage {
        FakePage::new(
            "https://shop.example/",
            "Shop",
            &[("button", "Add"), ("link", "Cart")],
        )
    }

    #[tokio::test]
    async fn taps_the_listed_element_and_says_where_the_page_went() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        let moved = page.clone();
        h.backend.on::<TapRequest>(move |_| {
            moved.set("https://shop.example/cart", "Cart", &[("button", "Pay")]);
            Ok(TapReply {})
        });
        let (reply, frame) = h.ok(click(2)).await;
        assert_eq!(h.backend.ops(), ["evaluate", "tap", "settle", "evaluate"]);
        let resolve = &h.backend.requests::<EvaluateRequest>()[0];
        assert_eq!(resolve.js, RESOLVE_JS);
        let tap = &h.backend.requests::<TapRequest>()[0];
        // The fake puts element n at (10n, 20n).
        assert_eq!((tap.x, tap.y), (20.0, 40.0));
        assert_eq!(tap.session, session());
        assert_eq!(
            reply.text,
            "Clicked 'Cart' → now at https://shop.example/cart (Cart)\n[1] button \"Pay\""
        );
        assert_eq!(frame.unwrap().caption, "Clicked 'Cart'");
        assert_eq!(h.listed_url().as_deref(), Some("https://shop.example/cart"));
    }

    #[tokio::test]
    async fn a_double_click_taps_twice_and_says_so() {
        let h = Harness::showing(&shop());
        h.list_first().await;
        let (reply, frame) = h
            .ok(Action::Click(ClickAction {
                n: 2,
                double_click: true,
            }))
            .await;
        let taps = h.backend.requests::<TapRequest>();
        assert_eq!((taps.len(), taps[0].count), (1, 2));
        assert!(
            reply.text.starts_with("Double-clicked 'Cart'."),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Double-clicked 'Cart'");
        h.ok(click(1)).await;
        assert_eq!(h.backend.requests::<TapRequest>()[1].count, 1);
    }

    #[tokio::test]
    async fn an_element_without_a_name_is_said_by_its_number_and_kind() {
        let h = Harness::showing(&FakePage::new(
            "https://shop.example/",
            "Shop",
            &[("button", "Add"), ("clickable", "")],
        ));
        h.list_first().await;
        let (reply, frame) = h.ok(click(2)).await;
        assert!(
            reply.text.starts_with("Clicked [2] clickable."),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Clicked [2] clickable");
    }

    #[tokio::test]
    async fn a_page_loaded_again_at_its_address_is_said_so() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        let posted = page.clone();
        h.backend.on::<TapRequest>(move |_| {
            posted.load_again();
            Ok(TapReply {})
        });
        let (reply, _) = h.ok(click(1)).await;
        assert!(
            reply.text.starts_with(
                "Clicked 'Add' → the page loaded again at the same address: `extract` reads \
                 what it says now.\n[1] button \"Add\""
            ),
            "{}",
            reply.text
        );
        // The same document, changed in place: the click alone.
        h.backend.on::<TapRequest>(|_| Ok(TapReply {}));
        let (reply, _) = h.ok(click(1)).await;
        assert!(reply.text.starts_with("Clicked 'Add'.\n"), "{}", reply.text);
    }

    #[tokio::test]
    async fn a_button_told_apart_by_its_row_is_named_with_it_in_the_caption() {
        let page = FakePage::new(
            "https://shop.example/orders",
            "Orders",
            &[("button", "Cancel"), ("button", "Cancel")],
        );
        page.mark(1, "(in \"Ana Lima $12\")");
        page.mark(2, "(disabled) (in \"Bo \'B\' Chen $7\")");
        let h = Harness::showing(&page);
        h.list_first().await;
        let (reply, frame) = h.ok(click(2)).await;
        assert!(
            reply
                .text
                .starts_with("Clicked 'Cancel' (in \"Bo 'B' Chen $7\").\n"),
            "{}",
            reply.text
        );
        assert_eq!(
            frame.unwrap().caption,
            "Clicked 'Cancel' (in \"Bo 'B' Chen $7\")"
        );
    }

    #[tokio::test]
    async fn a_page_still_busy_at_the_settles_bound_is_said_to_be() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        h.backend.on::<SettleRequest>(|_| {
            Ok(SettleReply {
                settled: false,
                ..Default::default()
            })
        });
        let (reply, _) = h.ok(click(1)).await;
        assert!(
            reply.text.starts_with(
                "Clicked 'Add'. The page was still busy after 1 s (loading, or changing as a \
                 stream does): what is listed may not be the end; `wait` lets it finish.\n"
            ),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn what_the_pages_dialogs_said_heads_the_next_reply_once() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        let asking = page.clone();
        h.backend.on::<TapRequest>(move |_| {
            asking.say("confirm", "Empty the \"cart\"?\nAll of it", "OK");
            asking.say("prompt", "Coupon?", "");
            for n in 0..5 {
                asking.say("alert", &format!("Emptied {n}"), "OK");
            }
            Ok(TapReply {})
        });
        let (reply, _) = h.ok(click(2)).await;
        let lines: Vec<&str> = reply.text.lines().collect();
        assert_eq!(
            lines[..7],
            [
                "Clicked 'Cart'.",
                "The page's confirm dialog asked \"Empty the \\\"cart\\\"? All of it\" and was \
                 answered OK.",
                "The page's prompt asked \"Coupon?\" and was answered \"\" (its own default text).",
                "The page's alert said \"Emptied 0\" (answered OK).",
                "The page's alert said \"Emptied 1\" (answered OK).",
                "The page's alert said \"Emptied 2\" (answered OK).",
                "(and 2 more of its dialogs, each answered the same way)",
            ]
        );
        assert_eq!(lines[7], "[1] button \"Add\"");
        h.backend.on::<TapRequest>(|_| Ok(TapReply {}));
        let (reply, _) = h.ok(click(2)).await;
        assert_eq!(reply.text.lines().nth(1), Some("[1] button \"Add\""));
    }

    #[tokio::test]
    async fn a_click_on_a_select_names_its_options_and_how_to_choose_one() {
        let h = Harness::showing(&FakePage::new(
            "https://shop.example/",
            "Shop",
            &[("button", "Add"), ("select", "Size")],
        ));
        h.list_first().await;
        let (reply, frame) = h.ok(click(2)).await;
        assert_eq!(
            reply.text.lines().next().unwrap(),
            "Clicked 'Size'. Its options: \"Small\", \"Large\" and 1 more; typing one into [2] \
             chooses it."
        );
        assert_eq!(frame.unwrap().caption, "Clicked 'Size'");
        let (reply, _) = h.ok(click(1)).await;
        assert_eq!(reply.text.lines().next().unwrap(), "Clicked 'Add'.");
    }

    #[tokio::test]
    async fn a_click_that_lands_on_an_error_page_says_its_status() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        let moved = page.clone();
        h.backend.on::<TapRequest>(move |_| {
            moved.set("https://shop.example/cart", "Not Found", &[]);
            Ok(TapReply {})
        });
        h.backend.reply::<SettleRequest>(SettleReply {
            settled: true,
            status: 404,
            ..Default::default()
        });
        let (reply, _) = h.ok(click(2)).await;
        assert!(
            reply.text.starts_with(
                "Clicked 'Cart' → now at https://shop.example/cart (Not Found) (HTTP 404)"
            ),
            "{}",
            reply.text
        );
    }

    /// A harness that pictures a page found quiet at once while it lists it, as on a worker,
    /// and whose next settle answers `at_once`.
    async fn beside_the_listing(at_once: bool) -> Harness {
        let mut h = Harness::showing(&shop());
        h.frame_beside_listing = true;
        h.list_first().await;
        h.backend.reply::<SettleRequest>(SettleReply {
            settled: true,
            at_once,
            ..Default::default()
        });
        h.backend.reply::<ScreenshotRequest>(ScreenshotReply {
            jpeg: b"beside the listing".to_vec(),
            ..Default::default()
        });
        h
    }

    #[tokio::test]
    async fn the_frame_is_the_picture_asked_for_after_a_settle_that_found_the_page_quiet_at_once() {
        let h = beside_the_listing(true).await;
        let (_, frame) = h.ok(click(1)).await;
        let early = frame
            .unwrap()
            .early
            .expect("the picture asked for after the settle");
        assert_eq!(early.await.unwrap().unwrap().jpeg, b"beside the listing");
        assert_eq!(h.backend.requests::<ScreenshotRequest>().len(), 1);
    }

    #[tokio::test]
    async fn a_page_busy_at_the_settles_first_look_is_pictured_after_the_reply() {
        let h = beside_the_listing(false).await;
        let (reply, frame) = h.ok(click(1)).await;
        assert!(reply.text.starts_with("Clicked 'Add'."), "{}", reply.text);
        assert!(frame.unwrap().early.is_none());
        assert!(
            h.backend.requests::<ScreenshotRequest>().is_empty(),
            "no picture is asked for while the page is at work (a capture pending when its \
             renderer dies takes the browser down)"
        );
    }

    #[tokio::test]
    async fn a_form_posted_back_to_its_own_url_says_which_page_shows_there_now() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        let posted = page.clone();
        h.backend.on::<TapRequest>(move |_| {
            posted.set(
                "https://shop.example/",
                "Are you sure?",
                &[("button", "Yes")],
            );
            Ok(TapReply {})
        });
        let (reply, _) = h.ok(click(1)).await;
        assert_eq!(
            reply.text,
            "Clicked 'Add' → now at https://shop.example/ (Are you sure?)\n[1] button \"Yes\""
        );
    }

    #[tokio::test]
    async fn a_click_that_stays_on_the_page_says_so() {
        let h = Harness::showing(&shop());
        h.list_first().await;
        let (reply, _) = h.ok(click(1)).await;
        assert!(
            reply.text.starts_with("Clicked 'Add'.\n[1] button"),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn a_number_outside_the_listing_changes_nothing() {
        let h = Harness::showing(&shop());
        h.list_first().await;
        for n in [0, 3, -1] {
            let (reply, _) = h.act(click(n)).await;
            let Err(ControllerError::InvalidArgument(message)) = reply else {
                panic!("{reply:?}")
            };
            assert_eq!(
                message,
                format!("element {n} is not in the last listing, which numbers 1 to 2")
            );
        }
        assert!(h.backend.ops().is_empty());
    }

    #[tokio::test]
    async fn without_a_listing_nothing_is_tapped() {
        let h = Harness::showing(&shop());
        let (reply, _) = h.act(click(1)).await;
        assert!(
            matches!(reply, Err(ControllerError::StaleListing(ref m)) if m.starts_with("there is no listing")),
            "{reply:?}"
        );
        assert!(h.backend.ops().is_empty());
    }

    #[tokio::test]
    async fn a_page_that_changed_since_the_listing_is_not_tapped() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        page.set("https://shop.example/other", "Other", &[("link", "Home")]);
        let (reply, _) = h.act(click(1)).await;
        assert!(
            matches!(reply, Err(ControllerError::StaleListing(ref m)) if m.contains("the page changed")),
            "{reply:?}"
        );
        assert_eq!(h.backend.ops(), ["evaluate"]);
    }

    #[tokio::test]
    async fn a_page_loaded_again_since_the_listing_says_what_was_lost_and_is_not_tapped() {
        let page = shop();
        let h = Harness::showing(&page);
        h.list_first().await;
        // Its browser closed (idle, or a restart): the page comes back at its address, as a
        // new document.
        h.backend
            .fail::<EvaluateRequest>(BackendError::NotFound("no page".into()));
        page.set("https://shop.example/", "Shop", &[("link", "Cart")]);
        let (reply, _) = h.act(click(1)).await;
        assert!(
            matches!(reply, Err(ControllerError::StaleListing(ref m))
                if m.starts_with("the page was loaded again since the last listing")
                    && m.contains("what was typed into it too")),
            "{reply:?}"
        );
        assert!(!h.backend.ops().contains(&"tap"), "{:?}", h.backend.ops());
    }
}
