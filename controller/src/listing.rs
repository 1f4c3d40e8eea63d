//! The numbered element listing: what the model reads after `navigate` and what `click n` /
//! `type n` point at. Both halves are JavaScript run through the `evaluate` op, so the worker's
//! Chromium and the phone's WebView number the same page the same way: [`LIST_JS`] finds the
//! visible interactive elements, numbers them in reading order and keeps them in the page;
//! [`RESOLVE_JS`] turns a number back into the point a finger would press. The Rust half parses
//! what they return and renders the listing as the lines the model sees.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `(args) => listing`, with `args = {listing_id, max}`.
///
/// Returns `{url, title, elements: [{n, label, kind, href, state}], above, below}` and keeps the
/// listed elements in `window.__nanomuseListing` for [`RESOLVE_JS`]. The value of a password
/// field never leaves the page: its state is only `(filled)` or `(empty)`.
///
/// It never fails on a page: pages patch or replace DOM methods (the Shadow DOM polyfill of
/// Polymer's TodoMVC returns node lists that cannot be iterated), so it walks the DOM with the
/// prototypes' own methods where it can, and a node, a root or a label it cannot read is left
/// out rather than failing the page.
pub const LIST_JS: &str = nanomuse_proto::scripts::LIST;

/// `(args) => point | {error}`, with `args = {listing_id, n, scroll, focus}`.
///
/// Returns `{x, y, label, kind, url}`, the centre of element `n`'s visible part in CSS px of the
/// viewport, or `{error: "stale" | "missing" (with count) | "detached" | "hidden"}`.
pub const RESOLVE_JS: &str = nanomuse_proto::scripts::RESOLVE;

/// One numbered element as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListedElement {
    pub n: u32,
    pub label: String,
    pub kind: String,
    #[serde(default)]
    pub href: String,
    #[serde(default)]
    pub state: String,
}

/// The interactive elements in view, numbered, plus how many more a scroll would reveal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    pub id: String,
    pub url: String,
    pub title: String,
    pub elements: Vec<ListedElement>,
    pub above: u32,
    pub below: u32,
    /// How many more are in view than a listing holds (past its 80): left out, though no
    /// scroll is needed to see them.
    #[serde(default)]
    pub past_max: u32,
    /// The pages the thread was on before this one, oldest first ([`TRAIL_MAX`] at most):
    /// where `back` goes when the tab has no history of its own (a page opened anew after a
    /// restart or an idle close).
    #[serde(default)]
    pub trail: Vec<String>,
    /// How many of the trail's last pages the tab's own history holds, when that is known:
    /// none once the controller opened the tab anew or went back by an address (what the tab
    /// went through then is not the thread's way back). `None` for a tab as the thread first
    /// opened it, whose history is its own.
    #[serde(default)]
    pub steps_in_tab: Option<usize>,
    /// The address of the page that opened the popup listed, while the thread is on one: where
    /// the thread is brought back after a restart, as the popup itself (which talks to its
    /// opener) cannot be.
    #[serde(default)]
    pub opener: Option<String>,
    /// What the page's dialogs said since the last listing: reported with this one, not kept.
    #[serde(default, skip_serializing)]
    pub said: Vec<Said>,
    /// How far the page and what scrolls under the middle of its view are scrolled down, in
    /// CSS px (what `scroll` moves).
    #[serde(default)]
    pub scrolled: f64,
    /// When the listed document began (`performance.timeOrigin`, ms since the epoch): another
    /// at the same address is the page loaded again (a form posted back to its own URL). 0 when
    /// unknown.
    #[serde(default)]
    pub document: f64,
    /// Where the keyboard's focus was: element n of this listing (n ≥ 1), nothing but the page
    /// itself (0), or an element not listed (-1).
    #[serde(default)]
    pub focused: i64,
    /// The modal dialog open in view, if any: said before the elements, since its buttons
    /// ("Cancel", "OK") do not say what they answer.
    #[serde(default)]
    pub dialog: Option<OpenDialog>,
    /// What the page announces as important in view (`role=alert`), each cut short: said
    /// before the elements, after the dialog.
    #[serde(default)]
    pub alerts: Vec<String>,
}

/// A modal dialog the page shows (a `role=dialog` with `aria-modal`, an `alertdialog`, a modal
/// `<dialog>`): its title and what it says beside its controls, each cut short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenDialog {
    pub title: String,
    pub text: String,
}

