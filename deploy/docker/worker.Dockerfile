# syntax=docker/dockerfile:1
# The worker image: `worker` and Debian's Chromium, which it drives.
#
#   docker build -f deploy/docker/worker.Dockerfile -t nanomuse/worker .
#
# Chromium's sandbox. The worker adds `--no-sandbox` only when it runs as root
# (worker/src/browser.rs, `running_as_root`); this image runs it as user 10001, so Chromium
# keeps its sandbox, and no sandbox flag is added here or in the manifests. That sandbox is
# what keeps a page that breaks its renderer away from the other tenants' profiles and cookies
# on the same worker, so it is kept rather than traded for an easier container. What it needs:
#   - user namespaces: Chromium's renderers go into new user, PID and network namespaces
#     (clone/unshare with CLONE_NEWUSER). The node's kernel must allow unprivileged user
#     namespaces (Debian's and most distributions' default; Ubuntu 24.04's
#     kernel.apparmor_restrict_unprivileged_userns=1 does not), and the container's seccomp
#     profile must let those calls through: the runtimes' default (RuntimeDefault) refuses
#     them to a container without CAP_SYS_ADMIN, so the pod uses the Localhost profile in
#     deploy/k8s/seccomp/nanomuse-chromium.json (the runtime default's refusals, less the
#     namespace calls). Checked on a Debian host: as a non-root user under that profile's
#     refusals, Chromium 156 with no flag runs its renderers in their own user and PID
#     namespaces under its seccomp-bpf sandbox, and the worker drives it.
#   - not the setuid helper: `chromium-sandbox` (a Recommends) is left out; the pod sets
#     allowPrivilegeEscalation: false, under which a setuid binary could not work anyway.
#   - /dev/shm larger than a container's 64 MiB: the pod mounts a memory emptyDir there, so
#     `--disable-dev-shm-usage` is not needed either.
# Where none of that can be had (a platform that forbids Localhost seccomp profiles), the one
# way left is `chromium_args = ["--no-sandbox"]` in worker.toml, and then the pod is the only
# wall between tenants: give each tenant its own worker pool.
#
# tini is PID 1: Chromium's helpers outlive their parents (a crashed browser's renderers, the
# zygote's children) and are re-parented to PID 1, which must reap them. tini runs without -g:
# SIGTERM goes to the worker alone, which drains and closes its browsers itself; sent to the
# whole group it would kill the browsers under actions still in flight.

FROM rust:1-bookworm AS builder
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p nanomuse-worker --bin worker \
 && install -D -t /out target/release/worker

FROM debian:bookworm-slim
# procps: the worker ends an orphaned Chromium that still holds a profile with `kill`.
# Fonts: Chromium draws pages with what fontconfig finds; Liberation and DejaVu cover Latin,
# Greek and Cyrillic (add fonts-noto-cjk, ~90 MB, for CJK pages).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium tini procps ca-certificates fonts-liberation fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --gid 10001 nanomuse \
 && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/nanomuse --shell /usr/sbin/nologin nanomuse \
 && install -d -o 10001 -g 10001 /var/lib/nanomuse/profiles
COPY --from=builder /out/worker /usr/local/bin/
USER 10001:10001
ENV HOME=/home/nanomuse
EXPOSE 50061
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/worker"]
CMD ["--listen", "0.0.0.0:50061", "--profiles-root", "/var/lib/nanomuse/profiles"]
