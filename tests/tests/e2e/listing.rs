//! The element listing end to end: the controller's LIST_JS and RESOLVE_JS run through the
//! `evaluate` op of a real worker on real Chromium, against pages the test serves.

use std::time::Instant;

use nanomuse_controller::listing::{Found, LIST_JS, ListedElement, Listing, RESOLVE_JS, Resolved};
use nanomuse_proto::*;
use nanomuse_tests::*;
use serde_json::{Value, json};

async fn eval(backend: &GrpcBackend, page: &str, js: &str, arg: Value) -> String {
    backend
        .evaluate(EvaluateRequest {
            session: session(page),
            js: js.into(),
            arg_json: arg.to_string(),
        })
        .await
        .expect("evaluate")
        .value_json
}

/// Lists the page; also returns the JSON exactly as it left the page.
async fn list(backend: &GrpcBackend, page: &str, id: &str, max: u32) -> (Listing, String) {
    let raw = eval(
        backend,
        page,
        LIST_JS,
        json!({"listing_id": id, "max": max}),
    )
    .await;
    let listing = Listing::from_page(id, serde_json::from_str(&raw).unwrap()).unwrap();
    (listing, raw)
}

async fn resolve(
    backend: &GrpcBackend,
    page: &str,
    id: &str,
    n: i64,
    scroll: bool,
    focus: bool,
) -> Resolved {
    let arg = json!({"listing_id": id, "n": n, "scroll": scroll, "focus": focus});
    let raw = eval(backend, page, RESOLVE_JS, arg).await;
    nanomuse_controller::listing::parse_resolved(serde_json::from_str(&raw).unwrap()).unwrap()
}

async fn open_at(backend: &GrpcBackend, page: &str, url: String) {
    backend.open(open_request(page, false)).await.unwrap();
    backend
        .navigate(NavigateRequest {
            session: session(page),
            url,
            timeout_ms: 0,
        })
        .await
        .expect("navigate");
    let settled = backend
        .settle(SettleRequest {
            session: session(page),
            timeout_ms: 10_000,
        })
        .await
        .expect("settle");
    assert!(settled.settled, "the page did not settle");
}

fn element(n: u32, kind: &str, label: &str, href: &str, state: &str) -> ListedElement {
    ListedElement {
        n,
        label: label.into(),
        kind: kind.into(),
        href: href.into(),
        state: state.into(),
    }
}

/// Taps element `n` of listing `id` where the lookup says it is, scrolled into view.
async fn tap_listed(backend: &GrpcBackend, page: &str, id: &str, n: i64) {
    let (x, y, _) = point(resolve(backend, page, id, n, true, false).await);
    backend
        .tap(TapRequest {
            session: session(page),
            x,
            y,
            ..Default::default()
        })
        .await
        .unwrap();
}

/// The centre of a resolved element, failing the test on anything else.
fn point(resolved: Resolved) -> (f64, f64, String) {
    match resolved {
        Resolved::At(found) => (found.x, found.y, found.label),
        other => panic!("expected a point, got {other:?}"),
    }
}

/// A sidebar beside a form (an admin's layout, Django's) is read one region after the other,
/// not line by line across both; words only screen readers get are not a row's words.
#[tokio::test(flavor = "multi_thread")]
async fn regions_side_by_side_are_read_one_after_the_other() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/regions.html")).await;
    let (listing, _) = list(b, "p", "regions", 50).await;
    let link = |name: &str| format!("http://{site}/fixtures/regions.html#{name}");
    assert_eq!(
        listing.elements,
        vec![
            element(1, "link", "Home", &link("home"), ""),
            element(2, "button", "Log out", "", ""),
            element(3, "link", "Groups", &link("groups"), ""),
            element(4, "button", "Pin", "", "(in \"Groups active\")"),
            element(5, "link", "Users", &link("users"), ""),
            element(6, "button", "Pin", "", "(in \"Users active\")"),
            element(7, "link", "Tags", &link("tags"), ""),
            element(8, "button", "Pin", "", "(in \"Tags idle\")"),
            element(9, "input", "Title", "", "(empty)"),
            element(10, "input", "Author", "", "(empty)"),
            element(11, "button", "Save", "", ""),
            element(12, "link", "Add Filter", &link("filters"), "(expanded)"),
            // The open menu's items together, not between the lines of the table under it.
            element(13, "link", "Pages", &link("by-pages"), ""),
            element(14, "link", "Year", &link("by-year"), ""),
            element(15, "link", "Title", &link("sort-title"), ""),
            element(16, "link", "Author", &link("sort-author"), ""),
        ]
    );
}

