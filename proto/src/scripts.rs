//! The page scripts, as the `.js` files of `proto/scripts/`: the ones every backend runs alike
//! — the worker (Rust) and the phone (Kotlin, which loads the same files as resources) — and
//! the controller's, which it sends to either through `evaluate`. Each is a JavaScript function expression, called with one argument.

/// The script of `file` (a function expression) with `secretField(el)` in its scope: whether a
/// field's value is a secret that no reply may read (`secret_field.js`). One rule for the
/// listing, `extract` and `wait --text`, and one registry of fields that were password fields.
macro_rules! with_secret_field {
    ($file:literal) => {
        concat!(
            "((secretField) =>\n",
            include_str!(concat!("../scripts/", $file)),
            ")(",
            include_str!("../scripts/secret_field.js"),
            ")"
        )
    };
}

/// `(text) => why`: fills the focused field through the page's own value setter plus `input`
/// and `change` events, so React and Vue forms notice. Answers null, `{trusted: true}` when the
/// page broke that path (the field's text then selected, for trusted input to type over; with
/// `selectAll: true`, a code editor's hidden field or a rich text editor, a contenteditable,
/// whose editor's own select-all goes first, then a paste), or why nothing was typed.
pub const FILL_FOCUSED: &str = include_str!("../scripts/fill_focused.js");

/// `(text) => taken`: the text as a paste into the focused field, for a code editor's hidden
/// field after the editor's select-all ([`FILL_FOCUSED`] answers `selectAll` for it); true when
/// the page took it, false when typing is left to put the text in.
pub const PASTE_FOCUSED: &str = include_str!("../scripts/paste_focused.js");

/// `() => state`: resolves in the task after the next animation frame (by then the handlers
/// of an input have run and started what they start), after the short timers input began have
/// fired (see [`INPUT_TIMERS`]), with the document's `readyState`, or
/// `leaving` while a navigation that will replace the document began less than a second ago
/// (the mark of the worker's start script; a page without it never says `leaving`).
pub const FRAME_DRAWN: &str = include_str!("../scripts/frame_drawn.js");

/// Run in every document before its own scripts (a statement, not a function). Keeps the
/// spec's "one tab": `window.open` and links or forms aimed at another window load in this
/// page instead; and marks a navigation that will replace the document
/// (`__nanomuseLeavingAt`), which [`FRAME_DRAWN`] reads so `settle` does not call the page
/// quiet before its request reaches the network.
pub const ONE_TAB: &str = include_str!("../scripts/one_tab.js");

/// Run in every document before its own scripts (a statement), beside [`ONE_TAB`]: keeps the
/// short timers a page begins on input (a search box's pause before it asks its server, a menu
/// that opens a moment after its click) until they fire, for [`FRAME_DRAWN`] to wait for
/// (`__nanomuseInputTimers`).
pub const INPUT_TIMERS: &str = include_str!("../scripts/input_timers.js");

/// `({kind, message, answer}) => undefined`: keeps in the page what a JavaScript dialog (`alert`,
/// `confirm`, `prompt`) said and how the backend answered it (every backend answers them at
/// once, as no one is there to: OK, or a prompt's own default text), for the next listing to
/// report and forget ([`LIST`]'s `said`).
pub const DIALOG_SAID: &str = include_str!("../scripts/dialog_said.js");

/// `(args) => listing`: the page's interactive elements in view, numbered, with the counts
/// above and below (the controller's listing, `controller/src/listing.rs`, says the rest).
pub const LIST: &str = with_secret_field!("list.js");

/// `(dy) => {x, y} | null`: where a wheel turn of `dy` scrolls what a person would turn it over:
/// the middle of the view (null), else the middle of the largest box in view that can still
/// move that way, in CSS px of the layout viewport (`scroll`).
pub const SCROLL_POINT: &str = include_str!("../scripts/scroll_point.js");

/// `(args) => point | {error}`: where element `n` of the page's last listing is now.
pub const RESOLVE: &str = include_str!("../scripts/resolve.js");

/// `({quiet_ms, timeout_ms}) => quiet`: true once nothing in the document changed for
/// `quiet_ms`, false when `timeout_ms` passed first (`wait` alone).
pub const DOM_QUIET: &str = include_str!("../scripts/dom_quiet.js");

/// `({text, timeout_ms}) => found`: true once the page's visible text holds `text` (`wait
/// --text`), false when `timeout_ms` passed first.
pub const TEXT_APPEARS: &str = with_secret_field!("text_appears.js");

/// `() => {url, title, text, fields}`: the body's rendered text (`extract`), where a dropdown
/// reads as the option it shows (its `innerText` is every option, which would say nothing of
/// which is chosen); a list box (`multiple`, `size`) shows its options and keeps them. A page
/// that broke what finding its selects uses is read as drawn. A web component draws its words
/// from its shadow root, which `innerText` leaves out: a page with open shadow roots is read
/// through them, as drawn (a `<slot>` as what it shows), each part without one still by its
/// `innerText`. `fields`: what visible fields hold (`{label, value}`), a secret's never,
/// each named as the document's last listing names it (`nameOf`), else by its own words.
pub const PAGE_TEXT: &str = with_secret_field!("page_text.js");
