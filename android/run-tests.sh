#!/usr/bin/env bash
# Compiles android/protocol (main + jdk + cdp + test sources) with kotlinc and runs its tests on
# the JVM. Needs a JDK (17+) and npm: the Kotlin compiler comes from the npm package
# `kotlin-compiler`, cached under android/.kotlin/ (not committed).
#
#   android/run-tests.sh [FILTER]     FILTER: run only the cases whose name contains it
#   android/run-tests.sh --cdp-phone URL DEVICE_ID TOKEN
#                                     the phone program: the client with a real headless
#                                     Chromium over CDP (android/run-phone.sh; see Phone.kt)
#
# The real-gateway cases run when DEVICE_GATEWAY_BIN names the binary, or when cargo's
# debug/device-gateway exists (under $CARGO_TARGET_DIR, else ../target); otherwise they are
# skipped.
set -euo pipefail
cd "$(dirname "$0")"
here="$(pwd)"

KOTLIN_VERSION="${KOTLIN_VERSION:-2.4.20}"
cache="$here/.kotlin/kotlin-compiler-$KOTLIN_VERSION"
kotlin_home="$cache/node_modules/kotlin-compiler"

for tool in java npm; do
  command -v "$tool" >/dev/null || { echo "run-tests.sh: $tool is needed" >&2; exit 2; }
done

# Several phones may start at once (the parity tests): one fetches and compiles, the others
# wait for it.
mkdir -p "$here/.kotlin"
exec 9>"$here/.kotlin/.lock"
flock 9

if [[ ! -x "$kotlin_home/bin/kotlinc" ]]; then
  echo "fetching kotlin-compiler@$KOTLIN_VERSION from npm into ${cache#$here/}" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --loglevel=error \
    "kotlin-compiler@$KOTLIN_VERSION" >/dev/null
fi
stdlib="$kotlin_home/lib/kotlin-stdlib.jar"
# The page scripts shared with the worker, loaded by Scripts.kt as classpath resources.
scripts="$here/../proto/scripts"

# The protocol part must stay plain Kotlin: nothing of Android, nothing Android lacks.
if grep -rlE '^import (android|androidx|java\.net\.http)\.' protocol/src/main; then
  echo "run-tests.sh: protocol/src/main must not import android, androidx or java.net.http" >&2
  exit 1
fi

out="$here/.kotlin/build"
# One compile of everything: the protocol with its JVM socket and tests, and the Android app's
# sources type-checked against stubs/ (hand-written signatures of the Android, AndroidX and
# OkHttp APIs the app uses; there is no Android SDK here). Only the protocol's tests run.
sources=(protocol/src/main/kotlin protocol/src/jdk/kotlin protocol/src/cdp/kotlin
         protocol/src/test/kotlin app/src/main/kotlin stubs/kotlin stubs/java)
stamp="$out/.stamp"
# Skipped when no source changed since the last compile.
if [[ ! -f "$stamp" || -n "$(find "${sources[@]}" -newer "$stamp" \( -name '*.kt' -o -name '*.java' \) | head -1)" \
      || "$0" -nt "$stamp" ]]; then
  rm -rf "$out/classes"
  mkdir -p "$out/classes"
  started=$(date +%s)
  # C1 only and the serial collector: kotlinc is a short-lived JVM, and this roughly thirds
  # its CPU time on a 2-core machine.
  if ! JAVA_OPTS="${JAVA_OPTS:--Xss4m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC}" \
      "$kotlin_home/bin/kotlinc" -jvm-target 17 -no-reflect -d "$out/classes" "${sources[@]}" 2>&1 \
      | { grep -v '^warning: unable to find kotlin-stdlib' || true; }; then
    echo "run-tests.sh: the compile failed" >&2
    exit 1
  fi
  touch "$stamp"
  echo "compiled in $(( $(date +%s) - started )) s" >&2
fi
flock -u 9
exec 9>&-

built="${CARGO_TARGET_DIR:-$here/../target}/debug/device-gateway"
if [[ -z "${DEVICE_GATEWAY_BIN:-}" && -x "$built" ]]; then
  export DEVICE_GATEWAY_BIN="$built"
fi

if [[ "${1:-}" == "--cdp-phone" ]]; then
  shift
  exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$out/classes:$stdlib:$scripts" \
    nanomuse.device.protocol.cdp.Phone "$@"
fi
exec java -cp "$out/classes:$stdlib:$scripts" nanomuse.device.protocol.RunTestsKt "$@"
