//! `state`: where the page is, without changing it or making a frame.

use nanomuse_proto::{ActReply, StateRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>) -> Result<ActReply> {
    let state = ctx
        .op(StateRequest {
            session: ctx.session(),
        })
        .await?;
    let loading = if state.loading {
        " (still loading)"
    } else {
        ""
    };
    Ok(ActReply {
        text: format!(
            "{}{loading}; {}×{} on {}",
            super::titled(&state.title, &state.url),
            state.width,
            state.height,
            state.host
        ),
        url: state.url,
        title: state.title,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{
        BackendError, NavigateRequest, ScreenshotAction, StateAction, StateReply, StateRequest,
    };

    use crate::testing::*;

    #[tokio::test]
    async fn says_where_the_page_is_without_a_frame() {
        let h = Harness::new(FakeBackend::new());
        let state = StateReply {
            url: "https://x.example/".into(),
            title: "X".into(),
            width: 1280,
            height: 900,
            loading: true,
            user_control: false,
            host: "worker-a".into(),
        };
        h.backend.reply::<StateRequest>(state.clone());
        let (reply, frame) = h.ok(Action::State(StateAction {})).await;
        assert_eq!(h.backend.ops(), ["state"]);
        assert_eq!(
            reply.text,
            "X — https://x.example/ (still loading); 1280×900 on worker-a"
        );
        assert!(frame.is_none() && reply.frame.is_none());
        h.backend.reply::<StateRequest>(StateReply {
            loading: false,
            ..state
        });
        let (reply, _) = h.ok(Action::State(StateAction {})).await;
        assert_eq!(reply.text, "X — https://x.example/; 1280×900 on worker-a");
    }

    #[tokio::test]
    async fn a_page_without_a_title_is_said_by_its_address_alone() {
        let h = Harness::new(FakeBackend::new());
        h.backend.reply::<StateRequest>(StateReply {
            url: "about:blank".into(),
            width: 1280,
            height: 900,
            host: "worker-a".into(),
            ..Default::default()
        });
        let (reply, _) = h.ok(Action::State(StateAction {})).await;
        assert_eq!(reply.text, "about:blank; 1280×900 on worker-a");
    }

    #[tokio::test]
    async fn a_thread_without_a_page_gets_one_opened() {
        let h = Harness::new(FakeBackend::new());
        h.backend
            .fail::<StateRequest>(BackendError::NotFound("no page".into()));
        h.ok(Action::State(StateAction {})).await;
        assert_eq!(h.backend.ops(), ["state", "open", "state"]);
    }

    #[tokio::test]
    async fn a_page_reopened_after_a_restart_is_brought_back_where_the_thread_left_it() {
        let h = Harness::showing(&FakePage::new("https://x.example/cart", "Cart", &[]));
        // The thread's last listing, of its cart.
        h.ok(Action::Screenshot(ScreenshotAction {})).await;
        h.backend.forget_calls();
        h.backend
            .fail::<StateRequest>(BackendError::NotFound("no page".into()));
        h.ok(Action::State(StateAction {})).await;
        assert_eq!(
            h.backend.ops(),
            ["state", "open", "navigate", "settle", "state"]
        );
        let back = &h.backend.requests::<NavigateRequest>()[0];
        assert_eq!(back.url, "https://x.example/cart");
    }
}
