# syntax=docker/dockerfile:1
# The controller image: `controller` (hosted mode, the entrypoint) and `nanomuse-browser` (the
# CLI, for `kubectl exec … nanomuse-browser state` against the pod's own port).
#
#   docker build -f deploy/docker/controller.Dockerfile -t nanomuse/controller .
#
# No init process: the controller starts no children, and it handles SIGTERM itself (drains,
# flushes sled, exits), which is all PID 1 has to do.

FROM rust:1-bookworm AS builder
WORKDIR /src
COPY . .
# The registry and target caches survive between builds; the binaries are copied out of the
# cache mount inside the same step, since the mount is gone after it.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p nanomuse-controller --bin controller -p nanomuse-browser --bin nanomuse-browser \
 && install -D -t /out target/release/controller target/release/nanomuse-browser

FROM debian:bookworm-slim
# A fixed numeric user, so that Kubernetes' runAsNonRoot can check it and the volume's fsGroup
# matches (deploy/k8s/base/controller.yaml uses the same 10001).
RUN groupadd --gid 10001 nanomuse \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nanomuse \
 && install -d -o 10001 -g 10001 /var/lib/nanomuse/controller
COPY --from=builder /out/controller /out/nanomuse-browser /usr/local/bin/
USER 10001:10001
# gRPC (BrowserTool, WorkerRegistry, health) and HTTP (the card, /api, /metrics) on one port.
EXPOSE 50051
ENTRYPOINT ["/usr/local/bin/controller"]
CMD ["--listen", "0.0.0.0:50051", "--data", "/var/lib/nanomuse/controller"]