impl OpenDialog {
    /// One line before the elements, e.g. `A dialog is open, "Confirm booking": "Ada to Rome"`.
    fn render(&self) -> String {
        let title = match self.title.is_empty() {
            true => String::new(),
            false => format!(", \"{}\"", escaped(&self.title)),
        };
        match self.text.is_empty() {
            true => format!("A dialog is open{title}."),
            false => format!("A dialog is open{title}: \"{}\"", escaped(&self.text)),
        }
    }
}

/// What one of the page's JavaScript dialogs said, and how the backend answered it (at once:
/// no one is there to), as the listing found it kept in the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Said {
    /// `alert`, `confirm` or `prompt`.
    pub kind: String,
    pub message: String,
    /// `OK`, or the text a prompt was given (its own default).
    pub answer: String,
}

impl Said {
    /// One line for the head of a reply, e.g. `The page's confirm dialog asked "Delete it?" and
    /// was answered OK.`
    pub fn render(&self) -> String {
        let message = escaped(&self.message);
        match self.kind.as_str() {
            "alert" => format!("The page's alert said \"{message}\" (answered OK)."),
            "prompt" => format!(
                "The page's prompt asked \"{message}\" and was answered \"{}\" (its own default \
                 text).",
                escaped(&self.answer)
            ),
            _ => format!("The page's confirm dialog asked \"{message}\" and was answered OK."),
        }
    }
}

const FOCUS_UNLISTED: &str =
    "The focus is on something not listed (out of view, or not a control of its own).";

/// How many earlier pages a listing remembers.
pub const TRAIL_MAX: usize = 20;

/// What [`LIST_JS`] returns, before it is tied to the listing id it was run with.
#[derive(Deserialize)]
struct PageListing {
    url: String,
    title: String,
    elements: Vec<ListedElement>,
    above: u32,
    below: u32,
    #[serde(default)]
    past_max: u32,
    #[serde(default)]
    said: Vec<Said>,
    #[serde(default)]
    scrolled: f64,
    #[serde(default)]
    document: f64,
    #[serde(default)]
    focused: i64,
    #[serde(default)]
    dialog: Option<OpenDialog>,
    #[serde(default)]
    alerts: Vec<String>,
}

impl Listing {
    /// From LIST_JS's JSON value; `id` is the listing_id that was passed.
    pub fn from_page(id: &str, value: Value) -> Result<Listing, String> {
        let page: PageListing = serde_json::from_value(value)
            .map_err(|e| format!("the page's element listing is malformed: {e}"))?;
        Ok(Listing {
            id: id.to_string(),
            url: page.url,
            title: page.title,
            elements: page.elements,
            above: page.above,
            below: page.below,
            past_max: page.past_max,
            trail: Vec::new(),
            steps_in_tab: None,
            opener: None,
            said: page.said,
            scrolled: page.scrolled,
            document: page.document,
            focused: page.focused,
            dialog: page.dialog,
            alerts: page.alerts,
        })
    }

    /// Where the keyboard's focus is, in words a model can act on (what a key press did to it).
    pub fn focus_sentence(&self) -> String {
        match self.focused {
            0 => "Nothing on the page has the focus.".to_string(),
            n if n > 0 => match self.elements.iter().find(|e| i64::from(e.n) == n) {
                Some(element) => format!("The focus is on {}.", render_element(element)),
                None => FOCUS_UNLISTED.to_string(),
            },
            _ => FOCUS_UNLISTED.to_string(),
        }
    }

    /// The lines a model reads: one per element, e.g. `[3] input:email "Email" (empty)`,
    /// `[4] button "Sign in"`, `[5] link "Docs" → https://x/docs`, then a line saying how many
    /// more a scroll would show.
    pub fn render(&self) -> String {
        let mut lines: Vec<String> = self.dialog.iter().map(OpenDialog::render).collect();
        lines.extend(
            self.alerts
                .iter()
                .map(|alert| format!("An alert says: \"{}\"", escaped(alert))),
        );
        lines.extend(self.elements.iter().map(render_element));
        if self.elements.is_empty() {
            lines.push("(no interactive elements in view)".to_string());
        }
        let more = match (self.above, self.below) {
            (0, 0) if self.past_max > 0 => Some(format!(
                "{} more in view past these {}, a listing's most: scroll down to list them",
                self.past_max,
                self.elements.len()
            )),
            (0, below) if self.past_max > 0 => Some(format!(
                "{} more in view past these {}, a listing's most, and {below} more below: \
                 scroll down to list them",
                self.past_max,
                self.elements.len()
            )),
            (0, 0) => None,
            (above, 0) => Some(format!("{above} more above: scroll up to see them")),
            (0, below) => Some(format!("{below} more below: scroll down to see them")),
            (above, below) => Some(format!(
                "{above} more above, {below} more below: scroll to see them"
            )),
        };
        if let Some(more) = more {
            lines.push(format!("({more})"));
        }
        lines.join("\n")
    }
}

