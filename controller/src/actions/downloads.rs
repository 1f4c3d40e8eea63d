//! `downloads`: the workspace's downloaded files — name, size, when, the page each came from —
//! read off its worker's disk through [`Downloads`](nanomuse_proto::downloads::Downloads)
//! (the worker's `WorkerDownloads` service, or the embedded worker's folder in-process; never
//! one of the backend ops: the files are the workspace's, not a page's). The bytes are at
//! `GET /api/workspaces/{workspace}/downloads/{name}` and the MCP resource
//! `nanomuse://downloads/<workspace>/<name>`. What the phone's WebView downloads stays on the
//! phone, as the spec says, and the listing says where.

use std::time::{Duration, UNIX_EPOCH};

use nanomuse_proto::downloads::{DownloadBody, check_file_name, missing};
use nanomuse_proto::{ActReply, DownloadEntry};

use crate::app::{Controller, check_id};
use crate::config::BackendChoice;
use crate::error::Result;
use crate::store::ThreadRecord;

/// Where a download made on the phone is, since it cannot be fetched from here.
pub const ON_THE_PHONE: &str = "This thread's browser is the phone's WebView: what it downloads \
     stays on the phone, in the workspace's downloads/ folder of the nanoMuse app's local build \
     (where the agent there reads it) or in the phone's Downloads folder with the connect build; \
     it is not listed here and cannot be fetched from the server.";

impl Controller {
    /// The workspace's downloaded files, newest first; none for a workspace that never had a
    /// browser on a worker.
    pub async fn list_downloads(
        &self,
        tenant: &str,
        workspace: &str,
    ) -> Result<Vec<DownloadEntry>> {
        check_id("workspace", workspace)?;
        match self.scheduler.downloads_of(tenant, workspace)? {
            None => Ok(Vec::new()),
            Some((_, downloads)) => Ok(downloads.list(tenant, workspace).await?),
        }
    }

    /// One downloaded file's bytes. A name that could leave the folder is refused before any
    /// worker is asked; an unknown one (or another tenant's) is NOT_FOUND, told alike.
    pub async fn read_download(
        &self,
        tenant: &str,
        workspace: &str,
        name: &str,
    ) -> Result<DownloadBody> {
        check_id("workspace", workspace)?;
        check_file_name(name)?;
        match self.scheduler.downloads_of(tenant, workspace)? {
            None => Err(missing(name).into()),
            Some((_, downloads)) => Ok(downloads.read(tenant, workspace, name).await?),
        }
    }
}

/// The action: the listing of the thread's workspace, and where a phone's downloads are.
pub async fn run(controller: &Controller, tenant: &str, record: &ThreadRecord) -> Result<ActReply> {
    let on_phone = match record.backend {
        BackendChoice::Device => true,
        BackendChoice::Auto => controller.devices.browser_of(tenant).is_some(),
        BackendChoice::Chromium => false,
    };
    let files = controller.list_downloads(tenant, &record.workspace).await?;
    let mut text = render(&record.workspace, &files);
    if on_phone {
        text = format!("{ON_THE_PHONE}\n{text}");
    }
    Ok(ActReply {
        text,
        downloads: files,
        ..Default::default()
    })
}

/// When a download completed, as a person reads it.
pub fn when(completed_ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(completed_ms.max(0) as u64);
    httpdate::fmt_http_date(at)
}

/// The listing as the model reads it.
pub fn render(workspace: &str, files: &[DownloadEntry]) -> String {
    if files.is_empty() {
        return format!(
            "Workspace {workspace:?} has no downloads: a link to a file, clicked or navigated \
             to, saves it in the workspace's downloads/ folder."
        );
    }
    let count = match files.len() {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    let mut lines = vec![format!(
        "Downloads of workspace {workspace:?} ({count}, newest first):"
    )];
    for file in files {
        let from = match (file.page.as_str(), file.url.as_str()) {
            ("", "") => String::new(),
            ("", url) => format!(", from {url}"),
            (page, "") => format!(", from the page {page}"),
            (page, url) => format!(", from the page {page} ({url})"),
        };
        lines.push(format!(
            "- {} — {} bytes, {}{from}",
            file.name,
            file.size,
            when(file.completed_ms)
        ));
    }
    lines.push(format!(
        "The bytes: GET /api/workspaces/{workspace}/downloads/<name>, or the MCP resource \
         nanomuse://downloads/{workspace}/<name>."
    ));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{ClickAction, DownloadsAction, SettleReply, SettleRequest};

    use super::*;
    use crate::testing::*;

    #[tokio::test]
    async fn a_click_whose_settle_saw_a_download_names_the_file() {
        let h = Harness::showing(&FakePage::new(
            "https://shop.example/orders",
            "Orders",
            &[("link", "Export CSV")],
        ));
        h.list_first().await;
        h.backend.reply::<SettleRequest>(SettleReply {
            settled: true,
            downloads: vec!["orders.csv".into()],
            ..Default::default()
        });
        let (reply, _) = h
            .ok(Action::Click(ClickAction {
                n: 1,
                ..Default::default()
            }))
            .await;
        assert!(
            reply.text.starts_with(
                "Clicked 'Export CSV'.\nDownloaded orders.csv to the workspace's downloads/ \
                 folder (`downloads` lists it; the page stays).\n[1] link"
            ),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn a_phone_thread_is_told_its_files_stay_on_the_phone() {
        let mut config = crate::config::Config::default();
        config.controller.url_policy.hosted = Some(false);
        let store = std::sync::Arc::new(crate::store::SledStore::temporary().unwrap());
        let controller = Controller::new(std::sync::Arc::new(config), store).unwrap();
        let reply = controller
            .act(
                "tenant-a",
                nanomuse_proto::ActRequest {
                    thread: "on-the-phone".into(),
                    backend: "device".into(),
                    action: Some(Action::Downloads(DownloadsAction {})),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert!(reply.text.starts_with(ON_THE_PHONE), "{}", reply.text);
        assert!(reply.text.contains("has no downloads"), "{}", reply.text);
    }

    #[test]
    fn the_listing_names_size_time_and_source_page() {
        let files = [DownloadEntry {
            name: "report.csv".into(),
            size: 1234,
            completed_ms: 1_764_597_600_000,
            url: "https://shop.example/report.csv".into(),
            page: "https://shop.example/orders".into(),
        }];
        assert_eq!(
            render("default", &files),
            "Downloads of workspace \"default\" (1 file, newest first):\n- report.csv — 1234 \
             bytes, Mon, 01 Dec 2025 14:00:00 GMT, from the page https://shop.example/orders \
             (https://shop.example/report.csv)\nThe bytes: GET \
             /api/workspaces/default/downloads/<name>, or the MCP resource \
             nanomuse://downloads/default/<name>."
        );
        assert!(render("default", &[]).contains("has no downloads"));
    }
}