/// A field alone in a table's cell is named by its column's header (as drawn less its CSS
/// case), not by its form's name, unless words beside its fields are what the column is about;
/// marks beside a field ("|") are no words for its name. A field the keyboard cannot fill says
/// it is read-only.
#[tokio::test(flavor = "multi_thread")]
async fn fields_in_a_table_are_named_by_their_columns() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/fields.html")).await;
    let (listing, _) = list(b, "p", "fields", 50).await;
    let link = |name: &str| format!("http://{site}/fixtures/fields.html#{name}");
    assert_eq!(
        listing.elements,
        vec![
            element(1, "input", "Title", "", "(empty)"),
            element(2, "input", "Published", "", "(empty)"),
            element(3, "link", "Today", &link("today"), ""),
            element(4, "checkbox", "Done", "", "(unchecked)"),
            element(5, "input", "Starts", "", "(empty)"),
            element(6, "link", "Now", &link("now"), ""),
            element(7, "link", "Pick", &link("pick"), ""),
            // Named by the label before their box, not by the scale's marks in it.
            element(8, "input:number", "Minimum population", "", "= \"0\""),
            element(9, "slider", "Minimum population", "", "= \"0\""),
            element(10, "checkbox", "Gift wrap", "", "(unchecked)"),
            element(11, "link", "× Published", &link("remove"), ""),
            // Named by what its row is about, in the row's first cell.
            element(12, "select", "Published", "", "= \"equals\""),
            element(13, "input", "Published equals", "", "(empty)"),
            // Their column is about the words beside its fields: named by their rows' first
            // cells.
            element(14, "input", "limit integer (query)", "", "(empty)"),
            element(15, "select", "species string (query)", "", "= \"--\""),
            // Named by the label of the hidden input it stands for.
            element(
                16,
                "input",
                "Arrival",
                "",
                "= \"December 24, 2026\" (read-only)"
            ),
            element(17, "select", "Month", "", "= \"December\""),
            element(18, "input:number", "Year", "", "= \"2026\""),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_the_visible_interactive_elements_in_reading_order() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/listing")).await;

    let (listing, _) = list(b, "p", "first", 50).await;
    let expected = |password_state: &str| {
        vec![
            element(1, "link", "Docs", &format!("http://{site}/second"), ""),
            element(2, "button", "Save now", "", ""),
            element(3, "input", "Search", "", "(empty)"),
            element(4, "input:email", "Email", "", "(empty)"),
            element(5, "input:password", "Password", "", password_state),
            element(6, "checkbox", "Remember me", "", "(checked)"),
            element(7, "select", "Country", "", "= \"Germany\""),
            element(8, "textarea", "notes", "", "= \"Dear \\\"team\\\"\""),
            element(9, "button", "Menu", "", ""),
            element(10, "clickable", "Expand", "", ""),
            element(11, "button", "Send", "", "(disabled)"),
            element(
                12,
                "link",
                "Choose a Date",
                &format!("http://{site}/listing#date"),
                "",
            ),
        ]
    };
    assert_eq!(listing.elements, expected("(empty)"));
    assert_eq!(listing.id, "first");
    assert_eq!(listing.url, format!("http://{site}/listing"));
    assert_eq!(listing.title, "Listing");
    // Only "Far away" is further down; hidden, invisible and transparent ones count nowhere,
    // nor do the skip link above the page's top and the text placed beside the view.
    assert_eq!((listing.above, listing.below), (0, 1));
    assert_eq!(
        listing.render().lines().last().unwrap(),
        "(1 more below: scroll down to see them)"
    );

    // A password typed into the page is only ever "(filled)".
    assert!(matches!(
        resolve(b, "p", "first", 5, false, true).await,
        Resolved::At(_)
    ));
    b.r#type(TypeRequest {
        session: session("p"),
        text: "hunter2-secret".into(),
    })
    .await
    .unwrap();
    let typed = eval(
        b,
        "p",
        "() => document.getElementById('password').value",
        Value::Null,
    )
    .await;
    assert_eq!(typed, "\"hunter2-secret\"");
    let (listing, raw) = list(b, "p", "second", 50).await;
    assert_eq!(listing.elements, expected("(filled)"));
    assert!(!raw.contains("hunter2"), "the password leaked: {raw}");
    assert!(!listing.render().contains("hunter2"));
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn resolves_numbers_to_points_and_refuses_what_is_gone() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/listing")).await;
    let (listing, _) = list(b, "p", "l1", 50).await;
    let count = listing.elements.len() as u32;

    // "Save now" sits at left 200, top 10, 100×30.
    assert_eq!(
        resolve(b, "p", "l1", 2, false, false).await,
        Resolved::At(Found {
            x: 250.0,
            y: 25.0,
            label: "Save now".into(),
            kind: "button".into(),
            options: vec![],
            option_count: 0,
            drawn: false,
            row: None,
        })
    );
    assert_eq!(
        resolve(b, "p", "l1", 0, false, false).await,
        Resolved::Missing { count }
    );
    assert_eq!(
        resolve(b, "p", "l1", i64::from(count) + 1, false, false).await,
        Resolved::Missing { count }
    );

    // Focus lands on the element, for `type n`.
    resolve(b, "p", "l1", 3, false, true).await;
    let focused = eval(b, "p", "() => document.activeElement.id", Value::Null).await;
    assert_eq!(focused, "\"search\"");

    // A newer listing makes the older numbers stale.
    list(b, "p", "l2", 50).await;
    assert_eq!(
        resolve(b, "p", "l1", 2, false, false).await,
        Resolved::Stale
    );

    // An element taken out of the page is detached.
    eval(
        b,
        "p",
        "() => document.getElementById('save').remove()",
        Value::Null,
    )
    .await;
    assert_eq!(
        resolve(b, "p", "l2", 2, false, false).await,
        Resolved::Detached
    );

    // Another page knows nothing of the listing.
    b.navigate(NavigateRequest {
        session: session("p"),
        url: format!("http://{site}/second"),
        timeout_ms: 0,
    })
    .await
    .unwrap();
    assert_eq!(
        resolve(b, "p", "l2", 1, false, false).await,
        Resolved::Stale
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn scrolls_an_element_below_the_fold_into_view() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/listing")).await;

    // Scrolled down, "Far away" is the one element in view and the rest are above.
    eval(b, "p", "() => window.scrollTo(0, 2600)", Value::Null).await;
    let (listing, _) = list(b, "p", "down", 50).await;
    assert_eq!(
        listing.elements,
        vec![element(1, "button", "Far away", "", "")]
    );
    assert_eq!((listing.above, listing.below), (12, 0));

    // Back at the top it is off screen: pressable only once scrolled to.
    eval(b, "p", "() => window.scrollTo(0, 0)", Value::Null).await;
    assert_eq!(
        resolve(b, "p", "down", 1, false, false).await,
        Resolved::Hidden
    );
    let (x, y, label) = point(resolve(b, "p", "down", 1, true, false).await);
    assert_eq!(label, "Far away");
    assert_eq!(x, 70.0);
    assert!((0.0..900.0).contains(&y), "y = {y}");
    assert!((y - 450.0).abs() <= 1.0, "scrolled to the centre, y = {y}");

    // The point is where the button is: a tap there presses it.
    eval(
        b,
        "p",
        "() => document.getElementById('far').onclick = () => document.title = 'far pressed'",
        Value::Null,
    )
    .await;
    b.tap(TapRequest {
        session: session("p"),
        x,
        y,
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(
        eval(b, "p", "() => document.title", Value::Null).await,
        "\"far pressed\""
    );
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reaches_into_shadow_roots_frames_and_styled_checkboxes() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/listing-nested")).await;

    let (listing, _) = list(b, "p", "nested", 50).await;
    assert_eq!(
        listing.elements,
        vec![
            element(1, "button", "In shadow", "", ""),
            element(2, "button", "Inside frame", "", ""),
            element(3, "checkbox", "Subscribe", "", "(unchecked)"),
            // Once: its button, not the element hosting it nor the item around that.
            element(4, "button", "New Folder", "", ""),
        ]
    );

    // The frame's button: 100 + 5 px border + 20 + 50 across, 100 + 5 + 30 + 20 down.
    let (x, y, _) = point(resolve(b, "p", "nested", 2, true, false).await);
    assert_eq!((x, y), (175.0, 155.0));

    // The invisible checkbox is pressed through its label, 150×30 at (10, 400).
    let (x, y, _) = point(resolve(b, "p", "nested", 3, true, false).await);
    assert_eq!((x, y), (85.0, 415.0));
    b.tap(TapRequest {
        session: session("p"),
        x,
        y,
        ..Default::default()
    })
    .await
    .unwrap();
    let (listing, _) = list(b, "p", "after", 50).await;
    assert_eq!(listing.elements[2].state, "(checked)");
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_a_page_of_two_thousand_buttons_within_max() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/listing-many")).await;

    // Rows are 30 px: 30 rows (150 buttons) in a 900 px viewport, 50 of them listed.
    let started = Instant::now();
    let (listing, _) = list(b, "p", "top", 50).await;
    eprintln!("listed 2,000 buttons in {:?}", started.elapsed());
    let labels: Vec<String> = listing.elements.iter().map(|e| e.label.clone()).collect();
    let expected: Vec<String> = (0..50).map(|i| format!("b{i}")).collect();
    assert_eq!(labels, expected);
    assert!(
        listing
            .elements
            .iter()
            .enumerate()
            .all(|(i, e)| e.n as usize == i + 1)
    );
    // The 100 in view past the 50 listed are said apart from the 1,850 below.
    assert_eq!(
        (listing.above, listing.past_max, listing.below),
        (0, 100, 1850)
    );

    // 3,000 px down: rows 0–99 are above, rows 100–129 in view, the other 270 rows below.
    eval(b, "p", "() => window.scrollTo(0, 3000)", Value::Null).await;
    let (listing, _) = list(b, "p", "middle", 50).await;
    assert_eq!(listing.elements.len(), 50);
    assert_eq!(listing.elements[0].label, "b500");
    assert_eq!(listing.elements[49].label, "b549");
    assert_eq!(
        (listing.above, listing.past_max, listing.below),
        (500, 100, 1350)
    );
    assert_eq!(
        listing.above + listing.past_max + listing.below + listing.elements.len() as u32,
        2000
    );
    assert_eq!(
        resolve(b, "p", "middle", 51, false, false).await,
        Resolved::Missing { count: 50 }
    );

    // At the bottom, where no scroll brings the view's last rows up, those are listed, and
    // the view's first ones, which scrolling up keeps in view, are counted above.
    eval(b, "p", "() => window.scrollTo(0, 1e6)", Value::Null).await;
    let (listing, _) = list(b, "p", "bottom", 50).await;
    assert_eq!(listing.elements[0].label, "b1950");
    assert_eq!(listing.elements[49].label, "b1999");
    assert_eq!((listing.above, listing.below), (1950, 0));
    worker.stop().await;
}

/// Each element as a reply reads it: its kind, its label and its state.
fn read_as_listed(elements: &[ListedElement]) -> Vec<String> {
    elements
        .iter()
        .map(|e| format!("{} {:?} {}", e.kind, e.label, e.state))
        .collect()
}

/// The listing of `tests/fixtures/{name}.html`, on a worker of its own.
async fn listed_fixture(name: &str) -> Vec<ListedElement> {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/{name}.html")).await;
    let (listing, _) = list(b, "p", name, 50).await;
    worker.stop().await;
    listing.elements
}

/// A select drawn as a box around the native one it hides (Choices.js's) is named by that one's
/// label, says what is chosen, not the hidden options nor its items' remove buttons, and once
/// open lists the options it holds, chosen as the native one says (not the one under the keys,
/// which Choices.js marks aria-selected).
#[tokio::test(flavor = "multi_thread")]
async fn a_drawn_select_is_named_by_the_native_one_it_hides_and_says_what_is_chosen() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/choices.html")).await;
    let (listing, _) = list(b, "p", "choices", 50).await;
    assert_eq!(
        listing.elements[0],
        element(1, "select", "Languages", "", "= \"English\" (collapsed)"),
        "{:?}",
        listing.elements
    );
    // Open, its options are listed to choose from, and it still says what is chosen.
    eval(
        b,
        "p",
        "() => document.querySelector('.choices').click()",
        Value::Null,
    )
    .await;
    let (listing, _) = list(b, "p", "choices-open", 50).await;
    let listed = read_as_listed(&listing.elements);
    assert_eq!(
        listed,
        [
            "select \"Languages\" = \"English\" (expanded)",
            "option \"English\" (selected)",
            "option \"French\" ",
            "option \"German\" ",
        ]
    );
    worker.stop().await;
}

/// A slider nothing names is named by the few words just before its track (noUiSlider's two
/// handles by "Budget"); a paragraph there is no name; a title that shows the value names it
/// less the value (Panel's "Quantity: 3"), and the value its handle shows is no name.
#[tokio::test(flavor = "multi_thread")]
async fn a_slider_is_named_by_the_words_before_its_track() {
    assert_eq!(
        listed_fixture("sliders").await,
        vec![
            element(1, "slider", "Budget", "", "= \"20.00\""),
            element(2, "slider", "Budget", "", "= \"80.00\""),
            element(3, "slider", "", "", "= \"50\""),
            element(4, "slider", "Guests", "", "= \"3\""),
            element(5, "slider", "Quantity", "", "= \"3.00\""),
        ]
    );
}

/// A slider drawn beside the hidden, read-only field it keeps its value in (ion.rangeSlider's,
/// every Shiny app's) is listed as a slider at its handle, that field's label and value its;
/// the field is not listed; a tap on it and an arrow key move it.
#[tokio::test(flavor = "multi_thread")]
async fn a_slider_drawn_for_a_hidden_field_is_pressed_at_its_handle_and_moved_by_keys() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/sliders.html")).await;
    let (listing, _) = list(b, "p", "sliders", 50).await;
    assert_eq!(listing.elements.len(), 5, "{:?}", listing.elements);
    tap_listed(b, "p", "sliders", 4).await;
    b.key(KeyRequest {
        session: session("p"),
        key: "ArrowRight".into(),
    })
    .await
    .unwrap();
    let (listing, _) = list(b, "p", "sliders-moved", 50).await;
    assert_eq!(
        listing.elements[3],
        element(4, "slider", "Guests", "", "= \"4\"")
    );
    worker.stop().await;
}

