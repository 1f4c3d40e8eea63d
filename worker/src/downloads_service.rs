//! The workspace's downloaded files off this worker's disk: [`DownloadsFolder`] implements
//! [`Downloads`] over `<profiles_root>/<tenant>/<workspace>/downloads/`, served to the
//! controller as `WorkerDownloads` (beside `ProfileTransfer`) and used in-process by the
//! embedded `serve`. Only plain files directly in the folder are listed or read: a name that
//! could leave it is refused before the disk is touched, and a symlink is never followed.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use nanomuse_proto::downloads::{DownloadBody, Downloads, check_file_name, missing};
use nanomuse_proto::{BackendError, DownloadEntry};
use tokio::io::AsyncReadExt as _;

use crate::downloads::{INDEX_FILE, read_index};
use crate::profiles::profile_key;

/// The size of one streamed piece.
const CHUNK_BYTES: usize = 256 * 1024;

/// Chromium's name for a file still being written.
const PARTIAL_SUFFIX: &str = ".crdownload";

pub struct DownloadsFolder {
    profiles_root: PathBuf,
}

impl DownloadsFolder {
    pub fn new(profiles_root: impl Into<PathBuf>) -> Self {
        Self {
            profiles_root: profiles_root.into(),
        }
    }

    fn dir(&self, tenant: &str, workspace: &str) -> Result<PathBuf, BackendError> {
        let key = profile_key(tenant, workspace).map_err(BackendError::from)?;
        Ok(self
            .profiles_root
            .join(&key.tenant)
            .join(&key.workspace)
            .join("downloads"))
    }
}

/// A listed file: plain (no symlink, no folder), not hidden, not still being written.
fn listable(name: &str, metadata: &std::fs::Metadata) -> bool {
    metadata.file_type().is_file()
        && check_file_name(name).is_ok()
        && !name.ends_with(PARTIAL_SUFFIX)
}

