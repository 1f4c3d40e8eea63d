//! Starting the Chromium process of one profile. The worker spawns it itself rather than
//! through chromiumoxide's launcher, for two reasons that decide whether a login survives a
//! stop:
//! - Chromium gets a process group of its own, so the signals a terminal (Ctrl-C), `timeout`,
//!   `tini -g` or a supervisor send to the worker's group do not reach it: the worker closes it
//!   cleanly instead, and Chromium writes its cookie database.
//! - It dies with the worker (`setpriv --pdeathsig`): a worker killed outright leaves no
//!   orphaned browser holding the profile; the cookie snapshot covers what it had not written.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::error::{Result, WorkerError};

/// What chromiumoxide's launcher passed by default (Puppeteer's list), less what the worker
/// sets itself.
const BASE_FLAGS: &[&str] = &[
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-features=TranslateUI",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--force-color-profile=srgb",
    "--metrics-recording-only",
    "--enable-automation",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-blink-features=IdleDetection",
    "--lang=en_US",
    "--enable-features=NetworkService,NetworkServiceInProcess",
    "--disable-extensions",
    "--headless=new",
    // CDP on a free port of loopback that only this process learns (from Chromium's stderr).
    "--remote-debugging-port=0",
];

/// How long Chromium may take to say where its DevTools socket is.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Where `setpriv` (util-linux) is on Debian and in the worker's image.
const SETPRIV: &str = "/usr/bin/setpriv";

/// Preferences every profile starts with: Chromium's stores of what a person types into forms
/// (passwords, addresses, cards) and its page translation off. A browser here never shows the
/// prompts that would fill those stores, yet Chromium parsed every page's forms for them and
/// detected every page's language (a few percent of its CPU per navigate and frame, measured).
/// Keeping no passwords in the profile is also one secret fewer in it.
const PRESET_PREFERENCES: &[(&[&str], bool)] = &[
    (&["credentials_enable_service"], false),
    (&["profile", "password_manager_enabled"], false),
    (&["autofill", "profile_enabled"], false),
    (&["autofill", "credit_card_enabled"], false),
    (&["translate", "enabled"], false),
];

/// A started Chromium: the process and its DevTools WebSocket address.
pub struct Started {
    pub child: Child,
    pub websocket: String,
}

/// Starts `executable` on `profile_dir` with `flags` (after the base flags; for a flag given
/// twice with comma lists, such as `--enable-features`, the lists are joined, since Chromium
/// would take only the last one).
pub async fn start(executable: &Path, profile_dir: &Path, flags: &[&str]) -> Result<Started> {
    preset_preferences(profile_dir).await?;
    let user_data_dir = format!("--user-data-dir={}", profile_dir.display());
    let all: Vec<&str> = BASE_FLAGS
        .iter()
        .copied()
        .chain(flags.iter().copied())
        .chain([user_data_dir.as_str()])
        .collect();
    let args = merge_lists(&all);

    let mut command = if Path::new(SETPRIV).exists() {
        let mut command = Command::new(SETPRIV);
        command.args(["--pdeathsig", "KILL", "--"]).arg(executable);
        command
    } else {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            tracing::warn!(
                "setpriv not found: a Chromium outlives a worker that is killed outright (until \
                 the next start of its profile ends it)"
            );
        });
        Command::new(executable)
    };
    command
        .args(&args)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| WorkerError::Launch(format!("cannot start {}: {e}", executable.display())))?;
    let stderr = child.stderr.take().expect("stderr is piped");
    match tokio::time::timeout(LAUNCH_TIMEOUT, websocket_from(stderr)).await {
        Ok(Ok(websocket)) => Ok(Started { child, websocket }),
        Ok(Err(output)) => {
            let status = child.wait().await.ok();
            Err(WorkerError::Launch(format!(
                "chromium exited ({}) before it was ready: {}",
                status.map_or_else(|| "unknown status".to_string(), |s| s.to_string()),
                last_lines(&output)
            )))
        }
        Err(_) => {
            let _ = child.kill().await;
            Err(WorkerError::Launch(format!(
                "chromium did not start within {} s",
                LAUNCH_TIMEOUT.as_secs()
            )))
        }
    }
}

