#!/usr/bin/env bash
# The project's test command: checks its system packages, then format, lints and every test
# (unit and end to end, against real Chromium; the phone's protocol code on the JVM, against
# the real gateway).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/ensure-chromium.sh
deploy/local/ensure-promtool.sh
# The TodoMVC corpus tests/tests/e2e/todomvc.rs drives (npm todomvc@0.1.1, cached).
tests/ensure-todomvc.sh >/dev/null
# The MCP tests' client, the official Python SDK, in a cached venv.
NANOMUSE_MCP_PYTHON="$(tests/mcp/ensure-client.sh)"
export NANOMUSE_MCP_PYTHON
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The gateway binary first: the phone's tests run against it.
cargo build --workspace --bins --quiet
android/run-tests.sh
# A test that hangs fails the run within 30 min (the output names it: "has been running for
# over 60 seconds") rather than holding CI to its own limit.
# A failing test's message and the logs it quotes are what says why; a backtrace of the
# test's own panic only repeats where it is, and would push them out of a log's tail.
RUST_BACKTRACE=0 timeout --kill-after=30 1800 cargo test --workspace
