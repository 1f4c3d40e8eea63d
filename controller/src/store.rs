//! The controller's durable state behind a small trait: threads, the last listing of each
//! thread, frames (the last dozen per thread; every one of a recording thread in
//! [`crate::replay::Recordings`]), holds, workspace → worker placements and the
//! profiles a drain parked here (their tars are files beside the store, not in it). The sled
//! implementation flushes before a write is acknowledged, so a killed controller loses nothing
//! it said was done. Every key starts with the tenant, so one tenant's lookups never reach
//! another's records.

use std::path::Path;

use nanomuse_proto::Frame;
use prost::Message;
use serde::{Deserialize, Serialize};

use crate::error::{ControllerError, Result};
use crate::holds::Hold;
use crate::listing::Listing;

/// How many frames a thread keeps; older ones are deleted.
pub const FRAMES_KEPT: usize = 12;

/// How a thread's page presents itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSetting {
    pub mobile: bool,
    /// Empty: the backend's default for mobile/desktop.
    pub user_agent: String,
    /// 0: the default size.
    pub width: u32,
    pub height: u32,
}

impl ProfileSetting {
    pub fn mobile() -> Self {
        Self {
            mobile: true,
            user_agent: String::new(),
            width: 0,
            height: 0,
        }
    }

    pub fn desktop() -> Self {
        Self {
            mobile: false,
            ..Self::mobile()
        }
    }

