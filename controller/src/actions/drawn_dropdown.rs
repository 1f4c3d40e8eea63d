//! `type n OPTION` into a dropdown the page draws itself (Quasar's and MUI's selects, Radix's,
//! anything listed `select` that is not a `<select>`): such a dropdown takes no typing, so the
//! option is chosen as a person would — it is opened with a tap (unless the listing showed it
//! open), and its option is tapped. The option the text names is found among the options the
//! opening listed (elements the listing before did not have), by the rules a `<select>` is
//! typed into with (fill_focused.js): the whole label in any case and spacing, else the one
//! label that starts with the text, else the one that holds it. Text that names none, or
//! several, chooses nothing: a dropdown this action opened is closed again (Escape), and the
//! error names the options.

use std::collections::HashSet;

use nanomuse_proto::{ActReply, KeyRequest, TapRequest, TypeRequest};
use serde_json::Value;

use super::{Aim, Ctx, quoted};
use crate::error::{ControllerError, Result};
use crate::listing::{ListedElement, Listing};

/// How many options an error names.
const OPTIONS_NAMED: usize = 30;

/// Keeps the elements the last listing found, to tell the options an opening lists from
/// options the page showed already (a list box beside the dropdown, with the same names).
const KEEP_LISTED: &str = "() => { const l = window.__nanomuseListing; \
    window.__nanomuseListedBefore = l ? l.elements : []; return null; }";

/// The numbers of the last listing's elements that the one kept by [`KEEP_LISTED`] did not
/// have.
const NEWLY_LISTED: &str = "() => { const before = new Set(window.__nanomuseListedBefore || []); \
    delete window.__nanomuseListedBefore; const l = window.__nanomuseListing; \
    return l ? l.elements.map((el, i) => before.has(el) ? 0 : i + 1).filter((n) => n > 0) : []; }";

/// Chooses the option `text` names in dropdown `n` of the `before` listing, named `label`.
pub async fn choose(
    ctx: &mut Ctx<'_>,
    n: i64,
    label: &str,
    text: &str,
    before: Option<&Listing>,
) -> Result<ActReply> {
    let shown_before = before.and_then(|l| l.elements.iter().find(|e| i64::from(e.n) == n));
    // Open, it may lie under the page's backdrop for its menu (MUI's): no tap on it then.
    let open_already = shown_before.is_some_and(|e| e.state.contains("(expanded)"));
    if !open_already {
        // Looked up as a finger presses it: nothing may lie over it.
        let dropdown = ctx.element(n, Aim::Tap).await?;
        ctx.evaluate(KEEP_LISTED, Value::Null).await?;
        ctx.op(TapRequest {
            session: ctx.session(),
            x: dropdown.x,
            y: dropdown.y,
            count: 1,
        })
        .await?;
        ctx.settle(ctx.settle_ms).await?;
    }
    let listing = ctx.list().await?;
    let new = if open_already {
        HashSet::new()
    } else {
        newly_listed(ctx).await?
    };
    let mut picked = pick(&offered_by(&listing, &new), text).cloned();
    // A dropdown that fetches its options as one types (Select2's, Django's autocomplete
    // fields) opens on a first page of them, its search field focused: the text is typed
    // there, and the options that brings are looked at.
    let searched = picked.is_err() && !open_already && searches(&listing, &new);
    if searched {
        ctx.evaluate(KEEP_LISTED, Value::Null).await?;
        ctx.op(TypeRequest {
            session: ctx.session(),
            text: text.into(),
        })
        .await?;
        ctx.settle(ctx.settle_ms).await?;
        let listing = ctx.list().await?;
        let new = newly_listed(ctx).await?;
        let offered = offered_by(&listing, &new);
        picked = if offered.is_empty() {
            Err("its search for the text found no option".into())
        } else {
            pick(&offered, text).cloned()
        };
    }
    let name = quoted(label);
    let option = match picked {
        // Chosen already: a tap would take it out again where several may be chosen (Dash's
        // multi-select), so nothing is tapped, and a dropdown this action opened is closed.
        Ok(option) if option.state.contains("(selected)") || option.state.contains("(checked)") => {
            let chosen = quoted(&option.label);
            if !open_already {
                close(ctx).await?;
            }
            return ctx
                .after_change(
                    format!("Kept {chosen} in {name}"),
                    format!(
                        "{chosen} is chosen in {name} already (a dropdown the page draws): nothing \
                         was clicked, as a click would take it out where several may be chosen."
                    ),
                )
                .await;
        }
        Ok(option) => option.n,
        Err(why) if open_already => {
            return Err(ControllerError::InvalidArgument(format!(
                "{why} (the dropdown [{n}] {name}, which the page draws; nothing was chosen)"
            )));
        }
        Err(why) => {
            close(ctx).await?;
            ctx.settle(ctx.settle_ms).await?;
            // The numbers of the page as it is again: the model's next action uses them.
            ctx.list().await?;
            let looked = if searched {
                "it was opened, the text typed into its search field, and closed again"
            } else {
                "it was opened to look and closed again"
            };
            return Err(ControllerError::InvalidArgument(format!(
                "{why} (the dropdown [{n}] {name}, which the page draws: {looked}, and nothing \
                 was chosen)"
            )));
        }
    };
    let found = ctx.element(option.into(), Aim::Tap).await?;
    ctx.op(TapRequest {
        session: ctx.session(),
        x: found.x,
        y: found.y,
        count: 1,
    })
    .await?;
    ctx.after_change(
        format!("Chose in {name}"),
        format!(
            "Chose the option of {name} the text names (a dropdown the page draws: opened, {}\
             then its option {} clicked).",
            if searched {
                "the text typed into its search field, "
            } else {
                ""
            },
            quoted(&found.label)
        ),
    )
    .await
}

