//! Generates the gRPC code with a vendored protoc, so a fresh machine needs nothing installed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    // The URL policy is configuration too (the worker's floor, in TOML): one type for the file,
    // the wire and the checks.
    config.type_attribute(
        ".nanomuse.browser.v1.UrlPolicy",
        "#[derive(serde::Serialize, serde::Deserialize)] #[serde(default, deny_unknown_fields)]",
    );
    // The descriptors, exported as `FILE_DESCRIPTOR_SET`: the one table of services, methods
    // and messages that tests and tools read instead of the `.proto` text.
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    config.file_descriptor_set_path(out.join("contract.bin"));
    tonic_prost_build::configure().compile_with_config(
        config,
        &[
            "proto/browser_backend.proto",
            "proto/browser_tool.proto",
            "proto/device_gateway.proto",
            "proto/profile_transfer.proto",
            "proto/downloads.proto",
            "proto/screencast.proto",
        ],
        &["proto"],
    )?;
    Ok(())
}