/// A checkbox whose only name is its own state ("checked", as AG Grid names a boolean cell's)
/// is named by its row instead.
#[tokio::test(flavor = "multi_thread")]
async fn a_checkbox_named_by_its_own_state_is_named_by_its_row() {
    assert_eq!(
        listed_fixture("booleans").await,
        vec![
            element(1, "checkbox", "Tesla Model Y", "", "(checked) (disabled)"),
            element(2, "checkbox", "Ford F-Series", "", "(unchecked) (disabled)"),
            element(3, "checkbox", "Electric only", "", "(unchecked)"),
        ]
    );
}

/// A control with nothing to read (an arrow drawn in an SVG or by CSS) is named, last, by the
/// words of a class that says what it does, from that word on; one whose classes say nothing of
/// it stays unnamed.
#[tokio::test(flavor = "multi_thread")]
async fn a_control_with_nothing_to_read_is_named_by_a_class_that_says_what_it_does() {
    assert_eq!(
        listed_fixture("arrows").await,
        vec![
            element(1, "clickable", "previous month", "", ""),
            element(2, "clickable", "next month", "", ""),
            element(3, "clickable", "previous", "", ""),
            element(4, "clickable", "next", "", ""),
            element(5, "clickable", "menu", "", ""),
            element(6, "clickable", "sort toggle", "", ""),
            element(7, "button", "close", "", ""),
            element(8, "button", "next", "", ""),
            element(9, "button", "submit", "", ""),
            element(10, "button", "", "", ""),
        ]
    );
}

/// A field nothing else names, alone in a dialog or a popover, is named by its title (x-editable
/// edits a value in place in a popover whose title is all that says what the field is); a
/// dialog's title does not name one of several fields.
#[tokio::test(flavor = "multi_thread")]
async fn a_field_alone_in_a_dialog_is_named_by_its_title() {
    assert_eq!(
        listed_fixture("titled").await,
        vec![
            element(1, "input", "Enter username", "", "= \"ada\""),
            element(2, "button", "submit", "", ""),
            element(3, "input", "Rename the file", "", "(empty)"),
            element(4, "input", "", "", "(empty)"),
            element(5, "input", "", "", "(empty)"),
        ]
    );
}

