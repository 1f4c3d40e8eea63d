//! `navigate url`: opens a page; the reply lists its interactive elements, numbered.

use nanomuse_proto::{ActReply, NavigateAction, NavigateRequest};

use super::Ctx;
use crate::error::{ControllerError, Result};

pub async fn run(ctx: &mut Ctx<'_>, action: NavigateAction) -> Result<ActReply> {
    let url = action.url.trim();
    if url.is_empty() {
        return Err(ControllerError::InvalidArgument(
            "navigate needs a URL, e.g. navigate https://example.com/".into(),
        ));
    }
    let reply = ctx
        .op(NavigateRequest {
            session: ctx.session(),
            url: url.to_string(),
            timeout_ms: ctx.navigate_ms,
        })
        .await
        .map_err(super::explained)?;
    ctx.note_refused(reply.refused);
    let page = reply.page.unwrap_or_default();
    if !reply.download.is_empty() {
        return Ok(ActReply {
            text: format!(
                "{url} is a download: saved {} to the workspace's downloads/ folder. The page \
                 stays at {}.",
                reply.download, page.url
            ),
            url: page.url,
            title: page.title,
            ..Default::default()
        });
    }
    ctx.after_change(
        format!("Opened {}", page.url),
        format!(
            "{}{}",
            super::titled(&page.title, &page.url),
            super::error_status(reply.status)
        ),
    )
    .await
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{
        BackendError, NavigateAction, NavigateReply, NavigateRequest, OpenRequest,
    };

    use crate::error::ControllerError;
    use crate::testing::*;

    fn navigate(url: &str) -> Action {
        Action::Navigate(NavigateAction { url: url.into() })
    }

    fn shop() -> FakePage {
        FakePage::new(
            "https://shop.example/",
            "Shop",
            &[("link", "Cart"), ("input:search", "Search")],
        )
    }

    fn arrived(status: u32) -> NavigateReply {
        NavigateReply {
            page: page_info("https://shop.example/", "Shop"),
            status,
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn navigates_settles_and_lists_the_page() {
        let h = Harness::showing(&shop());
        h.backend.reply::<NavigateRequest>(arrived(200));
        let (reply, frame) = h.ok(navigate("  https://shop.example/ ")).await;
        assert_eq!(h.backend.ops(), ["navigate", "settle", "evaluate"]);
        let asked = &h.backend.requests::<NavigateRequest>()[0];
        assert_eq!(asked.url, "https://shop.example/");
        assert_eq!(asked.timeout_ms, 30_000);
        assert_eq!(asked.session, session());
        assert_eq!(
            reply.text,
            "Shop — https://shop.example/\n[1] link \"Cart\"\n[2] input:search \"Search\""
        );
        assert_eq!(
            (reply.url.as_str(), reply.backend.as_str()),
            ("https://shop.example/", "worker:fake")
        );
        assert_eq!(reply.elements.len(), 2);
        let promised = reply.frame.unwrap();
        assert_eq!(promised.caption, "Opened https://shop.example/");
        assert_eq!((promised.width, promised.height), (1280, 900));
        // The picture is taken after the reply, under the id the reply gave.
        assert_eq!(frame.unwrap().id, promised.id);
        assert_eq!(h.listed_url().as_deref(), Some("https://shop.example/"));
    }

    #[tokio::test]
    async fn a_page_not_open_is_opened_with_the_thread_profile_first() {
        let h = Harness::showing(&shop());
        h.backend
            .fail::<NavigateRequest>(BackendError::NotFound("no page".into()));
        h.backend.reply::<NavigateRequest>(arrived(200));
        h.ok(navigate("https://shop.example/")).await;
        assert_eq!(
            h.backend.ops(),
            ["navigate", "open", "navigate", "settle", "evaluate"]
        );
        let open = &h.backend.requests::<OpenRequest>()[0];
        assert!(!open.mobile);
        assert_eq!(open.session, session());
    }

    #[tokio::test]
    async fn an_error_status_and_refused_requests_head_the_reply() {
        let h = Harness::showing(&shop());
        h.backend.reply::<NavigateRequest>(NavigateReply {
            refused: vec!["Refused by the URL policy: tracker.example is denied".into()],
            ..arrived(404)
        });
        let (reply, _) = h.ok(navigate("https://shop.example/")).await;
        assert!(
            reply.text.starts_with(
                "Refused by the URL policy: tracker.example is denied\nShop — \
                 https://shop.example/ (HTTP 404)\n[1]"
            ),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn a_download_is_reported_without_a_listing_or_frame() {
        let h = Harness::showing(&shop());
        h.backend.reply::<NavigateRequest>(NavigateReply {
            download: "report.pdf".into(),
            ..arrived(200)
        });
        let (reply, frame) = h.ok(navigate("https://shop.example/report.pdf")).await;
        assert_eq!(h.backend.ops(), ["navigate"]);
        assert!(frame.is_none() && reply.frame.is_none());
        assert_eq!(
            reply.text,
            "https://shop.example/report.pdf is a download: saved report.pdf to the workspace's \
             downloads/ folder. The page stays at https://shop.example/."
        );
    }

    #[tokio::test]
    async fn a_network_error_named_by_its_code_alone_is_said_in_words() {
        let h = Harness::showing(&shop());
        h.backend
            .fail::<NavigateRequest>(BackendError::FailedPrecondition(
                "navigation to https://shop.example/ failed: net::ERR_CERT_DATE_INVALID".into(),
            ));
        let (reply, _) = h.act(navigate("https://shop.example/")).await;
        assert!(
            matches!(reply, Err(ControllerError::Backend(BackendError::FailedPrecondition(ref m)))
                if m.ends_with("net::ERR_CERT_DATE_INVALID (the site's certificate is not one the \
                                browser trusts: nothing was loaded)")),
            "{reply:?}"
        );
    }

    #[tokio::test]
    async fn the_backend_refusal_reaches_the_model_as_it_is() {
        let h = Harness::showing(&shop());
        h.backend.fail::<NavigateRequest>(BackendError::Timeout(
            "the page did not load in 30 s".into(),
        ));
        let (reply, frame) = h.act(navigate("https://shop.example/")).await;
        assert!(matches!(
            reply,
            Err(ControllerError::Backend(BackendError::Timeout(m))) if m == "the page did not load in 30 s"
        ));
        assert!(frame.is_none());
        assert_eq!(h.listed_url(), None);
    }

    #[tokio::test]
    async fn no_url_changes_nothing() {
        let h = Harness::showing(&shop());
        let (reply, _) = h.act(navigate("   ")).await;
        let Err(ControllerError::InvalidArgument(message)) = reply else {
            panic!("{reply:?}")
        };
        assert!(message.contains("navigate needs a URL"), "{message}");
        assert!(h.backend.ops().is_empty());
        assert_eq!(h.listed_url(), None);
    }
}
