//! `open {user_agent, width, height, mobile}`: creates the page (or re-profiles it).

use nanomuse_proto::{OpenReply, OpenRequest};

use crate::emulation::PageSettings;
use crate::error::Result;
use crate::profiles::Pool;

pub async fn run(pool: &Pool, request: &OpenRequest) -> Result<OpenReply> {
    let (page, _in_use) = pool
        .open(request.session.as_ref(), false, |major| {
            PageSettings::from_request(
                &request.user_agent,
                request.width,
                request.height,
                request.mobile,
                major,
            )
        })
        .await?;
    Ok(OpenReply {
        page: Some(super::page_info(&page).await?),
    })
}
