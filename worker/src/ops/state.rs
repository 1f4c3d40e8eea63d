//! `state {}`: where the page is and what it looks like, without changing it.

use nanomuse_proto::{StateReply, StateRequest};

use crate::error::Result;
use crate::page::PageHandle;

pub async fn run(page: &PageHandle, _request: &StateRequest, host: &str) -> Result<StateReply> {
    let info = super::page_info(page).await?;
    Ok(StateReply {
        url: info.url,
        title: info.title,
        width: info.width,
        height: info.height,
        loading: info.loading,
        // Holds are the controller's; a worker's page is never under a person's hand.
        user_control: false,
        host: host.to_string(),
    })
}
