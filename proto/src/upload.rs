//! The bounds of an upload and the names its files may have, shared by the controller (which
//! refuses before any op), the worker and the gateway (which refuse what came another way).

use crate::BackendError;
use crate::v1::UploadFile;

/// At most this many files in one upload.
pub const MAX_FILES: usize = 10;
/// Each file at most 10 MiB.
pub const MAX_FILE_BYTES: usize = 10 * 1024 * 1024;
/// All the files of one upload at most 20 MiB.
pub const MAX_TOTAL_BYTES: usize = 20 * 1024 * 1024;

/// A size as a person reads it: "812 bytes", "12.3 KB", "4.0 MB".
pub fn human_size(bytes: usize) -> String {
    match bytes {
        0..1000 => format!("{bytes} bytes"),
        1000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1000.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_000_000.0),
    }
}

/// A file's name as the page will see it: a plain name, no path, no control character, not
/// hidden, at most 255 bytes (what a file system takes).
pub fn check_name(name: &str) -> Result<(), BackendError> {
    let shown = nanomuse_common::limits::excerpt(name);
    let refuse = |why: &str| {
        Err(BackendError::InvalidArgument(format!(
            "{shown:?} cannot be an uploaded file's name: {why}"
        )))
    };
    if name.is_empty() {
        return refuse("it is empty");
    }
    if name.contains('/') || name.contains('\\') {
        return refuse("a name has no path (no / or \\)");
    }
    if name.chars().any(char::is_control) {
        return refuse("it holds a control character");
    }
    if name.starts_with('.') {
        return refuse("it starts with a dot");
    }
    if name.len() > 255 {
        return refuse("it is longer than 255 bytes");
    }
    Ok(())
}

/// The files of one upload: at least one, at most [`MAX_FILES`], each named by
/// [`check_name`] and at most [`MAX_FILE_BYTES`], [`MAX_TOTAL_BYTES`] in all.
pub fn check_files(files: &[UploadFile]) -> Result<(), BackendError> {
    if files.is_empty() {
        return Err(BackendError::InvalidArgument(
            "upload needs at least one file: name a local file, or downloads/NAME for one of \
             the workspace's downloads"
                .into(),
        ));
    }
    if files.len() > MAX_FILES {
        return Err(BackendError::InvalidArgument(format!(
            "{} files is too many for one upload: at most {MAX_FILES}",
            files.len()
        )));
    }
    let mut total = 0;
    for file in files {
        check_name(&file.name)?;
        if file.content.len() > MAX_FILE_BYTES {
            return Err(BackendError::ResourceExhausted(format!(
                "{:?} is {}, more than an upload takes per file ({} MiB)",
                file.name,
                human_size(file.content.len()),
                MAX_FILE_BYTES >> 20
            )));
        }
        total += file.content.len();
    }
    if total > MAX_TOTAL_BYTES {
        return Err(BackendError::ResourceExhausted(format!(
            "the files come to {}, more than one upload takes ({} MiB)",
            human_size(total),
            MAX_TOTAL_BYTES >> 20
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, bytes: usize) -> UploadFile {
        UploadFile {
            name: name.into(),
            mime_type: String::new(),
            content: vec![b'x'; bytes],
        }
    }

    #[test]
    fn sizes_read_as_a_person_reads_them() {
        assert_eq!(human_size(812), "812 bytes");
        assert_eq!(human_size(12_345), "12.3 KB");
        assert_eq!(human_size(4_000_000), "4.0 MB");
    }

    #[test]
    fn bounds_and_names_are_refused_with_the_reason() {
        assert!(check_files(&[file("a.pdf", 10)]).is_ok());
        let error = |files: &[UploadFile]| check_files(files).unwrap_err().to_string();
        assert!(error(&[]).contains("at least one file"));
        let eleven: Vec<_> = (0..11).map(|i| file(&format!("f{i}"), 1)).collect();
        assert!(error(&eleven).contains("11 files is too many"));
        assert!(error(&[file("big.bin", MAX_FILE_BYTES + 1)]).contains("per file"));
        let three = [
            file("a", MAX_FILE_BYTES),
            file("b", MAX_FILE_BYTES),
            file("c", 1),
        ];
        assert!(error(&three).contains("more than one upload takes"));
        for bad in ["", "../etc/passwd", "a\\b", ".hidden", "a\nb"] {
            assert!(
                error(&[file(bad, 1)]).contains("cannot be an uploaded file's name"),
                "{bad:?}"
            );
        }
    }
}
