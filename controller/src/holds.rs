//! Holds: while the user has a thread's page (the agent's `hand_over`, or the user's take-over),
//! the thread's agent actions wait. Done releases them; after the hold timeout the waiting
//! action goes on and its reply says the user did not come back. Holds are durable (a hold open
//! before a restart is open after it) and every change is broadcast, so waiting actions and the
//! card's event streams are woken by events, never by polling the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::error::{ControllerError, Result};
use crate::store::Store;

/// The longest reason a hold keeps; the card shows it in one or two lines.
pub const REASON_MAX: usize = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenedBy {
    /// The agent's `hand_over`.
    Agent,
    /// The user's take-over from the card or the API.
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldState {
    Open,
    /// The user pressed Done (or handed the page back).
    Done,
    /// An agent action waited the whole hold timeout and went on.
    Expired,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    pub id: String,
    pub thread: String,
    pub reason: String,
    pub opened_by: OpenedBy,
    pub since_ms: i64,
    pub state: HoldState,
    /// When it stopped being open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_ms: Option<i64>,
}

impl Hold {
    pub fn is_open(&self) -> bool {
        self.state == HoldState::Open
    }
}

/// A change of a hold, as the card's event stream and the waiting actions see it.
#[derive(Debug, Clone)]
pub struct HoldChange {
    pub tenant: String,
    pub hold: Hold,
}

/// How a wait for the user ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    HandedBack(Hold),
    TimedOut(Hold),
}

impl Waited {
    /// The first line of the reply of the action that waited.
    pub fn told(&self, timeout: Duration) -> String {
        match self {
            Waited::HandedBack(hold) => format!(
                "The user handed the page back (they had it to: {}); this is the page as they \
                 left it.",
                hold.reason
            ),
            Waited::TimedOut(hold) => format!(
                "The user did not come back within {} (they had the page to: {}); going on with \
                 the page as it is.",
                human(timeout),
                hold.reason
            ),
        }
    }
}

fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0 => format!("{} ms", duration.as_millis()),
        1..120 => format!("{seconds} seconds"),
        _ => format!("{} minutes", seconds / 60),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

type ThreadKey = (String, String);

pub struct Holds {
    store: Arc<dyn Store>,
    /// The open hold of each thread; a thread has at most one.
    open: Mutex<HashMap<ThreadKey, Hold>>,
    changes: broadcast::Sender<HoldChange>,
    timeout: Duration,
    /// How many holds one tenant may have open (`controller.quotas.open_holds`).
    max_open: usize,
    /// How each thread's last hold ended, until a reply of the thread tells the agent: the
    /// action that waited for it may fail (its listing went stale while the user had the
    /// page), and Done may come before the agent's next action.
    untold: Mutex<HashMap<ThreadKey, Waited>>,
}

impl Holds {
    /// Loads the holds left open by the last run.
    pub fn load(store: Arc<dyn Store>, timeout: Duration) -> Result<Self> {
        let open = store
            .open_holds()?
            .into_iter()
            .map(|(tenant, hold)| ((tenant, hold.thread.clone()), hold))
            .collect();
        Ok(Self {
            store,
            open: Mutex::new(open),
            changes: broadcast::channel(256).0,
            timeout,
            max_open: usize::MAX,
            untold: Mutex::default(),
        })
    }

