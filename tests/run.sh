#!/usr/bin/env bash
# The project's test command: checks its system packages, then format, lints and every test
# (unit and end to end, against real Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/ensure-chromium.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --workspace
