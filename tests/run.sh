#!/usr/bin/env bash
# The project's test command: checks its system packages, then format, lints and every test
# (unit and end to end, against real Chromium; the phone's protocol code on the JVM, against
# the real gateway).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clippy-driver >/dev/null || { echo "run.sh: clippy is needed (rustup component add clippy)" >&2; exit 2; }
# What the tests need besides the build, installed (or checked) while it compiles: Chromium,
# promtool, the TodoMVC corpus tests/tests/e2e/todomvc.rs drives (npm todomvc@0.1.1, cached)
# and the MCP tests' client, the official Python SDK, in a cached venv.
mcp_python="$(mktemp)"
trap 'rm -f "$mcp_python"' EXIT
(
  deploy/local/ensure-chromium.sh
  deploy/local/ensure-promtool.sh
  tests/ensure-todomvc.sh >/dev/null
  tests/mcp/ensure-client.sh >"$mcp_python"
) &
installing=$!
cargo fmt --all -- --check
# Every target compiled once, its lints checked in the same pass (tests/clippy-rustc.sh); the
# cargo commands after this one use the same compiler, so they find it all built.
export RUSTC_WORKSPACE_WRAPPER="$PWD/tests/clippy-rustc.sh"
cargo build --workspace --all-targets --quiet
wait "$installing"
NANOMUSE_MCP_PYTHON="$(cat "$mcp_python")"
export NANOMUSE_MCP_PYTHON
# The phone's protocol code, against the gateway binary just built.
android/run-tests.sh
# A test that hangs fails the run within 30 min (the output names it: "has been running for
# over 60 seconds") rather than holding CI to its own limit.
# A failing test's message and the logs it quotes are what says why; a backtrace of the
# test's own panic only repeats where it is, and would push them out of a log's tail.
RUST_BACKTRACE=0 timeout --kill-after=30 1800 cargo test --workspace