fn render_element(element: &ListedElement) -> String {
    let mut line = format!("[{}] {}", element.n, one_line(&element.kind));
    if !element.label.is_empty() {
        line.push_str(&format!(" \"{}\"", escaped(&element.label)));
    }
    if !element.state.is_empty() {
        line.push(' ');
        line.push_str(&one_line(&element.state));
    }
    if !element.href.is_empty() {
        line.push_str(" → ");
        line.push_str(&one_line(&element.href));
    }
    line
}

/// Page text must not start a line of its own: a label reading "\n[9] button …" would look like
/// another element to the model.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Page text for between double quotes: on one line, its own quotes escaped.
fn escaped(text: &str) -> String {
    one_line(text).replace('"', "\\\"")
}

/// Element `n` of a listing, found on the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The centre of its visible part, in CSS px of the viewport.
    pub x: f64,
    pub y: f64,
    pub label: String,
    pub kind: String,
    /// A select's choices by their text, at most 30 (none for anything else)…
    pub options: Vec<String>,
    /// …of how many.
    pub option_count: u32,
    /// A dropdown the page draws itself: listed as a select, but no `<select>`.
    pub drawn: bool,
    /// The words of its row, when the listing told it apart from others like it by them
    /// (`(in "Ana Lima $12")`): a caption repeats them, so "Clicked 'Cancel'" says which.
    pub row: Option<String>,
}

impl ListedElement {
    /// The words of the row the listing names it by, from its state's `(in "…")`.
    pub fn row(&self) -> Option<String> {
        let (_, rest) = self.state.split_once("(in \"")?;
        let (words, _) = rest.split_once("\")")?;
        Some(words.to_string())
    }
}

/// Where element `n` of a listing is now, or why it cannot be pressed.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    At(Found),
    /// The page was replaced or listed again since: the numbers mean nothing now.
    Stale,
    /// No element `n`; the listing had `count`.
    Missing {
        count: u32,
    },
    /// The element was removed from the page.
    Detached,
    /// The element has no size or no part of it is on screen.
    Hidden,
    /// Something else lies where it would be tapped (a dialog, a banner), said in a few words.
    Covered {
        by: String,
    },
    /// Focused to be typed into, it did not take the focus: `by` holds it (an open menu, a
    /// dialog), said in a few words, or nothing does (it takes no focus).
    Unfocused {
        by: String,
    },
}

