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
pub const LIST_JS: &str = r##"(args) => {
  const listingId = String(args.listing_id);
  const maxListed = Number.isFinite(args.max) ? Math.max(0, Math.floor(args.max)) : 500;
  const viewWidth = window.innerWidth;
  const viewHeight = window.innerHeight;
  const LABEL_LIMIT = 80;
  const VALUE_LIMIT = 40;
  const HREF_LIMIT = 500;

  // The prototypes' own methods, called on the nodes, so a page that replaces them on its
  // nodes (`document.querySelectorAll = …`) does not change what is listed.
  const QUERY_ALL = new Map([
    [9, Document.prototype.querySelectorAll],
    [11, DocumentFragment.prototype.querySelectorAll],
    [1, Element.prototype.querySelectorAll],
  ]);
  const allIn = (root, selector) => {
    try {
      return QUERY_ALL.get(root.nodeType).call(root, selector);
    } catch (_) {
      // A wrapped node (a polyfill's) is not the DOM's own: its own method, if any.
      try {
        const found = root.querySelectorAll(selector);
        return found && typeof found.length === 'number' ? found : [];
      } catch (_) {
        return [];
      }
    }
  };
  // What a field is described by when nothing names it, and what makes a handler's element a
  // container of controls rather than a control itself.
  const CONTROLS = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, '
    + '[contenteditable=""], [contenteditable="true"], [role="button"], [role="link"], '
    + '[role="checkbox"], [role="radio"], [role="switch"], [role="tab"], [role="menuitem"], '
    + '[role="option"], [role="textbox"], [role="combobox"]';
  const FIELDS = 'input:not([type="hidden"]), select, textarea, [role="checkbox"], [role="radio"], '
    + '[role="switch"], [role="textbox"], [role="combobox"]';

  // A Map, so role="constructor" does not find Object.prototype's.
  const ROLE_KINDS = new Map(Object.entries({
    button: 'button', link: 'link', checkbox: 'checkbox', radio: 'radio', tab: 'tab',
    menuitem: 'menuitem', menuitemcheckbox: 'menuitem', menuitemradio: 'menuitem',
    option: 'option', switch: 'switch', combobox: 'select', textbox: 'input',
  }));
  const BUTTON_INPUTS = new Set(['button', 'submit', 'reset', 'image']);
  // What is inside one of these is part of it: a finger pressing the inner span presses them.
  const CONTAINER_KINDS = new Set(['link', 'button', 'summary', 'tab', 'menuitem', 'option']);
  // Fields are never swallowed by a container: the model has to be able to type into them.
  const isFieldKind = (kind) =>
    kind.startsWith('input') || ['checkbox', 'radio', 'switch', 'select', 'textarea', 'editable'].includes(kind);
  // Some sites fill autocomplete hints but switch a password field to type=text to show it.
  const SECRET_AUTOCOMPLETE = /\b(current-password|new-password|one-time-code)\b/i;

  // Page text can hold lone UTF-16 surrogates, which are not valid JSON for the controller.
  const collapse = (text) => String(text || '').replace(/\p{Cs}/gu, '\uFFFD').replace(/\s+/g, ' ').trim();
  const cut = (text, limit) => {
    if (text.length <= limit) return text;
    // Cut by code points so an emoji is never split in half.
    return [...text.slice(0, limit * 2)].slice(0, limit - 1).join('').trimEnd() + '…';
  };
  // The items of a DOM list: MooTools' Array.from ignores a mapping function.
  const itemsOf = (list) => {
    const items = [];
    for (let i = 0; i < list.length; i += 1) items.push(list[i]);
    return items;
  };
  const quoted = (text, limit) => '= ' + JSON.stringify(cut(text.replace(/\p{Cs}/gu, '\uFFFD'), limit));

  const kindOf = (el) => {
    const tag = el.localName;
    const role = (el.getAttribute('role') || '').trim().toLowerCase();
    if (tag === 'input') {
      const type = el.type;
      if (type === 'hidden') return null;
      if (type === 'checkbox' && role === 'switch') return 'switch';
      if (type === 'checkbox' || type === 'radio') return type;
      if (BUTTON_INPUTS.has(type)) return 'button';
      return type === 'text' ? 'input' : 'input:' + type;
    }
    if (tag === 'select') return 'select';
    if (tag === 'textarea') return 'textarea';
    if (ROLE_KINDS.has(role)) {
      return role === 'textbox' && el.getAttribute('aria-multiline') === 'true' ? 'textarea' : ROLE_KINDS.get(role);
    }
    if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) return 'link';
    if (tag === 'button') return 'button';
    if (tag === 'summary') return 'summary';
    // Only the editing host: everything inside an editor is editable too.
    if (el.hasAttribute('contenteditable') && el.isContentEditable) {
      return el.parentElement && el.parentElement.isContentEditable ? null : 'editable';
    }
    // A handler on <body> or <html> catches every click on the page; it says nothing. Whether
    // a handler's element is a control or a framework's container is decided by its place
    // (see `delegates`).
    if (typeof el.onclick === 'function' && tag !== 'body' && tag !== 'html') return 'clickable';
    // Focusable and drawn as pressable: a control built from a <div>.
    const tabindex = el.getAttribute('tabindex');
    if (tabindex !== null && Number(tabindex) >= 0 && getComputedStyle(el).cursor === 'pointer') {
      return 'clickable';
    }
    return null;
  };

  // A handler on an element that holds controls of its own, or that spans (almost) the whole
  // view, is a framework delegating events (React's root container, Vue's app, a layout
  // wrapper): what a person presses is inside it.
  const delegates = (el, rect) =>
    allIn(el, CONTROLS).length > 0 || (rect.width >= 0.9 * viewWidth && rect.height >= 0.9 * viewHeight);

  const hasArea = (rect) => rect.width > 0 && rect.height > 0;
  const visibleByCss = (el) => {
    // checkVisibility also sees an ancestor's opacity: 0; older WebViews lack it.
    if (el.checkVisibility) {
      return el.checkVisibility({
        checkOpacity: true, checkVisibilityCSS: true, opacityProperty: true, visibilityProperty: true,
      });
    }
    const style = getComputedStyle(el);
    return style.visibility === 'visible' && style.display !== 'none' && style.opacity !== '0';
  };
  const overlaps = (box, clip) =>
    box.right > clip.left && box.left < clip.right && box.bottom > clip.top && box.top < clip.bottom;

  const containers = new Set();
  const insideContainer = (el) => {
    // Walks up through shadow roots to their hosts, so a button's shadow content is inside it.
    for (let node = el.parentNode; node; node = node.parentNode || node.host) {
      if (containers.has(node)) return true;
    }
    return false;
  };

  const inView = [];
  const standIns = new Set();
  let above = 0;
  let below = 0;

  // Drawn except for its opacity: a styled checkbox laid transparent over what the page draws
  // for it (dijit's), which is where a finger presses.
  const transparentOnly = (el) =>
    !!el.checkVisibility && el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });

  const consider = (el, kind, frame) => {
    if (!isFieldKind(kind) && insideContainer(el)) return;
    let target = el;
    let rect = el.getBoundingClientRect();
    if (kind === 'clickable' && delegates(el, rect)) return;
    if (!hasArea(rect) || !visibleByCss(el)) {
      const toggle = ['checkbox', 'radio', 'switch'].includes(kind);
      // Styled checkboxes hide the real input and draw its <label>, which is what a finger
      // presses; pressing it toggles the input.
      const label = toggle && el.labels && el.labels[0];
      const labelRect = label && !standIns.has(label) && label.getBoundingClientRect();
      if (labelRect && hasArea(labelRect) && visibleByCss(label)) {
        rect = labelRect;
        target = label;
        standIns.add(label);
      } else if (!(toggle && hasArea(rect) && transparentOnly(el))) {
        return;
      }
    }
    if (CONTAINER_KINDS.has(kind)) containers.add(el);
    const box = {
      left: rect.left + frame.x, top: rect.top + frame.y,
      right: rect.right + frame.x, bottom: rect.bottom + frame.y,
    };
    // Scrolled out of sight inside its frame: neither in view nor a scroll of the page away.
    if (frame.clip && !overlaps(box, frame.clip)) return;
    if (box.bottom <= 0) above += 1;
    else if (box.top >= viewHeight) below += 1;
    else if (box.right > 0 && box.left < viewWidth) inView.push({ el, target, kind, box });
  };

  // A same-origin frame's elements, placed in the top page's coordinates and clipped by it.
  const frameInside = (iframe, outer) => {
    let doc = null;
    try { doc = iframe.contentDocument; } catch (_) { return null; }
    const inner = doc && doc.defaultView;
    if (!inner || !doc.documentElement) return null;
    const rect = iframe.getBoundingClientRect();
    if (!hasArea(rect) || !visibleByCss(iframe)) return null;
    const style = getComputedStyle(iframe);
    const x = outer.x + rect.left + iframe.clientLeft + parseFloat(style.paddingLeft);
    const y = outer.y + rect.top + iframe.clientTop + parseFloat(style.paddingTop);
    let clip = { left: x, top: y, right: x + inner.innerWidth, bottom: y + inner.innerHeight };
    if (outer.clip) {
      clip = {
        left: Math.max(clip.left, outer.clip.left), top: Math.max(clip.top, outer.clip.top),
        right: Math.min(clip.right, outer.clip.right), bottom: Math.min(clip.bottom, outer.clip.bottom),
      };
    }
    return { doc, x, y, clip };
  };

  const visit = (root, frame) => {
    const all = allIn(root, '*');
    for (let i = 0; i < all.length; i += 1) {
      const el = all[i];
      // One element the page made unreadable is left out, not the page.
      try {
        const kind = kindOf(el);
        if (kind) consider(el, kind, frame);
      } catch (_) { /* left out */ }
      try {
        if (el.shadowRoot) visit(el.shadowRoot, frame);
        if (el.localName === 'iframe' || el.localName === 'frame') {
          const inner = frameInside(el, frame);
          if (inner) visit(inner.doc, inner);
        }
      } catch (_) { /* left out */ }
    }
  };
  visit(document, { x: 0, y: 0, clip: null });

  // Reading order: top to bottom, and left to right within a line; tops a few pixels apart
  // (baseline alignment, borders) are one line.
  inView.sort((a, b) => a.box.top - b.box.top);
  const ordered = [];
  for (let start = 0; start < inView.length;) {
    let end = start;
    while (end < inView.length && inView[end].box.top - inView[start].box.top <= 5) end += 1;
    ordered.push(...inView.slice(start, end).sort((a, b) => a.box.left - b.box.left));
    start = end;
  }
  const listed = ordered.slice(0, maxListed);
  below += ordered.length - listed.length;

  const textOfIds = (el, ids) => {
    if (!ids) return '';
    const root = el.getRootNode();
    return ids.trim().split(/\s+/)
      .map((id) => root.getElementById && root.getElementById(id))
      .filter(Boolean)
      .map((node) => node.innerText || node.textContent)
      .join(' ');
  };
  // A <label> wrapping its field: its own words, not the options of a <select> inside it.
  const labelText = (label, field) => {
    if (!label.contains(field)) return label.innerText;
    const walker = label.ownerDocument.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!field.contains(node) && !node.parentElement.closest('select, textarea, script, style')) {
        text += node.data + ' ';
      }
    }
    return text;
  };
  const imageText = (el) => {
    if (['img', 'area'].includes(el.localName) || (el.localName === 'input' && el.type === 'image')) {
      return el.getAttribute('alt');
    }
    const image = el.querySelector('img[alt]:not([alt=""])');
    if (image) return image.getAttribute('alt');
    const icon = el.querySelector('svg[aria-label], svg title');
    return icon && (icon.getAttribute('aria-label') || icon.textContent);
  };
  const buttonInputText = (el) => {
    if (el.localName !== 'input' || !BUTTON_INPUTS.has(el.type)) return '';
    return el.value || { submit: 'Submit', reset: 'Reset' }[el.type] || '';
  };

  // Text a person sees, inside `container` but not inside `field`; with `plain`, not inside
  // another control either (a row's "Edit" button does not name its checkbox).
  const textAround = (container, field, plain) => {
    const walker = container.ownerDocument.createTreeWalker(container, NodeFilter.SHOW_TEXT);
    let text = '';
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || field.contains(node) || parent.closest('select, textarea, script, style, template')) continue;
      if (plain) {
        const control = parent.closest(CONTROLS);
        if (control && container.contains(control)) continue;
      }
      if (parent.checkVisibility && !parent.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true })) continue;
      text += node.data + ' ';
    }
    return collapse(text);
  };
  // A field nothing names is named by what a person reads beside it: a <label> next to it that
  // is not tied to another field, else the text of the nearest enclosing row, list item or box
  // that holds no other field (a todo's checkbox by its todo, a table row's by the row).
  const contextOf = (el) => {
    for (const sibling of [el.previousElementSibling, el.nextElementSibling]) {
      if (sibling && sibling.localName === 'label' && !sibling.hasAttribute('for') && allIn(sibling, FIELDS).length === 0) {
        const text = collapse(sibling.innerText);
        if (text) return text;
      }
    }
    let node = el.parentElement;
    for (let depth = 0; node && depth < 4 && node.localName !== 'body'; depth += 1, node = node.parentElement) {
      const fields = allIn(node, FIELDS);
      for (let i = 0; i < fields.length; i += 1) {
        if (fields[i] !== el && hasArea(fields[i].getBoundingClientRect())) return '';
      }
      const text = textAround(node, el, true) || textAround(node, el, false);
      if (text) return text;
    }
    return '';
  };
  // What CSS draws as an icon's text (TodoMVC's "×"), as an accessibility tree names it.
  const drawnText = (el) => ['::before', '::after']
    .map((pseudo) => /^"(.*)"$/.exec(getComputedStyle(el, pseudo).content))
    .filter(Boolean)
    // Icon fonts draw from the private use area: no text to a person.
    .map((match) => match[1].replace(/[\uE000-\uF8FF]/g, ''))
    .join(' ');

  const labelOf = (el, kind) => {
    const isField = ['input', 'select', 'textarea'].includes(el.localName);
    const sources = [
      () => el.getAttribute('aria-label'),
      () => textOfIds(el, el.getAttribute('aria-labelledby')),
      () => (isField && el.labels ? itemsOf(el.labels).map((label) => labelText(label, el)).join(' ') : ''),
      // A field's innerText is nothing useful (a <select>'s is every option).
      () => (isField ? '' : el.innerText),
      () => el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'),
      () => buttonInputText(el),
      () => imageText(el),
      () => el.getAttribute('title'),
      () => (isFieldKind(kind) ? contextOf(el) : drawnText(el)),
      () => el.getAttribute('name'),
    ];
    for (const source of sources) {
      // A source the page made unreadable names nothing; the next one may.
      let text = '';
      try { text = collapse(source()); } catch (_) { /* the next source */ }
      if (text) return cut(text, LABEL_LIMIT);
    }
    return '';
  };

  const hrefOf = (el, kind) => {
    const raw = kind === 'link' ? el.getAttribute('href') : null;
    if (raw === null) return '';
    let url;
    try { url = new URL(raw, el.baseURI).href; } catch (_) { return ''; }
    // javascript: links are click handlers, not places to go.
    return url.startsWith('javascript:') ? '' : cut(url, HREF_LIMIT);
  };

  const stateOf = (el, kind) => {
    const tag = el.localName;
    const role = (el.getAttribute('role') || '').toLowerCase();
    const parts = [];
    if (['checkbox', 'radio', 'switch'].includes(kind) || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const checked = tag === 'input' ? el.checked : el.getAttribute('aria-checked') === 'true';
      parts.push(checked ? '(checked)' : '(unchecked)');
    } else if (tag === 'select') {
      const chosen = collapse(itemsOf(el.selectedOptions).map((option) => option.text).join(', '));
      parts.push(chosen ? quoted(chosen, VALUE_LIMIT) : '(empty)');
    } else if (tag === 'input' && (el.type === 'password' || SECRET_AUTOCOMPLETE.test(el.autocomplete || ''))) {
      // Passwords go to the website, never through the model.
      parts.push(el.value ? '(filled)' : '(empty)');
    } else if (kind === 'input' || kind.startsWith('input:') || kind === 'textarea' || kind === 'editable') {
      let value = tag === 'input' || tag === 'textarea' ? el.value : el.innerText.trim();
      if (el.type === 'file') value = value.replace(/^.*[\\/]/, '');
      parts.push(value ? quoted(value, VALUE_LIMIT) : '(empty)');
    }
    if (el.getAttribute('aria-selected') === 'true') parts.push('(selected)');
    const expanded = el.getAttribute('aria-expanded');
    if (expanded === 'true' || expanded === 'false') {
      parts.push(expanded === 'true' ? '(expanded)' : '(collapsed)');
    } else if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
      parts.push(el.parentElement.open ? '(expanded)' : '(collapsed)');
    }
    if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') parts.push('(disabled)');
    return parts.join(' ');
  };

  const readable = (read) => {
    try { return read(); } catch (_) { return ''; }
  };
  const elements = listed.map((item, index) => ({
    n: index + 1,
    label: labelOf(item.el, item.kind),
    kind: item.kind,
    href: readable(() => hrefOf(item.el, item.kind)),
    state: readable(() => stateOf(item.el, item.kind)),
  }));
  // Not enumerable, so the page's own code that walks window's properties does not trip on it.
  Object.defineProperty(window, '__nanomuseListing', {
    value: {
      id: listingId,
      elements: listed.map((item) => item.target),
      details: elements.map(({ label, kind }) => ({ label, kind })),
    },
    configurable: true,
    writable: true,
  });
  return { url: location.href, title: document.title, elements, above, below };
}"##;