    /// The viewport in CSS px (a frame's size), with the profiles' defaults for zeros.
    pub fn size(&self) -> (u32, u32) {
        let (width, height) = if self.mobile { (412, 915) } else { (1280, 900) };
        (
            if self.width == 0 { width } else { self.width },
            if self.height == 0 {
                height
            } else {
                self.height
            },
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRecord {
    pub workspace: String,
    pub backend: crate::config::BackendChoice,
    pub profile: ProfileSetting,
}

/// A workspace's profile taken off a drained worker, kept as a tar in the controller's data
/// folder (`Scheduler`'s parked folder) until the workspace's next action moves it to a live
/// worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParkedProfile {
    /// The worker it came from.
    pub from: String,
    pub bytes: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// An MCP session over Streamable HTTP, kept so that its client goes on with it after the
/// controller restarts (see [`crate::mcp::sessions`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpSession {
    /// The tenant that opened it; a session whose tenant was not yet recorded is not restored.
    pub tenant: Option<String>,
    /// What the SDK keeps of the client's `initialize`, replayed to restore the session.
    pub state: Option<serde_json::Value>,
    /// Milliseconds since the Unix epoch.
    pub opened_at_ms: i64,
}

#[tonic::async_trait]
pub trait Store: Send + Sync + 'static {
    fn thread(&self, tenant: &str, thread: &str) -> Result<Option<ThreadRecord>>;
    fn put_thread(&self, tenant: &str, thread: &str, record: &ThreadRecord) -> Result<()>;
    /// The tenant's threads, by name.
    fn threads(&self, tenant: &str) -> Result<Vec<(String, ThreadRecord)>>;
    /// At most `limit` of the tenant's threads, by name, starting after `after` ("": from
    /// the first): a page of them.
    fn threads_after(
        &self,
        tenant: &str,
        after: &str,
        limit: usize,
    ) -> Result<Vec<(String, ThreadRecord)>>;
    fn listing(&self, tenant: &str, thread: &str) -> Result<Option<Listing>>;
    fn put_listing(&self, tenant: &str, thread: &str, listing: Option<&Listing>) -> Result<()>;
    /// A new, ever-increasing number (the order of a thread's frames), never handed out twice,
    /// across a crash too.
    fn next_id(&self) -> Result<u64>;
    /// Stores a frame (its `id` from [`new_id`]) after the thread's others and drops the
    /// thread's frames beyond the newest [`FRAMES_KEPT`]. Returns its place in the order of
    /// frames (a recording keeps it under the same).
    fn add_frame(&self, tenant: &str, frame: &Frame) -> Result<u64>;
    /// The thread's frames, oldest first.
    fn frames(&self, tenant: &str, thread: &str) -> Result<Vec<Frame>>;
    /// One of the thread's frames: of the last dozen, or recorded.
    fn frame(&self, tenant: &str, thread: &str, id: &str) -> Result<Option<Frame>>;
    fn latest_frame(&self, tenant: &str, thread: &str) -> Result<Option<Frame>>;
    fn put_hold(&self, tenant: &str, hold: &Hold) -> Result<()>;
    fn hold(&self, tenant: &str, id: &str) -> Result<Option<Hold>>;
    /// The holds still open, of every tenant (loaded at start).
    fn open_holds(&self) -> Result<Vec<(String, Hold)>>;
    /// The thread's holds, open and closed, oldest first.
    fn holds_of(&self, tenant: &str, thread: &str) -> Result<Vec<Hold>>;
    /// Every frame of the threads that record ([`crate::replay`]).
    fn recordings(&self) -> &crate::replay::Recordings;
    fn placement(&self, tenant: &str, workspace: &str) -> Result<Option<String>>;
    fn put_placement(&self, tenant: &str, workspace: &str, worker: &str) -> Result<()>;
    /// How many workspaces each worker holds.
    fn placement_counts(&self) -> Result<std::collections::HashMap<String, usize>>;
    fn remove_placement(&self, tenant: &str, workspace: &str) -> Result<()>;
    /// The (tenant, workspace) pairs placed on `worker`.
    fn placements_on(&self, worker: &str) -> Result<Vec<(String, String)>>;
    fn parked(&self, tenant: &str, workspace: &str) -> Result<Option<ParkedProfile>>;
    fn put_parked(&self, tenant: &str, workspace: &str, parked: &ParkedProfile) -> Result<()>;
    fn remove_parked(&self, tenant: &str, workspace: &str) -> Result<()>;
    fn mcp_session(&self, id: &str) -> Result<Option<McpSession>>;
    /// Changes the session `id`'s record (a default one if it has none) with `change`.
    fn update_mcp_session(&self, id: &str, change: &dyn Fn(&mut McpSession)) -> Result<()>;
    fn remove_mcp_session(&self, id: &str) -> Result<()>;
    /// Forgets the sessions opened before `ms` (since the Unix epoch); how many there were.
    fn forget_mcp_sessions_before(&self, ms: i64) -> Result<usize>;
    /// Makes every write so far durable.
    async fn flush(&self) -> Result<()>;
}

pub struct SledStore {
    db: sled::Db,
    commits: crate::group_commit::GroupCommit,
    threads: sled::Tree,
    listings: sled::Tree,
    frames: sled::Tree,
    holds: sled::Tree,
    placements: sled::Tree,
    parked: sled::Tree,
    mcp_sessions: sled::Tree,
    recordings: crate::replay::Recordings,
}

fn key(parts: &[&str]) -> Vec<u8> {
    parts.join("\0").into_bytes()
}

/// A frame's key: its thread's prefix, then its place in the thread's order (so a prefix scan
/// yields them oldest first), then its id (so a lookup by id reads keys only).
fn frame_key(tenant: &str, thread: &str, order: u64, id: &str) -> Vec<u8> {
    let mut key = key(&[tenant, thread, ""]);
    key.extend_from_slice(&order.to_be_bytes());
    key.extend_from_slice(id.as_bytes());
    key
}

/// A new hold or frame id: `prefix` and 128 random bits from the operating system. Nobody can
/// guess another's id (ids are not a counter shared by every tenant) and none is handed out
/// twice, across a crash too, with nothing to persist.
pub fn new_id(prefix: &str) -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ControllerError::Store(format!("no randomness for a new id: {e}")))?;
    let mut id = String::with_capacity(prefix.len() + 32);
    id.push_str(prefix);
    for byte in bytes {
        id.push_str(&format!("{byte:02x}"));
    }
    Ok(id)
}

