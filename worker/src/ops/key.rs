//! `key {key}`: presses one named key (Enter, Tab, Escape, F5, …) or one character, with the
//! modifiers named before it: "Shift+Enter", "Control+s", "Control+Shift+ArrowLeft".
//!
//! The modifiers go down first and up last, as on a keyboard, so a page that watches Shift's
//! own keydown sees it, and the key's events carry them (`event.ctrlKey`, …). Chromium's own
//! editing shortcuts follow (Control+a selects all, Control+z undoes).

use nanomuse_proto::{KeyReply, KeyRequest};
use serde_json::{Value, json};

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// Named keys: (key, code, Windows virtual key code, text it types).
const NAMED_KEYS: &[(&str, &str, u32, &str)] = &[
    ("Enter", "Enter", 13, "\r"),
    ("Tab", "Tab", 9, ""),
    ("Escape", "Escape", 27, ""),
    ("Backspace", "Backspace", 8, ""),
    ("Delete", "Delete", 46, ""),
    ("Insert", "Insert", 45, ""),
    ("ArrowUp", "ArrowUp", 38, ""),
    ("ArrowDown", "ArrowDown", 40, ""),
    ("ArrowLeft", "ArrowLeft", 37, ""),
    ("ArrowRight", "ArrowRight", 39, ""),
    ("Home", "Home", 36, ""),
    ("End", "End", 35, ""),
    ("PageUp", "PageUp", 33, ""),
    ("PageDown", "PageDown", 34, ""),
    ("Space", "Space", 32, " "),
];

/// A US keyboard's digit and punctuation keys: (character, with Shift, code, virtual key code).
const SYMBOL_KEYS: &[(char, char, &str, u32)] = &[
    ('1', '!', "Digit1", 49),
    ('2', '@', "Digit2", 50),
    ('3', '#', "Digit3", 51),
    ('4', '$', "Digit4", 52),
    ('5', '%', "Digit5", 53),
    ('6', '^', "Digit6", 54),
    ('7', '&', "Digit7", 55),
    ('8', '*', "Digit8", 56),
    ('9', '(', "Digit9", 57),
    ('0', ')', "Digit0", 48),
    ('-', '_', "Minus", 189),
    ('=', '+', "Equal", 187),
    ('[', '{', "BracketLeft", 219),
    (']', '}', "BracketRight", 221),
    ('\\', '|', "Backslash", 220),
    (';', ':', "Semicolon", 186),
    ('\'', '"', "Quote", 222),
    (',', '<', "Comma", 188),
    ('.', '>', "Period", 190),
    ('/', '?', "Slash", 191),
    ('`', '~', "Backquote", 192),
];

/// Other names a key goes by.
const ALIASES: &[(&str, &str)] = &[("Return", "Enter"), ("Esc", "Escape"), (" ", "Space")];

/// A modifier key, held while the key after it is pressed.
struct Modifier {
    name: &'static str,
    others: &'static [&'static str],
    /// CDP's modifier bit.
    bit: u32,
    /// Its own key's code and virtual key code.
    code: &'static str,
    virtual_key: u32,
}

/// The modifiers, in the order they go down.
const MODIFIERS: &[Modifier] = &[
    Modifier {
        name: "Alt",
        others: &["Option"],
        bit: 1,
        code: "AltLeft",
        virtual_key: 18,
    },
    Modifier {
        name: "Control",
        others: &["Ctrl"],
        bit: 2,
        code: "ControlLeft",
        virtual_key: 17,
    },
    Modifier {
        name: "Meta",
        others: &["Cmd", "Command", "Super"],
        bit: 4,
        code: "MetaLeft",
        virtual_key: 91,
    },
    Modifier {
        name: "Shift",
        others: &[],
        bit: SHIFT,
        code: "ShiftLeft",
        virtual_key: 16,
    },
];

const SHIFT: u32 = 8;

/// One key press as Chromium's input takes it.
#[derive(Debug, PartialEq)]
struct Press {
    /// How the press is named back: its modifiers and its key, as this module spells them.
    name: String,
    key: String,
    code: String,
    virtual_key: u32,
    /// What the key types: none while Control, Alt or Meta is held (a shortcut types nothing).
    text: String,
    /// CDP's modifier bits.
    modifiers: u32,
}