/// An editor drawn on a field it hides and keeps its value in (CodeMirror 5 on Datasette's SQL
/// textarea, Trix on a hidden input), that nothing else names, is named by that field.
#[tokio::test(flavor = "multi_thread")]
async fn an_editor_nothing_names_is_named_by_the_field_it_keeps_its_value_in() {
    assert_eq!(
        listed_fixture("partners").await,
        vec![
            element(1, "textarea", "sql", "", "= \"select :p0\""),
            element(2, "input", "p0", "", "= \"SF\""),
            element(3, "button", "Run SQL", "", ""),
            element(4, "editable", "post_body", "", "(empty)"),
        ]
    );
}

/// Controls hidden for screen readers inside a box clipped to nothing (React Aria's, as
/// Streamlit draws its widgets) are listed where the page draws them, by their label or their
/// thumb, and pressing there presses them; a combobox's own toggle beside its field is not
/// listed apart from it.
#[tokio::test(flavor = "multi_thread")]
async fn controls_hidden_for_screen_readers_are_listed_where_they_are_drawn() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/readers.html")).await;
    let (listing, _) = list(b, "p", "readers", 50).await;
    assert_eq!(
        listing.elements,
        vec![
            element(1, "input", "Destination", "", "= \"Paris\" (collapsed)"),
            element(2, "input:range", "Nights", "", "= \"3\""),
            element(3, "checkbox", "Travel insurance", "", "(unchecked)"),
            element(4, "radio", "Single", "", "(checked)"),
            element(5, "radio", "Double", "", "(unchecked)"),
        ]
    );
    for n in [3, 5] {
        tap_listed(b, "p", "readers", n).await;
    }
    let (pressed, _) = list(b, "p", "pressed", 50).await;
    let states: Vec<&str> = pressed.elements[2..]
        .iter()
        .map(|e| e.state.as_str())
        .collect();
    assert_eq!(states, ["(checked)", "(unchecked)", "(checked)"]);
    worker.stop().await;
}

/// Controls of several heights centred on one line are read left to right, and a range laid
/// see-through over the track the page draws (Angular Material's) is listed; it and a slider
/// drawn as its whole track (Quasar's) are tapped on their thumbs: the tap moves them nowhere,
/// the keys after it do.
#[tokio::test(flavor = "multi_thread")]
async fn a_row_of_controls_is_read_left_to_right_and_a_range_is_taken_by_its_thumb() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/toolbar.html")).await;
    let (listing, _) = list(b, "p", "toolbar", 50).await;
    assert_eq!(
        listing.elements,
        vec![
            element(1, "input", "Your name", "", "(empty)"),
            element(2, "input:range", "Quantity", "", "= \"2\""),
            element(3, "button", "Order", "", ""),
            element(4, "slider", "Nights", "", "= \"2\""),
        ]
    );
    let values = "() => [document.querySelector('input[type=range]').value, \
                  document.getElementById('nights').getAttribute('aria-valuenow')].join()";
    for n in [2, 4] {
        tap_listed(b, "p", "toolbar", n).await;
        assert_eq!(
            eval(b, "p", values, json!(null)).await,
            "\"2,2\"",
            "after tapping {n}"
        );
    }
    b.key(KeyRequest {
        session: session("p"),
        key: "ArrowRight".into(),
    })
    .await
    .unwrap();
    assert_eq!(eval(b, "p", values, json!(null)).await, "\"2,3\"");
    worker.stop().await;
}

/// A field in a shadow root is named by the words beside it there, the root being a box of its
/// own (Bokeh's checkbox: its input, then a div of its label, at the root's top); a popup open
/// in a shadow root keeps its options together, not between the lines of what it floats over.
#[tokio::test(flavor = "multi_thread")]
async fn shadow_roots_name_their_fields_and_keep_their_popups_together() {
    assert_eq!(
        listed_fixture("shadows").await,
        vec![
            element(1, "checkbox", "Travel insurance", "", "(unchecked)"),
            element(2, "input", "Your name", "", "(empty)"),
            element(3, "select", "Extras", "", "= \"Spa\" (expanded)"),
            element(4, "option", "Breakfast", "", ""),
            element(5, "option", "Parking", "", ""),
            element(6, "button", "Single", "", ""),
        ]
    );
}

/// Boxes side by side that no landmark names, each two lines tall or more, are read one after
/// the other (Django's admin index: its apps, then "Recent actions"); short ones stay a line.
#[tokio::test(flavor = "multi_thread")]
async fn columns_side_by_side_are_read_one_after_the_other() {
    let labels: Vec<String> = listed_fixture("columns")
        .await
        .into_iter()
        .map(|e| e.label)
        .collect();
    assert_eq!(
        labels,
        [
            "Groups",
            "Add group",
            "Users",
            "Add user",
            "Books",
            "Add book",
            "classic",
            "cyberpunk",
            "Django administration",
            "View site",
            "Log out",
        ]
    );
}

