#!/usr/bin/env bash
# The benchmark: ours against Python Playwright on the same Chromium and pages, in one run.
# Not part of the test command. Writes BENCHMARKS.md at the top of the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/ensure-chromium.sh
python3 -c "import playwright" 2>/dev/null || python3 -m pip install -q -r tests/bench/requirements.txt
# The binaries of the multi-process mode in the same build as the benchmark, so that the
# dependencies are built once, with the same features.
cargo build --release -p nanomuse-tests --example bench \
  -p nanomuse-controller --bin controller -p nanomuse-worker --bin worker \
  -p nanomuse-browser --bin nanomuse-browser -p nanomuse-reference-device --bin reference-device
# Cargo leaves a binary it did not need to relink as old as it was; the benchmark refuses a
# binary older than the sources, and cargo has just said these are current.
touch target/release/{controller,worker,nanomuse-browser,reference-device}
# The built program itself: `cargo run` would unify features differently and build it again.
target/release/examples/bench --out BENCHMARKS.md "$@"
# The TodoMVC corpus: ours (tests/tests/e2e/todomvc.rs, which leaves its per-app results in
# target/tmp/todomvc-ours.json) against Python Playwright doing the same task, as a section of
# BENCHMARKS.md.
corpus="$(tests/ensure-todomvc.sh)"
cargo test -q -p nanomuse-tests --test e2e todomvc:: \
  || echo "the TodoMVC test failed; its results are in the table all the same" >&2
python3 tests/bench/todomvc_peer.py --corpus "$corpus" \
  --ours target/tmp/todomvc-ours.json --markdown BENCHMARKS.md
# Over MCP: ours against Playwright MCP on the same corpus, as a section of BENCHMARKS.md.
tests/bench/mcp-peer.sh target/release/nanomuse-browser >/dev/null
