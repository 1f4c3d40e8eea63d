//! The thread's frames as MCP resources, so a client can show the pictures the user sees:
//! `resources/list` gives the last frames of the session's thread (a thread keeps its last
//! 12), `resources/read` one of them as a JPEG. Another tenant's frame reads as an unknown one.

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents};

use crate::app::Controller;

const SCHEME: &str = "nanomuse://frames/";

/// The address of frame `id` of `thread`.
pub fn uri(thread: &str, id: &str) -> String {
    format!("{SCHEME}{thread}/{id}")
}

/// The frames of `thread`, newest first.
pub fn list(
    controller: &Controller,
    tenant: &str,
    thread: &str,
) -> Result<ListResourcesResult, ErrorData> {
    crate::app::check_id("thread", thread)
        .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
    let mut frames = controller
        .store()
        .frames(tenant, thread)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    frames.reverse();
    let resources = frames
        .iter()
        .map(|frame| {
            Resource::new(uri(thread, &frame.id), frame.caption.clone())
                .with_description(format!("{} — {}", frame.title, frame.url))
                .with_mime_type("image/jpeg")
                .with_size(frame.jpeg.len() as u64)
        })
        .collect();
    Ok(ListResourcesResult::with_all_items(resources))
}

/// The JPEG at `address`.
pub async fn read(
    controller: &Controller,
    tenant: &str,
    address: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let not_found = || {
        ErrorData::resource_not_found(
            format!("there is no frame {address:?} (a thread keeps its last 12)"),
            None,
        )
    };
    let (thread, id) = address
        .strip_prefix(SCHEME)
        .and_then(|rest| rest.split_once('/'))
        .ok_or_else(not_found)?;
    let frame = controller
        .frame(tenant, thread, id)
        .await
        .map_err(|_| not_found())?;
    let jpeg = base64::engine::general_purpose::STANDARD.encode(&frame.jpeg);
    Ok(ReadResourceResult::new(vec![
        ResourceContents::blob(jpeg, address).with_mime_type("image/jpeg"),
    ]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_frame_s_address() {
        assert_eq!(super::uri("mcp-1", "42"), "nanomuse://frames/mcp-1/42");
    }
}
