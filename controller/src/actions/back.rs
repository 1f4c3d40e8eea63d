//! `back`: one step back in history.

use nanomuse_proto::{ActReply, BackRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let reply = ctx
        .op(BackRequest {
            session: ctx.session(),
        })
        .await?;
    ctx.note_refused(reply.refused);
    let page = reply.page.unwrap_or_default();
    ctx.after_change(
        "Went back".into(),
        format!("Went back to {} — {}", page.title, page.url),
    )
    .await
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{BackAction, BackReply, BackRequest, BackendError};

    use crate::error::ControllerError;
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
}
