#!/usr/bin/env bash
# The MCP tests' client: the official Python SDK (tests/mcp/requirements.txt) in a venv under
# ~/.cache/nanomuse, created only when missing or when the requirements changed. Prints the
# venv's python, which tests/tests/e2e/mcp.rs takes from NANOMUSE_MCP_PYTHON.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
stamp="$(sha256sum "$here/requirements.txt" | cut -c1-12)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/nanomuse/mcp-client-$stamp"
if ! "$venv/bin/python" -c "import mcp" 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    # Debian's python3 keeps venv in a package of its own.
    rm -rf "$venv"
    apt-get update -qq >/dev/null && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
fi
echo "$venv/bin/python"
