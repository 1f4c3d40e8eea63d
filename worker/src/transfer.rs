//! `ProfileTransfer`: a workspace's profile out of this worker as a tar stream, and into it
//! from one, so that a drained worker's workspaces move with their cookies and logins. The
//! tar holds the workspace's folder — `browser-profile/` without Chromium's caches and
//! `Singleton*` locks, and `downloads/` — and is written and read on blocking threads, piece
//! by piece, never whole in memory.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use nanomuse_proto::profile_transfer_server::{ProfileTransfer, ProfileTransferServer};
use nanomuse_proto::{Coded as _, ImportProfileReply, ProfileChunk, ProfileRef};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::error::WorkerError;
use crate::profiles::{Pool, profile_key};

/// The size of one streamed piece.
const CHUNK_BYTES: usize = 256 * 1024;

/// Folders Chromium rebuilds on its own: not worth moving.
const CACHES: &[&str] = &[
    "Cache",
    "Code Cache",
    "GPUCache",
    "GrShaderCache",
    "GraphiteDawnCache",
    "ShaderCache",
    "DawnGraphiteCache",
    "DawnWebGPUCache",
    "Crashpad",
    "BrowserMetrics",
    "component_crx_cache",
    "extensions_crx_cache",
];

pub struct TransferService {
    pool: Arc<Pool>,
}

impl TransferService {
    pub fn service(pool: Arc<Pool>) -> ProfileTransferServer<Self> {
        ProfileTransferServer::new(Self { pool })
    }
}

fn status(error: WorkerError) -> Status {
    error.to_status()
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<ProfileChunk, Status>> + Send>>;

#[tonic::async_trait]
impl ProfileTransfer for TransferService {
    type ExportProfileStream = ChunkStream;

    async fn export_profile(
        &self,
        request: Request<ProfileRef>,
    ) -> Result<Response<ChunkStream>, Status> {
        let request = request.into_inner();
        let key = profile_key(&request.tenant, &request.workspace).map_err(status)?;
        let root = self.pool.export(&key).await.map_err(status)?;
        let (sender, receiver) = mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            let mut writer = ChunkWriter {
                sender: sender.clone(),
                buffer: Vec::with_capacity(CHUNK_BYTES),
            };
            let written = write_tar(&root, &mut writer).and_then(|()| writer.send());
            if let Err(error) = written {
                tracing::warn!(%error, "profile export failed");
                let _ = sender.blocking_send(Err(status(WorkerError::Io(std::io::Error::other(
                    format!("reading the profile failed: {error}"),
                )))));
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(receiver))))
    }

    async fn import_profile(
        &self,
        request: Request<Streaming<ProfileChunk>>,
    ) -> Result<Response<ImportProfileReply>, Status> {
        let mut stream = request.into_inner();
        let first = stream
            .message()
            .await?
            .ok_or_else(|| status(WorkerError::invalid("an import needs at least one chunk")))?;
        let Some(profile) = first.profile else {
            return Err(status(WorkerError::invalid(
                "the first chunk of an import names the profile (tenant, workspace)",
            )));
        };
        let key = profile_key(&profile.tenant, &profile.workspace).map_err(status)?;
        let staging = self.pool.staging_dir(&key);
        tokio::fs::create_dir_all(&staging)
            .await
            .map_err(|e| status(e.into()))?;
        let received = receive(&mut stream, first.data, staging.clone())
            .await
            .and_then(|bytes| {
                if bytes == first.size {
                    Ok(bytes)
                } else {
                    Err(status(WorkerError::BrokenTransfer(format!(
                        "the profile's tar came incomplete: {bytes} of {} bytes",
                        first.size
                    ))))
                }
            });
        let installed = match received {
            Ok(bytes) => self
                .pool
                .install(&key, &staging)
                .await
                .map(|()| bytes)
                .map_err(status),
            Err(error) => Err(error),
        };
        if installed.is_err() {
            let _ = tokio::fs::remove_dir_all(&staging).await;
        }
        Ok(Response::new(ImportProfileReply { bytes: installed? }))
    }
}

/// Unpacks the streamed tar into `staging`; the tar's size.
async fn receive(
    stream: &mut Streaming<ProfileChunk>,
    first: Vec<u8>,
    staging: PathBuf,
) -> Result<u64, Status> {
    let (sender, receiver) = mpsc::channel::<Vec<u8>>(4);
    let unpacking = tokio::task::spawn_blocking(move || {
        let mut archive = tar::Archive::new(ChunkReader {
            receiver,
            current: Vec::new(),
            at: 0,
        });
        archive.set_preserve_mtime(true);
        unpack_plain(&mut archive, &staging)
    });
    let mut bytes = first.len() as u64;
    let mut fed = sender.send(first).await.is_ok();
    let mut failed = None;
    while fed {
        match stream.message().await {
            Ok(Some(chunk)) => {
                bytes += chunk.data.len() as u64;
                fed = sender.send(chunk.data).await.is_ok();
            }
            Ok(None) => break,
            Err(error) => {
                failed = Some(error);
                break;
            }
        }
    }
    drop(sender);
    let unpacked = unpacking.await.map_err(|e| {
        status(WorkerError::Io(std::io::Error::other(format!(
            "unpacking stopped: {e}"
        ))))
    })?;
    if let Some(error) = failed {
        return Err(status(WorkerError::BrokenTransfer(format!(
            "the profile's stream broke off: {}",
            error.message()
        ))));
    }
    unpacked.map_err(|e| status(WorkerError::invalid(format!("not a profile's tar: {e}"))))?;
    Ok(bytes)
}