/// A click handler a script set as an element's `onclick` (Dash sets one on every component
/// with an id, to count its clicks) makes it a control only where the page draws it as one,
/// as a handler added by `addEventListener` does; one written in the page's markup does.
#[tokio::test(flavor = "multi_thread")]
async fn a_scripts_onclick_makes_a_control_only_where_it_is_drawn_as_one() {
    assert_eq!(
        listed_fixture("handlers").await,
        vec![
            element(1, "clickable", "Chart", "", ""),
            element(2, "clickable", "Table", "", ""),
            element(3, "clickable", "Expand", "", ""),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lists_controls_not_framework_containers_and_names_fields_by_their_row() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/listing-odd")).await;

    // The app's and the page's handlers are containers, not controls; "Broken" cannot be read
    // and is left out, the rest of the page is listed.
    let (listing, _) = list(b, "p", "odd", 50).await;
    assert_eq!(
        listing.elements,
        vec![
            // Nothing names it but its id, made of words (React TodoMVC's toggle-all).
            element(1, "checkbox", "toggle all", "", "(unchecked)"),
            element(2, "clickable", "Tile", "", ""),
            element(3, "checkbox", "buy milk", "", "(unchecked)"),
            element(4, "button", "×", "", ""),
            element(5, "checkbox", "bread", "", "(unchecked)"),
            element(6, "button", "After broken", "", ""),
            element(7, "input", "Quantity", "", "(empty)"),
            // Its label is a magnifier whose alt says what it is for.
            element(8, "input", "Search", "", "(empty)"),
            // Named by their words, not by the icon beside them that screen readers skip,
            // words kept for screen readers only included (Django's theme toggle).
            element(9, "button", "Save", "", ""),
            element(10, "button", "Toggle theme", "", ""),
            // Named as the page wrote it, not as CSS draws it (upper case).
            element(11, "button", "Add item", "", ""),
            // The radio drawn inside each option is the option's mark, not a control of its own.
            element(12, "option", "Berlin", "", "(selected)"),
            element(13, "option", "Oslo", "", ""),
            // A dropdown the page draws, its field transparent inside the label it draws
            // (Quasar's): listed where the label is, as what it is.
            element(14, "select", "Shop", "", "= \"Grocer\""),
            // A toggle says whether it is on, a link whether it is the page the site is on.
            element(15, "button", "Bold", "", "(pressed)"),
            element(
                16,
                "link",
                "Home",
                &format!("http://{site}/listing-odd"),
                "(current)"
            ),
            // Radios clipped to nothing, each at the start of its group, behind the <label> that
            // draws it (Bootstrap's .btn-check): listed, and pressed, where the labels are.
            element(17, "radio", "Red", "", "(checked)"),
            element(18, "radio", "Blue", "", "(unchecked)"),
            // A switch says its state as the page declares it (Element Plus's keeps the field's
            // own `checked` false).
            element(19, "switch", "Express", "", "(checked)"),
        ]
    );
    // …which typing chooses in by opening it (see the controller's drawn_dropdown).
    assert!(matches!(resolve(b, "p", "odd", 14, false, false).await, Resolved::At(f) if f.drawn));

    // The transparent checkbox is pressed where it lies, over its drawn box.
    tap_listed(b, "p", "odd", 5).await;
    let (listing, _) = list(b, "p", "after", 50).await;
    assert_eq!(listing.elements[4].state, "(checked)");
    // Blue is pressed on its own label, not on Red's, over which its radio lies.
    tap_listed(b, "p", "after", 18).await;
    let (listing, _) = list(b, "p", "blue", 50).await;
    let states: Vec<&str> = listing.elements[16..18]
        .iter()
        .map(|e| e.state.as_str())
        .collect();
    assert_eq!(states, ["(unchecked)", "(checked)"]);

    // …and so by a finger on a phone profile (touch, not a mouse).
    b.open(open_request("m", true)).await.unwrap();
    b.navigate(NavigateRequest {
        session: session("m"),
        url: format!("http://{site}/listing-odd"),
        timeout_ms: 0,
    })
    .await
    .expect("navigate");
    let (listing, _) = list(b, "m", "phone", 50).await;
    let bread = listing
        .elements
        .iter()
        .position(|e| e.label == "bread")
        .unwrap();
    let (x, y, _) = point(resolve(b, "m", "phone", bread as i64 + 1, true, false).await);
    b.tap(TapRequest {
        session: session("m"),
        x,
        y,
        ..Default::default()
    })
    .await
    .unwrap();
    let (listing, _) = list(b, "m", "phone-after", 50).await;
    assert_eq!(listing.elements[bread].state, "(checked)");

    // React 18 hangs a handler on its root container, which holds the form.
    open_at(b, "p", format!("http://{site}/fixtures/react.html")).await;
    let (listing, _) = list(b, "p", "react", 50).await;
    assert_eq!(
        listing.elements,
        vec![element(1, "input", "Your name", "", "(empty)")]
    );
    // An id a program made up names nothing.
    open_at(b, "p", format!("http://{site}/listing-odd")).await;
    for id in ["cb-7", ":r1:", "x"] {
        eval(
            b,
            "p",
            "(id) => { document.querySelector('#app section > input').id = id; }",
            json!(id),
        )
        .await;
        let (listing, _) = list(b, "p", "made-up-id", 50).await;
        assert_eq!(listing.elements[0].label, "", "{id}");
    }
    // A developer's short words are read in full.
    eval(
        b,
        "p",
        "() => { document.querySelector('#app section > input').id = 'sendMsgBtn'; }",
        Value::Null,
    )
    .await;
    let (listing, _) = list(b, "p", "short-words", 50).await;
    assert_eq!(listing.elements[0].label, "send message button");
    // A button with no words but an icon font's glyph is named by the glyph, as its kit names
    // it, not by the kit's style classes; Font Awesome's × says what it does.
    for (icon, name) in [
        ("fa fa-solid fa-fw fa-trash-can", "trash can"),
        ("bi bi-pencil", "pencil"),
        ("fa fa-times fa-lg", "close"),
        // Less the kit's variants of one glyph.
        ("bi bi-trash3-fill", "trash"),
        ("bi bi-x-lg", "close"),
    ] {
        eval(
            b,
            "p",
            "(icon) => { document.body.insertAdjacentHTML('afterbegin', \
             '<button id=\"b1\"><i aria-hidden=\"true\"></i></button>'); \
             document.querySelector('#b1 i').className = icon; document.querySelector('#b1').removeAttribute('id'); }",
            json!(icon),
        )
        .await;
        let (listing, _) = list(b, "p", "icon", 50).await;
        assert_eq!(
            (
                listing.elements[0].kind.as_str(),
                listing.elements[0].label.as_str()
            ),
            ("button", name),
            "{icon}"
        );
    }
    worker.stop().await;
}

/// Elements listed alike (each row's "Delete", each todo's "×", each card's "Add to cart") say
/// which row they are on, so a model can pick the right one; the one it picks acts on its row.
#[tokio::test(flavor = "multi_thread")]
async fn elements_listed_alike_are_told_apart_by_their_rows() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/rows.html")).await;
    let (listing, _) = list(b, "p", "rows", 50).await;
    let link = |name: &str| format!("http://{site}/fixtures/rows.html#{name}");
    assert_eq!(
        listing.elements,
        vec![
            // A table row's checkbox is named by the row's words, its item's link included.
            element(1, "checkbox", "Fern 2", "", "(unchecked)"),
            // Named again by a message further down: told apart by its own row.
            element(2, "link", "Fern", &link("fern"), "(in \"2\")"),
            // Not by the row's other buttons.
            element(3, "button", "Edit", "", "(in \"Fern 2\")"),
            element(4, "button", "Delete", "", "(in \"Fern 2\")"),
            element(5, "checkbox", "Cactus 5", "", "(unchecked)"),
            element(6, "link", "Cactus", &link("cactus"), ""),
            element(7, "button", "Edit", "", "(in \"Cactus 5\")"),
            element(8, "button", "Delete", "", "(in \"Cactus 5\")"),
            // The page's quotes cannot end the state's.
            element(9, "button", "×", "", "(in \"buy milk\")"),
            element(10, "button", "×", "", "(in \"walk the 'dog'\")"),
            element(
                11,
                "link",
                "Add to cart",
                &link("cart"),
                "(in \"Fern Shade\")"
            ),
            element(
                12,
                "link",
                "Add to cart",
                &link("cart"),
                "(in \"Cactus Sun\")"
            ),
            // The message's list item, not the whole list.
            element(
                13,
                "link",
                "Fern",
                &link("fern"),
                "(in \"The plant was added.\")"
            ),
            // A row of buttons alone: about the message just before it.
            element(14, "button", "Copy message", "", "(in \"hello there\")"),
            element(
                15,
                "button",
                "Copy message",
                "",
                "(in \"You said: hello there.\")"
            ),
            // One of a kind: nothing to tell apart.
            element(16, "button", "Checkout", "", ""),
            element(17, "button", "Reload", "", ""),
        ]
    );

    tap_listed(b, "p", "rows", 8).await;
    let (listing, _) = list(b, "p", "deleted", 50).await;
    let labels: Vec<&str> = listing.elements[..5]
        .iter()
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(labels, ["Fern 2", "Fern", "Edit", "Delete", "×"]);
    // Alone in the table now: nothing to tell it apart from.
    assert_eq!(listing.elements[3].state, "");
    worker.stop().await;
}

/// A list box (`multiple`, Django's filter_horizontal) says what is chosen in it, and when
/// nothing is, what it holds: "(empty)" would say it has no options. A tag field (Select2's,
/// Tom Select's) says the items it chose, drawn in its box before its empty text field; words
/// and a link beside a field that are no such items (a unit, a hint) are no value of it.
#[tokio::test(flavor = "multi_thread")]
async fn a_list_box_or_a_tag_field_says_what_is_chosen_in_it() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/tags.html")).await;
    let (listing, _) = list(b, "p", "tags", 50).await;
    let fields: Vec<(&str, &str)> = listing
        .elements
        .iter()
        .filter(|e| e.kind == "select" || e.kind == "input")
        .map(|e| (e.label.as_str(), e.state.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            (
                "Available",
                "(none chosen of 6 options: award, classic, rare, old, new, …)"
            ),
            ("Chosen", "= \"fiction\" (of 2 options)"),
            ("None", "(no options)"),
            ("Posts", "= \"Post number 3, Post number 7\""),
            ("Cities", "= \"Rome\""),
            ("Colours", "= \"green\""),
            ("New PIN", "(filled)"),
            ("Kinds", "= \"Tools, Toys\" (collapsed)"),
            ("Amount", "(empty)"),
            ("Code", "(empty)"),
        ]
    );
    // A chip's remover says which chip it removes.
    let remover = listing
        .elements
        .iter()
        .find(|e| e.label == "Remove")
        .expect("the chip's remover");
    assert_eq!(remover.state, "(in \"green\")");
    worker.stop().await;
}