/// Closes the dropdown this action opened, as a person would: Escape.
async fn close(ctx: &mut Ctx<'_>) -> Result<()> {
    ctx.op(KeyRequest {
        session: ctx.session(),
        key: "Escape".into(),
    })
    .await?;
    Ok(())
}

/// The numbers of the elements listed since [`KEEP_LISTED`] kept the ones before.
async fn newly_listed(ctx: &Ctx<'_>) -> Result<HashSet<u64>> {
    Ok(serde_json::from_value(ctx.evaluate(NEWLY_LISTED, Value::Null).await?).unwrap_or_default())
}

/// What an opening offers to choose from: the options it listed, else (open before, or opened
/// in place of nodes the page had: a framework that draws it all anew) every option in view.
fn offered_by<'a>(listing: &'a Listing, new: &HashSet<u64>) -> Vec<&'a ListedElement> {
    let opened = opened_choices(listing, new);
    if opened.is_empty() {
        options(listing).collect()
    } else {
        opened
    }
}

/// Whether the opening gave the focus to a field of its own that takes text: the dropdown's
/// search.
fn searches(listing: &Listing, new: &HashSet<u64>) -> bool {
    listing.focused > 0
        && new.contains(&(listing.focused as u64))
        && listing
            .elements
            .iter()
            .find(|e| i64::from(e.n) == listing.focused)
            .is_some_and(|e| e.kind.starts_with("input") && super::type_text::takes_text(&e.kind))
}

fn options(listing: &Listing) -> impl Iterator<Item = &ListedElement> {
    listing.elements.iter().filter(|e| e.kind == "option")
}

/// What the opening listed to choose from: its options, else — a list whose items say no role
/// (Ant Design's, pressable by their handlers) — its other pressable items.
fn opened_choices<'a>(listing: &'a Listing, new: &HashSet<u64>) -> Vec<&'a ListedElement> {
    let opened: Vec<&ListedElement> = listing
        .elements
        .iter()
        .filter(|e| new.contains(&u64::from(e.n)))
        .collect();
    let options: Vec<&ListedElement> = opened
        .iter()
        .copied()
        .filter(|e| e.kind == "option")
        .collect();
    if !options.is_empty() {
        return options;
    }
    opened
        .into_iter()
        .filter(|e| ["menuitem", "radio", "clickable"].contains(&e.kind.as_str()))
        .collect()
}

/// The option `text` names, or why none is chosen.
fn pick<'a>(
    offered: &[&'a ListedElement],
    text: &str,
) -> std::result::Result<&'a ListedElement, String> {
    if offered.is_empty() {
        return Err("opening the dropdown listed no option to choose".into());
    }
    let squeeze = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let wanted = squeeze(text);
    let names: Vec<String> = offered.iter().map(|e| squeeze(&e.label)).collect();
    let named = |matches: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (0..names.len()).filter(|&i| matches(&names[i])).collect()
    };
    let whole = named(&|name| name == wanted);
    if let Some(&first) = whole.first() {
        // The same whole name twice is one choice for the reader: the first is taken.
        return Ok(offered[first]);
    }
    if !wanted.is_empty() {
        for matches in [
            named(&|name| name.starts_with(&wanted)),
            named(&|name| name.contains(&wanted)),
        ] {
            match matches.as_slice() {
                [] => continue,
                [one] => return Ok(offered[*one]),
                several => {
                    let which: Vec<&ListedElement> = several.iter().map(|&i| offered[i]).collect();
                    return Err(format!(
                        "the text matches {} options: {}; type one of them whole",
                        several.len(),
                        listed(&which)
                    ));
                }
            }
        }
    }
    Err(format!(
        "no option matches the text; the options: {}",
        listed(offered)
    ))
}

