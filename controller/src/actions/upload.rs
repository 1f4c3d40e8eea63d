//! `upload n FILE…`: taps element n of the last listing and answers the file chooser the tap
//! opens with the files (the backends' `upload` op), then lists the page again. The files come
//! with the call or from the workspace's downloads (`downloads/NAME`), read here before any op
//! ([`Controller::upload_files`]), so a bad name, a missing file or too many bytes change
//! nothing. Bounded by [`nanomuse_proto::upload`]: 10 files, 10 MiB each, 20 MiB in all.

use futures::StreamExt;
use nanomuse_proto::downloads::check_file_name;
use nanomuse_proto::upload::{self, MAX_FILE_BYTES, MAX_FILES, human_size};
use nanomuse_proto::{ActReply, BackendError, UploadAction, UploadFile, UploadRequest};
use serde_json::json;

use super::{Aim, Ctx, quoted};
use crate::app::Controller;
use crate::error::{ControllerError, Result};

/// [`upload::check_files`] in the controller's words: too many bytes is TOO_LARGE (HTTP 413).
fn check_files(files: &[UploadFile]) -> Result<()> {
    upload::check_files(files).map_err(|error| match error {
        BackendError::ResourceExhausted(message) => ControllerError::TooLarge(message),
        other => other.into(),
    })
}

/// What can be checked of an upload before anything is created: how many files, their names
/// and the sizes of those sent with the call.
pub fn check(action: &UploadAction) -> Result<()> {
    let count = action.files.len() + action.downloads.len();
    if count == 0 {
        check_files(&[])?;
    }
    if count > MAX_FILES {
        return Err(ControllerError::InvalidArgument(format!(
            "{count} files is too many for one upload: at most {MAX_FILES}"
        )));
    }
    for name in &action.downloads {
        check_file_name(name)?;
    }
    if !action.files.is_empty() {
        check_files(&action.files)?;
    }
    Ok(())
}

impl Controller {
    /// The files of `action`: those sent, then the workspace's downloads it names, read in
    /// full (each at most [`MAX_FILE_BYTES`]) and checked as one upload.
    pub async fn upload_files(
        &self,
        tenant: &str,
        workspace: &str,
        action: &mut UploadAction,
    ) -> Result<()> {
        check(action)?;
        for name in std::mem::take(&mut action.downloads) {
            let mut body = self.read_download(tenant, workspace, &name).await?;
            let too_large = || {
                ControllerError::TooLarge(format!(
                    "downloads/{name} is {}, more than an upload takes per file ({} MiB)",
                    human_size(body_size(body.size)),
                    MAX_FILE_BYTES >> 20
                ))
            };
            if body.size > MAX_FILE_BYTES as u64 {
                return Err(too_large());
            }
            let mut content = Vec::with_capacity(body.size as usize);
            while let Some(chunk) = body.chunks.next().await {
                content.extend_from_slice(&chunk?);
                if content.len() > MAX_FILE_BYTES {
                    return Err(too_large());
                }
            }
            action.files.push(UploadFile {
                name,
                mime_type: String::new(),
                content,
            });
        }
        check_files(&action.files)?;
        Ok(())
    }
}

fn body_size(size: u64) -> usize {
    usize::try_from(size).unwrap_or(usize::MAX)
}

/// What the element at (x, y) does when tapped, if that is something other than choosing
/// files ("is a link", "submits its form", "resets its form"); `null` for a file input, a label,
/// or anything else (a control that may open a chooser).
pub(crate) const TARGET_JS: &str = "(p) => { \
    const el = document.elementFromPoint(p.x, p.y); \
    const c = el && el.closest('input, button, label, a[href], area[href]'); \
    if (!c || c.localName === 'label' || (c.localName === 'input' && c.type === 'file')) return null; \
    if (c.localName === 'a' || c.localName === 'area') return 'is a link'; \
    const type = (c.getAttribute('type') || (c.localName === 'button' ? 'submit' : '')).toLowerCase(); \
    if (['submit', 'image'].includes(type) && c.form) return 'submits its form'; \
    if (type === 'reset' && c.form) return 'resets its form'; \
    return null; }";

