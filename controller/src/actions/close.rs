//! `close`: closes the page; the profile and its cookies stay.

use nanomuse_proto::{ActReply, BackendError, CloseRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let closed = ctx
        .backend
        .close(CloseRequest {
            session: ctx.session(),
        })
        .await;
    match closed {
        Ok(_) | Err(BackendError::NotFound(_)) => {}
        Err(error) => return Err(error.into()),
    }
    ctx.store.put_listing(ctx.tenant, ctx.thread, None)?;
    Ok(ActReply {
        text: "Closed the page; the profile and its cookies stay.".into(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{BackendError, CloseAction, CloseRequest};

    use crate::error::ControllerError;
    use crate::testing::*;

    fn close() -> Action {
        Action::Close(CloseAction {})
    }

    #[tokio::test]
    async fn closes_the_page_and_forgets_its_listing() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[("link", "A")]));
        h.list_first().await;
        let (reply, frame) = h.ok(close()).await;
        assert_eq!(h.backend.ops(), ["close"]);
        assert_eq!(h.backend.requests::<CloseRequest>()[0].session, session());
        assert_eq!(
            reply.text,
            "Closed the page; the profile and its cookies stay."
        );
        assert!(frame.is_none());
        assert_eq!(h.listed_url(), None);
        // A page that was not open is closed all the same.
        h.backend
            .fail::<CloseRequest>(BackendError::NotFound("no page".into()));
        h.ok(close()).await;
    }

    #[tokio::test]
    async fn a_close_that_failed_keeps_the_listing() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[("link", "A")]));
        h.list_first().await;
        h.backend.fail::<CloseRequest>(BackendError::Unavailable(
            "the browser is restarting".into(),
        ));
        let (reply, _) = h.act(close()).await;
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::Unavailable(_)))
        ));
        assert_eq!(h.listed_url().as_deref(), Some("https://x.example/"));
    }
}
