#!/usr/bin/env bash
# The cluster's layout on one machine: the controller, three workers and the device gateway as
# five processes on loopback, each with its config file from this folder (the same keys as the
# cluster's ConfigMaps in deploy/k8s/base/config/). For demos and for tests that need the
# processes apart (SIGTERM one worker, say).
#
#   deploy/local/run.sh [--dir DIR] [--base-port N|auto] [--no-build] [--bin-dir DIR]
#                       [--release] [--grace SECONDS]
#
# It builds the binaries, starts the five, waits until each answers on its port and every
# worker has registered with the controller, then prints one line, `ready`, on stdout (the
# rest goes to stderr) and stays until Ctrl-C, SIGTERM or all five have ended (one that ends,
# a worker a test sent SIGTERM, is reported and the others go on). On the way out it sends
# SIGTERM to those still running, as Kubernetes does, and SIGKILL to any (and its Chromiums)
# still there after --grace seconds. Started in the background by another program, stop it
# with SIGTERM: shells ignore SIGINT in background jobs.
#
# In DIR (default data/local): config/*.toml (the files used, ports rewritten when --base-port
# is given), NAME.pid and NAME.log for controller, worker-1..3 and device-gateway, and `env`
# with the addresses (NANOMUSE_SERVER=…, NANOMUSE_GATEWAY_WS=…), for `source`.
#
# Ports: the files' own (controller 50051, workers 50061-50063, gateway 50071), or with
# --base-port N the same offsets from N (N+51, N+61…, N+71); `auto` picks a free N.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/deploy/local"
dir="$repo/data/local"
base_port=""
build=1
profile=debug
bin_dir=""
grace=30

while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --bin-dir) bin_dir="$2"; build=0; shift 2 ;;
    --release) profile=release; shift ;;
    --grace) grace="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { echo "run.sh: $*" >&2; }

names=(controller worker-1 worker-2 worker-3 device-gateway)
declare -A default_port=(
  [controller]=50051 [worker-1]=50061 [worker-2]=50062 [worker-3]=50063 [device-gateway]=50071
)

# A TCP connection to 127.0.0.1:$1 succeeds: someone listens there.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

all_free() {
  local name
  for name in "${names[@]}"; do
    if listening $(($1 + default_port[$name] - 50000)); then return 1; fi
  done
}

# `auto` looks below the kernel's ephemeral range (32768 and up): a port there may be held by
# an outgoing connection, which no connect test sees but which makes the bind fail.
if [ "$base_port" = auto ]; then
  base_port=""
  for _ in $(seq 20); do
    candidate=$(((RANDOM % 220 + 100) * 100))
    if all_free "$candidate"; then base_port=$candidate; break; fi
  done
  [ -n "$base_port" ] || { say "found no free set of ports"; exit 1; }
fi
declare -A port
for name in "${names[@]}"; do
  port[$name]=$((${base_port:-50000} + default_port[$name] - 50000))
  if listening "${port[$name]}"; then
    say "127.0.0.1:${port[$name]} (for $name) is taken; stop what runs there or pass --base-port"
    exit 1
  fi
done

"$here/ensure-chromium.sh"
if [ "$build" = 1 ]; then
  flags=(--bins -p nanomuse-controller -p nanomuse-browser -p nanomuse-worker -p nanomuse-device-gateway)
  [ "$profile" = release ] && flags+=(--release)
  say "building (cargo build ${flags[*]})"
  (cd "$repo" && cargo build --quiet "${flags[@]}")
fi
bin_dir="${bin_dir:-${CARGO_TARGET_DIR:-$repo/target}/$profile}"
for binary in controller worker device-gateway; do
  [ -x "$bin_dir/$binary" ] || { say "$bin_dir/$binary is missing (drop --no-build)"; exit 1; }
done

# The run's own copy of the config files; only the ports change, so the keys stay the ones
# the cluster's ConfigMaps have.
mkdir -p "$dir/config"
dir="$(cd "$dir" && pwd)"
for name in "${names[@]}"; do
  expressions=()
  for other in "${names[@]}"; do
    expressions+=(-e "s/127\.0\.0\.1:${default_port[$other]}\b/127.0.0.1:P${port[$other]}/g")
  done
  # The P marks a rewritten port so that one rewrite cannot feed the next; it goes last.
  sed "${expressions[@]}" -e 's/127\.0\.0\.1:P/127.0.0.1:/g' "$here/$name.toml" \
    >"$dir/config/$name.toml"