/// What a box that clips its overflow hides is not listed: a tab strip's tabs past its end, a
/// collapsed panel's button, a carousel's other slides; a menu laid outside such a box that
/// escapes it is.
#[tokio::test(flavor = "multi_thread")]
async fn what_a_box_clips_away_is_not_listed_and_what_escapes_it_is() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/clipped.html")).await;
    let (listing, _) = list(b, "p", "clipped", 50).await;
    let labels: Vec<&str> = listing.elements.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Summary",
            "Details",
            "History",
            "Advanced",
            "Slide one",
            "Menu entry"
        ]
    );
    assert_eq!((listing.above, listing.below), (0, 0));
    worker.stop().await;
}

/// An open dropdown's list floats over what is laid out under it: what lies under it is listed
/// covered (a tap there would choose an option), its options and what is beside it are not; a
/// tap there is refused naming the list. A multiple choice's chips are read apart; a search
/// field above a list is not named by its options.
#[tokio::test(flavor = "multi_thread")]
async fn what_an_open_dropdown_floats_over_is_listed_covered_and_chips_are_read_apart() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/popup.html")).await;
    let (listing, _) = list(b, "p", "popup", 50).await;
    let seen: Vec<String> = listing
        .elements
        .iter()
        .map(|e| {
            format!("{} {} {}", e.kind, e.label, e.state)
                .trim()
                .to_string()
        })
        .collect();
    for expected in [
        "clickable South (covered)",
        "clickable 12 (covered)",
        "option South",
        "option North (selected)",
        "clickable North",
        "clickable 9",
        "button Save",
        "select Products = \"Widgets, Gadgets, 2 selected\" (collapsed)",
        "input  (empty) (expanded)",
        "option admin",
    ] {
        assert!(
            seen.iter().any(|s| s == expected),
            "{expected:?} in {seen:#?}"
        );
    }
    // A tap on a cell under the list is refused saying what covers it: the open list (its
    // <select> by the year it shows), not the one option that lies over the cell's middle.
    let south = listing
        .elements
        .iter()
        .find(|e| e.kind == "clickable" && e.label == "South")
        .unwrap()
        .n;
    let arg = json!({"listing_id": "popup", "n": south, "tap": true});
    let raw = eval(b, "p", RESOLVE_JS, arg).await;
    assert_eq!(
        nanomuse_controller::listing::parse_resolved(serde_json::from_str(&raw).unwrap()).unwrap(),
        Resolved::Covered {
            by: "2026 North South East".into()
        }
    );
    worker.stop().await;
}

/// The worker defines its step scripts in each document before the page's own scripts run and
/// calls them by name (`worker/src/preloaded.rs`): a page that finds them cannot put its own in
/// their place, so its listing stays what is on it.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_cannot_put_its_own_listing_script_in_place_of_the_workers() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/tamper.html")).await;

    let report = eval(
        b,
        "p",
        "() => document.getElementById('report').textContent",
        Value::Null,
    )
    .await;
    let found: usize = report
        .trim_matches('"')
        .strip_prefix("step scripts found: ")
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the page's report: {report}"));
    assert!(
        found > 0,
        "no step script was defined before the page's scripts: {report}"
    );
    assert!(report.ends_with("replaced: 0\""), "{report}");

    let (listing, _) = list(b, "p", "tampered", 50).await;
    assert_eq!(
        listing.elements,
        [element(1, "button", "Real button", "", "")]
    );
    assert_eq!(listing.title, "Tamper");
    worker.stop().await;
}

/// What component kits say is chosen without ARIA is read as a person sees it (markup after Ant
/// Design's and Bootstrap's): the option drawn under a search field emptied once it was chosen,
/// a placeholder as no value, options a person sees that say only whether they are selected, a
/// slider's pressable track as no control of its own, days told by their dates and the day,
/// page and button marked chosen by a class, a page's arrow marked disabled by a class, a name
/// cut short by its title, a button by the
/// tooltip of the item it alone fills (before its icon's own label), but not by a tooltip of
/// details; a column named "active" by a class of its cells (Flask-Admin's) is no chosen one.
#[tokio::test(flavor = "multi_thread")]
async fn choices_kits_draw_without_aria_are_read_as_a_person_sees_them() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/chosen.html")).await;
    let (listing, _) = list(b, "p", "chosen", 50).await;
    assert_eq!(
        listing.elements,
        vec![
            element(1, "input", "Destination", "", "= \"Rome\" (collapsed)"),
            element(2, "input", "Origin", "", "(empty) (expanded)"),
            element(3, "option", "Paris", "", ""),
            element(4, "option", "Oslo", "", ""),
            element(5, "select", "Region", "", "(empty) (collapsed)"),
            element(6, "slider", "Budget", "", "= \"500\""),
            element(7, "clickable", "2026-11-30", "", ""),
            element(8, "clickable", "2026-12-01", "", ""),
            element(9, "clickable", "2026-12-13", "", "(selected)"),
            element(10, "clickable", "2026-12-30", "", ""),
            element(11, "clickable", "2027-01-01", "", ""),
            element(12, "button", "Previous Page", "", ""),
            element(13, "clickable", "1", "", "(selected)"),
            element(14, "clickable", "2", "", ""),
            element(15, "button", "Next Page", "", "(disabled)"),
            element(16, "button", "Day", "", ""),
            element(17, "button", "Week", "", "(selected)"),
            element(18, "button", "Month", "", ""),
            element(
                19,
                "link",
                "Quarterly report 2026.pdf",
                &format!("http://{site}/reports/q4"),
                ""
            ),
            element(20, "button", "0 Terminals, 0 Kernel sessions", "", ""),
            element(21, "tab", "Untitled.ipynb", "", "(selected)"),
            element(
                22,
                "link",
                "Sort by Name",
                &format!("http://{site}/users?sort=0"),
                ""
            ),
            element(
                23,
                "link",
                "Sort by Active",
                &format!("http://{site}/users?sort=1"),
                ""
            ),
            element(
                24,
                "link",
                "Sort by Joined",
                &format!("http://{site}/users?sort=2"),
                ""
            ),
            element(25, "button", "Yes", "", ""),
        ]
    );
    worker.stop().await;
}