/// `(args) => point | {error}`, with `args = {listing_id, n, scroll, focus}`.
///
/// Returns `{x, y, label, kind, url}`, the centre of element `n`'s visible part in CSS px of the
/// viewport, or `{error: "stale" | "missing" (with count) | "detached" | "hidden"}`.
pub const RESOLVE_JS: &str = r##"(args) => {
  const listing = window.__nanomuseListing;
  if (!listing || listing.id !== String(args.listing_id)) return { error: 'stale' };
  const count = listing.elements.length;
  if (!Number.isInteger(args.n) || args.n < 1 || args.n > count) return { error: 'missing', count };
  const el = listing.elements[args.n - 1];
  const { label, kind } = listing.details[args.n - 1];
  // An element of a frame that navigated away or was removed still thinks it is connected.
  let view = el.ownerDocument.defaultView;
  if (!el.isConnected || !view) return { error: 'detached' };
  for (let w = view; w !== window; w = w.parent) {
    if (!w.frameElement || !w.frameElement.isConnected) return { error: 'detached' };
  }
  if (args.scroll) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  if (args.focus) el.focus({ preventScroll: true });
  const rect = el.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) return { error: 'hidden' };
  // The part of the element each enclosing viewport shows, carried up to the top page.
  let box = { left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom };
  for (; view !== window; view = view.parent) {
    box = {
      left: Math.max(box.left, 0), top: Math.max(box.top, 0),
      right: Math.min(box.right, view.innerWidth), bottom: Math.min(box.bottom, view.innerHeight),
    };
    const frame = view.frameElement;
    const frameRect = frame.getBoundingClientRect();
    const style = getComputedStyle(frame);
    const x = frameRect.left + frame.clientLeft + parseFloat(style.paddingLeft);
    const y = frameRect.top + frame.clientTop + parseFloat(style.paddingTop);
    box = { left: box.left + x, top: box.top + y, right: box.right + x, bottom: box.bottom + y };
  }
  const left = Math.max(box.left, 0);
  const top = Math.max(box.top, 0);
  const right = Math.min(box.right, window.innerWidth);
  const bottom = Math.min(box.bottom, window.innerHeight);
  // Nothing of it on screen: a tap would land on something else.
  if (right <= left || bottom <= top) return { error: 'hidden' };
  return { x: (left + right) / 2, y: (top + bottom) / 2, label, kind, url: location.href };
}"##;

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
}

