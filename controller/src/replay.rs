//! Replay: a thread with recording on keeps every frame, not only the card's last dozen, each
//! with the action that made it, its caption, URL and time, so a person can step through the
//! whole session afterwards (`/replay/{thread}`, [`crate::http`]) or take it away as one HTML
//! file. Recording is switched per thread (`POST /api/browser/{thread}/recording`) and
//! otherwise follows `controller.recording.on` (per tenant too). Each tenant's recorded frames
//! are kept for `days` and up to `bytes` in all; the oldest go first, on every recorded frame
//! and in an hourly sweep, so a tenant that stopped recording is pruned as well.
//!
//! The recording lives in sled beside the card's frames, keyed by tenant first like every
//! record, so one tenant's lookups never reach another's:
//!
//! - `recorded`: tenant, thread, order → the frame's [`RecordedFrame`] (JSON, no picture);
//! - `recorded_jpegs`: the same key → its JPEG, read only when a picture is asked for;
//! - `recorded_ids`: tenant, thread, frame id → order (a lookup by id);
//! - `recorded_ages`: tenant, order → time, size and thread: the tenant's frames oldest first,
//!   which pruning walks without reading a picture;
//! - `recording`: tenant, thread → whether the thread was switched on or off.
//!
//! A frame's order is the one the card's frame got ([`crate::store::Store::add_frame`]), so the
//! recorded and the recent frames of a thread interleave as they were made.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nanomuse_proto::Frame;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{RecordingSection, Retention};
use crate::error::{ControllerError, Result};
use crate::holds::Hold;
use crate::store::Store;

const DAY_MS: i64 = 86_400_000;

/// How often every tenant's recordings are pruned besides on each recorded frame.
const SWEEP_EVERY: Duration = Duration::from_secs(3_600);

/// A recorded frame without its picture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedFrame {
    pub id: String,
    /// The action that made it: an agent's (`navigate`, `click`, …) or the user's during a
    /// hold (`user_tap`, `user_type`, …); empty when unknown.
    pub action: String,
    pub caption: String,
    pub url: String,
    pub title: String,
    pub width: u32,
    pub height: u32,
    /// Milliseconds since the Unix epoch.
    pub created_ms: i64,
}

/// One frame of a thread's timeline: recorded, or one of the card's last dozen that was not.
#[derive(Debug, Clone)]
pub struct TimelineFrame {
    pub frame: RecordedFrame,
    /// Where its picture is: recorded under this order, or (a recent frame) here.
    pub order: Option<u64>,
    pub jpeg: Option<Vec<u8>>,
}

/// A thread's replay: its frames oldest first and the holds among them.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub frames: Vec<TimelineFrame>,
    pub holds: Vec<Hold>,
}

pub struct Recordings {
    meta: sled::Tree,
    jpegs: sled::Tree,
    ids: sled::Tree,
    ages: sled::Tree,
    switches: sled::Tree,
    /// Each tenant's recorded bytes, counted from `ages` on first use; the lock also keeps a
    /// tenant's record-and-prune from interleaving with another's count.
    totals: Mutex<HashMap<String, u64>>,
}

fn key(parts: &[&str]) -> Vec<u8> {
    parts.join("\0").into_bytes()
}

fn ordered(tenant: &str, thread: &str, order: u64) -> Vec<u8> {
    let mut key = key(&[tenant, thread, ""]);
    key.extend_from_slice(&order.to_be_bytes());
    key
}

fn age_key(tenant: &str, order: u64) -> Vec<u8> {
    let mut key = key(&[tenant, ""]);
    key.extend_from_slice(&order.to_be_bytes());
    key
}

/// An age entry: (created_ms, bytes, thread).
fn age_value(created_ms: i64, bytes: u64, thread: &str) -> Vec<u8> {
    let mut value = Vec::with_capacity(16 + thread.len());
    value.extend_from_slice(&created_ms.to_be_bytes());
    value.extend_from_slice(&bytes.to_be_bytes());
    value.extend_from_slice(thread.as_bytes());
    value
}

