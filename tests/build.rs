//! The contract's descriptors, for the tests' lists of gRPC methods and actions
//! (`src/contract.rs`): protoc, vendored as the proto crate uses it, parses the proto crate's
//! `.proto` files into a descriptor set in `OUT_DIR`.

use std::path::PathBuf;
use std::process::Command;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../proto/proto");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "proto") {
            files.push(path);
        }
    }
    files.sort();
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("contract.bin");
    let status = Command::new(protoc_bin_vendored::protoc_bin_path()?)
        .arg("--include_imports")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .arg("-I")
        .arg(&dir)
        .args(&files)
        .status()?;
    if !status.success() {
        return Err(format!("protoc failed on {}: {status}", dir.display()).into());
    }
    Ok(())
}