fn modified_ms(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

fn list_folder(dir: &Path) -> std::io::Result<Vec<DownloadEntry>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let index = read_index(dir);
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // `DirEntry::metadata` does not follow symlinks.
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        if name == INDEX_FILE || !listable(&name, &metadata) {
            continue;
        }
        let origin = index.get(&name).cloned().unwrap_or_default();
        files.push(DownloadEntry {
            size: metadata.len(),
            completed_ms: match origin.completed_ms {
                0 => modified_ms(&metadata),
                ms => ms,
            },
            url: origin.url,
            page: origin.page,
            name,
        });
    }
    files.sort_by(|a, b| {
        b.completed_ms
            .cmp(&a.completed_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(files)
}

fn internal(error: std::io::Error) -> BackendError {
    BackendError::Internal(format!("reading the downloads folder failed: {error}"))
}

#[nanomuse_proto::async_trait]
impl Downloads for DownloadsFolder {
    async fn list(
        &self,
        tenant: &str,
        workspace: &str,
    ) -> Result<Vec<DownloadEntry>, BackendError> {
        let dir = self.dir(tenant, workspace)?;
        tokio::task::spawn_blocking(move || list_folder(&dir))
            .await
            .map_err(|e| BackendError::Internal(e.to_string()))?
            .map_err(internal)
    }

    async fn read(
        &self,
        tenant: &str,
        workspace: &str,
        name: &str,
    ) -> Result<DownloadBody, BackendError> {
        check_file_name(name)?;
        let path = self.dir(tenant, workspace)?.join(name);
        let missing = || missing(name);
        let listed = match tokio::fs::symlink_metadata(&path).await {
            Ok(metadata) if listable(name, &metadata) => metadata,
            Ok(_) => return Err(missing()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
            Err(error) => return Err(internal(error)),
        };
        let file = tokio::fs::File::open(&path).await.map_err(internal)?;
        let opened = file.metadata().await.map_err(internal)?;
        // Swapped for a symlink (or another file) between the look and the open: not served.
        if (opened.dev(), opened.ino()) != (listed.dev(), listed.ino()) {
            return Err(missing());
        }
        let size = opened.len();
        // At most the size announced, should the file grow meanwhile.
        let reader = file.take(size);
        let chunks = futures::stream::try_unfold(reader, |mut reader| async move {
            let mut buffer = vec![0; CHUNK_BYTES];
            let read = reader.read(&mut buffer).await.map_err(internal)?;
            if read == 0 {
                return Ok(None);
            }
            buffer.truncate(read);
            Ok(Some((buffer, reader)))
        });
        Ok(DownloadBody {
            size,
            chunks: Box::pin(chunks),
        })
    }
}

#[cfg(test)]
mod tests {
    use futures::TryStreamExt as _;

    use super::*;

    fn folder() -> (tempfile::TempDir, DownloadsFolder, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("tenant-a/default/downloads");
        std::fs::create_dir_all(&dir).unwrap();
        let folder = DownloadsFolder::new(root.path());
        (root, folder, dir)
    }

    async fn read(folder: &DownloadsFolder, name: &str) -> Result<Vec<u8>, BackendError> {
        let body = folder.read("tenant-a", "default", name).await?;
        let chunks: Vec<Vec<u8>> = body.chunks.try_collect().await?;
        let bytes = chunks.concat();
        assert_eq!(bytes.len() as u64, body.size);
        Ok(bytes)
    }

    #[test]
    fn names_that_could_leave_the_folder_are_refused() {
        for bad in [
            "",
            ".",
            "..",
            "../secret",
            "..%2f",
            "a/b",
            "/etc/passwd",
            "a\\b",
            ".nanomuse-downloads.json",
            ".hidden",
            "nul\0byte",
            "line\nbreak",
            &"x".repeat(256),
        ] {
            let refused = check_file_name(bad);
            assert!(
                matches!(&refused, Err(BackendError::InvalidArgument(m)) if m.contains("downloads")),
                "{bad:?}: {refused:?}"
            );
        }
        for good in ["report.csv", "Quarterly report (1).pdf", "über.txt", "a..b"] {
            assert!(check_file_name(good).is_ok(), "{good:?}");
        }
    }

    #[tokio::test]
    async fn a_file_is_read_whole_and_a_symlink_or_folder_never() {
        let (root, folder, dir) = folder();
        let bytes: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("big.bin"), &bytes).unwrap();
        assert_eq!(read(&folder, "big.bin").await.unwrap(), bytes);

        let outside = root.path().join("outside.txt");
        std::fs::write(&outside, b"not a download").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link.txt")).unwrap();
        std::fs::create_dir(dir.join("folder")).unwrap();
        std::fs::write(dir.join("half.bin.crdownload"), b"partial").unwrap();
        for name in ["link.txt", "folder", "half.bin.crdownload", "absent.txt"] {
            let refused = read(&folder, name).await;
            assert!(
                matches!(&refused, Err(BackendError::NotFound(_))),
                "{name}: {refused:?}"
            );
        }
        for name in ["../../../outside.txt", "/etc/passwd", ".."] {
            let refused = read(&folder, name).await;
            assert!(
                matches!(&refused, Err(BackendError::InvalidArgument(_))),
                "{name}: {refused:?}"
            );
        }
        // A tenant or workspace name is checked too: none leaves the profiles root.
        let refused = folder.read("..", "default", "big.bin").await.map(|_| ());
        assert!(matches!(refused, Err(BackendError::InvalidArgument(_))));
    }

    #[tokio::test]
    async fn the_listing_has_plain_files_with_their_origin_newest_first() {
        let (_root, folder, dir) = folder();
        assert!(folder.list("tenant-b", "default").await.unwrap().is_empty());
        std::fs::write(dir.join("old.txt"), b"12345").unwrap();
        std::fs::write(dir.join("new.csv"), b"a,b\n").unwrap();
        std::fs::write(dir.join("half.crdownload"), b"x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();
        std::fs::write(
            dir.join(INDEX_FILE),
            r#"{"new.csv": {"url": "http://127.0.0.1:1/new.csv", "page": "http://127.0.0.1:1/", "completed_ms": 4102444800000},
                "old.txt": {"completed_ms": 1}}"#,
        )
        .unwrap();
        let listed = folder.list("tenant-a", "default").await.unwrap();
        let names: Vec<_> = listed.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["new.csv", "old.txt"]);
        assert_eq!(listed[0].size, 4);
        assert_eq!(listed[0].page, "http://127.0.0.1:1/");
        assert_eq!(listed[0].url, "http://127.0.0.1:1/new.csv");
        assert_eq!((listed[1].size, listed[1].completed_ms), (5, 1));
    }
}
