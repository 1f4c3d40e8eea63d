//! `GET /api/threads/{thread}/live`: the holder's live view over one WebSocket. The server
//! sends the page's frames as binary messages (JPEG), each preceded by a text message
//! `{"type": "geometry", "width", "height"}` (the viewport in CSS px: a tap's coordinates)
//! whenever that changes; the card sends its input as text messages, carried out as they come
//! without a picture each (the frames show them): `{"type": "text", "text"}`,
//! `{"type": "key", "key"}`, `{"type": "tap", "x", "y"}`, `{"type": "scroll", "dy"}`. Each input
//! is answered once carried out, `{"type": "done", "caption"}` (the caption a frame of it would
//! have: never the typed text), or `{"type": "error", "error"}` when refused. Bounded: frames go through a `watch`
//! channel, so a watcher that reads slowly gets the newest frame and the others are dropped.
//! The socket is closed with the reason when the hold ends (or the server stops).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Path;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use futures::{Sink, SinkExt as _, Stream, StreamExt as _};
use nanomuse_proto::screencast::Screencast;
use nanomuse_proto::{ScreenFrame, WatchScreenRequest};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::task::AbortOnDropHandle;

use super::{ApiResult, Caller, Http, State};
use crate::app::Controller;
use crate::error::ControllerError;
use crate::holds::HoldState;
use crate::takeover::UserInput;

/// How long a live view whose stream ended (the page was replaced) waits before watching again.
const REWATCH_AFTER: Duration = Duration::from_millis(200);

/// How many answers to inputs wait for a card that reads slowly.
const TOLD_MAX: usize = 32;

/// The most a close message's reason may hold (the protocol's 123 bytes).
const REASON_MAX: usize = 123;

/// What the card sends: one input each.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum Incoming {
    Text { text: String },
    Key { key: String },
    Tap { x: f64, y: f64 },
    Scroll { dy: f64 },
}

impl From<Incoming> for UserInput {
    fn from(incoming: Incoming) -> Self {
        match incoming {
            Incoming::Text { text } => UserInput::Type { text },
            Incoming::Key { key } => UserInput::Key { key },
            Incoming::Tap { x, y } => UserInput::Tap { x, y },
            Incoming::Scroll { dy } => UserInput::Scroll { dy },
        }
    }
}

/// `GET /api/threads/{thread}/live`.
pub async fn socket(
    State(http): Http,
    Caller(tenant): Caller,
    Path(thread): Path<String>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    let controller = http.controller.clone();
    // Told of the hold's end from before it is checked, so no end falls between the two.
    let ended = hold_ended(&controller, &tenant, &thread);
    let (source, request) = controller.live_source(&tenant, &thread).await?;
    let upgrade = upgrade.map_err(|rejection| {
        ControllerError::InvalidArgument(format!(
            "GET /api/threads/{thread}/live is a WebSocket; connect with one ({})",
            rejection.body_text()
        ))
    })?;
    let shutdown = http.shutdown.clone();
    Ok(upgrade.on_upgrade(move |socket| async move {
        let ended = async move {
            tokio::select! {
                reason = ended => (close_code::NORMAL, reason),
                () = shutdown.cancelled() => (close_code::AWAY, "the server is stopping".to_string()),
            }
        };
        serve(socket, controller, tenant, thread, source, request, ended).await;
    }))
}

/// A future that resolves, with a sentence for the close message, when `thread`'s open hold
/// closes (or there is none any more).
pub(crate) fn hold_ended(
    controller: &Arc<Controller>,
    tenant: &str,
    thread: &str,
) -> impl Future<Output = String> + Send + 'static {
    let mut changes = controller.holds.changes();
    let (controller, tenant, thread) = (controller.clone(), tenant.to_string(), thread.to_string());
    async move {
        loop {
            match changes.recv().await {
                Ok(change) if change.tenant == tenant && change.hold.thread == thread => {
                    match change.hold.state {
                        HoldState::Open => continue,
                        HoldState::Done => return "the page was handed back".into(),
                        HoldState::Expired => {
                            return "the hold expired: the agent went on".into();
                        }
                    }
                }
                Ok(_) => continue,
                // Changes were missed: look at the hold itself.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if controller.holds.open_hold(&tenant, &thread).is_none() {
                        return "the hold ended".into();
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    return "the server is stopping".into();
                }
            }
        }
    }
}

async fn serve(
    socket: WebSocket,
    controller: Arc<Controller>,
    tenant: String,
    thread: String,
    source: Arc<dyn Screencast>,
    request: WatchScreenRequest,
    ended: impl Future<Output = (u16, String)> + Send,
) {
    let (mut sink, stream) = socket.split();
    let (tell, told) = mpsc::channel(TOLD_MAX);
    let inputs = carry_out_inputs(stream, controller, tenant, thread, tell);
    tokio::select! {
        () = pump(source, request, ended, told, &mut sink) => {}
        // The card went away: nothing more to send.
        () = inputs => {}
    }
}

