//! Frames: pictures of a thread's page after the actions that changed it. Each is stored (the
//! last dozen per thread; every one while the thread records, [`crate::replay`]) and pushed to
//! whoever watches the thread. A frame promised in a reply but still being captured is
//! *pending*; asking for it waits for its capture.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use nanomuse_proto::{Frame, FrameRef, ScreenshotReply};
use tokio::sync::{broadcast, watch};

use crate::config::RecordingSection;
use crate::error::Result;
use crate::store::Store;

tokio::task_local! {
    /// The action whose frames are published in this task ([`acting`]): what a recording
    /// says made each frame, without every caller of [`FrameHub::publish`] passing it.
    static ACTION: &'static str;
}

/// Runs `work` with the frames it publishes recorded as made by `action`.
pub async fn acting<F: std::future::Future>(action: &'static str, work: F) -> F::Output {
    ACTION.scope(action, work).await
}

type Watchers = Mutex<HashMap<(String, String), broadcast::Sender<Frame>>>;

/// (tenant, thread, frame id) of a frame being captured.
type PendingKey = (String, String, String);

pub struct FrameHub {
    store: Arc<dyn Store>,
    watchers: Watchers,
    pending: Mutex<HashSet<PendingKey>>,
    /// Bumped whenever a pending frame is published or abandoned.
    settled: watch::Sender<u64>,
    /// Which threads record, and how long their recordings are kept.
    recording: RecordingSection,
}

/// How a reply names a frame.
pub fn reference(frame: &Frame) -> FrameRef {
    FrameRef {
        id: frame.id.clone(),
        caption: frame.caption.clone(),
        width: frame.width,
        height: frame.height,
    }
}

/// What a frame shows besides its picture.
pub struct FrameMeta<'a> {
    pub caption: String,
    pub url: &'a str,
    pub title: &'a str,
}

impl FrameHub {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            watchers: Mutex::default(),
            pending: Mutex::default(),
            settled: watch::channel(0).0,
            recording: RecordingSection::default(),
        }
    }

    /// The same, recording as `recording` says.
    pub fn with_recording(mut self, recording: RecordingSection) -> Self {
        self.recording = recording;
        self
    }

    pub fn recording(&self) -> &RecordingSection {
        &self.recording
    }

    /// An id for a frame of `thread` about to be made ([`crate::store::new_id`]); the frame is pending until it is
    /// published or abandoned.
    pub fn reserve_id(&self, tenant: &str, thread: &str) -> Result<String> {
        let id = crate::store::new_id("f")?;
        self.pending
            .lock()
            .unwrap()
            .insert((tenant.to_string(), thread.to_string(), id.clone()));
        Ok(id)
    }

    /// A reserved frame that will not be made (its capture failed).
    pub fn abandon(&self, tenant: &str, thread: &str, id: &str) {
        let key = (tenant.to_string(), thread.to_string(), id.to_string());
        if self.pending.lock().unwrap().remove(&key) {
            self.settled.send_modify(|n| *n += 1);
        }
    }

    /// Waits until frame `id` of `thread` (any of its frames when `id` is empty) is no longer
    /// being captured.
    pub async fn captured(&self, tenant: &str, thread: &str, id: &str) {
        let mut settled = self.settled.subscribe();
        loop {
            let busy = self
                .pending
                .lock()
                .unwrap()
                .iter()
                .any(|(t, th, p)| t == tenant && th == thread && (id.is_empty() || p == id));
            if !busy || settled.changed().await.is_err() {
                return;
            }
        }
    }

    /// Stores frame `id` of `thread`, durably, then pushes it to the thread's watchers.
    /// Returns the frame without its picture.
    pub async fn publish(
        &self,
        tenant: &str,
        thread: &str,
        id: String,
        shot: ScreenshotReply,
        meta: FrameMeta<'_>,
    ) -> Result<Frame> {
        let published = self
            .store_and_push(tenant, thread, id.clone(), shot, meta)
            .await;
        self.abandon(tenant, thread, &id);
        published
    }

    async fn store_and_push(
        &self,
        tenant: &str,
        thread: &str,
        id: String,
        shot: ScreenshotReply,
        meta: FrameMeta<'_>,
    ) -> Result<Frame> {
        let frame = Frame {
            id,
            thread: thread.to_string(),
            caption: meta.caption,
            url: meta.url.to_string(),
            title: meta.title.to_string(),
            width: shot.width,
            height: shot.height,
            jpeg: shot.jpeg,
            created_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64),
        };
        let order = self.store.add_frame(tenant, &frame)?;
        let action = ACTION.try_with(|action| *action).unwrap_or_default();
        let retention = self.recording.for_tenant(tenant);
        // Before the flush, which makes the recorded frame as durable as the card's.
        self.store.recordings().record(
            tenant,
            order,
            &frame,
            action,
            retention,
            frame.created_ms,
        )?;
        self.store.flush().await?;
        crate::metrics::metrics().frames_stored.inc();
        let stored = Frame {
            jpeg: Vec::new(),
            ..frame.clone()
        };
        let key = (tenant.to_string(), thread.to_string());
        let mut watchers = self.watchers.lock().unwrap();
        if let Some(sender) = watchers.get(&key)
            && sender.send(frame).is_err()
        {
            // Nobody watches any more.
            watchers.remove(&key);
        }
        Ok(stored)
    }

    /// Frames of `thread` from now on.
    pub fn watch(&self, tenant: &str, thread: &str) -> broadcast::Receiver<Frame> {
        self.watchers
            .lock()
            .unwrap()
            .entry((tenant.to_string(), thread.to_string()))
            .or_insert_with(|| broadcast::channel(32).0)
            .subscribe()
    }
}
