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
            "{what} {value:?} is not valid: use 1 to 128 of A-Z a-z 0-9 - _ ."
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::check_name;

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
