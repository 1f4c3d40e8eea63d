//! A workspace's downloaded files, off the disk of its worker: the [`Downloads`] trait the
//! controller reads them through, a tonic server over any `Downloads` ([`DownloadsServer`],
//! the worker's `WorkerDownloads` service) and a `Downloads` over a gRPC channel
//! ([`GrpcDownloads`]). The embedded `serve` uses the worker's implementation in-process.

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt, TryStreamExt};

use crate::BackendError;
use crate::v1::worker_downloads_client::WorkerDownloadsClient;
use crate::v1::worker_downloads_server::{WorkerDownloads, WorkerDownloadsServer};
use crate::v1::{
    DownloadChunk, DownloadEntry, DownloadsRef, ListDownloadsReply, ReadDownloadRequest,
};
use nanomuse_common::hop::InternalChannel;

/// `Ok` when `name` names a file directly in the downloads folder: not empty, no path
/// separator or NUL, not `.`/`..` nor hidden (the folder's index), at most 255 bytes.
pub fn check_file_name(name: &str) -> Result<(), BackendError> {
    let shown = nanomuse_common::limits::excerpt(name);
    let refuse = |why: &str| {
        Err(BackendError::InvalidArgument(format!(
            "{shown:?} is not a download's name: {why}; use a name as `downloads` lists it"
        )))
    };
    if name.is_empty() {
        return refuse("it is empty");
    }
    if name.contains('/') || name.contains('\\') {
        return refuse("a name has no path (no / or \\)");
    }
    if name.contains('\0') || name.chars().any(char::is_control) {
        return refuse("it holds a control character");
    }
    if name.starts_with('.') {
        return refuse("names starting with a dot (., .., hidden files) are not downloads");
    }
    if name.len() > 255 {
        return refuse("it is longer than 255 bytes");
    }
    Ok(())
}

/// The answer for a name that is not a download of the workspace (whether the workspace has a
/// folder at all, or it is another tenant's, is not told).
pub fn missing(name: &str) -> BackendError {
    BackendError::NotFound(format!(
        "no download {:?} in this workspace: `downloads` lists its files",
        nanomuse_common::limits::excerpt(name)
    ))
}

/// A file's bytes, in chunks, with its size known before the first.
pub struct DownloadBody {
    pub size: u64,
    pub chunks: Pin<Box<dyn Stream<Item = Result<Vec<u8>, BackendError>> + Send>>,
}

/// Where a workspace's downloads are read from.
#[tonic::async_trait]
pub trait Downloads: Send + Sync + 'static {
    /// The workspace's files, newest first.
    async fn list(&self, tenant: &str, workspace: &str)
    -> Result<Vec<DownloadEntry>, BackendError>;
    /// One file by its listed name: INVALID_ARGUMENT for a name that could leave the folder,
    /// NOT_FOUND for one not in it.
    async fn read(
        &self,
        tenant: &str,
        workspace: &str,
        name: &str,
    ) -> Result<DownloadBody, BackendError>;
}

/// [`Downloads`] over a worker's `WorkerDownloads` service.
#[derive(Clone)]
pub struct GrpcDownloads {
    client: WorkerDownloadsClient<InternalChannel>,
}

impl GrpcDownloads {
    pub fn new(channel: InternalChannel) -> Self {
        Self {
            client: WorkerDownloadsClient::new(channel),
        }
    }
}

#[tonic::async_trait]
impl Downloads for GrpcDownloads {
    async fn list(
        &self,
        tenant: &str,
        workspace: &str,
    ) -> Result<Vec<DownloadEntry>, BackendError> {
        let reply = self
            .client
            .clone()
            .list_downloads(DownloadsRef {
                tenant: tenant.into(),
                workspace: workspace.into(),
            })
            .await?;
        Ok(reply.into_inner().downloads)
    }

    async fn read(
        &self,
        tenant: &str,
        workspace: &str,
        name: &str,
    ) -> Result<DownloadBody, BackendError> {
        let mut stream = self
            .client
            .clone()
            .read_download(ReadDownloadRequest {
                tenant: tenant.into(),
                workspace: workspace.into(),
                name: name.into(),
            })
            .await?
            .into_inner();
        // The first chunk carries the size, so a caller can answer before the bytes flow.
        let first = stream.message().await?.unwrap_or_default();
        let size = first.size;
        let rest = stream
            .map_ok(|chunk| chunk.data)
            .map_err(BackendError::from);
        let chunks = futures::stream::iter([Ok(first.data)])
            .chain(rest)
            .try_filter(|data| futures::future::ready(!data.is_empty()));
        Ok(DownloadBody {
            size,
            chunks: Box::pin(chunks),
        })
    }
}

/// The `WorkerDownloads` service over any [`Downloads`].
pub struct DownloadsServer<D> {
    downloads: Arc<D>,
}

impl<D: Downloads> DownloadsServer<D> {
    pub fn service(downloads: Arc<D>) -> WorkerDownloadsServer<Self> {
        WorkerDownloadsServer::new(Self { downloads })
    }
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<DownloadChunk, tonic::Status>> + Send>>;

#[tonic::async_trait]
impl<D: Downloads> WorkerDownloads for DownloadsServer<D> {
    async fn list_downloads(
        &self,
        request: tonic::Request<DownloadsRef>,
    ) -> Result<tonic::Response<ListDownloadsReply>, tonic::Status> {
        let DownloadsRef { tenant, workspace } = request.into_inner();
        let downloads = self.downloads.list(&tenant, &workspace).await?;
        Ok(tonic::Response::new(ListDownloadsReply { downloads }))
    }

    type ReadDownloadStream = ChunkStream;

    async fn read_download(
        &self,
        request: tonic::Request<ReadDownloadRequest>,
    ) -> Result<tonic::Response<ChunkStream>, tonic::Status> {
        let ReadDownloadRequest {
            tenant,
            workspace,
            name,
        } = request.into_inner();
        let body = self.downloads.read(&tenant, &workspace, &name).await?;
        let size = body.size;
        let head = futures::stream::iter([Ok(DownloadChunk {
            size,
            data: Vec::new(),
        })]);
        let chunks = body
            .chunks
            .map_ok(|data| DownloadChunk { size: 0, data })
            .map_err(tonic::Status::from);
        Ok(tonic::Response::new(Box::pin(head.chain(chunks))))
    }
}
