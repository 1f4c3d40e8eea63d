//! `nanomuse-browser`: the browser tool from the shell; everything lives in [`nanomuse_browser::cli`].

#[tokio::main]
async fn main() {
    // Lossy rather than `env::args()`, which panics on an argument that is not UTF-8.
    let args = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    std::process::exit(nanomuse_browser::cli::main_with(args).await);
}
