//! Generates the gRPC code with a vendored protoc, so a fresh machine needs nothing installed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure().compile_with_config(
        config,
        &[
            "proto/browser_backend.proto",
            "proto/browser_tool.proto",
            "proto/device_gateway.proto",
        ],
        &["proto"],
    )?;
    Ok(())
}
