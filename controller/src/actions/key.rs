//! `key key`: presses Enter, Tab, Escape, … or a combination (Shift+Enter, Control+a) on the
//! focused element. The backend reads the name: the worker and the phone take the same words.

use nanomuse_proto::{ActReply, KeyAction, KeyRequest};

use super::Ctx;
use crate::error::Result;

pub async fn run(ctx: &mut Ctx<'_>, action: KeyAction) -> Result<ActReply> {
    let reply = ctx
        .op(KeyRequest {
            session: ctx.session(),
            key: action.key.clone(),
        })
        .await?;
    // As the backend read it ("Control+Enter" for "ctrl + enter"): what was pressed, whatever
    // the spelling.
    let pressed = if reply.pressed.is_empty() {
        action.key
    } else {
        reply.pressed
    };
    // Tab, Escape and arrows move the focus: where it went is what the next key acts on.
    ctx.after_input_telling(format!("Pressed {pressed}"), None, |listing| {
        Some(listing.focus_sentence())
    })
    .await
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{
        BackendError, KeyAction, KeyReply, KeyRequest, NavigateRequest, SettleReply, SettleRequest,
    };

    use crate::error::ControllerError;
    use crate::testing::*;

    fn key(key: &str) -> Action {
        Action::Key(KeyAction { key: key.into() })
    }

    #[tokio::test]
    async fn presses_the_key_then_lists_the_page() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[("link", "A")]));
        let (reply, frame) = h.ok(key("Enter")).await;
        assert_eq!(h.backend.ops(), ["key", "settle", "evaluate"]);
        let pressed = &h.backend.requests::<KeyRequest>()[0];
        assert_eq!(
            (pressed.key.as_str(), &pressed.session),
            ("Enter", &session())
        );
        assert_eq!(
            reply.text,
            "Pressed Enter. Nothing on the page has the focus.\n[1] link \"A\""
        );
        assert_eq!(frame.unwrap().caption, "Pressed Enter");
    }

    #[tokio::test]
    async fn the_reply_says_where_the_focus_went() {
        let page = FakePage::new(
            "https://x.example/",
            "X",
            &[("input", "Name"), ("button", "Save")],
        );
        let h = Harness::showing(&page);
        page.focus(2);
        let (reply, _) = h.ok(key("Tab")).await;
        assert!(
            reply
                .text
                .starts_with("Pressed Tab. The focus is on [2] button \"Save\".\n"),
            "{}",
            reply.text
        );
        page.focus(-1);
        let (reply, _) = h.ok(key("Tab")).await;
        assert!(
            reply.text.starts_with(
                "Pressed Tab. The focus is on something not listed (out of view, or not a \
                 control of its own).\n"
            ),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn a_key_that_loads_another_page_does_not_speak_of_the_focus() {
        let page = FakePage::new("https://x.example/", "X", &[("input", "Search")]);
        let h = Harness::showing(&page);
        h.list_first().await;
        let moved = page.clone();
        h.backend.on::<KeyRequest>(move |_| {
            moved.set("https://x.example/results", "Results", &[]);
            Ok(KeyReply::default())
        });
        let (reply, _) = h.ok(key("Enter")).await;
        assert!(!reply.text.contains("focus"), "{}", reply.text);
    }

    #[tokio::test]
    async fn the_key_is_named_as_the_backend_read_it() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        h.backend.reply::<KeyRequest>(KeyReply {
            pressed: "Control+Enter".into(),
        });
        let (reply, frame) = h.ok(key("ctrl + enter")).await;
        assert!(
            reply.text.starts_with("Pressed Control+Enter."),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Pressed Control+Enter");
    }

    #[tokio::test]
    async fn a_key_that_submits_to_an_error_page_says_where_the_page_went() {
        let page = FakePage::new("https://x.example/", "X", &[("input", "Search")]);
        let h = Harness::showing(&page);
        h.list_first().await;
        let moved = page.clone();
        h.backend.on::<KeyRequest>(move |_| {
            moved.set("https://x.example/search?q=a", "Server error", &[]);
            Ok(KeyReply::default())
        });
        h.backend.reply::<SettleRequest>(SettleReply {
            settled: true,
            status: 500,
            ..Default::default()
        });
        let (reply, _) = h.ok(key("Enter")).await;
        assert!(
            reply.text.starts_with(
                "Pressed Enter → now at https://x.example/search?q=a (Server error) (HTTP 500)"
            ),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn a_key_the_backend_does_not_know_lists_nothing() {
        let h = Harness::showing(&FakePage::new("https://x.example/", "X", &[]));
        h.backend.fail::<KeyRequest>(BackendError::InvalidArgument(
            "unknown key \"Hyper\"".into(),
        ));
        let (reply, frame) = h.act(key("Hyper")).await;
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::InvalidArgument(ref m))) if m == "unknown key \"Hyper\""
        ));
        assert!(frame.is_none());
        assert_eq!(h.backend.ops(), ["key"]);
        assert_eq!(h.listed_url(), None);
    }

    #[tokio::test]
    async fn a_key_on_a_page_opened_anew_says_so_not_that_the_key_reloaded_it() {
        let page = FakePage::new("https://x.example/form", "Form", &[("input", "Name")]);
        let h = Harness::showing(&page);
        h.list_first().await;
        // Its browser closed since (a restart): the key finds no page, which is opened anew,
        // where the thread left it, as another document.
        h.backend
            .fail::<KeyRequest>(BackendError::NotFound("no page".into()));
        let reloaded = page.clone();
        h.backend.on::<NavigateRequest>(move |_| {
            reloaded.load_again();
            Ok(Default::default())
        });
        let (reply, _) = h.ok(key("Tab")).await;
        assert_eq!(
            h.backend.ops(),
            [
                "key", "open", "navigate", "settle", "key", "settle", "evaluate"
            ]
        );
        assert!(
            reply.text.starts_with(
                "Pressed Tab. Nothing on the page has the focus. The page was loaded anew at its \
                 address first (its browser had closed: idle, or a restart), so what was typed \
                 into it before is gone.\n"
            ),
            "{}",
            reply.text
        );
        assert!(!reply.text.contains("→"), "{}", reply.text);
    }
}
