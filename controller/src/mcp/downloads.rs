//! The workspace's downloaded files as MCP resources, `nanomuse://downloads/<workspace>/<name>`:
//! `resources/list` gives those of the session's workspace beside its frames, `resources/read`
//! one file's bytes (base64, as MCP carries binary). Another tenant's file reads as an
//! unknown one, as over HTTP.

use base64::Engine as _;
use futures::TryStreamExt as _;
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents};

use crate::actions::downloads::when;
use crate::app::Controller;
use crate::error::ControllerError;

pub const SCHEME: &str = "nanomuse://downloads/";

/// The most a resource read carries: MCP sends the file whole, in one JSON message.
pub const READ_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// The address of download `name` of `workspace`.
pub fn uri(workspace: &str, name: &str) -> String {
    let name: String =
        percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).collect();
    format!("{SCHEME}{workspace}/{name}")
}

fn refused(error: ControllerError) -> ErrorData {
    match error {
        ControllerError::InvalidArgument(_)
        | ControllerError::Backend(nanomuse_proto::BackendError::InvalidArgument(_)) => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        ControllerError::NotFound(_)
        | ControllerError::Backend(nanomuse_proto::BackendError::NotFound(_)) => {
            ErrorData::resource_not_found(error.to_string(), None)
        }
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// The files of `workspace`, newest first.
pub async fn list(
    controller: &Controller,
    tenant: &str,
    workspace: &str,
) -> Result<Vec<Resource>, ErrorData> {
    let files = controller
        .list_downloads(tenant, workspace)
        .await
        .map_err(refused)?;
    Ok(files
        .iter()
        .map(|file| {
            let from = match file.page.as_str() {
                "" => String::new(),
                page => format!(", from {page}"),
            };
            Resource::new(uri(workspace, &file.name), file.name.clone())
                .with_description(format!("Downloaded {}{from}", when(file.completed_ms)))
                .with_mime_type("application/octet-stream")
                .with_size(file.size)
        })
        .collect())
}

/// The file at `address`, which starts with [`SCHEME`].
pub async fn read(
    controller: &Controller,
    tenant: &str,
    address: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let (workspace, name) = address
        .strip_prefix(SCHEME)
        .and_then(|rest| rest.split_once('/'))
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("{address:?} is not a download's address: nanomuse://downloads/<workspace>/<name>"),
                None,
            )
        })?;
    let name = percent_encoding::percent_decode_str(name)
        .decode_utf8()
        .map_err(|_| ErrorData::invalid_params("the name is not UTF-8", None))?;
    let body = controller
        .read_download(tenant, workspace, &name)
        .await
        .map_err(refused)?;
    if body.size > READ_MAX_BYTES {
        return Err(ErrorData::invalid_params(
            format!(
                "{name} is {} bytes, more than a resource read carries ({READ_MAX_BYTES}); fetch \
                 it over HTTP: GET /api/workspaces/{workspace}/downloads/<name>",
                body.size
            ),
            None,
        ));
    }
    let chunks: Vec<Vec<u8>> = body
        .chunks
        .try_collect()
        .await
        .map_err(|error| refused(error.into()))?;
    let blob = base64::engine::general_purpose::STANDARD.encode(chunks.concat());
    Ok(ReadResourceResult::new(vec![
        ResourceContents::blob(blob, address).with_mime_type("application/octet-stream"),
    ]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_download_s_address() {
        assert_eq!(
            super::uri("default", "my report.csv"),
            "nanomuse://downloads/default/my%20report%2Ecsv"
        );
    }
}
