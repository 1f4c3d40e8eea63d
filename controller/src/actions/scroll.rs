//! `scroll dy`: scrolls by pixels, negative for up, and lists what is now in view.

use nanomuse_proto::{ActReply, ScrollAction, ScrollRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: ScrollAction) -> Result<ActReply> {
    ctx.op(ScrollRequest {
        session: ctx.session(),
        dy: action.dy,
    })
    .await?;
    let direction = if action.dy < 0.0 { "up" } else { "down" };
    let caption = format!("Scrolled {direction} {} px", action.dy.abs().round());
    ctx.after_change(caption.clone(), format!("{caption}."))
        .await
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
        let h = Harness::showing(&FakePage::new(
            "https://x.example/",
            "X",
            &[("link", "Next")],
        ));
        let (reply, frame) = h.ok(scroll(-299.6)).await;
        assert_eq!(h.backend.ops(), ["scroll", "settle", "evaluate"]);
        assert_eq!(h.backend.requests::<ScrollRequest>()[0].dy, -299.6);
        assert_eq!(reply.text, "Scrolled up 300 px.\n[1] link \"Next\"");
        assert_eq!(frame.unwrap().caption, "Scrolled up 300 px");
        let (reply, _) = h.ok(scroll(500.0)).await;
        assert!(reply.text.starts_with("Scrolled down 500 px."));
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
