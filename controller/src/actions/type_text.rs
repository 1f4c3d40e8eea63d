//! `type n text`: focuses element n, then types through the backend's `type` (the page's own
//! setters and input events, so frameworks notice). The text is never echoed: it may be secret.
//! An element that takes no text (a button, a checkbox) or is disabled is refused before
//! anything is touched, naming the listed elements that do; one that does not take the focus
//! is refused by the lookup. A dropdown the page draws is chosen in by taps
//! ([`drawn_dropdown`]).

use nanomuse_proto::{ActReply, TypeAction, TypeRequest};

use super::{Aim, Ctx, drawn_dropdown, element_named, quoted};
use crate::error::{ControllerError, Result};
use crate::listing::{ListedElement, Listing};

// Refused before the element is looked up, so an oversized text changes nothing, not even
// the focus or the scroll position.
use nanomuse_common::limits::TYPE_TEXT_MAX_CHARS as TEXT_MAX;

pub async fn run(ctx: &mut Ctx<'_>, action: TypeAction) -> Result<ActReply> {
    let length = action.text.chars().count();
    if length > TEXT_MAX {
        return Err(ControllerError::InvalidArgument(format!(
            "type takes at most {TEXT_MAX} characters at a time, not {length}; type it in parts"
        )));
    }
    let listing = ctx.store.listing(ctx.tenant, ctx.thread)?;
    if let Some(listing) = &listing {
        refuse_what_takes_no_text(listing, action.n)?;
    }
    let found = ctx.element(action.n, Aim::Focus).await?;
    if found.drawn {
        return drawn_dropdown::choose(ctx, action.n, &found.label, &action.text, listing.as_ref())
            .await;
    }
    let named = element_named(action.n, &found.kind, &found.label);
    let label = found.label;
    ctx.op(TypeRequest {
        session: ctx.session(),
        text: action.text.clone(),
    })
    .await?;
    let is_select = listing
        .iter()
        .flat_map(|l| &l.elements)
        .any(|e| i64::from(e.n) == action.n && e.kind == "select");
    if is_select {
        // Named as the select now shows it (the option's text, not what was typed); its value
        // in the listing is the page's own text.
        let n = action.n;
        return ctx
            .after_change_told(format!("Chose in {named}"), |listing| {
                let shown = listing
                    .elements
                    .iter()
                    .find(|e| i64::from(e.n) == n && e.kind == "select" && e.label == label)
                    .and_then(|e| e.state.strip_prefix("= "))
                    // The quoted value alone, not what the state says after it ("(of 2
                    // options)" of a list box).
                    .and_then(|state| {
                        serde_json::Deserializer::from_str(state)
                            .into_iter::<String>()
                            .next()?
                            .ok()
                    });
                match shown {
                    Some(shown) => format!("Chose {shown:?} in {named}."),
                    None => format!("Chose the option of {named} the text names."),
                }
            })
            .await;
    }
    let typed = format!(
        "Typed {length} character{} into {named}",
        if length == 1 { "" } else { "s" },
    );
    let n = action.n;
    let text = action.text;
    // A list that opened as the text was typed is one whose options were not listed before
    // (Select2's, which says nothing of being open): a list that was already there was not
    // opened by it.
    let listed_before = |option: &ListedElement| {
        listing
            .iter()
            .flat_map(|l| &l.elements)
            .any(|e| e.kind == "option" && named_alike(&e.label, &option.label))
    };
    ctx.after_change_told(format!("Typed into {named}"), |listing| {
        // The field as listed now, by its number and its name: left empty by the text, which
        // the page (or the field's kind) refused.
        let field = listing
            .elements
            .iter()
            .find(|e| i64::from(e.n) == n && e.label == label);
        match field {
            Some(field) if length > 0 && field.state.starts_with("(empty)") => format!(
                "{typed}, but it is still empty: {}.",
                what_it_takes(&field.kind)
            ),
            Some(field) => {
                let opened = field.state.contains("(expanded)");
                let offered: Vec<_> = options_named(listing, &text)
                    .into_iter()
                    .filter(|option| opened || !listed_before(option))
                    .collect();
                let click = match offered.as_slice() {
                    [] => return format!("{typed}."),
                    [option] => format!("click {}", option.n),
                    _ => "click one".to_string(),
                };
                let offers = offered
                    .iter()
                    .map(|option| format!("[{}] {}", option.n, quoted(&option.label)))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "{typed}; the list it opened offers {offers}: {click} to choose it (typing \
                     alone chooses nothing there)."
                )
            }
            None => format!("{typed}."),
        }
    })
    .await
}

/// The most options a reply names for the text typed.
const OPTIONS_NAMED: usize = 5;

