#!/usr/bin/env bash
# Ours against Playwright MCP (npm @playwright/mcp, headless, isolated, on Debian's Chromium),
# both over stdio, one scripted MCP client (tests/bench/mcp_peer.py, the official Python SDK)
# doing the TodoMVC task on every app of the corpus (npm todomvc@0.1.1). Both npm packages are
# cached under ~/.cache/nanomuse. Not part of the test command. Writes its section of
# BENCHMARKS.md and prints it; the JSON goes to target/tmp/mcp-peer.json.
#   tests/bench/mcp-peer.sh [--apps vanillajs,react] [path/to/nanomuse-browser]
set -euo pipefail
cd "$(dirname "$0")/../.."
deploy/local/ensure-chromium.sh
PYTHON="$(tests/mcp/ensure-client.sh)"
PEER="${XDG_CACHE_HOME:-$HOME/.cache}/nanomuse/mcp-peer"
if [ ! -x "$PEER/node_modules/.bin/playwright-mcp" ] || [ ! -f "$PEER/node_modules/todomvc/examples/vanillajs/index.html" ]; then
  mkdir -p "$PEER"
  npm install --prefix "$PEER" --no-save --no-audit --no-fund --ignore-scripts --silent \
    todomvc@0.1.1 @playwright/mcp@0.0.83 >&2
fi
APPS=()
if [ "${1:-}" = "--apps" ]; then APPS=(--apps "$2"); shift 2; fi
OURS="${1:-target/release/nanomuse-browser}"
[ -x "$OURS" ] || cargo build --release -p nanomuse-controller --bin nanomuse-browser
mkdir -p target/tmp
OURS="$(realpath "$OURS")"
HERE="$PWD"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# Playwright MCP writes its snapshots' files into its working folder.
(cd "$WORK" && "$PYTHON" "$HERE/tests/bench/mcp_peer.py" "${APPS[@]}" \
  --corpus "$PEER/node_modules/todomvc" \
  --markdown "$HERE/BENCHMARKS.md" \
  --ours "$OURS mcp --listen 127.0.0.1:0 --data $WORK/ours" \
  --playwright "$PEER/node_modules/.bin/playwright-mcp --headless --isolated --executable-path /usr/bin/chromium --no-sandbox") \
  > target/tmp/mcp-peer.json
sed -n '/^## MCP: ours against Playwright MCP/,/^## [^M]/p' BENCHMARKS.md