fn decode_frame(bytes: &[u8]) -> Result<Frame> {
    Frame::decode(bytes).map_err(|e| ControllerError::Store(format!("corrupt frame: {e}")))
}

fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| ControllerError::Store(format!("corrupt record: {e}")))
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("records serialise")
}

/// How long opening the store waits for sled's file lock (see [`SledStore::open`]).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl SledStore {
    /// Opens the store at `path`. A store a controller has just closed (one restarted in the
    /// same process, or started right after the last one exited) can keep sled's file lock a
    /// moment after its last handle is gone, as sled's own threads let go of it; so a held lock
    /// is waited for, up to [`LOCK_WAIT`], before it is the error (another controller on the
    /// same folder).
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_waiting(path, LOCK_WAIT)
    }

    fn open_waiting(path: &Path, wait: std::time::Duration) -> Result<Self> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            match sled::Config::new().path(path).open() {
                // sled says so in words only (an `Other` I/O error).
                Err(sled::Error::Io(error))
                    if error.to_string().contains("could not acquire lock")
                        && std::time::Instant::now() < deadline =>
                {
                    // No event tells when the lock goes: looked at again shortly.
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                opened => return Self::from_db(opened?),
            }
        }
    }

    /// A store that lives in memory only (for tests).
    pub fn temporary() -> Result<Self> {
        Self::from_db(sled::Config::new().temporary(true).open()?)
    }

    fn from_db(db: sled::Db) -> Result<Self> {
        Ok(Self {
            threads: db.open_tree("threads")?,
            listings: db.open_tree("listings")?,
            frames: db.open_tree("frames")?,
            holds: db.open_tree("holds")?,
            placements: db.open_tree("placements")?,
            parked: db.open_tree("parked")?,
            mcp_sessions: db.open_tree("mcp_sessions")?,
            recordings: crate::replay::Recordings::open(&db)?,
            db,
            commits: Default::default(),
        })
    }
}

