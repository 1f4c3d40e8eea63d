//! Watches one page's network and navigations, so `settle` knows when the page is quiet, a
//! relaunched browser knows where each page was, and the URL policy's refusals (made by the
//! browser's proxy, which serves every page of the browser) reach the page that asked.
//!
//! chromiumoxide gives every event type its own channel, so a `loadingFinished` may be seen
//! before its `requestWillBeSent`: an early finish is remembered until its start arrives.

use std::collections::HashSet;

/// How many hosts a page remembers having asked for between two reports of refusals.
const REQUESTED_KEPT: usize = 512;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventWebSocketCreated,
};
use chromiumoxide::cdp::browser_protocol::page::{EventFrameNavigated, EventLifecycleEvent};
use futures::StreamExt;
use tokio::sync::watch;

use crate::error::Result;

#[derive(Debug, Default)]
struct Requests {
    in_flight: HashSet<String>,
    finished_early: HashSet<String>,
}

/// What [`NetworkTracker`] knows of a page right now.
#[derive(Debug, Clone, Copy)]
pub struct NetworkSnapshot {
    pub in_flight: usize,
    pub last_activity: Instant,
}

#[derive(Debug)]
pub struct NetworkTracker {
    requests: Mutex<Requests>,
    last_activity: Mutex<Instant>,
    /// When the page's latest action began (an input), or its latest navigation loaded.
    action_mark: Mutex<Instant>,
    /// The main frame's URL after its last committed navigation.
    last_url: Arc<Mutex<Option<String>>>,
    /// The `host:port`s the page requested since its refusals were last taken.
    requested: Mutex<HashSet<String>>,
    /// Bumped on every event, so waiters wake without polling.
    changes: watch::Sender<u64>,
    main_frame: String,
}

impl NetworkTracker {
    /// Starts tracking `page`; the returned task ends when the page's events end.
    pub async fn start(
        page: &Page,
        main_frame: String,
        last_url: Arc<Mutex<Option<String>>>,
    ) -> Result<(Arc<Self>, tokio::task::JoinHandle<()>)> {
        let mut started = page.event_listener::<EventRequestWillBeSent>().await?;
        let mut finished = page.event_listener::<EventLoadingFinished>().await?;
        let mut failed = page.event_listener::<EventLoadingFailed>().await?;
        let mut navigated = page.event_listener::<EventFrameNavigated>().await?;
        let mut sockets = page.event_listener::<EventWebSocketCreated>().await?;
        let mut lifecycle = page.event_listener::<EventLifecycleEvent>().await?;
        let tracker = Arc::new(Self {
            requests: Mutex::default(),
            last_activity: Mutex::new(Instant::now()),
            action_mark: Mutex::new(Instant::now()),
            last_url,
            requested: Mutex::default(),
            changes: watch::channel(0).0,
            main_frame,
        });
        let this = tracker.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(event) = started.next() => {
                        this.on_requested(&event.request.url);
                        this.on_start(event.request_id.inner());
                    }
                    Some(event) = sockets.next() => this.on_requested(&event.url),
                    Some(event) = finished.next() => this.on_end(event.request_id.inner()),
                    Some(event) = failed.next() => this.on_end(event.request_id.inner()),
                    Some(event) = navigated.next() => {
                        if event.frame.parent_id.is_none() {
                            this.on_main_frame_navigated(&event.frame.url);
                        }
                    }
                    // Lifecycle events wake waiters but are no network activity: `networkIdle`
                    // itself arrives half a second after the last request.
                    Some(_) = lifecycle.next() => this.notify(),
                    else => break,
                }
            }
        });
        Ok((tracker, task))
    }

    /// Marks the start of an action on the page (or the load of a navigation): requests
    /// before it are not the action's.
    pub fn mark_action(&self) {
        *self.action_mark.lock().unwrap() = Instant::now();
    }

    /// Whether no request is in flight and none started or ended since the latest
    /// [`Self::mark_action`]: what the action did then needed no response, not even one that
    /// ended before a settle began (whose script may not have run yet).
    pub fn quiet_since_action(&self) -> bool {
        self.requests.lock().unwrap().in_flight.is_empty()
            && *self.last_activity.lock().unwrap() <= *self.action_mark.lock().unwrap()
    }

    fn notify(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn touch(&self) {
        *self.last_activity.lock().unwrap() = Instant::now();
        self.notify();
    }

    fn on_start(&self, id: &str) {
        {
            let mut requests = self.requests.lock().unwrap();
            if !requests.finished_early.remove(id) {
                requests.in_flight.insert(id.to_string());
            }
        }
        self.touch();
    }

    fn on_end(&self, id: &str) {
        {
            let mut requests = self.requests.lock().unwrap();
            if !requests.in_flight.remove(id) {
                requests.finished_early.insert(id.to_string());
            }
        }
        self.touch();
    }

    /// Every hop of a redirect is a request of its own here, with its URL.
    fn on_requested(&self, url: &str) {
        let Some(origin) = url::Url::parse(url)
            .ok()
            .as_ref()
            .and_then(crate::egress::origin_of_url)
        else {
            return;
        };
        let mut requested = self.requested.lock().unwrap();
        if requested.len() < REQUESTED_KEPT {
            requested.insert(origin);
        }
    }

    /// The hosts requested since the last call.
    pub fn take_requested(&self) -> HashSet<String> {
        std::mem::take(&mut *self.requested.lock().unwrap())
    }

    fn on_main_frame_navigated(&self, url: &str) {
        // A new document: requests of the old one that were cancelled never report an end.
        // The new document's own request has already finished by the time it commits.
        *self.requests.lock().unwrap() = Requests::default();
        *self.last_url.lock().unwrap() = Some(url.to_string());
        self.touch();
    }

    pub fn snapshot(&self) -> NetworkSnapshot {
        NetworkSnapshot {
            in_flight: self.requests.lock().unwrap().in_flight.len(),
            last_activity: *self.last_activity.lock().unwrap(),
        }
    }

    pub fn main_frame(&self) -> &str {
        &self.main_frame
    }

    /// A receiver that wakes on the next change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> NetworkTracker {
        NetworkTracker {
            requests: Mutex::default(),
            last_activity: Mutex::new(Instant::now()),
            action_mark: Mutex::new(Instant::now()),
            last_url: Arc::default(),
            requested: Mutex::default(),
            changes: watch::channel(0).0,
            main_frame: "main".into(),
        }
    }

    #[test]
    fn a_request_that_ended_after_the_action_began_means_the_page_was_not_quiet_since() {
        let tracker = tracker();
        tracker.on_start("1");
        tracker.mark_action();
        assert!(!tracker.quiet_since_action(), "in flight across the mark");
        std::thread::sleep(std::time::Duration::from_millis(2));
        tracker.on_end("1");
        assert!(
            !tracker.quiet_since_action(),
            "it ended after the mark, though nothing is in flight"
        );
        assert_eq!(tracker.snapshot().in_flight, 0);
        tracker.mark_action();
        assert!(
            tracker.quiet_since_action(),
            "nothing since the next action"
        );
    }
}
