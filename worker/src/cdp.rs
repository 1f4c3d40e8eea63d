//! Untyped CDP commands. A page's commands go over a [`SideChannel`], a raw CDP connection of
//! our own with a flat session on the page's target: chromiumoxide turns every `Page.navigate`
//! it carries into a wait for a new document and `load` (which never comes for a download or a
//! 204), and a reply through its handler comes ~0.5 ms later than through ours. The page's
//! network and lifecycle events come on that session too, in order with its replies (see
//! [`crate::tracker`]); chromiumoxide keeps the other events (targets, downloads, dialogs, file
//! choosers, screencast) and some setup ([`call_browser`], [`call_page`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::types::{Command, Method, MethodId};
use chromiumoxide::{Browser, Page};
use futures::{SinkExt, StreamExt};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tracing::Instrument;

use crate::error::{Result, WorkerError};

/// A CDP command given by its method name and JSON params.
#[derive(Debug)]
struct Untyped {
    method: &'static str,
    params: Value,
}

impl Serialize for Untyped {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}

impl Method for Untyped {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for Untyped {
    type Response = Value;
}

fn refused(method: &str, error: chromiumoxide::error::CdpError) -> WorkerError {
    match WorkerError::from(error) {
        WorkerError::Cdp { message, .. } => WorkerError::Cdp {
            method: method.to_string(),
            message,
        },
        other => other,
    }
}

/// Sends `method` with `params` on chromiumoxide's session of `page`, the one with the Page
/// domain enabled. Only setup that needs it goes here: Chromium runs a session's new-document
/// scripts only while Page is enabled on that session. Ops use [`crate::page::PageHandle::cdp`].
pub async fn call_page(page: &Page, method: &'static str, params: Value) -> Result<Value> {
    page.execute(Untyped { method, params })
        .instrument(span(method))
        .await
        .map(|response| response.result)
        .map_err(|e| refused(method, e))
}

/// The span of one CDP command: its method only, since parameters can hold typed text.
fn span(method: &str) -> tracing::Span {
    tracing::info_span!("cdp", otel.name = method)
}

/// Sends `method` with `params` to the browser itself (no target session).
pub async fn call_browser(browser: &Browser, method: &'static str, params: Value) -> Result<Value> {
    browser
        .execute(Untyped { method, params })
        .instrument(span(method))
        .await
        .map(|response| response.result)
        .map_err(|e| refused(method, e))
}

/// Who waits for which reply; `None` once the connection is gone, so no one waits in vain.
/// The commands waiting for their replies, each with the session it was sent on (`None`: the
/// browser's); `None` once the connection is gone.
type Pending = Arc<Mutex<Option<HashMap<u64, Waiting>>>>;

struct Waiting {
    session: Option<String>,
    reply: oneshot::Sender<Result<Value, String>>,
}

/// Fails at once the commands sent on `session`, whose target closed (a window that closed
/// itself as it opened): Chromium answers none of them, and each would wait to its timeout.
fn fail_session(pending: &Pending, session: Option<&str>) {
    let Some(session) = session else { return };
    let mut pending = pending.lock().unwrap();
    let Some(waiting) = pending.as_mut() else {
        return;
    };
    let ids: Vec<u64> = waiting
        .iter()
        .filter(|(_, waiting)| waiting.session.as_deref() == Some(session))
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        if let Some(Waiting { reply, .. }) = waiting.remove(&id) {
            let _ = reply.send(Err("its page closed before it answered".into()));
        }
    }
}

fn gone() -> WorkerError {
    WorkerError::BrowserGone("the CDP connection is closed".into())
}

/// What a session's events are handed to, one at a time, in the order they came.
pub type EventSink = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// The sink of each session that listens; the events of other sessions are dropped.
type Sinks = Arc<Mutex<HashMap<String, EventSink>>>;