done

declare -A pid

# SIGTERM to each process still running, then SIGKILL to its process group (a worker's
# Chromiums too) after $grace seconds.
stop_all() {
  trap '' INT TERM
  local name deadline
  for name in "${names[@]}"; do
    [ -n "${pid[$name]:-}" ] && kill -TERM "${pid[$name]}" 2>/dev/null || true
  done
  deadline=$((SECONDS + grace))
  for name in "${names[@]}"; do
    [ -n "${pid[$name]:-}" ] || continue
    while kill -0 "${pid[$name]}" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
      sleep 0.1
    done
    if kill -0 "${pid[$name]}" 2>/dev/null; then
      say "$name did not stop within ${grace}s; killing it"
      kill -KILL -- "-${pid[$name]}" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
  say "stopped"
}
trap 'stop_all' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each in a session of its own (setsid execs in place: the pid is the binary's), so that a
# Ctrl-C on the terminal reaches only this script, which stops them in order, and so that a
# worker's Chromiums can be killed with it as one process group.
start() {
  local name="$1"
  shift
  NO_COLOR=1 setsid "$@" >"$dir/$name.log" 2>&1 </dev/null &
  pid[$name]=$!
  echo "${pid[$name]}" >"$dir/$name.pid"
  say "$name: pid ${pid[$name]}, 127.0.0.1:${port[$name]}, log $dir/$name.log"
}

start device-gateway "$bin_dir/device-gateway" --config "$dir/config/device-gateway.toml" \
  --listen "127.0.0.1:${port[device-gateway]}"
start controller "$bin_dir/controller" --config "$dir/config/controller.toml" \
  --listen "127.0.0.1:${port[controller]}" --data "$dir/controller"
for i in 1 2 3; do
  start "worker-$i" "$bin_dir/worker" --config "$dir/config/worker-$i.toml" \
    --listen "127.0.0.1:${port[worker-$i]}" --profiles-root "$dir/worker-$i/profiles"
done

cat >"$dir/env" <<EOF
NANOMUSE_SERVER=http://127.0.0.1:${port[controller]}
NANOMUSE_GATEWAY_WS=ws://127.0.0.1:${port[device-gateway]}/device
NANOMUSE_GATEWAY_GRPC=http://127.0.0.1:${port[device-gateway]}
EOF

# The controller answers HTTP on its gRPC port: a 200 from /api/state means its store is open
# and its routes are served.
controller_answers() {
  local status
  status=$(
    exec 3<>"/dev/tcp/127.0.0.1/${port[controller]}" || exit 1
    # The Host with its port: the controller answers to no other name (http::guard).
    printf 'GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' \
      "${port[controller]}" >&3
    head -n 1 <&3
  ) 2>/dev/null || return 1
  [[ "$status" == "HTTP/1.1 200"* ]]
}

# The controller logs each worker it takes in (`worker registered worker="NAME"`); no other
# signal from outside says a worker is placeable.
registered() { grep -q "worker registered worker=\"$1\" " "$dir/controller.log"; }

ready() {
  local name
  for name in "${names[@]}"; do listening "${port[$name]}" || return 1; done
  controller_answers || return 1
  for name in worker-1 worker-2 worker-3; do registered "$name" || return 1; done
}

deadline=$((SECONDS + 60))
until ready; do
  for name in "${names[@]}"; do
    if ! kill -0 "${pid[$name]}" 2>/dev/null; then
      say "$name exited while starting; the end of $dir/$name.log:"
      tail -n 20 "$dir/$name.log" >&2
      exit 1
    fi
  done
  if [ $SECONDS -ge $deadline ]; then
    say "not ready within 60 s; see the logs in $dir"
    exit 1
  fi
  sleep 0.1
done
say "controller http://127.0.0.1:${port[controller]} (gRPC and the card), gateway ws://127.0.0.1:${port[device-gateway]}/device"
echo ready

# Stays while any process runs; one that ends (a worker sent SIGTERM by a test) is reported,
# and the rest keep running.
declare -A name_of
for name in "${names[@]}"; do name_of[${pid[$name]}]=$name; done
running=${#names[@]}
while [ "$running" -gt 0 ]; do
  ended=""
  status=0
  wait -n -p ended || status=$?
  [ -n "$ended" ] || continue
  running=$((running - 1))
  say "${name_of[$ended]} (pid $ended) ended with status $status"
  pid[${name_of[$ended]}]=""
done
