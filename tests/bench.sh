#!/usr/bin/env bash
# The benchmark: ours against Python Playwright on the same Chromium and pages, in one run.
# Not part of the test command. Writes BENCHMARKS.md at the top of the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/ensure-chromium.sh
python3 -c "import playwright" 2>/dev/null || python3 -m pip install -q -r tests/bench/requirements.txt
cargo run --release -p nanomuse-tests --example bench -- --out BENCHMARKS.md "$@"