/// What [`LIST_JS`] returns, before it is tied to the listing id it was run with.
#[derive(Deserialize)]
struct PageListing {
    url: String,
    title: String,
    elements: Vec<ListedElement>,
    above: u32,
    below: u32,
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
        })
    }

    /// The lines a model reads: one per element, e.g. `[3] input:email "Email" (empty)`,
    /// `[4] button "Sign in"`, `[5] link "Docs" → https://x/docs`, then a line saying how many
    /// more a scroll would show.
    pub fn render(&self) -> String {
        let mut lines: Vec<String> = self.elements.iter().map(render_element).collect();
        if lines.is_empty() {
            lines.push("(no interactive elements in view)".to_string());
        }
        let more = match (self.above, self.below) {
            (0, 0) => None,
            (above, 0) => Some(format!("{above} more above")),
            (0, below) => Some(format!("{below} more below")),
            (above, below) => Some(format!("{above} more above, {below} more below")),
        };
        if let Some(more) = more {
            lines.push(format!("({more} the fold: scroll to see them)"));
        }
        lines.join("\n")
    }
}

fn render_element(element: &ListedElement) -> String {
    let mut line = format!("[{}] {}", element.n, one_line(&element.kind));
    if !element.label.is_empty() {
        line.push_str(&format!(
            " \"{}\"",
            one_line(&element.label).replace('"', "\\\"")
        ));
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

/// Where element `n` of a listing is now, or why it cannot be pressed.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// The centre of its visible part, in CSS px of the viewport.
    At {
        x: f64,
        y: f64,
        label: String,
        kind: String,
    },
    /// The page was replaced or listed again since: the numbers mean nothing now.
    Stale,
    /// No element `n`; the listing had `count`.
    Missing { count: u32 },
    /// The element was removed from the page.
    Detached,
    /// The element has no size or no part of it is on screen.
    Hidden,
}

/// From RESOLVE_JS's JSON value.
pub fn parse_resolved(value: Value) -> Result<Resolved, String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("the element lookup returned {value} instead of an object"))?;
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
    Ok(Resolved::At {
        x: number("x")?,
        y: number("y")?,
        label: text("label")?,
        kind: text("kind")?,
    })
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
        }
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
            "[1] button \"Go\"\n(2 more above, 37 more below the fold: scroll to see them)"
        );
        assert_eq!(
            listing(one.clone(), 0, 4).render(),
            "[1] button \"Go\"\n(4 more below the fold: scroll to see them)"
        );
        assert_eq!(
            listing(one, 3, 0).render(),
            "[1] button \"Go\"\n(3 more above the fold: scroll to see them)"
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
            "(no interactive elements in view)\n(5 more below the fold: scroll to see them)"
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
             (3 more below the fold: scroll to see them)"
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
            Resolved::At {
                x: 250.5,
                y: 25.0,
                label: "Save".into(),
                kind: "button".into()
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
    }

    #[test]
    fn rejects_what_it_does_not_understand() {
        assert!(parse_resolved(json!({"error": "missing"})).is_err());
        assert!(parse_resolved(json!({"error": "exploded"})).is_err());
        assert!(parse_resolved(json!({"x": 1, "label": "a", "kind": "button"})).is_err());
        assert!(parse_resolved(Value::Null).is_err());
    }
}