/// Carries out each input the card sends, in order, until it closes the socket; what came of
/// each is told back through `tell`.
async fn carry_out_inputs(
    mut stream: impl Stream<Item = Result<Message, axum::Error>> + Unpin,
    controller: Arc<Controller>,
    tenant: String,
    thread: String,
    tell: mpsc::Sender<Value>,
) {
    while let Some(Ok(message)) = stream.next().await {
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => return,
            _ => continue,
        };
        let outcome = match serde_json::from_str::<Incoming>(text.as_str()) {
            Ok(incoming) => {
                let input = UserInput::from(incoming);
                let caption = input.caption();
                controller
                    .live_input(&tenant, &thread, input)
                    .await
                    .map(|()| caption)
                    .map_err(|error| error.to_string())
            }
            Err(error) => Err(format!(
                "not an input this socket takes ({error}): send {{\"type\": \"text\", \
                 \"text\"}}, {{\"type\": \"key\", \"key\"}}, {{\"type\": \"tap\", \"x\", \"y\"}} \
                 or {{\"type\": \"scroll\", \"dy\"}}"
            )),
        };
        let told = match outcome {
            Ok(caption) => json!({"type": "done", "caption": caption}),
            Err(error) => json!({"type": "error", "error": error}),
        };
        // A card that reads slowly loses these, never blocks its input.
        let _ = tell.try_send(told);
    }
}

/// Sends `source`'s frames of the page to `sink`, the newest one whenever the sink can take
/// one, and the messages `told`, until `ended` says why the view ends (then a close message with
/// that reason) or the source fails for good.
pub(crate) async fn pump<S>(
    source: Arc<dyn Screencast>,
    request: WatchScreenRequest,
    ended: impl Future<Output = (u16, String)>,
    mut told: mpsc::Receiver<Value>,
    sink: &mut S,
) where
    S: Sink<Message> + Unpin,
{
    let (latest, mut newest) = watch::channel(None::<ScreenFrame>);
    let (failed_tx, mut failed) = tokio::sync::oneshot::channel::<String>();
    // Frames are read off the source as fast as they come, whatever the sink does: only the
    // newest is kept for it.
    let _feeder = AbortOnDropHandle::new(tokio::spawn(async move {
        let failure = feed(source, request, latest).await;
        let _ = failed_tx.send(failure);
    }));
    tokio::pin!(ended);
    let mut geometry = None;
    let (code, reason) = loop {
        tokio::select! {
            biased;
            end = &mut ended => break end,
            failure = &mut failed => {
                break (close_code::ERROR, failure.unwrap_or_else(|_| "the live view ended".into()));
            }
            changed = newest.changed() => {
                if changed.is_err() {
                    break (close_code::ERROR, "the live view ended".into());
                }
                let Some(frame) = newest.borrow_and_update().clone() else { continue };
                let size = (frame.width, frame.height);
                if geometry != Some(size) {
                    geometry = Some(size);
                    let text = json!({"type": "geometry", "width": size.0, "height": size.1});
                    if sink.send(Message::Text(text.to_string().into())).await.is_err() {
                        return;
                    }
                }
                if sink.send(Message::Binary(frame.jpeg.into())).await.is_err() {
                    return;
                }
            }
            Some(message) = told.recv() => {
                if sink.send(Message::Text(message.to_string().into())).await.is_err() {
                    return;
                }
            }
        }
    };
    let close = CloseFrame {
        code,
        reason: bounded(&reason).into(),
    };
    let _ = sink.send(Message::Close(Some(close))).await;
    let _ = sink.close().await;
}

/// Watches the page into `latest` for as long as the view lasts, again when a stream ends (the
/// page was replaced); returns why it cannot go on.
async fn feed(
    source: Arc<dyn Screencast>,
    request: WatchScreenRequest,
    latest: watch::Sender<Option<ScreenFrame>>,
) -> String {
    loop {
        let mut frames = match source.watch(request.clone()).await {
            Ok(frames) => frames,
            Err(error) => return format!("the live view is unavailable: {error}"),
        };
        while let Some(frame) = frames.next().await {
            match frame {
                Ok(frame) => {
                    latest.send_replace(Some(frame));
                }
                Err(error) => {
                    tracing::debug!(%error, "live view stream failed; watching again");
                    break;
                }
            }
        }
        tokio::time::sleep(REWATCH_AFTER).await;
    }
}

/// `reason` cut to what a close message holds, on a character boundary.
fn bounded(reason: &str) -> String {
    let mut end = reason.len().min(REASON_MAX);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].to_string()
}

