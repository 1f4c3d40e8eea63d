//! `profile {user_agent, width, height, mobile}`: switches an open page's profile live.

use nanomuse_proto::{ProfileReply, ProfileRequest};

use crate::emulation::PageSettings;
use crate::error::Result;
use crate::profiles::Pool;

pub async fn run(pool: &Pool, request: &ProfileRequest) -> Result<ProfileReply> {
    pool.open(request.session.as_ref(), true, |major| {
        PageSettings::from_request(
            &request.user_agent,
            request.width,
            request.height,
            request.mobile,
            major,
        )
    })
    .await?;
    Ok(ProfileReply {})
}
