//! The Kotlin phone program (`android/run-phone.sh`): the phone's own `DeviceClient`,
//! `Dispatcher` and page scripts with a real headless Chromium over CDP in place of the
//! WebView, connected to a gateway. The test reads what its screen would show (one line per
//! status, hold and change of control) and plays the user's hand on its standard input.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

/// How long the first start may take: run-phone.sh compiles the Kotlin sources when they
/// changed (~30 s on 2 cores), then a JVM and Chromium start.
const START_WITHIN: Duration = Duration::from_secs(240);

pub struct KotlinPhone {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    /// The phone's own folder, when the test did not give one.
    _state: Option<tempfile::TempDir>,
}

/// A hold notice as the phone printed it: `hold <state> <id> [reason]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HoldLine {
    pub state: String,
    pub id: String,
    pub reason: String,
}

impl KotlinPhone {
    /// Starts the phone against `gateway` and waits until the gateway has welcomed it.
    pub async fn connect(gateway: SocketAddr, device_id: &str, token: &str) -> Self {
        Self::connect_in(gateway, device_id, token, None).await
    }

    /// [`Self::connect`] with what the phone keeps (flushed cookies, downloads) in `state`.
    pub async fn connect_in(
        gateway: SocketAddr,
        device_id: &str,
        token: &str,
        state: Option<&Path>,
    ) -> Self {
        let mut phone = Self::start(gateway, device_id, token, state);
        tokio::time::timeout(START_WITHIN, phone.until("phone CONNECTED"))
            .await
            .expect("the Kotlin phone connects within 240 s");
        phone
    }

    /// Starts the phone without waiting for anything.
    pub fn start(gateway: SocketAddr, device_id: &str, token: &str, state: Option<&Path>) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../android/run-phone.sh");
        let own = state.is_none().then(|| tempfile::tempdir().unwrap());
        let folder = state.map_or_else(
            || own.as_ref().unwrap().path().to_path_buf(),
            Path::to_path_buf,
        );
        let mut child = tokio::process::Command::new(script)
            .args([&format!("ws://{gateway}/device"), device_id, token])
            .env("NANOMUSE_PHONE_STATE", folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("android/run-phone.sh starts (a JDK, npm and Chromium are needed)");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            lines,
            _state: own,
        }
    }

    /// Reads lines until one starts with `prefix`; returns it.
    pub async fn until(&mut self, prefix: &str) -> String {
        while let Some(line) = self.lines.next_line().await.unwrap() {
            if line.starts_with(prefix) {
                return line;
            }
        }
        panic!("the Kotlin phone ended before saying {prefix:?}");
    }

    /// Waits for the next hold notice in `state` ("open", "closed").
    pub async fn hold(&mut self, state: &str) -> HoldLine {
        let line = self.until(&format!("hold {state} ")).await;
        let mut words = line.splitn(4, ' ').skip(1);
        HoldLine {
            state: words.next().unwrap_or_default().to_string(),
            id: words.next().unwrap_or_default().to_string(),
            reason: words.next().unwrap_or_default().to_string(),
        }
    }

    /// A line on the phone's standard input: the user's hand.
    pub async fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// The user takes the page on the phone.
    pub async fn take_over(&mut self, reason: &str) {
        self.say(&format!("take_over {reason}")).await;
    }

    /// The user presses Done on the phone.
    pub async fn hand_back(&mut self) {
        self.say("handed_back").await;
    }

    /// The app is killed (SIGKILL): no clean close of anything; its Chromium dies with it.
    pub async fn kill(mut self) {
        self.child.kill().await.unwrap();
    }

    /// The app closes: its socket with 1000, its browser cleanly.
    pub async fn stop(mut self) {
        drop(self.child.stdin.take());
        if tokio::time::timeout(Duration::from_secs(15), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}
