//! The one rule for tenant, workspace, thread and page names: they become record keys and
//! profile folders, so only a safe alphabet, never `.` or `..`.

/// `Ok` when `value` is a valid name; else a message naming `what` and the rule.
pub fn check_name(what: &str, value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value.len() <= 128
        && value != "."
        && value != ".."
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} {:?} is not valid: use 1 to 128 of A-Z a-z 0-9 - _ .",
            crate::limits::excerpt(value)
        ))
    }
}

/// `Ok` when `value`, a short text a person reads or a backend takes as a name (a hold's
/// reason, a key), holds no NUL or other control character (a tab aside) and at most
/// `max_bytes`; else a message naming `what`. A NUL would cut the text short in C code and
/// logs, and a line break would forge log lines.
pub fn check_text(what: &str, value: &str, max_bytes: usize) -> Result<(), String> {
    if value.len() > max_bytes {
        return Err(format!(
            "the {what} is {} bytes long; it may have at most {max_bytes}",
            value.len()
        ));
    }
    if let Some(bad) = value.chars().find(|c| c.is_control() && *c != '\t') {
        return Err(format!(
            "the {what} holds the control character U+{:04X}; give plain text",
            bad as u32
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check_name, check_text};

    #[test]
    fn texts_with_nul_or_control_characters_are_refused() {
        for bad in ["a\0b", "line\nforged", "\u{7}", &"x".repeat(65)] {
            assert!(check_text("key", bad, 64).is_err(), "{bad:?}");
        }
        for good in ["Enter", "sign in to example.com", "tab\there", "ünïcode ✓"] {
            assert!(check_text("key", good, 64).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn names_that_could_leave_their_folder_are_refused() {
        for bad in ["", ".", "..", "../etc", "a/b", "a b", &"x".repeat(129)] {
            assert!(check_name("thread", bad).is_err(), "{bad:?}");
        }
        for good in ["t1", "work-space_2", "a.b", &"x".repeat(128)] {
            assert!(check_name("thread", good).is_ok(), "{good:?}");
        }
    }
}
