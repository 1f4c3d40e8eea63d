//! `scroll dy`: scrolls by pixels, negative for up, and lists what is now in view; the reply
//! says how far it went when that is less than asked (the page's end), or that nothing moved.

use nanomuse_proto::{ActReply, ScrollAction, ScrollRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: ScrollAction) -> Result<ActReply> {
    let before = ctx
        .store
        .listing(ctx.tenant, ctx.thread)?
        .map(|l| (l.url, l.scrolled));
    ctx.op(ScrollRequest {
        session: ctx.session(),
        dy: action.dy,
    })
    .await?;
    let (direction, end) = if action.dy < 0.0 {
        ("up", "top")
    } else {
        ("down", "bottom")
    };
    let asked = action.dy.abs().round();
    let caption = format!("Scrolled {direction} {asked} px");
    ctx.settle_for_look(ctx.settle_ms).await?;
    let (listing, frame) = ctx.look(caption.clone()).await?;
    // Known only against a listing of the same page before.
    let moved = before
        .filter(|(url, _)| *url == listing.url)
        .map(|(_, scrolled)| (listing.scrolled - scrolled).abs().round());
    let head = match moved {
        _ if asked == 0.0 => format!("{caption}."),
        Some(moved) if moved < 1.0 => format!(
            "Nothing scrolled: the page is at its {end} already, and so is every box in view \
             that scrolls apart from it."
        ),
        Some(moved) if moved + 1.0 < asked => {
            format!("Scrolled {direction} {moved} px of the {asked} asked: the page's {end}.")
        }
        _ => format!("{caption}."),
    };
    Ok(ctx.page_reply(head, listing, frame))
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{BackendError, ScrollAction, ScrollRequest};

    use crate::error::ControllerError;
    use crate::testing::*;

    fn scroll(dy: f64) -> Action {
        Action::Scroll(ScrollAction { dy })
    }

    #[tokio::test]
    async fn scrolls_by_the_pixels_given_and_lists_what_is_in_view() {
        let page = FakePage::new("https://x.example/", "X", &[("link", "Next")]);
        page.scroll_by(1000.0, 1000.0);
        let h = Harness::showing(&page);
        let scrolled = page.clone();
        h.backend.on::<ScrollRequest>(move |request| {
            scrolled.scroll_by(request.dy, 2000.0);
            Ok(Default::default())
        });
        let (reply, frame) = h.ok(scroll(-299.6)).await;
        assert_eq!(h.backend.ops(), ["scroll", "settle", "evaluate"]);
        assert_eq!(h.backend.requests::<ScrollRequest>()[0].dy, -299.6);
        assert_eq!(reply.text, "Scrolled up 300 px.\n[1] link \"Next\"");
        assert_eq!(frame.unwrap().caption, "Scrolled up 300 px");
        let (reply, _) = h.ok(scroll(500.0)).await;
        assert!(reply.text.starts_with("Scrolled down 500 px."));
    }

    #[tokio::test]
    async fn says_how_far_it_went_when_the_page_ends_first() {
        // 800 px to scroll in all.
        let page = FakePage::new("https://x.example/", "X", &[("link", "Next")]);
        let h = Harness::showing(&page);
        h.list_first().await;
        let scrolled = page.clone();
        h.backend.on::<ScrollRequest>(move |request| {
            scrolled.scroll_by(request.dy, 800.0);
            Ok(Default::default())
        });
        let head = async |dy| {
            h.ok(scroll(dy))
                .await
                .0
                .text
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            head(-200.0).await,
            "Nothing scrolled: the page is at its top already, and so is every box in view that \
             scrolls apart from it."
        );
        assert_eq!(head(500.0).await, "Scrolled down 500 px.");
        assert_eq!(
            head(500.0).await,
            "Scrolled down 300 px of the 500 asked: the page's bottom."
        );
        assert_eq!(
            head(500.0).await,
            "Nothing scrolled: the page is at its bottom already, and so is every box in view \
             that scrolls apart from it."
        );
        assert_eq!(
            head(-900.0).await,
            "Scrolled up 800 px of the 900 asked: the page's top."
        );
    }

    #[tokio::test]
    async fn a_refused_scroll_lists_nothing() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        h.backend
            .fail::<ScrollRequest>(BackendError::InvalidArgument("dy must be finite".into()));
        let (reply, frame) = h.act(scroll(f64::NAN)).await;
        assert!(matches!(reply, Err(ControllerError::Backend(_))));
        assert!(frame.is_none());
        assert_eq!(h.backend.ops(), ["scroll"]);
    }
}
