//! The workspace's binaries as processes of their own: where they are, how they start quiet,
//! when they answer, how they stop; and waiting on what has no event.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How a served component runs: as a task of this process, or as a workspace binary in a
/// process of its own.
pub(crate) enum Running {
    Task {
        shutdown: CancellationToken,
        task: tokio::task::JoinHandle<anyhow::Result<()>>,
    },
    Process(tokio::process::Child),
}

impl Running {
    pub(crate) async fn stop(self) {
        match self {
            Running::Task { shutdown, task } => {
                shutdown.cancel();
                task.await.unwrap().unwrap();
            }
            Running::Process(mut child) => terminate(&mut child).await,
        }
    }
}

/// `nanomuse-browser serve` on its defaults with its data under `data`, on a free loopback
/// port; returns once it answers.
pub async fn spawn_serve(data: &Path) -> (tokio::process::Child, SocketAddr) {
    let address = free_address();
    (spawn_serve_on(data, address).await, address)
}

/// `nanomuse-browser serve` on `data` at `address` (the same again after a restart).
pub async fn spawn_serve_on(data: &Path, address: SocketAddr) -> tokio::process::Child {
    let mut command = tokio::process::Command::new(built_binary("nanomuse-browser"));
    command
        .args(["serve", "--listen", &address.to_string()])
        .arg("--data")
        .arg(data);
    let mut serve = spawn_quiet(command);
    let endpoint = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap();
    until_up(&mut serve, "nanomuse-browser serve", || endpoint.connect()).await;
    serve
}

/// SIGTERM, as Kubernetes stops a pod (and as a user's `kill` does): the binary drains, then
/// exits with 0.
pub async fn terminate(child: &mut tokio::process::Child) {
    stop_cleanly(child, "-TERM").await;
}

/// SIGINT, as Ctrl-C in a terminal: the binary stops as cleanly, exiting with 0.
pub async fn interrupt(child: &mut tokio::process::Child) {
    stop_cleanly(child, "-INT").await;
}

async fn stop_cleanly(child: &mut tokio::process::Child, signal: &str) {
    let pid = child.id().expect("still running").to_string();
    let sent = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid} failed");
    let status = child.wait().await.unwrap();
    assert!(status.success(), "process {pid} ended with {status}");
}

/// The repository's top folder.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Where the workspace's binaries are, built before the tests (`cargo build --workspace
/// --bins`, as `tests/run.sh` does): the tests run in `<target>/<profile>/deps` (the benchmark
/// in `<target>/<profile>/examples`), the binaries one up.
pub fn binaries_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// The workspace's binary `name`; panics when it was not built.
pub fn built_binary(name: &str) -> PathBuf {
    let binary = binaries_dir().join(name);
    assert!(
        binary.exists(),
        "{} is missing: build the binaries first (cargo build --workspace --bins, as tests/run.sh does)",
        binary.display()
    );
    binary
}

/// A loopback address no one listens on now, for a binary that is told where to listen (the
/// binaries print their bound address only in their logs). Its port lies below the kernel's
/// ephemeral range and is handed out once per test process: a port from that range (a
/// `bind(0)`) can be taken, before the binary binds it, by any outgoing connection or another
/// test's listener, of which a full suite makes many.
pub fn free_address() -> SocketAddr {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let (low, high) = fixed_port_range();
    let span = u32::from(high - low);
    // Test processes that run at once start at different places.
    let start = std::process::id().wrapping_mul(7_919) % span;
    for _ in 0..span {
        let port = low + ((start + NEXT.fetch_add(1, Ordering::Relaxed)) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return SocketAddr::from(([127, 0, 0, 1], port));
        }
    }
    panic!("no free port on 127.0.0.1 between {low} and {high}");
}

/// Ports no `bind(0)` or outgoing connection takes: below the ephemeral range
/// (`net.ipv4.ip_local_port_range`, 32768 by default) and above the well-known ones.
fn fixed_port_range() -> (u16, u16) {
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    assert!(
        ephemeral_low > 12_000,
        "the ephemeral port range starts at {ephemeral_low}: no room below it for the tests' ports"
    );
    (10_000, ephemeral_low)
}

/// Starts `command` with only warnings and errors on stderr; the process dies with this one
/// should it panic before it is stopped.
pub fn spawn_quiet(mut command: tokio::process::Command) -> tokio::process::Child {
    command
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    command.spawn().expect("cannot start the binary")
}

/// Retries `connect` until the process `child` answers; there is no event for a process that
/// starts listening. Panics when the process exits first or takes over 20 s.
pub async fn until_up<T, E: std::fmt::Debug, F>(
    child: &mut tokio::process::Child,
    what: &str,
    mut connect: impl FnMut() -> F,
) -> T
where
    F: std::future::Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match connect().await {
            Ok(connected) => return connected,
            Err(error) => {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("the {what} binary exited ({status}) before answering");
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the {what} binary did not answer within 20 s: {error:?}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

/// Waits, up to `limit`, for `condition` to hold; there is no event to wait on for a process
/// that ends or a file that appears.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    condition()
}

/// Worker logs on the test's output, filtered by `RUST_LOG` (off when unset).
pub fn logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
}