/// Our own CDP connection to a browser: the replies to our commands, and the events of the
/// sessions that [`SideChannel::listen`] (a page's network tracker). An event is handed to its
/// sink before the next message is read, so whoever gets a reply knows that every event its
/// session sent before it has been handed over.
pub struct SideChannel {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Pending,
    sinks: Sinks,
    next_id: AtomicU64,
    /// How long a command may go unanswered, as chromiumoxide's request timeout: a page whose
    /// script does not yield never answers `Runtime.evaluate`.
    timeout: Duration,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl SideChannel {
    pub async fn connect(websocket_url: &str, timeout: Duration) -> Result<Self> {
        let (socket, _) = tokio_tungstenite::connect_async_with_config(websocket_url, None, true)
            .await
            .map_err(|e| WorkerError::Launch(format!("second CDP connection failed: {e}")))?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queue) = mpsc::unbounded_channel::<String>();
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));

        let writer = tokio::spawn(async move {
            while let Some(text) = queue.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let reader_pending = pending.clone();
        let sinks: Sinks = Arc::default();
        let reader_sinks = sinks.clone();
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let Some(id) = value.get("id").and_then(Value::as_u64) else {
                    let session = value.get("sessionId").and_then(Value::as_str);
                    if session.is_none()
                        && value.get("method").and_then(Value::as_str)
                            == Some("Target.detachedFromTarget")
                    {
                        let detached = value.pointer("/params/sessionId").and_then(Value::as_str);
                        fail_session(&reader_pending, detached);
                        continue;
                    }
                    let sink = session.and_then(|s| reader_sinks.lock().unwrap().get(s).cloned());
                    if let (Some(sink), Some(method)) =
                        (sink, value.get("method").and_then(Value::as_str))
                    {
                        sink(method, value.get("params").unwrap_or(&Value::Null));
                    }
                    continue;
                };
                let waiter = reader_pending
                    .lock()
                    .unwrap()
                    .as_mut()
                    .and_then(|waiting| waiting.remove(&id));
                if let Some(Waiting { reply, .. }) = waiter {
                    let outcome = match value.get("error") {
                        Some(error) => Err(error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("unknown error")
                            .to_string()),
                        None => Ok(value.get_mut("result").map_or(Value::Null, Value::take)),
                    };
                    let _ = reply.send(outcome);
                }
            }
            // The browser is gone: fail whoever waits now or asks later.
            reader_pending.lock().unwrap().take();
        });
        Ok(Self {
            outgoing,
            pending,
            sinks,
            next_id: AtomicU64::new(1),
            timeout,
            tasks: vec![writer, reader],
        })
    }

    /// Sends `method` on `session` (a flat session id) or to the browser when `None`.
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        async { self.send(session, method, params)?.reply().await }
            .instrument(span(method))
            .await
    }

    /// Sends `commands` back to back on `session`, then waits for all their replies. Chromium
    /// handles a session's commands in order; input events sent together are handled in one
    /// frame instead of one frame each.
    pub async fn call_in_order(&self, session: &str, commands: &[(&str, Value)]) -> Result<()> {
        let sent = commands
            .iter()
            .map(|(method, params)| {
                let span = span(method);
                self.send(Some(session), method, params.clone())
                    .map(|sent| (sent, span))
            })
            .collect::<Result<Vec<_>>>()?;
        for (command, span) in sent {
            command.reply().instrument(span).await?;
        }
        Ok(())
    }

    /// Queues a command for the writer; its reply comes with [`Sent::reply`].
    fn send<'a>(
        &'a self,
        session: Option<&str>,
        method: &'a str,
        params: Value,
    ) -> Result<Sent<'a>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        self.pending
            .lock()
            .unwrap()
            .as_mut()
            .ok_or_else(gone)?
            .insert(
                id,
                Waiting {
                    session: session.map(str::to_string),
                    reply,
                },
            );
        let sent = Sent {
            channel: self,
            id,
            method,
            answer,
        };
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.outgoing
            .send(message.to_string())
            .map_err(|_| gone())?;
        Ok(sent)
    }

    /// Hands the events of `session` to `sink` from now on (only those of the domains enabled
    /// on it come).
    pub fn listen(&self, session: &str, sink: EventSink) {
        self.sinks.lock().unwrap().insert(session.to_string(), sink);
    }

    /// Stops handing over the events of `session`.
    pub fn forget(&self, session: &str) {
        self.sinks.lock().unwrap().remove(session);
    }

    /// Attaches to a target with a flat session of this connection.
    pub async fn attach(&self, target_id: &str) -> Result<String> {
        let reply = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await?;
        reply
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| WorkerError::BrowserGone("attachToTarget gave no session".into()))
    }
}

/// A command on its way.
struct Sent<'a> {
    channel: &'a SideChannel,
    id: u64,
    method: &'a str,
    answer: oneshot::Receiver<Result<Value, String>>,
}

impl Sent<'_> {
    /// Waits for the reply, at most the channel's timeout.
    async fn reply(mut self) -> Result<Value> {
        let method = self.method;
        match tokio::time::timeout(self.channel.timeout, &mut self.answer).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(message))) => Err(WorkerError::Cdp {
                method: method.to_string(),
                message,
            }),
            Ok(Err(_)) => Err(gone()),
            // The browser is there (its connection is open; a crash is seen as such): the page
            // is at work past the bound — a script over a huge document, say — or hung.
            Err(_) => Err(WorkerError::timeout(
                format!("Chromium's answer to {method}"),
                self.channel.timeout.as_millis() as u64,
            )),
        }
    }
}

/// A caller that stops waiting (answered, timed out, or its op given up) forgets its reply.
impl Drop for Sent<'_> {
    fn drop(&mut self) {
        if let Some(waiting) = self.channel.pending.lock().unwrap().as_mut() {
            waiting.remove(&self.id);
        }
    }
}

impl Drop for SideChannel {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commands_of_a_session_whose_target_closed_fail_and_the_others_wait_on() {
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let waiting = |id: u64, session: Option<&str>| {
            let (reply, answer) = oneshot::channel();
            pending.lock().unwrap().as_mut().unwrap().insert(
                id,
                Waiting {
                    session: session.map(str::to_string),
                    reply,
                },
            );
            answer
        };
        let (mut closed, mut open, mut browser) = (
            waiting(1, Some("A")),
            waiting(2, Some("B")),
            waiting(3, None),
        );
        fail_session(&pending, Some("A"));
        assert!(matches!(closed.try_recv(), Ok(Err(message)) if message.contains("closed")));
        assert!(open.try_recv().is_err(), "still waiting");
        assert!(browser.try_recv().is_err(), "still waiting");
        assert_eq!(pending.lock().unwrap().as_ref().unwrap().len(), 2);
    }
}
