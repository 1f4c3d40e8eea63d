//! Reading one service's `[section]` from a TOML configuration file, the same way for every
//! binary that has one.

use std::path::Path;

use serde::de::DeserializeOwned;

/// The `[section]` table of the TOML file at `path` (its defaults when the file has none, or
/// when there is no file). A table other than `section` in the file is refused, naming it.
pub fn config_section<T: DeserializeOwned + Default>(
    path: Option<&Path>,
    section: &str,
) -> Result<T, String> {
    let Some(path) = path else {
        return Ok(T::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut file: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let table = file.remove(section);
    if let Some(other) = file.keys().next() {
        return Err(format!(
            "{}: unknown section [{other}]; this program reads [{section}]",
            path.display()
        ));
    }
    match table {
        Some(table) => {
            T::deserialize(table).map_err(|e| format!("{}: [{section}]: {e}", path.display()))
        }
        None => Ok(T::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Section {
        name: String,
    }

    #[test]
    fn a_section_is_read_and_mistakes_are_named() {
        let dir = std::env::temp_dir().join(format!("config-section-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.toml");
        let read = |text: &str| {
            std::fs::write(&file, text).unwrap();
            config_section::<Section>(Some(&file), "worker")
        };
        assert_eq!(read("[worker]\nname = \"w\"\n").unwrap().name, "w");
        assert_eq!(read("").unwrap(), Section::default());
        assert!(read("[controller]\n").unwrap_err().contains("[controller]"));
        assert!(read("[worker]\nnmae = 1\n").unwrap_err().contains("nmae"));
        assert_eq!(
            config_section::<Section>(None, "worker").unwrap(),
            Section::default()
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