/// The words an unknown key's error lists.
fn known_keys() -> String {
    let named: Vec<_> = NAMED_KEYS.iter().map(|(key, ..)| *key).collect();
    format!(
        "{}, F1–F12 or a single character, after modifiers if any (Control, Shift, Alt, Meta) \
         as in Shift+Enter or Control+a",
        named.join(", ")
    )
}

fn modifier(name: &str) -> Option<&'static Modifier> {
    MODIFIERS.iter().find(|m| {
        m.name.eq_ignore_ascii_case(name) || m.others.iter().any(|o| o.eq_ignore_ascii_case(name))
    })
}

/// The modifiers `bits` holds, in the order they go down.
fn held(bits: u32) -> impl DoubleEndedIterator<Item = &'static Modifier> {
    MODIFIERS.iter().filter(move |m| bits & m.bit != 0)
}

/// The press `name` names, or why it names none.
fn parse(name: &str) -> std::result::Result<Press, String> {
    let name = name.trim_matches('\n');
    // The key is after the last "+", unless that "+" is the key itself ("Control++", "+").
    let (modifier_words, last) = match name.strip_suffix("++") {
        Some(rest) => (Some(rest), "+"),
        None if name == "+" => (None, name),
        None => match name.rsplit_once('+') {
            Some((words, last)) => (Some(words), last),
            None => (None, name),
        },
    };
    let mut modifiers = 0;
    for word in modifier_words
        .into_iter()
        .flat_map(|words| words.split('+'))
    {
        let held =
            modifier(word.trim()).ok_or_else(|| format!("{:?} is not a modifier", word.trim()))?;
        modifiers |= held.bit;
    }
    // "Control + s" means "s"; a lone " " is Space.
    let last = match last.trim() {
        "" => last,
        trimmed => trimmed,
    };
    if modifier(last).is_some() {
        return Err(format!(
            "{last:?} is a modifier: name the key it goes with, as in {last}+a"
        ));
    }
    if last.is_empty()
        && let Some(words) = modifier_words
    {
        return Err(format!(
            "a key is missing after {words}+: name it, as in {words}+a"
        ));
    }
    let mut press = key_alone(last).ok_or_else(|| format!("unknown key {last:?}"))?;
    if modifiers != 0 && press.virtual_key == 0 && !last.is_ascii() {
        return Err(format!(
            "{last:?} is no key of a keyboard to hold modifiers with: type it"
        ));
    }
    // A letter with modifiers is the key's own letter, capital only with Shift.
    if modifiers != 0 && press.code.starts_with("Key") {
        press.key = if modifiers & SHIFT != 0 {
            press.key.to_uppercase()
        } else {
            press.key.to_lowercase()
        };
        press.text = press.key.clone();
        press.name = press.key.clone();
    }
    // A digit or a mark with Shift is what a US keyboard types with it: Shift+1 is "!".
    if modifiers & SHIFT != 0
        && let Some((_, shifted, ..)) = SYMBOL_KEYS
            .iter()
            .find(|(plain, ..)| press.key == plain.to_string())
    {
        press.key = shifted.to_string();
        press.text = press.key.clone();
    }
    if modifiers & !SHIFT != 0 {
        press.text.clear();
    }
    press.modifiers = modifiers;
    press.name = held(modifiers)
        .map(|m| m.name)
        .chain([press.name.as_str()])
        .collect::<Vec<_>>()
        .join("+");
    Ok(press)
}

