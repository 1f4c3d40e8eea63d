#!/usr/bin/env bash
# The compiler tests/run.sh builds the workspace's own crates with (RUSTC_WORKSPACE_WRAPPER):
# clippy's driver, which lints a crate as `cargo clippy` does and then compiles it as rustc
# would, with every warning an error. Cargo calls it as `clippy-rustc.sh RUSTC ARGS…`, the way
# `cargo clippy` calls clippy-driver. One pass both lints and builds, where `cargo clippy`
# followed by a build type-checked every dependency twice (about 4 of CI's minutes).
exec clippy-driver "$@" -D warnings