fn listed(options: &[&ListedElement]) -> String {
    let mut names: Vec<String> = options
        .iter()
        .take(OPTIONS_NAMED)
        .map(|e| format!("{:?}", e.label))
        .collect();
    if options.len() > OPTIONS_NAMED {
        names.push(format!("and {} more", options.len() - OPTIONS_NAMED));
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use nanomuse_proto::act_request::Action;
    use nanomuse_proto::{KeyReply, TapReply, TypeAction};

    use super::*;
    use crate::testing::*;

    const CLOSED: &[(&str, &str)] = &[("input", "Item"), ("select", "Shop"), ("button", "Add")];
    const OPEN: &[(&str, &str)] = &[
        ("input", "Item"),
        ("select", "Shop"),
        ("button", "Add"),
        ("option", "Grocer"),
        ("option", "Bakery"),
        ("option", "Market"),
    ];
    const URL: &str = "https://list.example/";

    fn type_into(n: i64, text: &str) -> Action {
        Action::Type(TypeAction {
            n,
            text: text.into(),
        })
    }

    /// A shopping list whose Shop dropdown the page draws: a tap on it (at element 2's point)
    /// lists its options, a tap on an option or Escape closes it.
    async fn shop() -> Harness {
        let page = FakePage::new(URL, "List", CLOSED);
        page.draw_selects();
        let h = Harness::showing(&page);
        h.list_first().await;
        let tapped = page.clone();
        h.backend.on::<TapRequest>(move |tap| {
            let opens = (tap.x, tap.y) == (20.0, 40.0);
            tapped.set(URL, "List", if opens { OPEN } else { CLOSED });
            Ok(TapReply {})
        });
        let escaped = page.clone();
        h.backend.on::<KeyRequest>(move |_| {
            escaped.set(URL, "List", CLOSED);
            Ok(KeyReply::default())
        });
        h
    }

    /// Where the page was tapped, in order.
    fn taps(h: &Harness) -> Vec<(f64, f64)> {
        let taps = h.backend.requests::<TapRequest>();
        taps.iter().map(|t| (t.x, t.y)).collect()
    }

    #[tokio::test]
    async fn typing_into_a_dropdown_the_page_draws_opens_it_and_taps_the_option_named() {
        let h = shop().await;
        let (reply, frame) = h.ok(type_into(2, "  bakery ")).await;
        assert_eq!(
            h.backend.ops(),
            [
                "evaluate", "evaluate", "evaluate", "tap", "settle", "evaluate", "evaluate",
                "evaluate", "tap", "settle", "evaluate"
            ],
            "resolve (focus), resolve (tap), keep the listed, open, list, the newly listed, \
             resolve the option, tap it, list"
        );
        assert_eq!(taps(&h), [(20.0, 40.0), (50.0, 100.0)], "Shop, then Bakery");
        assert!(
            reply.text.starts_with(
                "Chose the option of 'Shop' the text names (a dropdown the page draws: opened, \
                 then its option 'Bakery' clicked).\n"
            ),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Chose in 'Shop'");
    }

    #[tokio::test]
    async fn text_naming_no_option_closes_the_dropdown_and_names_the_options() {
        let h = shop().await;
        let (result, frame) = h.act(type_into(2, "Butcher")).await;
        let error = result.unwrap_err();
        assert!(matches!(error, ControllerError::InvalidArgument(_)));
        assert_eq!(
            error.to_string(),
            "no option matches the text; the options: \"Grocer\", \"Bakery\", \"Market\" (the \
             dropdown [2] 'Shop', which the page draws: it was opened to look and closed again, \
             and nothing was chosen)"
        );
        assert!(frame.is_none());
        assert_eq!(taps(&h), [(20.0, 40.0)], "only the opening");
        assert_eq!(h.backend.requests::<KeyRequest>()[0].key, "Escape");
        // The stored numbers are those of the page closed again.
        let after = h.ok(type_into(1, "bread")).await.0;
        assert!(after.text.contains("[3] button \"Add\""), "{}", after.text);
    }

    #[tokio::test]
    async fn an_option_chosen_already_is_not_tapped_again() {
        let page = FakePage::new(URL, "List", OPEN);
        page.draw_selects();
        page.mark(2, "= \"Market\" (expanded)");
        page.mark(6, "(selected)");
        let h = Harness::showing(&page);
        h.list_first().await;
        let (reply, frame) = h.ok(type_into(2, "market")).await;
        assert!(
            taps(&h).is_empty(),
            "a tap would take it out of a multiple choice"
        );
        assert!(
            reply.text.starts_with(
                "'Market' is chosen in 'Shop' already (a dropdown the page draws): nothing was \
                 clicked"
            ),
            "{}",
            reply.text
        );
        assert_eq!(frame.unwrap().caption, "Kept 'Market' in 'Shop'");
    }

    #[tokio::test]
    async fn a_dropdown_listed_open_is_not_tapped_again_only_its_option() {
        let page = FakePage::new(URL, "List", OPEN);
        page.draw_selects();
        page.mark(2, "= \"Grocer\" (expanded)");
        let h = Harness::showing(&page);
        h.list_first().await;
        let tapped = page.clone();
        h.backend.on::<TapRequest>(move |_| {
            tapped.set(URL, "List", CLOSED);
            Ok(TapReply {})
        });
        let (reply, _) = h.ok(type_into(2, "market")).await;
        assert_eq!(taps(&h), [(60.0, 120.0)], "Market only");
        assert_eq!(
            h.backend.ops(),
            [
                "evaluate", "evaluate", "evaluate", "tap", "settle", "evaluate"
            ],
            "resolve (focus), list, resolve the option, tap it, list"
        );
        assert!(
            reply.text.contains("its option 'Market' clicked"),
            "{}",
            reply.text
        );
    }

    fn offered(labels: &[&str]) -> Vec<ListedElement> {
        labels
            .iter()
            .zip(1..)
            .map(|(label, n)| ListedElement {
                n,
                label: label.to_string(),
                kind: "option".into(),
                href: String::new(),
                state: String::new(),
            })
            .collect()
    }

    #[test]
    fn the_text_names_an_option_whole_else_by_its_one_start_else_by_its_one_part() {
        let options = offered(&["Bakery", "Bakery outlet", "Fish market", "Market"]);
        let options: Vec<&ListedElement> = options.iter().collect();
        let chosen = |text| pick(&options, text).map(|e| e.label.as_str());
        assert_eq!(chosen("BAKERY"), Ok("Bakery"), "whole, before starts");
        assert_eq!(chosen("fish"), Ok("Fish market"));
        assert_eq!(chosen("outlet"), Ok("Bakery outlet"));
        assert_eq!(
            chosen("bak"),
            Err(
                "the text matches 2 options: \"Bakery\", \"Bakery outlet\"; type one of them \
                 whole"
                    .into()
            )
        );
        assert_eq!(
            chosen("ket"),
            Err(
                "the text matches 2 options: \"Fish market\", \"Market\"; type one of them whole"
                    .into()
            )
        );
        assert_eq!(
            chosen("mark"),
            Ok("Market"),
            "the one that starts with it, before those that hold it"
        );
        assert!(chosen("").is_err());
        assert_eq!(
            pick(&[], "x").unwrap_err(),
            "opening the dropdown listed no option to choose"
        );
    }

    #[test]
    fn the_opening_offers_its_options_else_its_other_pressable_items() {
        let labels = |chosen: Vec<&ListedElement>| -> Vec<String> {
            chosen.iter().map(|e| e.label.clone()).collect()
        };
        let new: HashSet<u64> = [2, 3, 4, 5].into();
        let page = listing_of(&[
            ("option", "Beside"),
            ("clickable", "France"),
            ("option", "Italy"),
            ("button", "Close"),
            ("clickable", "Spain"),
        ]);
        assert_eq!(labels(opened_choices(&page, &new)), ["Italy"]);
        // Ant Design's: its items are pressable by their handlers, no role said.
        let page = listing_of(&[
            ("option", "Beside"),
            ("clickable", "France"),
            ("menuitem", "Italy"),
            ("button", "Close"),
            ("radio", "Spain"),
        ]);
        assert_eq!(
            labels(opened_choices(&page, &new)),
            ["France", "Italy", "Spain"]
        );
    }
}