/// What a page announces as important in view (role=alert) is said with the listing: a
/// sign-in's error, a toast's question beside its buttons; not one hidden, nor a field's own
/// error, which the field's state says. So are the messages the common conventions mark by
/// class alone (Bootstrap's alert, Django's messages and form errors), beside their close
/// button.
#[tokio::test(flavor = "multi_thread")]
async fn alerts_in_view_are_said_once() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/alerts.html")).await;
    let (listing, _) = list(b, "p", "alerts", 50).await;
    assert_eq!(
        listing.alerts,
        [
            "Wrong password. Try again.",
            "Please agree to the terms first.",
            "Would you like to get news?"
        ]
    );
    assert_eq!(
        listing.elements[0],
        element(
            1,
            "input",
            "Email",
            "",
            "(empty) (invalid: Enter your email)"
        )
    );
    // The error a page draws beside a field the browser finds invalid is its state; hidden, not.
    let state_of = |label: &str| {
        listing
            .elements
            .iter()
            .find(|e| e.label == label)
            .map(|e| e.state.clone())
    };
    assert_eq!(
        state_of("City").as_deref(),
        Some("(empty) (invalid: Please give a city.)")
    );
    assert_eq!(state_of("Zip").as_deref(), Some("(empty)"));
    open_at(b, "m", format!("http://{site}/fixtures/messages.html")).await;
    let (listing, _) = list(b, "m", "messages", 50).await;
    assert_eq!(
        listing.alerts,
        [
            "Record was successfully saved.",
            "The user “ada” was changed successfully.",
            "Please correct the error below."
        ]
    );
    worker.stop().await;
}

/// A dropdown the page drew anew over its hidden <select> (Select2 3's) and named by the words
/// of its row is not named by what the row's other dropdowns show: Flask-Admin's filter row
/// reads "Active", then its operation and its value, not "Active Yes". One drawn over a hidden
/// <input> that keeps its value is a dropdown too, named by that field's label, its
/// placeholder no value.
#[tokio::test(flavor = "multi_thread")]
async fn a_field_named_by_its_row_is_not_named_by_what_its_other_dropdowns_show() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/filters.html")).await;
    let (listing, _) = list(b, "p", "filters", 50).await;
    let seen = read_as_listed(&listing.elements);
    assert_eq!(
        seen,
        [
            "link \"× Active\" ",
            "select \"Active\" = \"equals\"",
            "select \"Active\" = \"Yes\"",
            "button \"Apply\" ",
            "select \"User\" (empty)",
            "select \"Author\" = \"Author 5\"",
        ]
    );
    worker.stop().await;
}

/// A modal dialog holding a form is said by its title and its note, not by its fields' labels,
/// which the fields listed under it say (Flask-Admin's "Create New Record" read "Name * Email
/// * Role Role Active Joined Posts Posts").
#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_holding_a_form_is_said_without_its_fields_labels() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/formdialog.html")).await;
    let (listing, _) = list(b, "p", "formdialog", 50).await;
    assert_eq!(
        listing.dialog,
        Some(nanomuse_controller::listing::OpenDialog {
            title: "Create New Record".into(),
            text: "Fields marked * are required.".into(),
        })
    );
    worker.stop().await;
}

/// A dashboard's form as Dash 4 draws it: a label tied to nothing above each widget's box
/// names it (ahead of a placeholder, and of an aria-label that only repeats one), not each of
/// several fields in one box; a dropdown drawn as a button shows its placeholder as no value,
/// and one whose name floats in its box (Quasar's) does not show that name as its value; a
/// dropdown out of the tab order is not a combobox's toggle for another in the form; a calendar's days, table cells that say
/// aria-disabled or that the style draws pressable only under the pointer (Shiny's), are
/// listed and pressed (their handler at the document); a field beside a dropdown is not named
/// by its value; a table's fields alike in one row are told apart by their columns, and one
/// in a header cell that nothing names is named by its column; icon
/// buttons are named by the class that says what they do.
#[tokio::test(flavor = "multi_thread")]
async fn a_dashboards_widgets_are_named_by_the_labels_above_them_and_its_calendar_days_listed() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/dashboard.html")).await;
    let (listing, _) = list(b, "p", "dashboard", 50).await;
    let seen = read_as_listed(&listing.elements);
    assert_eq!(
        seen,
        [
            "input \"Customer name\" (empty)",
            "input \"From\" (empty)",
            "input \"To\" (empty)",
            "select \"Rooms\" (empty) (collapsed)",
            "select \"Country\" (empty) (collapsed)",
            "select \"Extras\" = \"Express\" (collapsed)",
            "input \"Delivery date\" = \"2026-12-10\"",
            "button \"Previous month\" ",
            "select \"\" = \"December\" (collapsed)",
            "input:number \"\" = \"2026\"",
            "button \"Decrease value\" ",
            "button \"Increase value\" ",
            "button \"Next month\" ",
            "clickable \"30\" ",
            "clickable \"1\" ",
            "clickable \"2\" ",
            "clickable \"3\" ",
            "clickable \"4\" (disabled)",
            "input \"filter data...\" (empty) (in column \"Id\")",
            "input \"filter data...\" (empty) (in column \"Name\")",
            "input:number \"Price\" (empty)",
            "input:number \"Price\" (empty)",
            "button \"Aa\" (in column \"Id\")",
            "button \"Aa\" (in column \"Name\")",
            "checkbox \"1 Apples 3\" (unchecked)",
            "button \"first page\" (disabled)",
            "button \"next page\" ",
            "clickable \"7\" ",
            "clickable \"8\" (selected)",
            "clickable \"9\" ",
            "select \"Month\" = \"March\" (collapsed)",
        ]
    );
    let out = "() => document.getElementById('out').textContent";
    tap_listed(b, "p", "dashboard", 16).await;
    assert_eq!(eval(b, "p", out, Value::Null).await, "\"day 2\"");
    tap_listed(b, "p", "dashboard", 30).await;
    assert_eq!(eval(b, "p", out, Value::Null).await, "\"day 9\"");
    worker.stop().await;
}