/// From RESOLVE_JS's JSON value.
pub fn parse_resolved(value: Value) -> Result<Resolved, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("the element lookup returned {value} instead of an object"))?;
    let by = || {
        object
            .get("by")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if let Some(error) = object.get("error") {
        return match error.as_str() {
            Some("stale") => Ok(Resolved::Stale),
            Some("missing") => {
                let count = object
                    .get("count")
                    .and_then(Value::as_u64)
                    .and_then(|count| u32::try_from(count).ok())
                    .ok_or("the element lookup said missing without a count")?;
                Ok(Resolved::Missing { count })
            }
            Some("detached") => Ok(Resolved::Detached),
            Some("hidden") => Ok(Resolved::Hidden),
            Some("covered") => Ok(Resolved::Covered { by: by() }),
            Some("unfocused") => Ok(Resolved::Unfocused { by: by() }),
            _ => Err(format!("the element lookup failed: {error}")),
        };
    }
    let number = |name: &str| {
        object
            .get(name)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("the element lookup returned no {name}"))
    };
    let text = |name: &str| {
        object
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("the element lookup returned no {name}"))
    };
    Ok(Resolved::At(Found {
        x: number("x")?,
        y: number("y")?,
        label: text("label")?,
        kind: text("kind")?,
        options: object
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|option| option.as_str().map(str::to_string))
            .collect(),
        row: None,
        option_count: object
            .get("optionCount")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32,
        drawn: object.get("drawn").and_then(Value::as_bool) == Some(true),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn element(n: u32, kind: &str, label: &str, href: &str, state: &str) -> ListedElement {
        ListedElement {
            n,
            label: label.into(),
            kind: kind.into(),
            href: href.into(),
            state: state.into(),
        }
    }

    fn listing(elements: Vec<ListedElement>, above: u32, below: u32) -> Listing {
        Listing {
            id: "l1".into(),
            url: "https://x/".into(),
            title: "X".into(),
            elements,
            above,
            below,
            past_max: 0,
            trail: Vec::new(),
            steps_in_tab: None,
            opener: None,
            said: Vec::new(),
            scrolled: 0.0,
            document: 0.0,
            focused: 0,
            dialog: None,
            alerts: Vec::new(),
        }
    }

    #[test]
    fn an_open_dialog_and_the_pages_alerts_are_said_before_the_elements() {
        let mut page = listing(vec![element(1, "button", "OK", "", "")], 0, 0);
        page.dialog = Some(OpenDialog {
            title: "Confirm booking".into(),
            text: "Ada to \"Rome\"".into(),
        });
        assert_eq!(
            page.render(),
            "A dialog is open, \"Confirm booking\": \"Ada to \\\"Rome\\\"\"\n[1] button \"OK\""
        );
        page.dialog = Some(OpenDialog {
            title: String::new(),
            text: String::new(),
        });
        assert_eq!(page.render(), "A dialog is open.\n[1] button \"OK\"");
        page.alerts = vec!["Wrong password".into(), "Saved".into()];
        assert_eq!(
            page.render(),
            "A dialog is open.\nAn alert says: \"Wrong password\"\nAn alert says: \"Saved\"\n\
             [1] button \"OK\""
        );
    }

    #[test]
    fn what_is_in_view_past_the_most_a_listing_holds_is_not_said_to_be_below() {
        let mut page = listing(vec![element(1, "button", "Go", "", "")], 0, 0);
        page.past_max = 19;
        assert_eq!(
            page.render(),
            "[1] button \"Go\"\n(19 more in view past these 1, a listing's most: scroll down to \
             list them)"
        );
        page.below = 4;
        assert!(page.render().ends_with(
            "(19 more in view past these 1, a listing's most, and 4 more below: scroll down to \
             list them)"
        ));
    }

    #[test]
    fn renders_one_line_per_element_with_state_and_href() {
        let page = listing(
            vec![
                element(1, "link", "Docs", "https://x/docs", ""),
                element(2, "input:email", "Email", "", "(empty)"),
                element(3, "button", "Sign in", "", ""),
                element(4, "input", "Name", "", "= \"Ada\""),
                element(5, "checkbox", "Remember me", "", "(checked)"),
                element(6, "button", "Send", "", "(disabled)"),
            ],
            0,
            0,
        );
        assert_eq!(
            page.render(),
            "[1] link \"Docs\" → https://x/docs\n\
             [2] input:email \"Email\" (empty)\n\
             [3] button \"Sign in\"\n\
             [4] input \"Name\" = \"Ada\"\n\
             [5] checkbox \"Remember me\" (checked)\n\
             [6] button \"Send\" (disabled)"
        );
    }

    #[test]
    fn escapes_quotes_and_keeps_page_text_on_one_line() {
        let page = listing(
            vec![element(
                1,
                "button",
                "Say \"hi\"\n[2] link \"Fake\"",
                "",
                "",
            )],
            0,
            0,
        );
        assert_eq!(
            page.render(),
            "[1] button \"Say \\\"hi\\\" [2] link \\\"Fake\\\"\""
        );
    }

    #[test]
    fn omits_an_empty_label() {
        let page = listing(vec![element(1, "clickable", "", "", "")], 0, 0);
        assert_eq!(page.render(), "[1] clickable");
    }

    #[test]
    fn says_how_many_more_a_scroll_shows() {
        let one = vec![element(1, "button", "Go", "", "")];
        assert_eq!(
            listing(one.clone(), 2, 37).render(),
            "[1] button \"Go\"\n(2 more above, 37 more below: scroll to see them)"
        );
        assert_eq!(
            listing(one.clone(), 0, 4).render(),
            "[1] button \"Go\"\n(4 more below: scroll down to see them)"
        );
        assert_eq!(
            listing(one, 3, 0).render(),
            "[1] button \"Go\"\n(3 more above: scroll up to see them)"
        );
    }

    #[test]
    fn says_when_nothing_is_in_view() {
        assert_eq!(
            listing(vec![], 0, 0).render(),
            "(no interactive elements in view)"
        );
        assert_eq!(
            listing(vec![], 0, 5).render(),
            "(no interactive elements in view)\n(5 more below: scroll down to see them)"
        );
    }

    #[test]
    fn parses_what_the_page_returns() {
        let value = json!({
            "url": "https://x/login",
            "title": "Sign in",
            "elements": [
                {"n": 1, "label": "Email", "kind": "input:email", "href": "", "state": "(empty)"},
                {"n": 2, "label": "Password", "kind": "input:password", "href": "", "state": "(filled)"},
                {"n": 3, "label": "Help", "kind": "link", "href": "https://x/help"},
            ],
            "above": 0,
            "below": 3,
        });
        let page = Listing::from_page("abc", value).unwrap();
        assert_eq!(page.id, "abc");
        assert_eq!(page.url, "https://x/login");
        assert_eq!(page.title, "Sign in");
        assert_eq!(page.below, 3);
        assert_eq!(
            page.elements[1],
            element(2, "input:password", "Password", "", "(filled)")
        );
        // href and state may be left out.
        assert_eq!(page.elements[2].state, "");
        assert_eq!(
            page.render(),
            "[1] input:email \"Email\" (empty)\n\
             [2] input:password \"Password\" (filled)\n\
             [3] link \"Help\" → https://x/help\n\
             (3 more below: scroll down to see them)"
        );
    }

    #[test]
    fn a_malformed_listing_is_an_error() {
        let error = Listing::from_page("abc", json!({"url": "https://x/"})).unwrap_err();
        assert!(error.contains("malformed"), "{error}");
        assert!(Listing::from_page("abc", Value::Null).is_err());
    }

    #[test]
    fn listings_round_trip_through_json_for_the_store() {
        let page = listing(vec![element(1, "link", "Docs", "https://x/docs", "")], 1, 2);
        let stored = serde_json::to_value(&page).unwrap();
        assert_eq!(serde_json::from_value::<Listing>(stored).unwrap(), page);
    }

    #[test]
    fn parses_a_point() {
        let value =
            json!({"x": 250.5, "y": 25, "label": "Save", "kind": "button", "url": "https://x/"});
        assert_eq!(
            parse_resolved(value).unwrap(),
            Resolved::At(Found {
                x: 250.5,
                y: 25.0,
                label: "Save".into(),
                kind: "button".into(),
                options: vec![],
                option_count: 0,
                drawn: false,
                row: None,
            })
        );
        let value = json!({"x": 1, "y": 2, "label": "Size", "kind": "select",
            "url": "https://x/", "options": ["S", "M"], "optionCount": 2});
        assert!(matches!(parse_resolved(value).unwrap(),
            Resolved::At(found) if found.options == ["S", "M"] && !found.drawn));
        let value = json!({"x": 1, "y": 2, "label": "Shop", "kind": "select",
            "url": "https://x/", "options": [], "optionCount": 0, "drawn": true});
        assert!(matches!(parse_resolved(value).unwrap(), Resolved::At(found) if found.drawn));
        let value = json!({"error": "unfocused", "by": "Ten Twenty"});
        assert_eq!(
            parse_resolved(value).unwrap(),
            Resolved::Unfocused {
                by: "Ten Twenty".into()
            }
        );
    }

    #[test]
    fn parses_each_reason_an_element_cannot_be_pressed() {
        assert_eq!(
            parse_resolved(json!({"error": "stale"})).unwrap(),
            Resolved::Stale
        );
        assert_eq!(
            parse_resolved(json!({"error": "missing", "count": 7})).unwrap(),
            Resolved::Missing { count: 7 }
        );
        assert_eq!(
            parse_resolved(json!({"error": "detached"})).unwrap(),
            Resolved::Detached
        );
        assert_eq!(
            parse_resolved(json!({"error": "hidden"})).unwrap(),
            Resolved::Hidden
        );
        assert_eq!(
            parse_resolved(json!({"error": "covered", "by": "We use cookies."})).unwrap(),
            Resolved::Covered {
                by: "We use cookies.".into()
            }
        );
    }

    #[test]
    fn rejects_what_it_does_not_understand() {
        assert!(parse_resolved(json!({"error": "missing"})).is_err());
        assert!(parse_resolved(json!({"error": "exploded"})).is_err());
        assert!(parse_resolved(json!({"x": 1, "label": "a", "kind": "button"})).is_err());
        assert!(parse_resolved(Value::Null).is_err());
    }
}