/// The options of an open list that the text names, not yet chosen: the one named as the text
/// is, else those whose names hold it (a filter typed in part: "Sou" for "South"), a few at
/// most. A combobox that filters as one types (Gradio's, Streamlit's) takes a value only once
/// an option is pressed, and goes back to its last one when the focus leaves it.
fn options_named<'a>(listing: &'a Listing, text: &str) -> Vec<&'a ListedElement> {
    let open: Vec<_> = listing
        .elements
        .iter()
        .filter(|e| e.kind == "option" && !e.state.contains("(selected)"))
        .collect();
    if let Some(exact) = open.iter().find(|e| named_alike(&e.label, text)) {
        return vec![exact];
    }
    let typed = text.trim().to_lowercase();
    if typed.is_empty() {
        return Vec::new();
    }
    let holding: Vec<_> = open
        .into_iter()
        .filter(|e| e.label.to_lowercase().contains(&typed))
        .collect();
    if holding.len() > OPTIONS_NAMED {
        Vec::new()
    } else {
        holding
    }
}

/// Whether two names are the same to a person: case and the space around them aside.
fn named_alike(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// Why a field is empty after text was typed into it: what its kind takes (a number field
/// drops letters, a date field takes its own format), or the page's doing.
fn what_it_takes(kind: &str) -> &'static str {
    match kind {
        "input:number" => "an input:number takes only a number (digits, a sign, a decimal point)",
        "input:date" => "an input:date takes a date written as 2026-12-31",
        "input:time" => "an input:time takes a time written as 14:30",
        "input:datetime-local" => {
            "an input:datetime-local takes a date and time written as 2026-12-31T14:30"
        }
        "input:month" => "an input:month takes a month written as 2026-12",
        "input:week" => "an input:week takes a week written as 2026-W52",
        _ => {
            "the page refused the text or took it away (a field that makes items of what is \
              typed lists them beside it)"
        }
    }
}

/// Whether an element of this kind takes typed text: text fields of every type but the ones
/// picked with a control (file, range, colour), text areas, editors, and a select (its option
/// by name).
pub fn takes_text(kind: &str) -> bool {
    match kind.strip_prefix("input") {
        Some("") => true,
        Some(rest) => !matches!(rest, ":file" | ":range" | ":color"),
        None => matches!(kind, "textarea" | "editable" | "select"),
    }
}

/// Whether the listing showed the element disabled (by the page, or by ARIA).
fn is_disabled(element: &ListedElement) -> bool {
    element.state.contains("(disabled)")
}

/// Whether the listing showed the field read-only: the page fills it itself.
fn is_read_only(element: &ListedElement) -> bool {
    element.state.contains("(read-only)")
}

/// Whether typing goes into the element as listed: a kind that takes text, neither disabled
/// nor read-only.
fn typable(element: &ListedElement) -> bool {
    takes_text(&element.kind) && !is_disabled(element) && !is_read_only(element)
}

