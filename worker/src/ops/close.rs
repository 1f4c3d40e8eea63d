//! `close {}`: the page goes; the profile and its cookies stay.

use nanomuse_proto::{CloseReply, CloseRequest};

use crate::error::Result;
use crate::profiles::Pool;

pub async fn run(pool: &Pool, request: &CloseRequest) -> Result<CloseReply> {
    pool.close(request.session.as_ref()).await?;
    Ok(CloseReply {})
}