/// The settle's look says when a short timer begun on input asked the server for something
/// during it ('requesting'): the browser tells of the request a moment after the page made it,
/// and a look that ended meanwhile called the page quiet before the answer came (seen under a
/// full run's load: a search box's suggestions missing from typing's reply). The next look,
/// begun after, says the page's state again.
#[tokio::test(flavor = "multi_thread")]
async fn a_look_says_a_request_that_a_timer_begun_on_input_made_during_it() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/pause.html")).await;
    let look = nanomuse_proto::scripts::FRAME_DRAWN;
    // By fetch, then by XMLHttpRequest, which is still answered.
    for field in ["q", "q2"] {
        eval(
            b,
            "p",
            "(id) => { const q = document.getElementById(id); q.value = 'fern'; \
             q.dispatchEvent(new Event('input', { bubbles: true })); }",
            json!(field),
        )
        .await;
        assert_eq!(eval(b, "p", look, Value::Null).await, "\"requesting\"");
        assert_eq!(eval(b, "p", look, Value::Null).await, "\"complete\"");
    }
    let answered = "() => new Promise((resolve) => { let tries = 150; const look = () => \
         document.getElementById('found').textContent ? resolve(true) \
         : (tries -= 1) > 0 ? setTimeout(look, 20) : resolve(false); look(); })";
    assert_eq!(eval(b, "p", answered, Value::Null).await, "true");
    worker.stop().await;
}

/// A list open at the end of the document (a portal), outside the landmark its field is in, is
/// read right after the field that names it (aria-controls), not after the whole landmark.
#[tokio::test(flavor = "multi_thread")]
async fn a_list_drawn_at_the_documents_end_is_read_after_the_field_that_opened_it() {
    let labels: Vec<String> = listed_fixture("portal")
        .await
        .into_iter()
        .map(|e| format!("{} {}", e.kind, e.label))
        .collect();
    assert_eq!(
        labels,
        [
            "select Fruit",
            "option Apple",
            "option Pear",
            "button Order"
        ]
    );
}

/// What a page says of how things went without role=alert is said too where a person reads it:
/// a status drawn on the page (Streamlit's success box), an alert dialog that says it holds
/// nothing back (Streamlit's toast), which is no dialog open over the page; a status only
/// screen readers hear (a spinner's "Loading…", a count of results) is not.
#[tokio::test(flavor = "multi_thread")]
async fn statuses_drawn_and_toasts_that_hold_nothing_back_are_said_as_alerts() {
    let (site, _dir, worker) = site_and_worker().await;
    let b = &worker.backend;
    open_at(b, "p", format!("http://{site}/fixtures/statuses.html")).await;
    let (listing, _) = list(b, "p", "statuses", 50).await;
    assert_eq!(listing.alerts, ["Thanks Ada", "Order placed!"]);
    assert_eq!(listing.dialog, None);
    assert_eq!(listing.elements.len(), 1, "{:?}", listing.elements);
    worker.stop().await;
}

/// Elements alike are not told apart by words that are only another control's name that many
/// rows bear (Django's sidebar read its current model's link "Books" (in "Add")), nor by a
/// column header for screen readers only, nor by a row above that is no header.
#[tokio::test(flavor = "multi_thread")]
async fn alike_links_are_not_told_apart_by_a_name_every_row_bears() {
    let seen = read_as_listed(&listed_fixture("models").await);
    assert_eq!(
        seen,
        [
            "link \"Home\" ",
            "link \"Books\" (in \"Home › › Add book\")",
            "link \"Authors\" ",
            "link \"Add\" ",
            "link \"Books\" (current)",
            "link \"Add\" ",
            "link \"Publishers\" ",
            "link \"Add\" ",
        ]
    );
}

/// An expander drawn twice (Swagger UI's operation: its summary, and an arrow out of the tab
/// order named with the summary's words) is listed once, while an arrow that opens something
/// else, and a tree's items out of the tab order, stay; elements alike whose rows say the same
/// words besides their buttons ("object") are told apart by their rows' buttons too.
#[tokio::test(flavor = "multi_thread")]
async fn an_expander_drawn_twice_is_listed_once_and_alike_rows_are_told_by_their_buttons() {
    let seen = read_as_listed(&listed_fixture("operations").await);
    assert_eq!(
        seen,
        [
            "button \"GET /pets List pets\" (collapsed)",
            "button \"POST /pets Add a pet\" (collapsed)",
            "button \"Filters\" (collapsed)",
            "button \"More options\" (collapsed)",
            "button \"Error\" (collapsed)",
            "button \"Expand all\" (in \"Error object\")",
            "button \"Kind\" (collapsed)",
            "button \"Expand all\" (in \"string\")",
            "button \"Pet\" (collapsed)",
            "button \"Expand all\" (in \"Pet object\")",
            "clickable \"Dried fruits\" (collapsed)",
            "clickable \"Fruits\" (collapsed)",
        ]
    );
}

/// A field nothing names but its name is named by the words its name is made of, a row's
/// number among them (Datasette's "_filter_column_1"), else by its name as it is; and a column's
/// menu is told apart by its column's sort link though a facet's link bears the same name.
#[tokio::test(flavor = "multi_thread")]
async fn a_field_is_named_by_the_words_of_its_name_and_a_columns_menu_by_its_column() {
    let seen = read_as_listed(&listed_fixture("names").await);
    assert_eq!(
        seen,
        [
            "select \"filter column 1\" = \"status\"",
            "select \"filter op 1\" = \"=\"",
            "input \"filter value 1\" = \"paid\"",
            "select \"filter column\" = \"- column -\"",
            "input \"user email\" (empty)",
            "input \"q\" (empty)",
            "button \"Apply\" ",
            "link \"item\" ",
            "link \"status\" ",
            "link \"item\" ",
            "clickable \"menu\" (in \"item\")",
            "link \"status\" ",
            "clickable \"menu\" (in \"status\")",
        ]
    );
}

/// Links alike in a site's menus are told apart by the menu each is in (its name), not by the
/// article beside the one in the sidebar (Material for MkDocs read its sidebar's "Home" (in
/// "Pet Shop Welcome to the pet shop docs.")); a menu without a name by its other words.
#[tokio::test(flavor = "multi_thread")]
async fn links_alike_in_a_sites_menus_are_told_apart_by_their_menus() {
    let seen = read_as_listed(&listed_fixture("docs").await);
    assert_eq!(
        seen,
        [
            "link \"Home\" (in \"Tabs\")",
            "link \"Guide\" ",
            "link \"Home\" (in \"Navigation\")",
            "link \"Home\" (in \"Legal\")",
            "link \"Legal\" ",
        ]
    );
}
