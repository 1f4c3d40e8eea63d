//! A watcher of the live take-over (`/api/threads/{thread}/live`) over a real WebSocket: the
//! frames, the answers to inputs and the close, as the e2e tests and the benchmark read them.

use std::time::{Duration, Instant};

use futures::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One watcher's socket.
pub struct LiveView {
    pub socket: Socket,
    /// The last geometry the server sent.
    pub geometry: Option<(u64, u64)>,
}

/// What the socket brought next.
#[derive(Debug)]
pub enum Live {
    Frame(Vec<u8>),
    Told(Value),
    Closed(Option<String>),
}

impl LiveView {
    /// Connects to `url` (`ws://…/api/threads/{thread}/live?token=…`).
    pub async fn connect(url: &str) -> Self {
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("the live view opens");
        Self {
            socket,
            geometry: None,
        }
    }

    /// The next frame, answer or close within `within`; `None` when nothing came.
    pub async fn next(&mut self, within: Duration) -> Option<Live> {
        loop {
            let message = tokio::time::timeout(within, self.socket.next())
                .await
                .ok()?;
            match message {
                Some(Ok(Message::Binary(jpeg))) => return Some(Live::Frame(jpeg.to_vec())),
                Some(Ok(Message::Text(text))) => {
                    let told: Value = serde_json::from_str(text.as_str()).unwrap();
                    if told["type"] == "geometry" {
                        self.geometry = Some((
                            told["width"].as_u64().unwrap(),
                            told["height"].as_u64().unwrap(),
                        ));
                        continue;
                    }
                    return Some(Live::Told(told));
                }
                Some(Ok(Message::Close(close))) => {
                    return Some(Live::Closed(close.map(|c| c.reason.to_string())));
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Some(Live::Closed(None)),
            }
        }
    }

    pub async fn frame(&mut self) -> Vec<u8> {
        loop {
            match self.next(Duration::from_secs(10)).await {
                Some(Live::Frame(jpeg)) => return jpeg,
                Some(Live::Told(_)) => continue,
                other => panic!("no frame came: {other:?}"),
            }
        }
    }

    /// The frames that come within `window`.
    pub async fn frames_within(&mut self, window: Duration) -> usize {
        let until = Instant::now() + window;
        let mut frames = 0;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match self.next(left).await {
                Some(Live::Frame(_)) => frames += 1,
                Some(Live::Told(_)) => {}
                Some(Live::Closed(reason)) => panic!("closed: {reason:?}"),
                None => break,
            }
        }
        frames
    }

    pub async fn send(&mut self, input: Value) {
        self.socket
            .send(Message::Text(input.to_string().into()))
            .await
            .unwrap();
    }

    /// Sends `input` and waits for its answer; frames meanwhile are counted.
    pub async fn carry_out(&mut self, input: Value) -> (Value, usize) {
        self.send(input.clone()).await;
        let mut frames = 0;
        loop {
            match self.next(Duration::from_secs(10)).await {
                Some(Live::Frame(_)) => frames += 1,
                Some(Live::Told(told)) => return (told, frames),
                other => panic!("{input}: no answer: {other:?}"),
            }
        }
    }
}