/// The action, once [`Controller::upload_files`] has gathered its files.
pub async fn run(ctx: &mut Ctx<'_>, action: UploadAction) -> Result<ActReply> {
    if !action.downloads.is_empty() {
        return Err(ControllerError::InvalidArgument(
            "the workspace's downloads of an upload are read before it runs".into(),
        ));
    }
    check_files(&action.files)?;
    let crate::listing::Found { x, y, label, .. } = ctx.element(action.n, Aim::Tap).await?;
    // A tap on a link, a submit or a reset button does what it does whether a chooser opens
    // or not: such an element is refused before the tap, so a wrong n changes nothing.
    let target = ctx.evaluate(TARGET_JS, json!({"x": x, "y": y})).await?;
    if let Some(what) = target.as_str() {
        return Err(ControllerError::InvalidArgument(format!(
            "element {} {} {what}: upload chooses files for a file input, its label, or a control \
             that opens a file chooser — give the number of one of those (a file input is \
             listed as input:file; a hidden one is chosen through the button or label that \
             opens it)",
            action.n,
            quoted(&label)
        )));
    }
    let names = action
        .files
        .iter()
        .map(|file| file.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let sizes = action
        .files
        .iter()
        .map(|file| format!("{} ({})", file.name, human_size(file.content.len())))
        .collect::<Vec<_>>()
        .join(", ");
    ctx.op(UploadRequest {
        session: ctx.session(),
        x,
        y,
        files: action.files,
    })
    .await?;
    ctx.settle_for_look(ctx.settle_ms).await?;
    let caption = format!("Uploaded {names} to {}", quoted(&label));
    let head = format!(
        "Uploaded {sizes} to [{}] {} (the page sends the files with its form).",
        action.n,
        quoted(&label)
    );
    let (listing, frame) = ctx.look(caption).await?;
    Ok(ctx.page_reply(head, listing, frame))
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{BackendError, EvaluateRequest, UploadAction, UploadFile, UploadRequest};

    use super::*;
    use crate::testing::*;

    fn file(name: &str, bytes: usize) -> UploadFile {
        UploadFile {
            name: name.into(),
            mime_type: String::new(),
            content: vec![7; bytes],
        }
    }

    fn upload(n: i64, files: Vec<UploadFile>) -> Action {
        Action::Upload(UploadAction {
            n,
            files,
            downloads: vec![],
        })
    }

    fn form() -> FakePage {
        FakePage::new(
            "https://forms.example/id",
            "ID check",
            &[("file", "Your ID document"), ("button", "Send")],
        )
    }

    #[tokio::test]
    async fn the_files_go_to_the_listed_element_and_the_reply_says_what_went() {
        let h = Harness::showing(&form());
        h.list_first().await;
        let (reply, frame) = h.ok(upload(1, vec![file("id.pdf", 12_345)])).await;
        assert_eq!(
            h.backend.ops(),
            ["evaluate", "evaluate", "upload", "settle", "evaluate"]
        );
        let sent = &h.backend.requests::<UploadRequest>()[0];
        // The fake puts element n at (10n, 20n).
        assert_eq!((sent.x, sent.y), (10.0, 20.0));
        assert_eq!(sent.files, vec![file("id.pdf", 12_345)]);
        assert_eq!(sent.session, session());
        assert!(
            reply.text.starts_with(
                "Uploaded id.pdf (12.3 KB) to [1] 'Your ID document' (the page sends the \
                 files with its form).\n[1] file"
            ),
            "{}",
            reply.text
        );
        assert_eq!(
            frame.unwrap().caption,
            "Uploaded id.pdf to 'Your ID document'"
        );
    }

    #[tokio::test]
    async fn bad_uploads_are_refused_before_any_op() {
        let h = Harness::showing(&form());
        h.list_first().await;
        let eleven = (0..11).map(|i| file(&format!("f{i}.txt"), 1)).collect();
        let cases: Vec<(Vec<UploadFile>, i64, &str)> = vec![
            (vec![], 1, "at least one file"),
            (eleven, 1, "11 files is too many"),
            (
                vec![file("big.bin", MAX_FILE_BYTES + 1)],
                1,
                "per file (10 MiB)",
            ),
            (
                vec![
                    file("a", MAX_FILE_BYTES),
                    file("b", MAX_FILE_BYTES),
                    file("c", 1),
                ],
                1,
                "more than one upload takes",
            ),
            (vec![file("../../etc/passwd", 1)], 1, "no path"),
            (vec![file("ok.txt", 1)], 3, "not in the last listing"),
        ];
        for (files, n, said) in cases {
            let (reply, _) = h.act(upload(n, files)).await;
            let error = reply.unwrap_err();
            assert!(error.to_string().contains(said), "{said}: {error}");
            if said.contains("MiB") || said.contains("takes") {
                assert!(matches!(error, ControllerError::TooLarge(_)), "{error:?}");
            }
        }
        assert!(h.backend.ops().is_empty(), "{:?}", h.backend.ops());
    }

    #[tokio::test]
    async fn a_link_or_submit_button_is_refused_before_it_is_tapped() {
        let page = form();
        let h = Harness::showing(&page);
        h.list_first().await;
        let answers = page.clone();
        h.backend.on::<EvaluateRequest>(move |request| {
            Ok(if request.js == TARGET_JS {
                evaluated(json!("submits its form"))
            } else {
                answers.evaluate(request)
            })
        });
        let (reply, _) = h.act(upload(2, vec![file("id.pdf", 10)])).await;
        let Err(ControllerError::InvalidArgument(message)) = reply else {
            panic!("{reply:?}")
        };
        assert!(
            message.starts_with("element 2 'Send' submits its form: upload chooses files"),
            "{message}"
        );
        assert!(
            !message.contains("  "),
            "one space between words: {message}"
        );
        assert_eq!(h.backend.ops(), ["evaluate", "evaluate"]);
    }

    #[tokio::test]
    async fn without_a_listing_nothing_is_uploaded() {
        let h = Harness::showing(&form());
        let (reply, _) = h.act(upload(1, vec![file("a.txt", 1)])).await;
        assert!(
            matches!(reply, Err(ControllerError::StaleListing(_))),
            "{reply:?}"
        );
        assert!(h.backend.ops().is_empty());
    }

    #[tokio::test]
    async fn an_element_that_opens_no_chooser_says_so_as_the_backend_does() {
        let h = Harness::showing(&form());
        h.list_first().await;
        h.backend.on::<UploadRequest>(|_| {
            Err(BackendError::FailedPrecondition(
                "the element opened no file chooser".into(),
            ))
        });
        let (reply, frame) = h.act(upload(2, vec![file("a.txt", 1)])).await;
        assert!(
            reply
                .unwrap_err()
                .to_string()
                .contains("opened no file chooser"),
        );
        assert!(frame.is_none());
        assert_eq!(h.backend.ops(), ["evaluate", "evaluate", "upload"]);
    }

    #[tokio::test]
    async fn an_upload_on_a_thread_that_does_not_exist_makes_none() {
        let mut config = crate::config::Config::default();
        config.controller.url_policy.hosted = Some(false);
        let store = std::sync::Arc::new(crate::store::SledStore::temporary().unwrap());
        let controller = Controller::new(std::sync::Arc::new(config), store).unwrap();
        let request = nanomuse_proto::ActRequest {
            thread: "never-seen".into(),
            action: Some(upload(1, vec![file("a.txt", 1)])),
            ..Default::default()
        };
        let refused = controller.act("tenant-a", request).await.unwrap_err();
        assert!(
            matches!(refused, ControllerError::StaleListing(ref m) if m.starts_with("there is no listing")),
            "{refused:?}"
        );
        assert!(matches!(
            controller.known_thread("tenant-a", "never-seen"),
            Err(ControllerError::NotFound(_))
        ));
    }

    #[test]
    fn download_names_are_checked_before_anything_is_read() {
        let action = UploadAction {
            n: 1,
            files: vec![],
            downloads: vec!["../secret".into()],
        };
        assert!(check(&action).unwrap_err().to_string().contains("no path"));
        let fine = UploadAction {
            n: 1,
            files: vec![],
            downloads: vec!["report.pdf".into()],
        };
        assert!(check(&fine).is_ok());
    }
}
