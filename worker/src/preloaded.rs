//! The page scripts of every step (the listing, the settle's look, finding an element, filling
//! a field, `wait`'s) defined once per document, before the page's own scripts, and then called
//! by name. Sent whole with each call instead, a script (the listing is 30 KB) travels the
//! DevTools pipe and is parsed and compiled anew every time (its argument makes each source
//! new to V8's cache), while a definition's source is the same in every document, so V8
//! compiles it once per renderer: measured here on a navigate + listing, 10 ms less CPU over
//! Chromium's processes and 9 ms sooner.
//!
//! Each is a read-only property of the top window that the page can neither replace nor
//! delete, named after a hash of its source. A document without it (one that began before the
//! page was set up, or a worker of another build's name) is sent the whole script as before.

use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use nanomuse_proto::scripts;
use serde_json::Value;

/// What the call answers where the script is not defined.
const NOT_DEFINED: &str = "\u{0}nanomuse: not defined";

struct Preloaded {
    name: String,
    source: &'static str,
}

static PRELOADED: LazyLock<Vec<Preloaded>> = LazyLock::new(|| {
    [
        scripts::LIST,
        scripts::RESOLVE,
        scripts::FRAME_DRAWN,
        scripts::FILL_FOCUSED,
        scripts::PASTE_FOCUSED,
        scripts::DOM_QUIET,
        scripts::TEXT_APPEARS,
        scripts::PAGE_TEXT,
    ]
    .into_iter()
    .map(|source| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        source.hash(&mut hasher);
        Preloaded {
            name: format!("__nanomuse_{:016x}", hasher.finish()),
            source,
        }
    })
    .collect()
});

/// The statement that defines them, run in every document before its own scripts (frames
/// within the page excepted: every script is called on the top one). Built once: every page
/// of every browser gets the same.
pub static DEFINITIONS: LazyLock<String> = LazyLock::new(|| {
    let mut statement = String::from(
        "(() => {\n  if (window !== window.top) return;\n  const define = (name, script) => {\n    \
         try { Object.defineProperty(window, name, {value: script}); } catch (_) {}\n  };\n",
    );
    for script in PRELOADED.iter() {
        statement.push_str(&format!(
            "  define('{}', ({}));\n",
            script.name, script.source
        ));
    }
    statement.push_str("})();\n");
    statement
});

/// The expression that calls `js` by name with `arg`, if `js` is one of the scripts defined in
/// every document; it answers [`NOT_DEFINED`] where it is not.
pub fn call(js: &str, arg: &Value) -> Option<String> {
    let script = PRELOADED.iter().find(|script| script.source == js)?;
    let name = &script.name;
    Some(format!(
        "typeof window.{name} === 'function' ? window.{name}({arg}) : {}",
        Value::from(NOT_DEFINED)
    ))
}

/// Whether a call's value says the script was not defined in the document.
pub fn was_not_defined(value: &Value) -> bool {
    value.as_str() == Some(NOT_DEFINED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_step_script_is_called_by_its_name_with_its_argument() {
        let call = call(scripts::LIST, &json!({"max": 80})).unwrap();
        assert!(call.len() < 200, "{call}");
        assert!(call.contains("({\"max\":80})"), "{call}");
        let name = call.split_whitespace().nth(1).unwrap();
        assert!(DEFINITIONS.contains(&format!("define('{}'", &name["window.".len()..])));
    }

    #[test]
    fn another_script_is_not_called_by_name() {
        assert_eq!(call("() => document.title", &Value::Null), None);
    }

    #[test]
    fn each_script_has_a_name_of_its_own() {
        let mut names: Vec<_> = PRELOADED.iter().map(|s| &s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PRELOADED.len());
    }

    #[test]
    fn only_the_not_defined_answer_reads_as_not_defined() {
        assert!(was_not_defined(&Value::from(NOT_DEFINED)));
        assert!(!was_not_defined(&json!("nanomuse: not defined")));
        assert!(!was_not_defined(&Value::Null));
    }
}
