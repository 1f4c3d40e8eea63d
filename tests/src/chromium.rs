//! Small readers of what Chromium leaves behind: its processes, its profile's folders, its
//! JPEGs.

use std::path::{Path, PathBuf};

/// The pid of the main Chromium process running on `profile_dir`, if any.
pub fn chromium_pid(profile_dir: &Path) -> Option<u32> {
    let needle = format!("--user-data-dir={}", profile_dir.display());
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            let state = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let zombie = state.rsplit(')').next()?.trim_start().starts_with('Z');
            (cmdline.contains(&needle) && !cmdline.contains("--type=") && !zombie).then_some(pid)
        })
}

/// Whether process `pid` has wholly exited: gone, or a zombie whose every thread is gone
/// (its leader turns zombie while other threads are still tearing down).
pub fn process_ended(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let zombie = stat
        .rsplit(')')
        .next()
        .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X']));
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
    zombie && threads <= 1
}

/// The width and height a JPEG declares in its frame header.
pub fn jpeg_size(jpeg: &[u8]) -> (u32, u32) {
    assert_eq!(&jpeg[..2], &[0xFF, 0xD8], "not a JPEG");
    let mut i = 2;
    while i + 9 < jpeg.len() {
        assert_eq!(jpeg[i], 0xFF, "bad JPEG marker");
        let marker = jpeg[i + 1];
        let length = u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]) as usize;
        if matches!(marker, 0xC0..=0xC2) {
            let height = u16::from_be_bytes([jpeg[i + 5], jpeg[i + 6]]) as u32;
            let width = u16::from_be_bytes([jpeg[i + 7], jpeg[i + 8]]) as u32;
            return (width, height);
        }
        i += 2 + length;
    }
    panic!("no JPEG frame header");
}

pub fn profile_dir(profiles: &Path) -> PathBuf {
    profiles
        .join("tenant-a")
        .join("work")
        .join("browser-profile")
}

pub fn downloads_dir(profiles: &Path) -> PathBuf {
    profiles.join("tenant-a").join("work").join("downloads")
}
