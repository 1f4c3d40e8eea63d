//! Frames: pictures of a thread's page after the actions that changed it. Each is stored (the
//! last dozen per thread) and pushed to whoever watches the thread.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use nanomuse_proto::{Frame, FrameRef, ScreenshotReply};
use tokio::sync::broadcast;

use crate::error::Result;
use crate::store::Store;

type Watchers = Mutex<HashMap<(String, String), broadcast::Sender<Frame>>>;

pub struct FrameHub {
    store: Arc<dyn Store>,
    watchers: Watchers,
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
        }
    }

    /// A number for a frame about to be made.
    pub fn reserve_id(&self) -> Result<String> {
        Ok(self.store.next_id()?.to_string())
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
        self.store.add_frame(tenant, &frame)?;
        self.store.flush().await?;
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