#[cfg(test)]
mod tests {
    use axum::extract::ws::Message;
    use futures::StreamExt as _;

    use super::*;
    use crate::config::{BackendChoice, Config};
    use crate::holds::OpenedBy;
    use crate::store::{ProfileSetting, SledStore, ThreadRecord};
    use crate::testing::{FakeBackend, FakeScreencast};

    const TENANT: &str = "tenant-a";

    /// A controller whose one worker's pages are watched through `screencast`, with thread
    /// "t1" on it.
    fn setup(screencast: &Arc<FakeScreencast>) -> Arc<Controller> {
        let mut config = Config::default();
        config.controller.url_policy.hosted = Some(false);
        let store = Arc::new(SledStore::temporary().unwrap());
        let controller = Arc::new(Controller::new(Arc::new(config), store).unwrap());
        controller.scheduler.register_local_with(
            "w1",
            4,
            FakeBackend::new(),
            None,
            Some(screencast.clone()),
        );
        let record = ThreadRecord {
            workspace: "ws".into(),
            backend: BackendChoice::Chromium,
            profile: ProfileSetting::desktop(),
        };
        controller
            .store()
            .put_thread(TENANT, "t1", &record)
            .unwrap();
        controller
    }

    fn jpeg_of(message: &Message) -> Option<Vec<u8>> {
        match message {
            Message::Binary(bytes) => Some(bytes.to_vec()),
            _ => None,
        }
    }

    #[tokio::test]
    async fn the_live_view_is_the_holders_only() {
        let screencast = FakeScreencast::new();
        let controller = setup(&screencast);
        let refused = controller.live_source(TENANT, "t1").await.err().unwrap();
        assert!(
            matches!(&refused, ControllerError::Conflict(m) if m.contains("take over first")),
            "{refused:?}"
        );
        controller
            .holds
            .open(TENANT, "t1", "sign in", OpenedBy::User)
            .await
            .unwrap();
        controller.live_source(TENANT, "t1").await.unwrap();
        // Another tenant's thread answers as one nobody has.
        let refused = controller
            .live_source("tenant-b", "t1")
            .await
            .err()
            .unwrap();
        assert!(
            matches!(refused, ControllerError::NotFound(_)),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_slow_watcher_gets_the_newest_frame_and_the_socket_ends_with_the_hold() {
        let screencast = FakeScreencast::new();
        let controller = setup(&screencast);
        controller
            .holds
            .open(TENANT, "t1", "sign in", OpenedBy::User)
            .await
            .unwrap();
        let ended = hold_ended(&controller, TENANT, "t1");
        let (source, request) = controller.live_source(TENANT, "t1").await.unwrap();
        // The watcher's socket takes one message and then waits until the test reads it.
        let (mut sink, mut socket) = futures::channel::mpsc::channel::<Message>(0);
        let (_tell, told) = mpsc::channel(1);
        let pump = tokio::spawn(async move {
            let ended = async { (close_code::NORMAL, ended.await) };
            pump(source, request, ended, told, &mut sink).await;
        });
        while !screencast.watched() {
            tokio::task::yield_now().await;
        }
        for i in 1..=50u8 {
            screencast.show(&[i], (412, 915));
        }
        screencast.taken(50).await;

        // Nothing was read meanwhile: the socket has what it took before it filled up (the
        // geometry and one early frame at most), then the newest frame; none in between.
        let first = socket.next().await.unwrap();
        assert_eq!(
            first,
            Message::Text(r#"{"height":915,"type":"geometry","width":412}"#.into())
        );
        let mut frames = Vec::new();
        while frames.last() != Some(&vec![50]) {
            let message = socket.next().await.unwrap();
            frames.push(jpeg_of(&message).expect("a frame"));
        }
        assert!(
            frames.len() <= 2,
            "frames queued for a slow watcher: {frames:?}"
        );

        // The page paints again: the next frame comes, with no new geometry.
        screencast.show(&[51], (412, 915));
        assert_eq!(jpeg_of(&socket.next().await.unwrap()), Some(vec![51]));

        controller.holds.hand_back(TENANT, "t1").await.unwrap();
        let Some(Message::Close(Some(close))) = socket.next().await else {
            panic!("the socket did not close with the hold");
        };
        assert_eq!(close.code, close_code::NORMAL);
        assert_eq!(close.reason.as_str(), "the page was handed back");
        pump.await.unwrap();
        assert!(socket.next().await.is_none(), "the socket stays open");
        // The watch of the worker's page ends with it.
        assert!(!screencast.watched());
    }

    #[test]
    fn a_close_reason_is_cut_to_what_the_protocol_takes() {
        let long = "é".repeat(100);
        let cut = bounded(&long);
        assert!(cut.len() <= REASON_MAX && long.starts_with(&cut), "{cut}");
    }
}