/// Stops (`paused`) or continues every process of a Chromium [`start`]ed: its process group.
/// A stopped browser takes no CPU and answers nothing until it is continued; SIGKILL (the
/// worker's death, see [`start`]) still ends it.
pub fn set_paused(child: &Child, paused: bool) {
    let Some(pid) = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(id as i32))
    else {
        return;
    };
    let signal = if paused {
        rustix::process::Signal::STOP
    } else {
        rustix::process::Signal::CONT
    };
    if let Err(error) = rustix::process::kill_process_group(pid, signal) {
        tracing::debug!(%error, paused, "could not signal a chromium's process group");
    }
}

/// Writes [`PRESET_PREFERENCES`] into the profile's `Default/Preferences` (created on a fresh
/// folder; on an existing one the rest of the file is kept). A file Chromium could not read
/// either is left to Chromium, which replaces it.
async fn preset_preferences(profile_dir: &Path) -> Result<()> {
    let folder = profile_dir.join("Default");
    let path = folder.join("Preferences");
    let mut preferences = match tokio::fs::read(&path).await {
        Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(value) if value.is_object() => value,
            _ => return Ok(()),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(error) => return Err(error.into()),
    };
    if !preset(&mut preferences) {
        return Ok(());
    }
    tokio::fs::create_dir_all(&folder).await?;
    let temporary = path.with_extension("nanomuse.tmp");
    tokio::fs::write(&temporary, preferences.to_string()).await?;
    tokio::fs::rename(&temporary, &path).await?;
    Ok(())
}

/// Sets [`PRESET_PREFERENCES`] in `preferences`; whether anything changed.
fn preset(preferences: &mut serde_json::Value) -> bool {
    let mut changed = false;
    for (path, value) in PRESET_PREFERENCES {
        let (last, parents) = path.split_last().expect("a preference has a name");
        let mut node = &mut *preferences;
        for name in parents {
            if !node[*name].is_object() {
                node[*name] = serde_json::json!({});
            }
            node = &mut node[*name];
        }
        if node[*last] != serde_json::Value::Bool(*value) {
            node[*last] = serde_json::Value::Bool(*value);
            changed = true;
        }
    }
    changed
}

/// Reads Chromium's stderr up to the line naming its DevTools socket; the rest of its output
/// is drained in the background so a full pipe never blocks it. On an early exit, the output.
async fn websocket_from(
    stderr: tokio::process::ChildStderr,
) -> std::result::Result<String, String> {
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some((_, address)) = line.rsplit_once("listening on ")
            && address.starts_with("ws://")
            && address.contains("/devtools/browser/")
        {
            let address = address.trim().to_string();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok(address);
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    Err(seen)
}

fn last_lines(output: &str) -> String {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(3);
    let text = lines[start..].join(" | ");
    if text.is_empty() {
        "no output".to_string()
    } else {
        text.chars().take(600).collect()
    }
}

/// Joins the comma lists of flags given more than once (`--enable-features=A` and
/// `--enable-features=B` → `--enable-features=A,B`), keeping the first one's place; any other
/// repeated flag keeps its last value.
fn merge_lists(flags: &[&str]) -> Vec<String> {
    const LISTS: &[&str] = &[
        "--enable-features",
        "--disable-features",
        "--enable-blink-features",
        "--disable-blink-features",
    ];
    let mut merged: Vec<(String, Option<String>)> = Vec::new();
    for flag in flags {
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (*flag, None),
        };
        match merged.iter_mut().find(|(seen, _)| seen == name) {
            Some((_, Some(existing))) if LISTS.contains(&name) => {
                if let Some(value) = value {
                    existing.push(',');
                    existing.push_str(&value);
                }
            }
            Some(slot) => slot.1 = value,
            None => merged.push((name.to_string(), value)),
        }
    }
    merged
        .into_iter()
        .map(|(name, value)| match value {
            Some(value) => format!("{name}={value}"),
            None => name,
        })
        .collect()
}