fn parse_age(value: &[u8]) -> Result<(i64, u64, String)> {
    if value.len() < 16 {
        return Err(ControllerError::Store("corrupt recording age entry".into()));
    }
    let created = i64::from_be_bytes(value[..8].try_into().unwrap());
    let bytes = u64::from_be_bytes(value[8..16].try_into().unwrap());
    Ok((
        created,
        bytes,
        String::from_utf8_lossy(&value[16..]).into_owned(),
    ))
}

fn order_at_end(key: &[u8]) -> Result<u64> {
    key.len()
        .checked_sub(8)
        .map(|at| u64::from_be_bytes(key[at..].try_into().unwrap()))
        .ok_or_else(|| ControllerError::Store("corrupt recording key".into()))
}

fn decode(bytes: &[u8]) -> Result<RecordedFrame> {
    serde_json::from_slice(bytes)
        .map_err(|e| ControllerError::Store(format!("corrupt recorded frame: {e}")))
}

/// `url` without a user name or password in it: a URL the user opened may carry them, and a
/// recording is read long after.
fn without_credentials(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Recordings {
    pub fn open(db: &sled::Db) -> Result<Self> {
        Ok(Self {
            meta: db.open_tree("recorded")?,
            jpegs: db.open_tree("recorded_jpegs")?,
            ids: db.open_tree("recorded_ids")?,
            ages: db.open_tree("recorded_ages")?,
            switches: db.open_tree("recording")?,
            totals: Mutex::default(),
        })
    }

    /// How the thread was switched, if it was.
    pub fn switch(&self, tenant: &str, thread: &str) -> Result<Option<bool>> {
        Ok(self
            .switches
            .get(key(&[tenant, thread]))?
            .map(|value| value.as_ref() == b"1"))
    }

    pub fn set_switch(&self, tenant: &str, thread: &str, on: bool) -> Result<()> {
        self.switches
            .insert(key(&[tenant, thread]), if on { b"1" } else { b"0" })?;
        Ok(())
    }

    /// Whether the thread records: as it was switched, else as the tenant's configuration says.
    pub fn is_on(&self, tenant: &str, thread: &str, retention: Retention) -> Result<bool> {
        Ok(self.switch(tenant, thread)?.unwrap_or(retention.on))
    }

    /// Records `frame` (`order` as the store gave it, made by `action`) when its thread
    /// records, then prunes the tenant's recordings to `retention` as of `now_ms`. Whether it
    /// was recorded.
    pub fn record(
        &self,
        tenant: &str,
        order: u64,
        frame: &Frame,
        action: &str,
        retention: Retention,
        now_ms: i64,
    ) -> Result<bool> {
        if !self.is_on(tenant, &frame.thread, retention)? {
            return Ok(false);
        }
        let meta = serde_json::to_vec(&RecordedFrame {
            id: frame.id.clone(),
            action: action.to_string(),
            caption: frame.caption.clone(),
            url: without_credentials(&frame.url),
            title: frame.title.clone(),
            width: frame.width,
            height: frame.height,
            created_ms: frame.created_ms,
        })
        .expect("a recorded frame serialises");
        let bytes = (meta.len() + frame.jpeg.len()) as u64;
        let mut totals = self.totals.lock().unwrap();
        let total = self.total(&mut totals, tenant)?;
        // The age entry first: whatever a crash leaves half written is counted and pruned.
        self.ages.insert(
            age_key(tenant, order),
            age_value(frame.created_ms, bytes, &frame.thread),
        )?;
        let at = ordered(tenant, &frame.thread, order);
        self.jpegs.insert(&at, frame.jpeg.as_slice())?;
        self.ids.insert(
            key(&[tenant, &frame.thread, &frame.id]),
            &order.to_be_bytes(),
        )?;
        // Last: a frame listed is a frame whole.
        self.meta.insert(&at, meta)?;
        totals.insert(tenant.to_string(), total + bytes);
        self.prune_locked(&mut totals, tenant, retention, now_ms)?;
        Ok(true)
    }

    /// The tenant's recorded bytes (under the totals' lock).
    fn total(&self, totals: &mut HashMap<String, u64>, tenant: &str) -> Result<u64> {
        if let Some(total) = totals.get(tenant) {
            return Ok(*total);
        }
        let mut total = 0;
        for value in self.ages.scan_prefix(key(&[tenant, ""])).values() {
            total += parse_age(&value?)?.1;
        }
        totals.insert(tenant.to_string(), total);
        Ok(total)
    }

    /// How many bytes of recorded frames the tenant keeps.
    pub fn bytes(&self, tenant: &str) -> Result<u64> {
        self.total(&mut self.totals.lock().unwrap(), tenant)
    }

    /// Drops the tenant's oldest recorded frames while any is older than `retention.days` or
    /// the tenant keeps more than `retention.bytes`. How many went.
    pub fn prune(&self, tenant: &str, retention: Retention, now_ms: i64) -> Result<usize> {
        self.prune_locked(&mut self.totals.lock().unwrap(), tenant, retention, now_ms)
    }

    fn prune_locked(
        &self,
        totals: &mut HashMap<String, u64>,
        tenant: &str,
        retention: Retention,
        now_ms: i64,
    ) -> Result<usize> {
        let days = i64::try_from(retention.days).unwrap_or(i64::MAX / DAY_MS);
        let cutoff = now_ms.saturating_sub(days.saturating_mul(DAY_MS));
        let mut total = self.total(totals, tenant)?;
        let mut doomed = Vec::new();
        // Oldest first: the age index is in the order frames were made.
        for entry in self.ages.scan_prefix(key(&[tenant, ""])) {
            let (key, value) = entry?;
            let (created, bytes, thread) = parse_age(&value)?;
            if created >= cutoff && total <= retention.bytes {
                break;
            }
            total = total.saturating_sub(bytes);
            doomed.push((order_at_end(&key)?, thread));
        }
        for (order, thread) in &doomed {
            self.remove(tenant, thread, *order)?;
        }
        totals.insert(tenant.to_string(), total);
        if !doomed.is_empty() {
            tracing::info!(
                tenant,
                pruned = doomed.len(),
                bytes = total,
                "recordings pruned"
            );
        }
        Ok(doomed.len())
    }

    fn remove(&self, tenant: &str, thread: &str, order: u64) -> Result<()> {
        let at = ordered(tenant, thread, order);
        // The listing first, the age entry last, the reverse of `record`.
        if let Some(meta) = self.meta.remove(&at)? {
            let frame = decode(&meta)?;
            self.ids.remove(key(&[tenant, thread, &frame.id]))?;
        }
        self.jpegs.remove(&at)?;
        self.ages.remove(age_key(tenant, order))?;
        Ok(())
    }

    /// Prunes every tenant that has recordings, each to its own retention.
    pub fn prune_all(&self, recording: &RecordingSection, now_ms: i64) -> Result<usize> {
        let mut pruned = 0;
        for tenant in self.tenants()? {
            pruned += self.prune(&tenant, recording.for_tenant(&tenant), now_ms)?;
        }
        Ok(pruned)
    }

    /// The tenants with recorded frames: one seek per tenant, not a scan of every frame.
    fn tenants(&self) -> Result<Vec<String>> {
        let mut tenants = Vec::new();
        let mut from = Vec::new();
        while let Some(entry) = self.ages.range(from.clone()..).next() {
            let (key, _) = entry?;
            let end = key.iter().position(|&b| b == 0).unwrap_or(key.len());
            let tenant = String::from_utf8_lossy(&key[..end]).into_owned();
            // Just past every key of this tenant ("tenant\0…").
            from = key[..end].to_vec();
            from.push(1);
            tenants.push(tenant);
        }
        Ok(tenants)
    }

    /// The thread's recorded frames, oldest first, with their orders.
    pub fn frames(&self, tenant: &str, thread: &str) -> Result<Vec<(u64, RecordedFrame)>> {
        self.meta
            .scan_prefix(key(&[tenant, thread, ""]))
            .map(|entry| {
                let (key, value) = entry?;
                Ok((order_at_end(&key)?, decode(&value)?))
            })
            .collect()
    }

    /// The picture of the thread's frame recorded under `order`.
    pub fn jpeg(&self, tenant: &str, thread: &str, order: u64) -> Result<Option<Vec<u8>>> {
        Ok(self
            .jpegs
            .get(ordered(tenant, thread, order))?
            .map(|bytes| bytes.to_vec()))
    }

    /// Recorded frame `id` of the thread, picture and all.
    pub fn frame(&self, tenant: &str, thread: &str, id: &str) -> Result<Option<Frame>> {
        let Some(order) = self.ids.get(key(&[tenant, thread, id]))? else {
            return Ok(None);
        };
        let order = order_at_end(&order)?;
        let at = ordered(tenant, thread, order);
        let (Some(meta), Some(jpeg)) = (self.meta.get(&at)?, self.jpegs.get(&at)?) else {
            return Ok(None);
        };
        let meta = decode(&meta)?;
        Ok(Some(Frame {
            id: meta.id,
            thread: thread.to_string(),
            caption: meta.caption,
            url: meta.url,
            title: meta.title,
            width: meta.width,
            height: meta.height,
            jpeg: jpeg.to_vec(),
            created_ms: meta.created_ms,
        }))
    }
}

/// The thread's replay: its recorded frames and the card's recent ones that were not recorded,
/// oldest first, and the holds from its first frame on (all of them when it has none).
pub fn timeline(store: &dyn Store, tenant: &str, thread: &str) -> Result<Timeline> {
    let recorded = store.recordings().frames(tenant, thread)?;
    let ids: HashSet<String> = recorded.iter().map(|(_, f)| f.id.clone()).collect();
    let mut frames: Vec<TimelineFrame> = recorded
        .into_iter()
        .map(|(order, frame)| TimelineFrame {
            frame,
            order: Some(order),
            jpeg: None,
        })
        .collect();
    for recent in store.frames(tenant, thread)? {
        if ids.contains(&recent.id) {
            continue;
        }
        frames.push(TimelineFrame {
            frame: RecordedFrame {
                id: recent.id,
                action: String::new(),
                caption: recent.caption,
                url: without_credentials(&recent.url),
                title: recent.title,
                width: recent.width,
                height: recent.height,
                created_ms: recent.created_ms,
            },
            order: None,
            jpeg: Some(recent.jpeg),
        });
    }
    // A thread's frames are made one after another: their times order them (stable for
    // equal times, recorded ones being in order already).
    frames.sort_by_key(|f| f.frame.created_ms);
    let since = frames.first().map_or(i64::MIN, |f| f.frame.created_ms);
    let holds = store
        .holds_of(tenant, thread)?
        .into_iter()
        .filter(|hold| hold.closed_ms.is_none_or(|closed| closed >= since))
        .collect();
    Ok(Timeline { frames, holds })
}

/// Prunes every tenant's recordings now and then every hour, until `shutdown`; the task is
/// `background`'s, so its sweep is awaited before the store closes.
pub fn spawn_pruning(
    store: Arc<dyn Store>,
    recording: RecordingSection,
    shutdown: CancellationToken,
    background: &TaskTracker,
) {
    background.spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = shutdown.cancelled() => return,
            }
            let store = store.clone();
            let recording = recording.clone();
            let swept = tokio::task::spawn_blocking(move || {
                store.recordings().prune_all(&recording, now_ms())
            })
            .await;
            match swept {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::warn!(%error, "pruning recordings failed"),
                Err(error) => tracing::warn!(%error, "pruning recordings stopped"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    const KB: usize = 1_000;

    fn frame(thread: &str, caption: &str, created_ms: i64, size: usize) -> Frame {
        Frame {
            id: crate::store::new_id("f").unwrap(),
            thread: thread.into(),
            caption: caption.into(),
            url: "https://shop.example/".into(),
            jpeg: vec![0xFF; size],
            created_ms,
            ..Default::default()
        }
    }

    fn retention(on: bool, days: u64, bytes: u64) -> Retention {
        Retention { on, days, bytes }
    }

    /// Stores and records `frame` as the frame hub does.
    fn add(store: &SledStore, tenant: &str, frame: &Frame, retention: Retention, now: i64) {
        let order = store.add_frame(tenant, frame).unwrap();
        store
            .recordings()
            .record(tenant, order, frame, "scroll", retention, now)
            .unwrap();
    }

    fn captions(store: &SledStore, tenant: &str, thread: &str) -> Vec<String> {
        timeline(store, tenant, thread)
            .unwrap()
            .frames
            .into_iter()
            .map(|f| f.frame.caption)
            .collect()
    }

    #[test]
    fn with_recording_on_every_frame_is_kept_with_its_action_and_found_by_id() {
        let store = SledStore::temporary().unwrap();
        let on = retention(true, 30, 1 << 30);
        let mut ids = Vec::new();
        for i in 0..20 {
            let f = frame("t", &format!("frame {i}"), 1_000 + i, KB);
            ids.push(f.id.clone());
            add(&store, "a", &f, on, 2_000);
        }
        let expected: Vec<String> = (0..20).map(|i| format!("frame {i}")).collect();
        assert_eq!(captions(&store, "a", "t"), expected);
        let line = timeline(&store, "a", "t").unwrap();
        assert!(line.frames.iter().all(|f| f.frame.action == "scroll"));
        // The card's frame lookup finds a recorded frame past the last dozen, picture and all.
        let first = store.frame("a", "t", &ids[0]).unwrap().unwrap();
        assert_eq!((first.caption.as_str(), first.jpeg.len()), ("frame 0", KB));
        assert_eq!(
            store.frames("a", "t").unwrap().len(),
            crate::store::FRAMES_KEPT
        );
    }

    #[test]
    fn with_recording_off_a_thread_keeps_only_its_last_twelve() {
        let store = SledStore::temporary().unwrap();
        let off = retention(false, 30, 1 << 30);
        let mut ids = Vec::new();
        for i in 0..20 {
            let f = frame("t", &format!("frame {i}"), 1_000 + i, KB);
            ids.push(f.id.clone());
            add(&store, "a", &f, off, 2_000);
        }
        let expected: Vec<String> = (8..20).map(|i| format!("frame {i}")).collect();
        assert_eq!(captions(&store, "a", "t"), expected);
        assert!(store.frame("a", "t", &ids[0]).unwrap().is_none());
        assert_eq!(store.recordings().bytes("a").unwrap(), 0);

        // Switched on for this thread only, it records; the deployment's default stays off.
        store.recordings().set_switch("a", "t", true).unwrap();
        for i in 20..35 {
            add(
                &store,
                "a",
                &frame("t", &format!("frame {i}"), 1_000 + i, KB),
                off,
                2_000,
            );
            add(&store, "a", &frame("u", "other", 1_000 + i, KB), off, 2_000);
        }
        assert_eq!(captions(&store, "a", "t").len(), 15);
        assert_eq!(captions(&store, "a", "u").len(), crate::store::FRAMES_KEPT);
    }

    #[test]
    fn retention_by_age_prunes_the_oldest_frames_on_write_and_in_the_sweep() {
        let store = SledStore::temporary().unwrap();
        let two_days = retention(true, 2, 1 << 30);
        let month = retention(true, 30, 1 << 30);
        // Frames made 5, 4, 3, 1 and 0 days before "now", each written then.
        let now = 10 * DAY_MS;
        for (i, age) in [5, 4, 3, 1, 0].into_iter().enumerate() {
            let made = now - age * DAY_MS;
            add(
                &store,
                "a",
                &frame("t", &format!("frame {i}"), made, KB),
                month,
                made,
            );
        }
        assert_eq!(captions(&store, "a", "t").len(), 5);
        // A write now prunes the frames older than two days, the oldest first.
        add(&store, "a", &frame("t", "frame 5", now, KB), two_days, now);
        let recorded: Vec<String> = store
            .recordings()
            .frames("a", "t")
            .unwrap()
            .into_iter()
            .map(|(_, f)| f.caption)
            .collect();
        assert_eq!(recorded, ["frame 3", "frame 4", "frame 5"]);

        // Another tenant that stopped writing is pruned by the sweep, to its own days.
        let mut config = RecordingSection::default();
        config.tenants.insert(
            "b".into(),
            crate::config::TenantRecording {
                on: Some(true),
                days: Some(1),
                bytes: None,
            },
        );
        let b = config.for_tenant("b");
        add(
            &store,
            "b",
            &frame("t", "old", now - 3 * DAY_MS, KB),
            b,
            now - 3 * DAY_MS,
        );
        add(
            &store,
            "b",
            &frame("t", "new", now, KB),
            b,
            now - 3 * DAY_MS,
        );
        assert_eq!(store.recordings().prune_all(&config, now).unwrap(), 1);
        let left: Vec<String> = store
            .recordings()
            .frames("b", "t")
            .unwrap()
            .into_iter()
            .map(|(_, f)| f.caption)
            .collect();
        assert_eq!(left, ["new"]);
        assert_eq!(
            store.recordings().frames("a", "t").unwrap().len(),
            3,
            "a's default 30 days keep its frames"
        );
    }

    #[test]
    fn retention_by_bytes_prunes_the_oldest_frames_of_the_tenant_across_its_threads() {
        let store = SledStore::temporary().unwrap();
        // Room for about four frames of 10 kB (a frame's size counts its listing too).
        let small = retention(true, 30, 45 * KB as u64);
        for i in 0..6 {
            let thread = if i % 2 == 0 { "t" } else { "u" };
            add(
                &store,
                "a",
                &frame(thread, &format!("frame {i}"), 1_000 + i, 10 * KB),
                small,
                2_000,
            );
            add(
                &store,
                "b",
                &frame("t", &format!("b {i}"), 1_000 + i, 10 * KB),
                small,
                2_000,
            );
        }
        let bytes = store.recordings().bytes("a").unwrap();
        assert!(bytes <= 45 * KB as u64 && bytes > 30 * KB as u64, "{bytes}");
        let mut kept: Vec<(i64, String)> = ["t", "u"]
            .into_iter()
            .flat_map(|thread| store.recordings().frames("a", thread).unwrap())
            .map(|(_, f)| (f.created_ms, f.caption))
            .collect();
        kept.sort();
        let kept: Vec<String> = kept.into_iter().map(|(_, c)| c).collect();
        assert_eq!(kept, ["frame 2", "frame 3", "frame 4", "frame 5"]);
        // Each tenant's budget is its own: b kept as many.
        assert_eq!(store.recordings().frames("b", "t").unwrap().len(), 4);
        // A fresh count (as after a restart) is read again from what is stored.
        let db = sled::Config::new().temporary(true).open().unwrap();
        let first = Recordings::open(&db).unwrap();
        for i in 0..3 {
            let f = frame("t", "x", 1_000 + i, 10 * KB);
            first
                .record("a", i as u64, &f, "scroll", small, 2_000)
                .unwrap();
        }
        let counted = first.bytes("a").unwrap();
        assert!(counted > 30 * KB as u64, "{counted}");
        assert_eq!(Recordings::open(&db).unwrap().bytes("a").unwrap(), counted);
    }

    #[test]
    fn a_tenants_recording_is_invisible_to_another() {
        let store = SledStore::temporary().unwrap();
        let on = retention(true, 30, 1 << 30);
        let mut ids = Vec::new();
        for i in 0..14 {
            let f = frame("t", &format!("a's {i}"), 1_000 + i, KB);
            ids.push(f.id.clone());
            add(&store, "a", &f, on, 2_000);
        }
        store.recordings().set_switch("a", "t", true).unwrap();
        let line = timeline(&store, "b", "t").unwrap();
        assert!(line.frames.is_empty() && line.holds.is_empty());
        assert!(store.recordings().frames("b", "t").unwrap().is_empty());
        assert!(store.frame("b", "t", &ids[0]).unwrap().is_none());
        assert!(
            store
                .recordings()
                .frame("b", "t", &ids[0])
                .unwrap()
                .is_none()
        );
        assert_eq!(store.recordings().switch("b", "t").unwrap(), None);
        assert_eq!(store.recordings().bytes("b").unwrap(), 0);
        // Nor does b's pruning touch a's frames.
        store
            .recordings()
            .prune("b", retention(true, 1, 1), 100 * DAY_MS)
            .unwrap();
        assert_eq!(store.recordings().frames("a", "t").unwrap().len(), 14);
    }

    #[test]
    fn a_recorded_url_keeps_no_credentials() {
        assert_eq!(
            without_credentials("https://me:hunter2@shop.example/a?b=1"),
            "https://shop.example/a?b=1"
        );
        assert_eq!(without_credentials("about:blank"), "about:blank");
    }
}
