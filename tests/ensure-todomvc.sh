#!/usr/bin/env bash
# Makes sure the TodoMVC corpus is installed: the npm package todomvc@0.1.1, the TodoMVC app of
# dozens of front-end frameworks (examples/<name>/index.html), which tests/tests/e2e/todomvc.rs
# serves on 127.0.0.1 and drives. Cached under ~/.cache/nanomuse (or $NANOMUSE_TODOMVC's parent
# folders when set); skipped when present. Prints the corpus's folder.
set -euo pipefail
DEFAULT="${XDG_CACHE_HOME:-$HOME/.cache}/nanomuse/todomvc-0.1.1/node_modules/todomvc"
CORPUS="${NANOMUSE_TODOMVC:-$DEFAULT}"
if [ ! -f "$CORPUS/examples/vanillajs/index.html" ]; then
  PREFIX="$(dirname "$(dirname "$CORPUS")")"
  echo "installing the TodoMVC corpus (npm todomvc@0.1.1) into $PREFIX…" >&2
  mkdir -p "$PREFIX"
  npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --ignore-scripts --silent todomvc@0.1.1 >&2
fi
echo "$CORPUS"