/// Debian's `/usr/bin/chromium` is a shell script around `/usr/lib/chromium/chromium`; the
/// binary itself is started, so the process the worker watches is the browser and its exit is
/// seen at once.
pub fn real_binary(configured: &Path) -> PathBuf {
    let script = std::fs::read(configured).is_ok_and(|bytes| bytes.starts_with(b"#!"));
    let binary = Path::new("/usr/lib/chromium/chromium");
    if script && binary.exists() {
        binary.to_path_buf()
    } else {
        configured.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scheduler state of process `pid` (`/proc/<pid>/stat`): `T` when stopped.
    fn state_of(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap()
    }

    #[tokio::test]
    async fn pausing_stops_every_process_of_the_group_and_continuing_resumes_them() {
        // A leader and a child of its own, in a group of their own, as a Chromium starts.
        let mut leader = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .process_group(0)
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut out = BufReader::new(leader.stdout.take().unwrap()).lines();
        let child: u32 = out.next_line().await.unwrap().unwrap().parse().unwrap();
        let pids = [leader.id().unwrap(), child];

        set_paused(&leader, true);
        for pid in pids {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while state_of(pid) != 'T' {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{pid} was not stopped"
                );
                tokio::task::yield_now().await;
            }
        }
        set_paused(&leader, false);
        for pid in pids {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while state_of(pid) == 'T' {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{pid} was not continued"
                );
                tokio::task::yield_now().await;
            }
        }
        let group = rustix::process::Pid::from_raw(pids[0] as i32).unwrap();
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }

    #[test]
    fn feature_lists_given_twice_are_joined_and_other_flags_keep_the_last_value() {
        let merged = merge_lists(&[
            "--enable-features=A",
            "--no-sandbox",
            "--lang=en_US",
            "--enable-features=B,C",
            "--lang=de",
        ]);
        assert_eq!(
            merged,
            ["--enable-features=A,B,C", "--no-sandbox", "--lang=de"]
        );
    }

    #[test]
    fn preset_preferences_are_set_beside_the_profiles_own_and_only_once() {
        let mut preferences = serde_json::json!({
            "autofill": {"profile_enabled": true, "last_version_deduped": 120},
            "profile": "not an object",
            "homepage": "https://example.com/",
        });
        assert!(preset(&mut preferences));
        assert_eq!(
            preferences,
            serde_json::json!({
                "autofill": {"profile_enabled": false, "credit_card_enabled": false,
                             "last_version_deduped": 120},
                "profile": {"password_manager_enabled": false},
                "credentials_enable_service": false,
                "translate": {"enabled": false},
                "homepage": "https://example.com/",
            })
        );
        assert!(!preset(&mut preferences), "nothing left to change");
    }

    #[tokio::test]
    async fn a_fresh_profile_gets_its_preferences_file_and_an_unreadable_one_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        preset_preferences(dir.path()).await.unwrap();
        let written = std::fs::read(dir.path().join("Default/Preferences")).unwrap();
        let written: serde_json::Value = serde_json::from_slice(&written).unwrap();
        assert_eq!(written["profile"]["password_manager_enabled"], false);

        std::fs::write(dir.path().join("Default/Preferences"), "{not json").unwrap();
        preset_preferences(dir.path()).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("Default/Preferences")).unwrap(),
            "{not json"
        );
    }

    #[test]
    fn the_last_lines_of_a_failed_start_are_kept_short() {
        assert_eq!(last_lines(""), "no output");
        assert_eq!(last_lines("a\n\nb\nc\nd\n"), "b | c | d");
        assert_eq!(last_lines(&"x".repeat(2000)).len(), 600);
    }
}