    /// The same, with at most `max_open` holds open per tenant.
    pub fn with_quota(mut self, max_open: usize) -> Self {
        self.max_open = max_open;
        self
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Changes of every hold from now on.
    pub fn changes(&self) -> broadcast::Receiver<HoldChange> {
        self.changes.subscribe()
    }

    /// The tenant's open holds, oldest first.
    pub fn open_holds(&self, tenant: &str) -> Vec<Hold> {
        let mut holds: Vec<Hold> = self
            .open
            .lock()
            .unwrap()
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .map(|(_, hold)| hold.clone())
            .collect();
        holds.sort_by_key(|hold| hold.since_ms);
        holds
    }

    /// Open holds of every tenant.
    pub fn open_count(&self) -> usize {
        self.open.lock().unwrap().len()
    }

    pub fn open_hold(&self, tenant: &str, thread: &str) -> Option<Hold> {
        self.open
            .lock()
            .unwrap()
            .get(&(tenant.to_string(), thread.to_string()))
            .cloned()
    }

    /// Opens a hold on `thread`, durably; when one is open already, that one is the answer
    /// (`false`: nothing new was opened).
    pub async fn open(
        &self,
        tenant: &str,
        thread: &str,
        reason: &str,
        opened_by: OpenedBy,
    ) -> Result<(Hold, bool)> {
        let reason = reason.trim();
        check_reason(reason)?;
        let hold = {
            let mut open = self.open.lock().unwrap();
            let key = (tenant.to_string(), thread.to_string());
            if let Some(hold) = open.get(&key) {
                return Ok((hold.clone(), false));
            }
            let tenants_open = open.keys().filter(|(t, _)| t == tenant).count();
            if tenants_open >= self.max_open {
                return Err(ControllerError::ResourceExhausted(format!(
                    "{tenants_open} holds are open already, the most one tenant may have \
                     (controller.quotas.open_holds): press Done on one first"
                )));
            }
            let hold = Hold {
                id: crate::store::new_id("h")?,
                thread: thread.to_string(),
                reason: reason.to_string(),
                opened_by,
                since_ms: now_ms(),
                state: HoldState::Open,
                closed_ms: None,
            };
            self.store.put_hold(tenant, &hold)?;
            open.insert(key, hold.clone());
            hold
        };
        self.store.flush().await?;
        tracing::info!(thread, hold = %hold.id, by = ?opened_by, "hold opened");
        self.announce(tenant, &hold);
        Ok((hold, true))
    }

    /// Done: closes hold `id` and releases the actions waiting for it.
    pub async fn done(&self, tenant: &str, id: &str) -> Result<Hold> {
        self.close(tenant, |hold| hold.id == id, HoldState::Done)
            .await?
            .map_or_else(|| Err(self.not_open(tenant, id)), Ok)
    }

    /// The user hands `thread`'s page back: Done on its open hold.
    pub async fn hand_back(&self, tenant: &str, thread: &str) -> Result<Hold> {
        self.close(tenant, |hold| hold.thread == thread, HoldState::Done)
            .await?
            .ok_or_else(|| {
                ControllerError::Conflict(format!(
                    "thread {thread:?} has no open hold: there is nothing to hand back"
                ))
            })
    }

    /// Why hold `id`, which is not open, cannot be closed.
    fn not_open(&self, tenant: &str, id: &str) -> ControllerError {
        match self.store.hold(tenant, id) {
            Ok(Some(hold)) => ControllerError::Conflict(format!(
                "hold {id} is closed already ({}); nothing changed",
                match hold.state {
                    HoldState::Expired => "it expired while the agent waited",
                    _ => "Done was pressed",
                }
            )),
            Ok(None) => ControllerError::NotFound(format!("there is no hold {id}")),
            Err(error) => error,
        }
    }

    async fn close(
        &self,
        tenant: &str,
        which: impl Fn(&Hold) -> bool,
        state: HoldState,
    ) -> Result<Option<Hold>> {
        let hold = {
            let mut open = self.open.lock().unwrap();
            let Some(key) = open
                .iter()
                .find(|((t, _), hold)| t == tenant && which(hold))
                .map(|(key, _)| key.clone())
            else {
                return Ok(None);
            };
            let mut hold = open[&key].clone();
            hold.state = state;
            hold.closed_ms = Some(now_ms());
            self.store.put_hold(tenant, &hold)?;
            open.remove(&key);
            let ended = match state {
                HoldState::Expired => Waited::TimedOut(hold.clone()),
                _ => Waited::HandedBack(hold.clone()),
            };
            self.untold.lock().unwrap().insert(key, ended);
            hold
        };
        self.store.flush().await?;
        tracing::info!(thread = %hold.thread, hold = %hold.id, state = ?state, "hold closed");
        self.announce(tenant, &hold);
        Ok(Some(hold))
    }

    fn announce(&self, tenant: &str, hold: &Hold) {
        // Nobody listening is fine: no action waits and no card is open.
        let _ = self.changes.send(HoldChange {
            tenant: tenant.to_string(),
            hold: hold.clone(),
        });
    }

    /// How the thread's last hold ended, once: for the first reply of the thread that succeeds
    /// after it ([`Waited::told`]).
    pub fn take_untold(&self, tenant: &str, thread: &str) -> Option<Waited> {
        let key = (tenant.to_string(), thread.to_string());
        self.untold.lock().unwrap().remove(&key)
    }

    /// Waits while `thread` has an open hold: until Done, or until the hold timeout, when the
    /// hold expires. `None`: there was no hold.
    pub async fn wait_released(&self, tenant: &str, thread: &str) -> Result<Option<Waited>> {
        // Subscribe before looking, so a Done between the look and the wait is not missed.
        let mut changes = self.changes();
        let Some(mut hold) = self.open_hold(tenant, thread) else {
            return Ok(None);
        };
        tracing::info!(thread, hold = %hold.id, "action waits for the user");
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            match tokio::time::timeout_at(deadline, changes.recv()).await {
                Ok(Ok(change)) => {
                    if change.tenant == tenant
                        && change.hold.thread == thread
                        && !change.hold.is_open()
                    {
                        return Ok(Some(Waited::HandedBack(change.hold)));
                    }
                }
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => {
                    // Changes were missed: the open holds say where things stand.
                    match self.open_hold(tenant, thread) {
                        Some(current) => hold = current,
                        None => {
                            let closed = self.store.hold(tenant, &hold.id)?.unwrap_or(hold);
                            return Ok(Some(Waited::HandedBack(closed)));
                        }
                    }
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    unreachable!("`self` holds a sender")
                }
                Err(_elapsed) => {
                    let expired = self
                        .close(tenant, |h| h.id == hold.id, HoldState::Expired)
                        .await?;
                    return Ok(Some(match expired {
                        Some(expired) => Waited::TimedOut(expired),
                        // Done came at the last moment.
                        None => {
                            Waited::HandedBack(self.store.hold(tenant, &hold.id)?.unwrap_or(hold))
                        }
                    }));
                }
            }
        }
    }
}

