#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed (the worker drives /usr/bin/chromium). protoc needs
# nothing: the build uses a vendored one.
set -euo pipefail
if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; then
  exit 0
fi
echo "installing Debian's chromium…" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version >&2
