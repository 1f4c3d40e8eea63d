//! The phones connected now: who they are, the requests waiting for their answers, and the
//! events the controller watches (a phone came or left, the user took over or handed back).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nanomuse_proto::{BackendError, DeviceEvent};
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::protocol::{DeviceRequest, DeviceResult, Message, Trace};

type Answer = Result<Value, BackendError>;

/// The thread a phone's page belongs to, shared by the phone's connections.
type SharedThread = Arc<Mutex<Option<String>>>;

/// One connected phone.
pub struct Phone {
    pub tenant: String,
    pub device_id: String,
    pub browser: bool,
    /// Which connection of the phone this is (a reconnect is a new one).
    pub connection: u64,
    /// Messages to the phone, written by its connection's task.
    outgoing: mpsc::Sender<Message>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    next_id: AtomicU64,
    max_pending: usize,
    /// The thread whose page the phone shows (the last one that used its browser); shared by
    /// the phone's connections, so an event sent right after a reconnect still finds it.
    last_thread: SharedThread,
    /// Cancelled when the connection must end (replaced, or the gateway stops).
    pub closed: CancellationToken,
}

impl Phone {
    pub fn last_thread(&self) -> Option<String> {
        self.last_thread.lock().unwrap().clone()
    }

    /// Requests sent and not answered yet.
    pub fn pending_count(&self) -> usize {
        self.pending.lock().unwrap().len()
    }

    /// Sends one op and waits for its result, up to `timeout`.
    pub async fn request(
        &self,
        browser_op: &str,
        args: Value,
        thread: &str,
        timeout: Duration,
        trace: Option<Trace>,
    ) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).to_string();
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = self.pending.lock().unwrap();
            if pending.len() >= self.max_pending {
                return Err(BackendError::ResourceExhausted(format!(
                    "the phone {} already has {} requests waiting; try again when it has \
                     answered them",
                    self.device_id, self.max_pending
                )));
            }
            pending.insert(id.clone(), answer);
        }
        *self.last_thread.lock().unwrap() = Some(thread.to_string());
        let request = Message::DeviceRequest(DeviceRequest {
            id: id.clone(),
            op: "browser".into(),
            browser_op: browser_op.into(),
            args,
            timeout_ms: timeout.as_millis() as u64,
            trace,
        });
        if self.outgoing.send(request).await.is_err() {
            self.pending.lock().unwrap().remove(&id);
            return Err(self.gone());
        }
        match tokio::time::timeout(timeout, answered).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(self.gone()),
            Err(_) => {
                self.pending.lock().unwrap().remove(&id);
                Err(BackendError::Timeout(format!(
                    "the phone {} did not answer {browser_op} within {} ms",
                    self.device_id,
                    timeout.as_millis()
                )))
            }
        }
    }

    fn gone(&self) -> BackendError {
        BackendError::Unavailable(format!(
            "the phone {} disconnected before it answered",
            self.device_id
        ))
    }

    /// Hands a result to the request waiting for it; `false` when none waits (late or unknown).
    pub fn complete(&self, result: DeviceResult) -> bool {
        let Some(waiting) = self.pending.lock().unwrap().remove(&result.id) else {
            return false;
        };
        let answer = if result.ok {
            Ok(result.result.unwrap_or(Value::Null))
        } else {
            let message = result
                .error
                .unwrap_or_else(|| "the phone reported a failure without a message".into());
            Err(crate::ops::error_of(result.code.as_deref(), message))
        };
        let _ = waiting.send(answer);
        true
    }

    /// Fails every request still waiting (the phone is gone): dropping their senders wakes them.
    fn fail_pending(&self) {
        self.pending.lock().unwrap().clear();
    }

    /// Queues a message to the phone; `false` when its connection is gone.
    pub async fn send(&self, message: Message) -> bool {
        self.outgoing.send(message).await.is_ok()
    }
}

/// Every connected phone, by tenant, most recent last.
pub struct Phones {
    by_tenant: Mutex<HashMap<String, Vec<Arc<Phone>>>>,
    /// (tenant, device id) → the thread the phone's page belongs to, kept across connections.
    last_threads: Mutex<HashMap<(String, String), SharedThread>>,
    events: broadcast::Sender<DeviceEvent>,
    next_connection: AtomicU64,
}

impl Default for Phones {
    fn default() -> Self {
        Self {
            by_tenant: Mutex::default(),
            last_threads: Mutex::default(),
            events: broadcast::channel(256).0,
            next_connection: AtomicU64::new(1),
        }
    }
}

fn event(kind: &str, phone: &Phone) -> DeviceEvent {
    DeviceEvent {
        kind: kind.into(),
        tenant: phone.tenant.clone(),
        device_id: phone.device_id.clone(),
        browser: phone.browser,
        ..Default::default()
    }
}

impl Phones {
    /// Adds a phone that said hello; one already connected with the same id is replaced (its
    /// connection closes and its pending requests fail).
    pub fn connect(
        &self,
        tenant: &str,
        device_id: &str,
        browser: bool,
        outgoing: mpsc::Sender<Message>,
        max_pending: usize,
    ) -> Arc<Phone> {
        let phone = Arc::new(Phone {
            tenant: tenant.into(),
            device_id: device_id.into(),
            browser,
            connection: self.next_connection.fetch_add(1, Ordering::Relaxed),
            outgoing,
            pending: Mutex::default(),
            next_id: AtomicU64::new(1),
            max_pending,
            last_thread: self
                .last_threads
                .lock()
                .unwrap()
                .entry((tenant.to_string(), device_id.to_string()))
                .or_default()
                .clone(),
            closed: CancellationToken::new(),
        });
        let replaced = {
            let mut by_tenant = self.by_tenant.lock().unwrap();
            let phones = by_tenant.entry(tenant.to_string()).or_default();
            let replaced: Vec<_> = phones
                .iter()
                .filter(|p| p.device_id == device_id)
                .cloned()
                .collect();
            phones.retain(|p| p.device_id != device_id);
            phones.push(phone.clone());
            replaced
        };
        for old in replaced {
            old.fail_pending();
            old.closed.cancel();
            tracing::info!(
                tenant,
                device = device_id,
                "phone reconnected; old connection replaced"
            );
        }
        let _ = self.events.send(event("connected", &phone));
        phone
    }