/// Element `n` of `listing`, when it takes no text (or is disabled or read-only): the error
/// that says which elements do.
fn refuse_what_takes_no_text(listing: &Listing, n: i64) -> Result<()> {
    let Some(element) = listing.elements.iter().find(|e| i64::from(e.n) == n) else {
        // Not in the listing: the lookup says so.
        return Ok(());
    };
    if typable(element) {
        return Ok(());
    }
    let disabled = is_disabled(element);
    let read_only = is_read_only(element);
    let fields: Vec<String> = listing
        .elements
        .iter()
        .filter(|e| typable(e))
        .map(|e: &ListedElement| format!("[{}] {} {}", e.n, e.kind, quoted(&e.label)))
        .collect();
    let which = if fields.is_empty() {
        "no element of the last listing does; scroll or look again for a field".to_string()
    } else {
        format!("these of the last listing do: {}", fields.join(", "))
    };
    if disabled {
        // The page takes no input there until it enables the field (a form's output box).
        return Err(ControllerError::InvalidArgument(format!(
            "element {n} ({}) is disabled: the page takes no text there (if it enables it \
             later, wait and look again); {which}",
            quoted(&element.label)
        )));
    }
    if read_only {
        // A date picker's field (flatpickr's): a click opens what fills it.
        return Err(ControllerError::InvalidArgument(format!(
            "element {n} ({}) is read-only: the page fills it itself, from a picker or a list \
             it opens; click {n} and choose there; {which}",
            quoted(&element.label)
        )));
    }
    // A slider takes keys, as it does from a person's keyboard.
    let instead = if ["input:range", "slider"].contains(&element.kind.as_str()) {
        format!(
            "; to move it, click {n}, then key ArrowRight or ArrowLeft (a step each), Home or End"
        )
    } else {
        String::new()
    };
    // "an option", "an input:range", "a button".
    let article = if element.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    Err(ControllerError::InvalidArgument(format!(
        "element {n} is {article} {} ({}), which takes no text{instead}; {which}",
        element.kind,
        quoted(&element.label)
    )))
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::EvaluateRequest;
    use nanomuse_proto::act_request::Action;
    use serde_json::Value;

    use super::*;
    use crate::testing::*;

    #[test]
    fn knows_what_takes_text() {
        for kind in [
            "input",
            "input:email",
            "input:password",
            "input:search",
            "textarea",
            "editable",
            "select",
        ] {
            assert!(takes_text(kind), "{kind}");
        }
        for kind in [
            "button",
            "link",
            "checkbox",
            "radio",
            "clickable",
            "input:file",
            "input:range",
            "switch",
        ] {
            assert!(!takes_text(kind), "{kind}");
        }
    }

    #[test]
    fn typing_into_a_button_names_the_fields() {
        let page = listing_of(&[
            ("clickable", "Your name"),
            ("input", "Name"),
            ("checkbox", "buy milk"),
            ("textarea", "Notes"),
        ]);
        let error = refuse_what_takes_no_text(&page, 1).unwrap_err().to_string();
        assert_eq!(
            error,
            "element 1 is a clickable ('Your name'), which takes no text; these of the last \
             listing do: [2] input 'Name', [4] textarea 'Notes'"
        );
        assert!(refuse_what_takes_no_text(&page, 2).is_ok());
        // Numbers outside the listing are the lookup's to refuse.
        assert!(refuse_what_takes_no_text(&page, 9).is_ok());
        let slider = listing_of(&[("input:range", "Budget"), ("input", "Name")]);
        let error = refuse_what_takes_no_text(&slider, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "element 1 is an input:range ('Budget'), which takes no text; to move it, click 1, \
             then key ArrowRight or ArrowLeft (a step each), Home or End; these of the last \
             listing do: [2] input 'Name'"
        );
        let mut output = listing_of(&[("textarea", "Greeting"), ("textarea", "Name")]);
        output.elements[0].state = "(empty) (disabled)".into();
        let error = refuse_what_takes_no_text(&output, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "element 1 ('Greeting') is disabled: the page takes no text there (if it enables it \
             later, wait and look again); these of the last listing do: [2] textarea 'Name'"
        );
        let mut picked = listing_of(&[("input", "Arrival"), ("input", "Name")]);
        picked.elements[0].state = "(empty) (read-only)".into();
        let error = refuse_what_takes_no_text(&picked, 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "element 1 ('Arrival') is read-only: the page fills it itself, from a picker or a \
             list it opens; click 1 and choose there; these of the last listing do: [2] input \
             'Name'"
        );
        let buttons = listing_of(&[("button", "Go")]);
        let error = refuse_what_takes_no_text(&buttons, 1)
            .unwrap_err()
            .to_string();
        assert!(
            error
                .ends_with("no element of the last listing does; scroll or look again for a field"),
            "{error}"
        );
    }

    fn type_into(n: i64, text: &str) -> Action {
        Action::Type(TypeAction {
            n,
            text: text.into(),
        })
    }

    async fn form() -> Harness {
        let h = Harness::showing(&FakePage::new(
            "https://x.example/login",
            "Sign in",
            &[("input:email", "Email"), ("button", "Go")],
        ));
        h.list_first().await;
        h
    }

    #[tokio::test]
    async fn focuses_the_field_types_and_never_echoes_the_text() {
        let h = form().await;
        let (reply, frame) = h.ok(type_into(1, "me@x.example")).await;
        assert_eq!(h.backend.ops(), ["evaluate", "type", "settle", "evaluate"]);
        let resolve = &h.backend.requests::<EvaluateRequest>()[0];
        let arg: Value = serde_json::from_str(&resolve.arg_json).unwrap();
        assert_eq!(
            (arg["n"].as_i64(), arg["focus"].as_bool()),
            (Some(1), Some(true))
        );
        let typed = &h.backend.requests::<TypeRequest>()[0];
        assert_eq!(typed.text, "me@x.example");
        assert_eq!(typed.session, session());
        assert!(
            reply
                .text
                .starts_with("Typed 12 characters into 'Email'.\n[1]")
        );
        assert!(!reply.text.contains("me@x"));
        assert_eq!(frame.unwrap().caption, "Typed into 'Email'");
        let (reply, _) = h.ok(type_into(1, "é")).await;
        assert!(
            reply.text.starts_with("Typed 1 character into 'Email'.\n"),
            "{}",
            reply.text
        );
    }

    #[tokio::test]
    async fn a_button_or_an_oversized_text_changes_nothing() {
        let h = form().await;
        let (reply, _) = h.act(type_into(2, "hello")).await;
        assert!(
            matches!(reply, Err(ControllerError::InvalidArgument(ref m)) if m.contains("takes no text")),
            "{reply:?}"
        );
        let long = "a".repeat(TEXT_MAX + 1);
        let (reply, _) = h.act(type_into(1, &long)).await;
        assert!(
            matches!(reply, Err(ControllerError::InvalidArgument(ref m)) if m.contains("type it in parts")),
            "{reply:?}"
        );
        assert!(h.backend.ops().is_empty());
    }

    #[tokio::test]
    async fn a_field_left_empty_by_the_text_says_what_it_takes() {
        let page = FakePage::new(
            "https://x.example/order",
            "Order",
            &[("input:number", "Quantity"), ("input", "Tags")],
        );
        let h = Harness::showing(&page);
        h.list_first().await;
        page.mark(1, "(empty)");
        let (reply, _) = h.ok(type_into(1, "twelve")).await;
        assert!(
            reply.text.starts_with(
                "Typed 6 characters into 'Quantity', but it is still empty: an input:number \
                 takes only a number (digits, a sign, a decimal point).\n"
            ),
            "{}",
            reply.text
        );
        page.mark(1, "= \"12\"");
        let (reply, _) = h.ok(type_into(1, "12")).await;
        assert!(
            reply
                .text
                .starts_with("Typed 2 characters into 'Quantity'.\n"),
            "{}",
            reply.text
        );
        page.mark(2, "(empty)");
        let (reply, _) = h.ok(type_into(2, "red,")).await;
        assert!(
            reply.text.starts_with(
                "Typed 4 characters into 'Tags', but it is still empty: the page refused the \
                 text or took it away"
            ),
            "{}",
            reply.text
        );
        // Emptying a field on purpose is what was asked.
        let (reply, _) = h.ok(type_into(2, "")).await;
        assert!(
            reply.text.starts_with("Typed 0 characters into 'Tags'.\n"),
            "{}",
            reply.text
        );
    }

    /// Makes every `type` leave `page` (the user form) showing `elements`.
    fn typing_shows(
        h: &Harness,
        page: &FakePage,
        elements: &'static [(&'static str, &'static str)],
    ) {
        let page = page.clone();
        h.backend.on::<TypeRequest>(move |_| {
            page.set("https://x.example/user", "User", elements);
            Ok(Default::default())
        });
    }

    #[tokio::test]
    async fn a_list_the_text_opened_names_its_option_to_click_though_the_field_says_nothing() {
        let page = FakePage::new(
            "https://x.example/user",
            "User",
            &[("input", "Posts"), ("option", "Paris"), ("button", "Save")],
        );
        let h = Harness::showing(&page);
        h.list_first().await;
        // Select2's search field: no aria-expanded, its list drawn once typed into.
        typing_shows(
            &h,
            &page,
            &[
                ("input", "Posts"),
                ("option", "Paris"),
                ("option", "Post number 3"),
                ("button", "Save"),
            ],
        );
        let (reply, _) = h.ok(type_into(1, "post number 3")).await;
        assert!(
            reply.text.starts_with(
                "Typed 13 characters into 'Posts'; the list it opened offers [3] 'Post number \
                 3': click 3 to choose it (typing alone chooses nothing there).\n"
            ),
            "{}",
            reply.text
        );
        // An option listed before the typing is not one the typing opened.
        let (reply, _) = h.ok(type_into(1, "Paris")).await;
        assert!(
            reply.text.starts_with("Typed 5 characters into 'Posts'.\n"),
            "{}",
            reply.text
        );
        // Typed in part, the options whose names hold the text are named, each.
        typing_shows(
            &h,
            &page,
            &[
                ("input", "Posts"),
                ("option", "Post number 3"),
                ("option", "Post number 7"),
                ("option", "Poster"),
                ("button", "Save"),
            ],
        );
        page.set(
            "https://x.example/user",
            "User",
            &[("input", "Posts"), ("button", "Save")],
        );
        h.list_first().await;
        let (reply, _) = h.ok(type_into(1, "number")).await;
        assert!(
            reply.text.starts_with(
                "Typed 6 characters into 'Posts'; the list it opened offers [2] 'Post number \
                 3', [3] 'Post number 7': click one to choose it (typing alone chooses nothing \
                 there).\n"
            ),
            "{}",
            reply.text
        );
    }
}