/// A key without modifiers: a named key, F1–F12 or one character.
fn key_alone(name: &str) -> Option<Press> {
    let name = ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(name, |(_, key)| key);
    let press = |key: &str, code: String, virtual_key, text: &str| Press {
        name: if key == " " {
            "Space".into()
        } else {
            key.into()
        },
        key: key.into(),
        code,
        virtual_key,
        text: text.into(),
        modifiers: 0,
    };
    if let Some((key, code, vk, text)) = NAMED_KEYS
        .iter()
        .find(|(key, ..)| key.eq_ignore_ascii_case(name))
    {
        let key = if *key == "Space" { " " } else { key };
        return Some(press(key, code.to_string(), *vk, text));
    }
    if let Some(n) = function_key(name) {
        let key = format!("F{n}");
        return Some(press(&key, key.clone(), 111 + n, ""));
    }
    let mut chars = name.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let (code, vk) = if c.is_ascii_alphabetic() {
        (
            format!("Key{}", c.to_ascii_uppercase()),
            c.to_ascii_uppercase() as u32,
        )
    } else if let Some((_, _, code, vk)) = SYMBOL_KEYS.iter().find(|(plain, ..)| *plain == c) {
        (code.to_string(), *vk)
    } else {
        (String::new(), 0)
    };
    Some(press(&c.to_string(), code, vk, &c.to_string()))
}

/// F1–F12's number.
fn function_key(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(['F', 'f'])?;
    let n: u32 = digits.parse().ok().filter(|_| !digits.starts_with('0'))?;
    (1..=12).contains(&n).then_some(n)
}

fn key_event(kind: &str, key: &str, code: &str, virtual_key: u32, modifiers: u32) -> Value {
    json!({"type": kind, "key": key, "code": code, "modifiers": modifiers,
        "windowsVirtualKeyCode": virtual_key, "nativeVirtualKeyCode": virtual_key})
}

/// The key events of `press`: its modifiers down, the key down and up, its modifiers up.
fn events(press: &Press) -> Vec<Value> {
    let mut events = Vec::new();
    let mut down = 0;
    for m in held(press.modifiers) {
        down |= m.bit;
        events.push(key_event("rawKeyDown", m.name, m.code, m.virtual_key, down));
    }
    let kind = if press.text.is_empty() {
        "rawKeyDown"
    } else {
        "keyDown"
    };
    let mut key_down = key_event(kind, &press.key, &press.code, press.virtual_key, down);
    if !press.text.is_empty() {
        key_down["text"] = json!(press.text);
        key_down["unmodifiedText"] = json!(press.text);
    }
    events.push(key_down);
    events.push(key_event(
        "keyUp",
        &press.key,
        &press.code,
        press.virtual_key,
        down,
    ));
    for m in held(press.modifiers).rev() {
        down &= !m.bit;
        events.push(key_event("keyUp", m.name, m.code, m.virtual_key, down));
    }
    events
}