#[tonic::async_trait]
impl Store for SledStore {
    fn thread(&self, tenant: &str, thread: &str) -> Result<Option<ThreadRecord>> {
        self.threads
            .get(key(&[tenant, thread]))?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    fn put_thread(&self, tenant: &str, thread: &str, record: &ThreadRecord) -> Result<()> {
        self.threads
            .insert(key(&[tenant, thread]), encode(record))?;
        Ok(())
    }

    fn threads(&self, tenant: &str) -> Result<Vec<(String, ThreadRecord)>> {
        let prefix = key(&[tenant, ""]);
        self.threads
            .scan_prefix(&prefix)
            .map(|entry| {
                let (name, record) = entry?;
                Ok((
                    String::from_utf8_lossy(&name[prefix.len()..]).into_owned(),
                    decode(&record)?,
                ))
            })
            .collect()
    }

    fn threads_after(
        &self,
        tenant: &str,
        after: &str,
        limit: usize,
    ) -> Result<Vec<(String, ThreadRecord)>> {
        let prefix = key(&[tenant, ""]);
        let mut start = key(&[tenant, after]);
        if !after.is_empty() {
            // Just past `after` itself: the smallest key greater than it.
            start.push(0);
        }
        let mut end = key(&[tenant]);
        end.push(1);
        self.threads
            .range(start..end)
            .take(limit)
            .map(|entry| {
                let (name, record) = entry?;
                Ok((
                    String::from_utf8_lossy(&name[prefix.len()..]).into_owned(),
                    decode(&record)?,
                ))
            })
            .collect()
    }

    fn listing(&self, tenant: &str, thread: &str) -> Result<Option<Listing>> {
        self.listings
            .get(key(&[tenant, thread]))?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    fn put_listing(&self, tenant: &str, thread: &str, listing: Option<&Listing>) -> Result<()> {
        match listing {
            Some(listing) => self
                .listings
                .insert(key(&[tenant, thread]), encode(listing))?,
            None => self.listings.remove(key(&[tenant, thread]))?,
        };
        Ok(())
    }

    fn next_id(&self) -> Result<u64> {
        Ok(self.db.generate_id()?)
    }

    fn add_frame(&self, tenant: &str, frame: &Frame) -> Result<u64> {
        let order = self.next_id()?;
        self.frames.insert(
            frame_key(tenant, &frame.thread, order, &frame.id),
            frame.encode_to_vec(),
        )?;
        let prefix = key(&[tenant, &frame.thread, ""]);
        let keys: Vec<_> = self
            .frames
            .scan_prefix(&prefix)
            .keys()
            .collect::<Result<_, _>>()?;
        for old in keys.iter().rev().skip(FRAMES_KEPT) {
            self.frames.remove(old)?;
        }
        Ok(order)
    }

    fn frames(&self, tenant: &str, thread: &str) -> Result<Vec<Frame>> {
        self.frames
            .scan_prefix(key(&[tenant, thread, ""]))
            .values()
            .map(|bytes| decode_frame(&bytes?))
            .collect()
    }

    fn frame(&self, tenant: &str, thread: &str, id: &str) -> Result<Option<Frame>> {
        if id.is_empty() {
            return Ok(None);
        }
        // A thread keeps a dozen frames: its keys are read, not its pictures.
        let prefix = key(&[tenant, thread, ""]);
        for key in self.frames.scan_prefix(&prefix).keys() {
            let key = key?;
            let order_end = prefix.len() + 8;
            if key.len() > order_end && &key[order_end..] == id.as_bytes() {
                return self
                    .frames
                    .get(&key)?
                    .map(|bytes| decode_frame(&bytes))
                    .transpose();
            }
        }
        self.recordings.frame(tenant, thread, id)
    }

    fn latest_frame(&self, tenant: &str, thread: &str) -> Result<Option<Frame>> {
        self.frames
            .scan_prefix(key(&[tenant, thread, ""]))
            .values()
            .next_back()
            .map(|bytes| decode_frame(&bytes?))
            .transpose()
    }

    fn put_hold(&self, tenant: &str, hold: &Hold) -> Result<()> {
        self.holds.insert(key(&[tenant, &hold.id]), encode(hold))?;
        Ok(())
    }

    fn hold(&self, tenant: &str, id: &str) -> Result<Option<Hold>> {
        self.holds
            .get(key(&[tenant, id]))?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    fn open_holds(&self) -> Result<Vec<(String, Hold)>> {
        let mut open = Vec::new();
        for entry in self.holds.iter() {
            let (key, value) = entry?;
            let hold: Hold = decode(&value)?;
            if hold.is_open() {
                let tenant = key.split(|&b| b == 0).next().unwrap_or_default();
                open.push((String::from_utf8_lossy(tenant).into_owned(), hold));
            }
        }
        Ok(open)
    }

    fn holds_of(&self, tenant: &str, thread: &str) -> Result<Vec<Hold>> {
        let mut holds = Vec::new();
        for value in self.holds.scan_prefix(key(&[tenant, ""])).values() {
            let hold: Hold = decode(&value?)?;
            if hold.thread == thread {
                holds.push(hold);
            }
        }
        holds.sort_by_key(|hold| hold.since_ms);
        Ok(holds)
    }

    fn recordings(&self) -> &crate::replay::Recordings {
        &self.recordings
    }

    fn placement(&self, tenant: &str, workspace: &str) -> Result<Option<String>> {
        Ok(self
            .placements
            .get(key(&[tenant, workspace]))?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }

    fn put_placement(&self, tenant: &str, workspace: &str, worker: &str) -> Result<()> {
        self.placements
            .insert(key(&[tenant, workspace]), worker.as_bytes())?;
        Ok(())
    }

    fn placement_counts(&self) -> Result<std::collections::HashMap<String, usize>> {
        let mut counts = std::collections::HashMap::new();
        for value in self.placements.iter().values() {
            *counts
                .entry(String::from_utf8_lossy(&value?).into_owned())
                .or_default() += 1;
        }
        Ok(counts)
    }

    fn remove_placement(&self, tenant: &str, workspace: &str) -> Result<()> {
        self.placements.remove(key(&[tenant, workspace]))?;
        Ok(())
    }

    fn placements_on(&self, worker: &str) -> Result<Vec<(String, String)>> {
        let mut placed = Vec::new();
        for entry in self.placements.iter() {
            let (key, value) = entry?;
            if value.as_ref() != worker.as_bytes() {
                continue;
            }
            let key = String::from_utf8_lossy(&key).into_owned();
            if let Some((tenant, workspace)) = key.split_once('\0') {
                placed.push((tenant.to_string(), workspace.to_string()));
            }
        }
        Ok(placed)
    }

    fn parked(&self, tenant: &str, workspace: &str) -> Result<Option<ParkedProfile>> {
        self.parked
            .get(key(&[tenant, workspace]))?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    fn put_parked(&self, tenant: &str, workspace: &str, parked: &ParkedProfile) -> Result<()> {
        self.parked
            .insert(key(&[tenant, workspace]), encode(parked))?;
        Ok(())
    }

    fn remove_parked(&self, tenant: &str, workspace: &str) -> Result<()> {
        self.parked.remove(key(&[tenant, workspace]))?;
        Ok(())
    }

    fn mcp_session(&self, id: &str) -> Result<Option<McpSession>> {
        self.mcp_sessions
            .get(id)?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    fn update_mcp_session(&self, id: &str, change: &dyn Fn(&mut McpSession)) -> Result<()> {
        // Atomic: the SDK records the client's `initialize` and the HTTP layer the tenant.
        self.mcp_sessions.fetch_and_update(id, |old| {
            let mut session = old
                .and_then(|bytes| serde_json::from_slice(bytes).ok())
                .unwrap_or_default();
            change(&mut session);
            Some(encode(&session))
        })?;
        Ok(())
    }

    fn remove_mcp_session(&self, id: &str) -> Result<()> {
        self.mcp_sessions.remove(id)?;
        Ok(())
    }

    fn forget_mcp_sessions_before(&self, ms: i64) -> Result<usize> {
        let mut forgotten = 0;
        for entry in self.mcp_sessions.iter() {
            let (id, value) = entry?;
            let opened = decode::<McpSession>(&value).map_or(0, |s| s.opened_at_ms);
            if opened < ms {
                self.mcp_sessions.remove(id)?;
                forgotten += 1;
            }
        }
        Ok(forgotten)
    }

    async fn flush(&self) -> Result<()> {
        // sled's `flush_async` can wait forever when flushes overlap; its blocking flush,
        // off the runtime's threads, does not. Writers waiting meanwhile share the next one.
        let flush = || {
            let db = self.db.clone();
            async move {
                match tokio::task::spawn_blocking(move || db.flush()).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(error)) => Err(format!("flushing the store: {error}")),
                    Err(error) => Err(format!("flush task failed: {error}")),
                }
            }
        };
        self.commits
            .flush(flush)
            .await
            .map_err(ControllerError::Store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(thread: &str, caption: &str) -> Frame {
        Frame {
            id: new_id("f").unwrap(),
            thread: thread.into(),
            caption: caption.into(),
            jpeg: vec![0xFF, 0xD8],
            ..Default::default()
        }
    }

    #[test]
    fn a_thread_keeps_its_newest_twelve_frames() {
        let store = SledStore::temporary().unwrap();
        let mut ids = Vec::new();
        for i in 0..13 {
            let f = frame("t", &format!("frame {i}"));
            ids.push(f.id.clone());
            store.add_frame("acme", &f).unwrap();
        }
        let kept = store.frames("acme", "t").unwrap();
        assert_eq!(kept.len(), FRAMES_KEPT);
        assert_eq!(kept[0].caption, "frame 1", "the 13th pushes out the 1st");
        assert_eq!(kept[11].caption, "frame 12");
        assert!(store.frame("acme", "t", &ids[0]).unwrap().is_none());
        assert!(store.frame("acme", "t", &ids[12]).unwrap().is_some());
    }

    #[test]
    fn threads_come_a_page_at_a_time_and_only_the_tenants_own() {
        let store = SledStore::temporary().unwrap();
        let record = ThreadRecord {
            workspace: "w".into(),
            backend: crate::config::BackendChoice::Auto,
            profile: ProfileSetting::desktop(),
        };
        for name in ["t1", "t2", "t3", "t4"] {
            store.put_thread("a", name, &record).unwrap();
        }
        store.put_thread("a2", "t0", &record).unwrap();
        store.put_thread("b", "t0", &record).unwrap();
        let names = |page: Vec<(String, ThreadRecord)>| -> Vec<String> {
            page.into_iter().map(|(name, _)| name).collect()
        };
        assert_eq!(
            names(store.threads_after("a", "", 2).unwrap()),
            ["t1", "t2"]
        );
        assert_eq!(
            names(store.threads_after("a", "t2", 2).unwrap()),
            ["t3", "t4"]
        );
        assert!(store.threads_after("a", "t4", 2).unwrap().is_empty());
        assert_eq!(names(store.threads_after("b", "", 9).unwrap()), ["t0"]);
    }

    #[test]
    fn records_of_one_tenant_are_invisible_to_another() {
        let store = SledStore::temporary().unwrap();
        let record = ThreadRecord {
            workspace: "w".into(),
            backend: crate::config::BackendChoice::Auto,
            profile: ProfileSetting {
                mobile: false,
                user_agent: String::new(),
                width: 0,
                height: 0,
            },
        };
        store.put_thread("a", "t", &record).unwrap();
        let f = frame("t", "a's");
        store.add_frame("a", &f).unwrap();
        store.put_placement("a", "w", "worker-1").unwrap();
        assert_eq!(store.thread("a", "t").unwrap(), Some(record));
        assert_eq!(store.thread("b", "t").unwrap(), None);
        assert!(store.frames("b", "t").unwrap().is_empty());
        assert!(store.frame("b", "t", &f.id).unwrap().is_none());
        assert_eq!(store.placement("b", "w").unwrap(), None);
    }

    #[tokio::test]
    async fn what_was_flushed_is_there_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.put_placement("a", "w", "worker-2").unwrap();
            store.flush().await.unwrap();
        }
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(
            store.placement("a", "w").unwrap().as_deref(),
            Some("worker-2")
        );
        assert_eq!(store.placement_counts().unwrap().get("worker-2"), Some(&1));
    }

    #[test]
    fn a_store_still_locked_by_one_closing_opens_once_it_is_let_go_and_one_kept_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let closing = SledStore::open(dir.path()).unwrap();
        let let_go = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(closing);
        });
        let reopened = SledStore::open(dir.path()).expect("opened once the lock was let go");
        let_go.join().unwrap();
        let kept = SledStore::open_waiting(dir.path(), std::time::Duration::from_millis(100));
        let Err(error) = kept else {
            panic!("a store held open by another opened")
        };
        assert!(
            error.to_string().contains("could not acquire lock"),
            "{error}"
        );
        drop(reopened);
    }

    #[test]
    fn placements_are_listed_by_worker_and_parked_profiles_come_and_go() {
        let store = SledStore::temporary().unwrap();
        store.put_placement("a", "w1", "worker-1").unwrap();
        store.put_placement("a", "w2", "worker-2").unwrap();
        store.put_placement("b", "w1", "worker-1").unwrap();
        let mut on_one = store.placements_on("worker-1").unwrap();
        on_one.sort();
        assert_eq!(
            on_one,
            vec![("a".into(), "w1".into()), ("b".into(), "w1".into())]
        );
        let parked = ParkedProfile {
            from: "worker-1".into(),
            bytes: 10,
            at_ms: 1,
        };
        store.put_parked("a", "w1", &parked).unwrap();
        assert_eq!(store.parked("a", "w1").unwrap(), Some(parked));
        assert_eq!(store.parked("b", "w1").unwrap(), None);
        store.remove_parked("a", "w1").unwrap();
        assert_eq!(store.parked("a", "w1").unwrap(), None);
    }
}