    /// Removes `phone` when its connection ends (unless a newer connection replaced it).
    pub fn disconnect(&self, phone: &Arc<Phone>) {
        phone.fail_pending();
        let removed = {
            let mut by_tenant = self.by_tenant.lock().unwrap();
            let Some(phones) = by_tenant.get_mut(&phone.tenant) else {
                return;
            };
            let before = phones.len();
            phones.retain(|p| !Arc::ptr_eq(p, phone));
            let removed = phones.len() < before;
            if phones.is_empty() {
                by_tenant.remove(&phone.tenant);
            }
            removed
        };
        if removed {
            let _ = self.events.send(event("left", phone));
        }
    }

    /// The tenant's phone for browser ops: the most recently connected one with a browser.
    pub fn browser_of(&self, tenant: &str) -> Option<Arc<Phone>> {
        let by_tenant = self.by_tenant.lock().unwrap();
        by_tenant
            .get(tenant)?
            .iter()
            .rev()
            .find(|p| p.browser)
            .cloned()
    }

    /// The phone of `tenant` showing `thread`'s page.
    pub fn showing(&self, tenant: &str, thread: &str) -> Option<Arc<Phone>> {
        let by_tenant = self.by_tenant.lock().unwrap();
        by_tenant
            .get(tenant)?
            .iter()
            .rev()
            .find(|p| p.last_thread().as_deref() == Some(thread))
            .cloned()
    }

    /// Every phone connected now.
    pub fn all(&self) -> Vec<Arc<Phone>> {
        let by_tenant = self.by_tenant.lock().unwrap();
        by_tenant.values().flatten().cloned().collect()
    }

    /// Events from now on, and the phones connected now (subscribed first, so none is missed).
    pub fn watch(&self) -> (Vec<DeviceEvent>, broadcast::Receiver<DeviceEvent>) {
        let receiver = self.events.subscribe();
        let now = self.all().iter().map(|p| event("connected", p)).collect();
        (now, receiver)
    }

    /// The user took the page on `phone`, or gave it back.
    pub fn user_event(&self, phone: &Phone, kind: &str, reason: Option<String>) {
        let Some(thread) = phone.last_thread() else {
            tracing::info!(device = %phone.device_id, kind, "no thread uses the phone's page yet");
            return;
        };
        let _ = self.events.send(DeviceEvent {
            thread,
            reason: reason.unwrap_or_default(),
            ..event(kind, phone)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reconnect_replaces_the_old_connection_and_fails_its_requests_at_once() {
        let phones = Phones::default();
        let (old_out, mut old_in) = mpsc::channel(8);
        let old = phones.connect("acme", "pixel", true, old_out, 4);
        let waiting = tokio::spawn({
            let old = old.clone();
            async move {
                old.request("state", Value::Null, "t", Duration::from_secs(60), None)
                    .await
            }
        });
        assert!(matches!(
            old_in.recv().await,
            Some(Message::DeviceRequest(_))
        ));
        let (new_out, _new_in) = mpsc::channel(8);
        let new = phones.connect("acme", "pixel", true, new_out, 4);
        let error = waiting.await.unwrap().unwrap_err();
        assert!(matches!(error, BackendError::Unavailable(_)), "{error}");
        assert!(old.closed.is_cancelled());
        assert_eq!(new.last_thread().as_deref(), Some("t"));
        assert!(Arc::ptr_eq(&phones.browser_of("acme").unwrap(), &new));
        // The old connection ending does not remove the new one.
        phones.disconnect(&old);
        assert!(phones.browser_of("acme").is_some());
        assert!(phones.browser_of("other").is_none());
        // Gone and back: the phone's page still belongs to the thread.
        phones.disconnect(&new);
        let (out, _in) = mpsc::channel(8);
        let back = phones.connect("acme", "pixel", true, out, 4);
        assert_eq!(back.last_thread().as_deref(), Some("t"));
    }

    #[tokio::test]
    async fn requests_beyond_the_limit_are_refused_and_late_results_are_dropped() {
        let phones = Phones::default();
        let (out, mut sent) = mpsc::channel(8);
        let phone = phones.connect("acme", "pixel", true, out, 1);
        let first = tokio::spawn({
            let phone = phone.clone();
            async move {
                phone
                    .request("state", Value::Null, "t", Duration::from_millis(50), None)
                    .await
            }
        });
        let Some(Message::DeviceRequest(request)) = sent.recv().await else {
            panic!("no request sent")
        };
        let refused = phone
            .request("state", Value::Null, "t", Duration::from_secs(1), None)
            .await;
        assert!(matches!(refused, Err(BackendError::ResourceExhausted(_))));
        assert!(matches!(
            first.await.unwrap(),
            Err(BackendError::Timeout(message)) if message.contains("did not answer state")
        ));
        assert!(!phone.complete(DeviceResult::ok(request.id, Value::Null)));
    }
}