/// A hold's reason as the user reads it: some words, at most [`REASON_MAX`] characters, no
/// NUL or other control character.
pub fn check_reason(reason: &str) -> Result<()> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ControllerError::InvalidArgument(
            "a hold needs a reason the user reads, e.g. \"sign in to example.com\"".into(),
        ));
    }
    if reason.chars().count() > REASON_MAX {
        return Err(ControllerError::InvalidArgument(format!(
            "the reason is longer than {REASON_MAX} characters; say it in a sentence"
        )));
    }
    nanomuse_common::names::check_text("reason", reason, REASON_MAX * 4)
        .map_err(ControllerError::InvalidArgument)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    fn holds(timeout: Duration) -> Holds {
        Holds::load(Arc::new(SledStore::temporary().unwrap()), timeout).unwrap()
    }

    #[tokio::test]
    async fn a_waiting_action_is_released_by_done_and_not_before() {
        let holds = Arc::new(holds(Duration::from_secs(600)));
        let (hold, opened) = holds
            .open("a", "t", "sign in", OpenedBy::Agent)
            .await
            .unwrap();
        assert!(opened);
        // Polled once, the action is waiting (subscribed to changes) before anything happens.
        let waiting = holds.wait_released("a", "t");
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        // Other threads and tenants do not release it.
        holds.open("a", "other", "x", OpenedBy::User).await.unwrap();
        holds.hand_back("a", "other").await.unwrap();
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        holds.done("a", &hold.id).await.unwrap();
        let waited = waiting.await.unwrap().unwrap();
        assert!(
            matches!(waited, Waited::HandedBack(h) if h.id == hold.id && h.state == HoldState::Done)
        );
        assert!(holds.open_holds("a").is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn after_the_timeout_the_action_goes_on_and_the_hold_expires() {
        let holds = holds(Duration::from_secs(600));
        holds
            .open("a", "t", "solve the CAPTCHA", OpenedBy::User)
            .await
            .unwrap();
        let waited = holds.wait_released("a", "t").await.unwrap().unwrap();
        let Waited::TimedOut(hold) = &waited else {
            panic!("{waited:?}")
        };
        assert_eq!(hold.state, HoldState::Expired);
        assert!(
            waited
                .told(holds.timeout())
                .contains("did not come back within 10 minutes")
        );
        assert!(holds.wait_released("a", "t").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_tenant_past_its_open_holds_quota_opens_no_more() {
        let holds = holds(Duration::from_secs(600)).with_quota(2);
        holds.open("a", "t1", "x", OpenedBy::Agent).await.unwrap();
        holds.open("a", "t2", "x", OpenedBy::User).await.unwrap();
        let refused = holds.open("a", "t3", "x", OpenedBy::Agent).await;
        assert!(
            matches!(&refused, Err(ControllerError::ResourceExhausted(m)) if m.starts_with("2 holds are open already")),
            "{refused:?}"
        );
        assert!(holds.open_hold("a", "t3").is_none());
        // Another tenant's holds are its own; one handed back frees a place.
        holds.open("b", "t1", "x", OpenedBy::Agent).await.unwrap();
        holds.hand_back("a", "t1").await.unwrap();
        holds.open("a", "t3", "x", OpenedBy::Agent).await.unwrap();
        assert_eq!(holds.open_count(), 3);
    }

    #[tokio::test]
    async fn bad_requests_change_nothing() {
        let holds = holds(Duration::from_secs(600));
        assert!(matches!(
            holds.open("a", "t", "  ", OpenedBy::Agent).await,
            Err(ControllerError::InvalidArgument(_))
        ));
        assert!(matches!(
            holds.done("a", "h999").await,
            Err(ControllerError::NotFound(_))
        ));
        let (hold, _) = holds
            .open("a", "t", "sign in", OpenedBy::Agent)
            .await
            .unwrap();
        let (again, opened) = holds.open("a", "t", "other", OpenedBy::User).await.unwrap();
        assert_eq!((again.id.as_str(), opened), (hold.id.as_str(), false));
        assert!(matches!(
            holds.done("b", &hold.id).await,
            Err(ControllerError::NotFound(_))
        ));
        holds.done("a", &hold.id).await.unwrap();
        assert!(matches!(
            holds.done("a", &hold.id).await,
            Err(ControllerError::Conflict(_))
        ));
        assert!(matches!(
            holds.hand_back("a", "t").await,
            Err(ControllerError::Conflict(_))
        ));
    }
}
