//! Untyped CDP commands. Most ops speak CDP through chromiumoxide's session of the page
//! ([`call`]); `Page.navigate` goes through a [`SideChannel`] of our own, because chromiumoxide
//! turns every `Page.navigate` it carries into a wait for a new document and `load`, which never
//! comes for a download or a 204 and then wedges the page's later navigations.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chromiumoxide::types::{Command, Method, MethodId};
use chromiumoxide::{Browser, Page};
use futures::{SinkExt, StreamExt};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

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

/// Sends `method` with `params` on the page's own session.
pub async fn call(page: &Page, method: &'static str, params: Value) -> Result<Value> {
    debug_assert_ne!(
        method, "Page.navigate",
        "navigate goes through the side channel"
    );
    page.execute(Untyped { method, params })
        .await
        .map(|response| response.result)
        .map_err(|e| refused(method, e))
}

/// Sends `method` with `params` to the browser itself (no target session).
pub async fn call_browser(browser: &Browser, method: &'static str, params: Value) -> Result<Value> {
    browser
        .execute(Untyped { method, params })
        .await
        .map(|response| response.result)
        .map_err(|e| refused(method, e))
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// A second CDP connection to the same browser, used for commands chromiumoxide would
/// intercept. It reads only responses; events stay with chromiumoxide.
pub struct SideChannel {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: AtomicU64,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl SideChannel {
    pub async fn connect(websocket_url: &str) -> Result<Self> {
        let (socket, _) = tokio_tungstenite::connect_async_with_config(websocket_url, None, true)
            .await
            .map_err(|e| WorkerError::Launch(format!("second CDP connection failed: {e}")))?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queue) = mpsc::unbounded_channel::<String>();
        let pending: Pending = Arc::default();

        let writer = tokio::spawn(async move {
            while let Some(text) = queue.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let reader_pending = pending.clone();
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let Ok(value) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let Some(id) = value.get("id").and_then(Value::as_u64) else {
                    continue;
                };
                if let Some(reply) = reader_pending.lock().await.remove(&id) {
                    let outcome = match value.get("error") {
                        Some(error) => Err(error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("unknown error")
                            .to_string()),
                        None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = reply.send(outcome);
                }
            }
            // The browser is gone: fail whoever still waits.
            reader_pending.lock().await.clear();
        });
        Ok(Self {
            outgoing,
            pending,
            next_id: AtomicU64::new(1),
            tasks: vec![writer, reader],
        })
    }

    /// Sends `method` on `session` (a flat session id) or to the browser when `None`.
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        self.pending.lock().await.insert(id, reply);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        if self.outgoing.send(message.to_string()).is_err() {
            return Err(WorkerError::BrowserGone(
                "the CDP connection is closed".into(),
            ));
        }
        match answer.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(message)) => Err(WorkerError::Cdp {
                method: method.to_string(),
                message,
            }),
            Err(_) => Err(WorkerError::BrowserGone(
                "the CDP connection is closed".into(),
            )),
        }
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

impl Drop for SideChannel {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}
