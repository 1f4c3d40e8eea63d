//! `key {key}`: presses one named key (Enter, Tab, Escape, …) or one character.

use nanomuse_proto::{KeyReply, KeyRequest};
use serde_json::json;

use crate::error::{Result, WorkerError};
use crate::page::PageHandle;

/// Named keys: (key, code, Windows virtual key code, text it types).
const NAMED_KEYS: &[(&str, &str, u32, &str)] = &[
    ("Enter", "Enter", 13, "\r"),
    ("Tab", "Tab", 9, ""),
    ("Escape", "Escape", 27, ""),
    ("Backspace", "Backspace", 8, ""),
    ("Delete", "Delete", 46, ""),
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

fn lookup(name: &str) -> Option<(String, String, u32, String)> {
    let aliases = [("Return", "Enter"), ("Esc", "Escape"), (" ", "Space")];
    let name = aliases
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(name, |(_, key)| key);
    if let Some((key, code, vk, text)) = NAMED_KEYS
        .iter()
        .find(|(key, ..)| key.eq_ignore_ascii_case(name))
    {
        let key = if *key == "Space" { " " } else { key };
        return Some((key.into(), code.to_string(), *vk, text.to_string()));
    }
    let mut chars = name.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    let vk = if c.is_ascii_alphanumeric() {
        c.to_ascii_uppercase() as u32
    } else {
        0
    };
    Some((c.to_string(), String::new(), vk, c.to_string()))
}

pub async fn run(page: &PageHandle, request: &KeyRequest) -> Result<KeyReply> {
    let (key, code, vk, text) = lookup(request.key.trim_matches('\n')).ok_or_else(|| {
        let known: Vec<_> = NAMED_KEYS.iter().map(|(key, ..)| *key).collect();
        WorkerError::invalid(format!(
            "unknown key {:?}; use one of {} or a single character",
            nanomuse_common::limits::excerpt(&request.key),
            known.join(", ")
        ))
    })?;
    let down = if text.is_empty() {
        "rawKeyDown"
    } else {
        "keyDown"
    };
    let mut press = json!({"type": down, "key": key, "code": code,
        "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk});
    if !text.is_empty() {
        press["text"] = json!(text);
        press["unmodifiedText"] = json!(text);
    }
    let release = json!({"type": "keyUp", "key": key, "code": code,
        "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk});
    page.cdp_in_order(&[
        ("Input.dispatchKeyEvent", press),
        ("Input.dispatchKeyEvent", release),
    ])
    .await?;
    Ok(KeyReply {})
}