/// Unpacks `archive` into `staging`, refusing it whole at the first entry that is not a plain
/// file or folder: a symlink (inward or outward), a hard link, a device or FIFO would let a
/// later op of this profile (a download, Chromium's own cookie database) write through it out
/// of `profiles_root`. The caller removes `staging` on an error, so nothing of a refused tar
/// stays. `unpack_in` itself refuses `..` and absolute paths; no link can exist under
/// `staging` for it to follow, as none is ever unpacked.
fn unpack_plain<R: Read>(archive: &mut tar::Archive<R>, staging: &Path) -> std::io::Result<()> {
    for entry in archive.entries()? {
        let mut entry = entry?;
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            let path = entry.path()?;
            let name = nanomuse_common::limits::excerpt(&path.to_string_lossy()).into_owned();
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{name:?} is a {}, and a profile holds only plain files and folders; \
                     the tar was refused whole",
                    kind_name(kind)
                ),
            ));
        }
        if !entry.unpack_in(staging)? {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "an entry names a path outside the profile; the tar was refused whole",
            ));
        }
    }
    Ok(())
}

fn kind_name(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Symlink => "symbolic link",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char | tar::EntryType::Block => "device",
        tar::EntryType::Fifo => "FIFO",
        _ => "special entry",
    }
}

/// The tar of the workspace folder `root`.
fn write_tar(root: &Path, out: &mut impl Write) -> std::io::Result<()> {
    let mut builder = tar::Builder::new(out);
    builder.mode(tar::HeaderMode::Complete);
    append_tree(&mut builder, root, Path::new(""))?;
    builder.finish()
}

fn skipped(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with("Singleton") || CACHES.contains(&name.as_ref())
}

/// Folders and regular files under `dir`, named from `name`; links, sockets and caches are
/// left out.
fn append_tree<W: Write>(
    builder: &mut tar::Builder<W>,
    dir: &Path,
    name: &Path,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let file_name = entry.file_name();
        if skipped(&file_name) {
            continue;
        }
        let path = entry.path();
        let inner = name.join(&file_name);
        let kind = entry.file_type()?;
        if kind.is_dir() {
            builder.append_dir(&inner, &path)?;
            append_tree(builder, &path, &inner)?;
        } else if kind.is_file() {
            match std::fs::File::open(&path) {
                Ok(mut file) => builder.append_file(&inner, &mut file)?,
                // Gone since the listing: nothing to move.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}

/// Bytes written on a blocking thread, sent on as chunks.
struct ChunkWriter {
    sender: mpsc::Sender<Result<ProfileChunk, Status>>,
    buffer: Vec<u8>,
}

impl ChunkWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let data = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK_BYTES));
        self.sender
            .blocking_send(Ok(ProfileChunk {
                profile: None,
                data,
                size: 0,
            }))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "export abandoned"))
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Chunks received on the runtime, read on a blocking thread.
struct ChunkReader {
    receiver: mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

impl Read for ChunkReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            match self.receiver.blocking_recv() {
                Some(chunk) => {
                    self.current = chunk;
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.current.len() - self.at);
        out[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tar_leaves_out_caches_and_locks_and_unpacks_to_the_same_files() {
        let from = tempfile::tempdir().unwrap();
        let profile = from.path().join("browser-profile");
        std::fs::create_dir_all(profile.join("Default/Cache/Cache_Data")).unwrap();
        std::fs::create_dir_all(from.path().join("downloads")).unwrap();
        std::fs::write(profile.join("Default/Cookies"), b"cookies").unwrap();
        std::fs::write(profile.join("Default/Cache/Cache_Data/x"), b"cached").unwrap();
        std::fs::write(profile.join("nanomuse-cookies.json"), b"[]").unwrap();
        std::os::unix::fs::symlink("host-123", profile.join("SingletonLock")).unwrap();
        std::fs::write(from.path().join("downloads/report.txt"), b"numbers").unwrap();

        let mut tar = Vec::new();
        write_tar(from.path(), &mut tar).unwrap();
        let to = tempfile::tempdir().unwrap();
        tar::Archive::new(tar.as_slice()).unpack(to.path()).unwrap();

        let read = |p: &str| std::fs::read(to.path().join(p)).unwrap();
        assert_eq!(read("browser-profile/Default/Cookies"), b"cookies");
        assert_eq!(read("browser-profile/nanomuse-cookies.json"), b"[]");
        assert_eq!(read("downloads/report.txt"), b"numbers");
        assert!(!to.path().join("browser-profile/Default/Cache").exists());
        assert!(
            std::fs::symlink_metadata(to.path().join("browser-profile/SingletonLock")).is_err()
        );
    }
}