pub async fn run(page: &PageHandle, request: &KeyRequest) -> Result<KeyReply> {
    let press = parse(&request.key)
        .map_err(|why| WorkerError::invalid(format!("{why}; use one of {}", known_keys())))?;
    let commands: Vec<_> = events(&press)
        .into_iter()
        .map(|event| ("Input.dispatchKeyEvent", event))
        .collect();
    page.cdp_in_order(&commands).await?;
    Ok(KeyReply {
        pressed: press.name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pressed(name: &str) -> (String, String, u32, String, u32) {
        let p = parse(name).unwrap();
        (p.key, p.code, p.virtual_key, p.text, p.modifiers)
    }

    fn owned(
        key: &str,
        code: &str,
        vk: u32,
        text: &str,
        modifiers: u32,
    ) -> (String, String, u32, String, u32) {
        (key.into(), code.into(), vk, text.into(), modifiers)
    }

    #[test]
    fn named_keys_aliases_and_characters() {
        assert_eq!(pressed("enter"), owned("Enter", "Enter", 13, "\r", 0));
        assert_eq!(pressed("Return\n"), owned("Enter", "Enter", 13, "\r", 0));
        assert_eq!(pressed("Esc"), owned("Escape", "Escape", 27, "", 0));
        assert_eq!(pressed(" "), owned(" ", "Space", 32, " ", 0));
        assert_eq!(pressed("a"), owned("a", "KeyA", 65, "a", 0));
        assert_eq!(pressed("7"), owned("7", "Digit7", 55, "7", 0));
        assert_eq!(pressed("é"), owned("é", "", 0, "é", 0));
        assert_eq!(pressed("+"), owned("+", "", 0, "+", 0));
        assert_eq!(pressed("f5"), owned("F5", "F5", 116, "", 0));
        assert_eq!(pressed("F12"), owned("F12", "F12", 123, "", 0));
    }

    #[test]
    fn modifiers_are_held_and_a_shortcut_types_nothing() {
        assert_eq!(pressed("Shift+Enter"), owned("Enter", "Enter", 13, "\r", 8));
        assert_eq!(pressed("shift+a"), owned("A", "KeyA", 65, "A", 8));
        assert_eq!(pressed("Ctrl+S"), owned("s", "KeyS", 83, "", 2));
        assert_eq!(pressed("Control + s"), owned("s", "KeyS", 83, "", 2));
        assert_eq!(pressed("Control+s"), owned("s", "KeyS", 83, "", 2));
        assert_eq!(
            pressed("Control+Shift+ArrowLeft"),
            owned("ArrowLeft", "ArrowLeft", 37, "", 10)
        );
        assert_eq!(pressed("Cmd+Enter"), owned("Enter", "Enter", 13, "", 4));
        assert_eq!(pressed("Control++"), owned("+", "", 0, "", 2));
        assert_eq!(pressed("Alt+F4"), owned("F4", "F4", 115, "", 1));
    }

    #[test]
    fn shift_with_a_digit_or_a_mark_types_what_a_us_keyboard_does() {
        assert_eq!(pressed("Shift+1"), owned("!", "Digit1", 49, "!", 8));
        assert_eq!(pressed("shift+/"), owned("?", "Slash", 191, "?", 8));
        assert_eq!(pressed(";"), owned(";", "Semicolon", 186, ";", 0));
        assert_eq!(pressed("Control+Shift+="), owned("+", "Equal", 187, "", 10));
        assert_eq!(parse("Shift+1").unwrap().name, "Shift+1");
    }

    #[test]
    fn a_press_is_named_back_as_this_module_spells_it() {
        for (asked, named) in [
            ("ctrl + enter", "Control+Enter"),
            (" ", "Space"),
            ("esc", "Escape"),
            ("shift+a", "Shift+A"),
            ("Control++", "Control++"),
            ("cmd+shift+z", "Meta+Shift+Z"),
            ("é", "é"),
            ("f5", "F5"),
        ] {
            assert_eq!(parse(asked).unwrap().name, named, "{asked:?}");
        }
    }

    #[test]
    fn a_name_that_is_no_key_says_why() {
        assert_eq!(parse("ab").unwrap_err(), "unknown key \"ab\"");
        assert_eq!(parse("").unwrap_err(), "unknown key \"\"");
        assert_eq!(parse("F13").unwrap_err(), "unknown key \"F13\"");
        assert_eq!(parse("F05").unwrap_err(), "unknown key \"F05\"");
        assert_eq!(parse("Hyper+a").unwrap_err(), "\"Hyper\" is not a modifier");
        assert_eq!(parse("+a").unwrap_err(), "\"\" is not a modifier");
        assert_eq!(
            parse("Shift+").unwrap_err(),
            "a key is missing after Shift+: name it, as in Shift+a"
        );
        assert_eq!(
            parse("Control+é").unwrap_err(),
            "\"é\" is no key of a keyboard to hold modifiers with: type it"
        );
        assert_eq!(
            parse("Shift").unwrap_err(),
            "\"Shift\" is a modifier: name the key it goes with, as in Shift+a"
        );
    }

    #[test]
    fn modifiers_go_down_first_and_up_last() {
        let kinds: Vec<_> = events(&parse("Control+Shift+Tab").unwrap())
            .iter()
            .map(|e| {
                format!(
                    "{} {} {}",
                    e["type"].as_str().unwrap(),
                    e["key"].as_str().unwrap(),
                    e["modifiers"]
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "rawKeyDown Control 2",
                "rawKeyDown Shift 10",
                "rawKeyDown Tab 10",
                "keyUp Tab 10",
                "keyUp Shift 2",
                "keyUp Control 0"
            ]
        );
        let enter = events(&parse("Enter").unwrap());
        assert_eq!(enter.len(), 2);
        assert_eq!(enter[0]["type"], "keyDown");
        assert_eq!(enter[0]["text"], "\r");
    }
}
