//! One phone's WebSocket: the hello and its token, then results, events and pings in; requests,
//! hold notices and pings out. A malformed message is answered with an error and the
//! connection stays; an oversized one, a silent phone or a newer connection of the same phone
//! ends it, and every request pending on it fails at once.

use crate::metrics::{SocketError, metrics};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message as Frame, Utf8Bytes, WebSocket};
use futures::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::State;
use crate::protocol::{self, Hello, Message, Welcome};

/// Serves one phone until it leaves, is replaced, falls silent or the gateway stops.
pub async fn serve(socket: WebSocket, state: Arc<State>) {
    let (mut sink, mut stream) = socket.split();
    let config = &state.config;
    let hello =
        tokio::time::timeout(Duration::from_millis(config.hello_within_ms), stream.next()).await;
    let hello = match hello {
        Ok(Some(Ok(Frame::Text(text)))) => protocol::parse(&text),
        Ok(Some(Ok(_))) => Err("the first message must be the hello, as JSON text".into()),
        Ok(_) => return,
        Err(_) => Err(format!(
            "no hello within {} ms of connecting",
            config.hello_within_ms
        )),
    };
    let hello = match hello {
        Ok(Message::Device(hello)) => hello,
        Ok(other) => {
            let error = format!("the first message must be the hello, not {other:?}");
            return refuse(&mut sink, protocol::CLOSE_BAD_HELLO, error).await;
        }
        Err(error) => return refuse(&mut sink, protocol::CLOSE_BAD_HELLO, error).await,
    };
    let tenant = match admit(&state, &hello) {
        Ok(tenant) => tenant,
        Err((code, error)) => return refuse(&mut sink, code, error).await,
    };
    metrics().connections.inc();

    let (outgoing, mut to_phone) = mpsc::channel::<Message>(64);
    let phone = state.phones.connect(
        &tenant,
        &hello.device_id,
        hello.browser,
        outgoing,
        config.max_pending,
    );
    tracing::info!(tenant, device = %hello.device_id, browser = hello.browser, "phone connected");
    let welcome = Message::Welcome(Welcome {
        device_id: hello.device_id.clone(),
        max_message_bytes: config.max_message_bytes,
        ping_interval_ms: config.ping_interval_ms,
    });
    if sink.send(text(&welcome)).await.is_err() {
        state.phones.disconnect(&phone);
        return;
    }

    let mut pings = tokio::time::interval(Duration::from_millis(config.ping_interval_ms));
    let silence = Duration::from_millis(config.silence_limit_ms);
    let mut last_heard = Instant::now();
    let ended = loop {
        tokio::select! {
            _ = phone.closed.cancelled() => {
                metrics().socket_error(SocketError::Replaced);
                break Some((protocol::CLOSE_REPLACED, "replaced by a new connection"));
            }
            _ = state.shutdown.cancelled() => break Some((1001, "the gateway is stopping")),
            Some(message) = to_phone.recv() => {
                if sink.send(text(&message)).await.is_err() {
                    break None;
                }
            }
            _ = pings.tick() => {
                if last_heard.elapsed() > silence {
                    tracing::warn!(device = %phone.device_id, "phone silent; dropped");
                    metrics().socket_error(SocketError::Silent);
                    break Some((1001, "no message or pong within the silence limit"));
                }
                if sink.send(Frame::Ping(Default::default())).await.is_err() {
                    break None;
                }
            }
            frame = stream.next() => {
                last_heard = Instant::now();
                match frame {
                    Some(Ok(Frame::Text(text))) => {
                        if let Some(answer) = received(&state, &phone, &text)
                            && sink.send(self::text(&answer)).await.is_err()
                        {
                            break None;
                        }
                    }
                    Some(Ok(Frame::Binary(_))) => {
                        metrics().socket_error(SocketError::Malformed);
                        let error = Message::error("binary messages are not part of the protocol; send JSON text");
                        if sink.send(text(&error)).await.is_err() {
                            break None;
                        }
                    }
                    Some(Ok(Frame::Close(_))) | None => break None,
                    Some(Ok(_)) => {} // pings are answered by the socket, pongs only count as heard
                    Some(Err(error)) => {
                        // Typically a message over the size limit.
                        tracing::warn!(device = %phone.device_id, %error, "phone connection failed");
                        metrics().socket_error(SocketError::Oversized);
                        break Some((1009, "the message was too big or malformed"));
                    }
                }
            }
        }
    };
    state.phones.disconnect(&phone);
    if let Some((code, reason)) = ended {
        let _ = sink.send(close(code, reason)).await;
    }
    tracing::info!(tenant = %phone.tenant, device = %phone.device_id, "phone disconnected");
}

/// The tenant of a hello, or why it is refused (close code, message).
fn admit(state: &State, hello: &Hello) -> Result<String, (u16, String)> {
    nanomuse_common::check_name("device_id", &hello.device_id)
        .map_err(|e| (protocol::CLOSE_BAD_HELLO, e))?;
    if hello.protocol != protocol::PROTOCOL_VERSION {
        return Err((
            protocol::CLOSE_BAD_HELLO,
            format!(
                "protocol {} is not spoken here; use {}",
                hello.protocol,
                protocol::PROTOCOL_VERSION
            ),
        ));
    }
    state
        .device_tokens
        .tenant_of(&hello.token)
        .map(str::to_string)
        .ok_or_else(|| {
            (
                protocol::CLOSE_UNAUTHORIZED,
                "the device token is not known; pair the phone again".into(),
            )
        })
}

/// Handles one message from the phone; the answer to send back, if any.
fn received(state: &State, phone: &crate::phones::Phone, text: &str) -> Option<Message> {
    match protocol::parse(text) {
        Ok(Message::DeviceResult(result)) => {
            let id = result.id.clone();
            (!phone.complete(result)).then(|| {
                Message::Error(protocol::ErrorMessage {
                    error: format!("no request {id:?} is waiting (answered already, or too late)"),
                    id: Some(id),
                })
            })
        }
        Ok(Message::DeviceEvent(event)) => match event.event.as_str() {
            "take_over" | "handed_back" => {
                state.phones.user_event(phone, &event.event, event.reason);
                None
            }
            other => Some(Message::error(format!(
                "unknown device_event {other:?}: use take_over or handed_back"
            ))),
        },
        Ok(Message::Ping) => Some(Message::Pong),
        Ok(Message::Pong) => None,
        Ok(other) => Some(Message::error(format!(
            "a phone does not send {:?} messages",
            serde_json::to_value(&other)
                .ok()
                .and_then(|v| v.get("kind").cloned())
                .unwrap_or_default()
        ))),
        Err(error) => {
            tracing::info!(device = %phone.device_id, %error, "malformed message from a phone");
            metrics().socket_error(SocketError::Malformed);
            Some(Message::error(error))
        }
    }
}

fn text(message: &Message) -> Frame {
    Frame::Text(Utf8Bytes::from(message.to_json()))
}

fn close(code: u16, reason: &str) -> Frame {
    Frame::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(reason.to_string()),
    }))
}

async fn refuse(sink: &mut futures::stream::SplitSink<WebSocket, Frame>, code: u16, error: String) {
    tracing::info!(%error, "phone refused");
    metrics().socket_error(if code == protocol::CLOSE_UNAUTHORIZED {
        SocketError::BadToken
    } else {
        SocketError::BadHello
    });
    let _ = sink.send(text(&Message::error(error))).await;
    let _ = sink.send(close(code, "refused")).await;
}
