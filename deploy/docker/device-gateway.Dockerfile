# syntax=docker/dockerfile:1
# The device gateway image: phones' WebSocket (/device) and the gateway's gRPC on one port.
#
#   docker build -f deploy/docker/device-gateway.Dockerfile -t nanomuse/device-gateway .
#
# `reference-device` stays out: it needs Chromium and is a test tool. No init process: the
# gateway starts no children and handles SIGTERM itself.

FROM rust:1-bookworm AS builder
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p nanomuse-device-gateway --bin device-gateway \
 && install -D -t /out target/release/device-gateway

FROM debian:bookworm-slim
RUN groupadd --gid 10001 nanomuse \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nanomuse
COPY --from=builder /out/device-gateway /usr/local/bin/
USER 10001:10001
EXPOSE 50071
ENTRYPOINT ["/usr/local/bin/device-gateway"]
CMD ["--listen", "0.0.0.0:50071"]
