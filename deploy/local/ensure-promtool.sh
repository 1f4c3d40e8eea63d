#!/usr/bin/env bash
# Makes sure `promtool` is installed: the tests validate deploy/observability's Prometheus config
# and alert rules with it. Debian ships it in the `prometheus` package; its recommends (node
# exporter and friends) are not needed for that, and the server it brings is not started here.
set -euo pipefail
if command -v promtool >/dev/null 2>&1 && promtool --version >/dev/null 2>&1; then
  exit 0
fi
echo "installing Debian's prometheus (for promtool)…" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
promtool --version >&2
