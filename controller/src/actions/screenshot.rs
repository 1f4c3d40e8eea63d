//! `screenshot`: a fresh picture for the chat card, and the listing that goes with it.

use nanomuse_proto::ActReply;

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let (listing, frame) = ctx.look_now("Screenshot".into()).await?;
    Ok(ctx.page_reply(super::titled(&listing.title, &listing.url), listing, frame))
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{
        BackendError, EvaluateRequest, NavigateRequest, ScreenshotAction, ScreenshotReply,
        ScreenshotRequest,
    };

    use crate::error::ControllerError;
    use crate::testing::*;

    #[tokio::test]
    async fn lists_and_takes_the_picture_before_the_reply() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[("link", "A")]));
        h.backend.reply::<ScreenshotRequest>(ScreenshotReply {
            jpeg: vec![0xff, 0xd8, 1],
            width: 1280,
            height: 900,
        });
        let (reply, pending) = h.ok(Action::Screenshot(ScreenshotAction {})).await;
        let mut ops = h.backend.ops();
        ops.sort();
        assert_eq!(ops, ["evaluate", "screenshot"]);
        assert_eq!(reply.text, "X — https://x.example/\n[1] link \"A\"");
        // Taken already: nothing is left to capture after the reply.
        assert!(pending.is_none());
        let frame = reply.frame.unwrap();
        let stored = h.store.latest_frame(TENANT, THREAD).unwrap().unwrap();
        assert_eq!((stored.id, stored.jpeg), (frame.id, vec![0xff, 0xd8, 1]));
        assert_eq!(stored.caption, "Screenshot");
    }

    #[tokio::test]
    async fn a_page_gone_for_the_listing_and_the_picture_at_once_is_brought_back_once() {
        let h = Harness::showing(&FakePage::new("https://x.example/cart", "Cart", &[]));
        h.ok(Action::Screenshot(ScreenshotAction {})).await;
        h.backend.forget_calls();
        // A restart: the listing and the picture, asked for together, both find no page.
        h.backend
            .fail::<EvaluateRequest>(BackendError::NotFound("no page".into()));
        h.backend
            .fail::<ScreenshotRequest>(BackendError::NotFound("no page".into()));
        h.ok(Action::Screenshot(ScreenshotAction {})).await;
        let back = h.backend.requests::<NavigateRequest>();
        assert_eq!(back.len(), 1, "{:?}", h.backend.ops());
        assert_eq!(back[0].url, "https://x.example/cart");
    }

    #[tokio::test]
    async fn a_failed_picture_fails_the_action_and_stores_no_frame() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        h.backend
            .fail::<ScreenshotRequest>(BackendError::Unavailable("the browser crashed".into()));
        let (reply, _) = h.act(Action::Screenshot(ScreenshotAction {})).await;
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::Unavailable(_)))
        ));
        assert!(h.store.latest_frame(TENANT, THREAD).unwrap().is_none());
    }
}
