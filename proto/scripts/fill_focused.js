(text) => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body || el === document.documentElement) {
    return 'nothing is focused: tap or click a field first';
  }
  // A rich text editor (Draft.js, ProseMirror, Lexical, Quill) keeps its own model of what it
  // shows: text put in behind its back (execCommand) is undone, or breaks it (Draft.js: "The
  // editor just crashed"). Its own select-all, pressed as keys, then the text as a paste,
  // which each takes as its own (trusted typing where the page takes no paste).
  if (el.isContentEditable) return {trusted: true, selectAll: true};
  const classes = [HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement];
  const cls = classes.find((c) => el instanceof c);
  const tag = String(el.tagName).toLowerCase();
  // A polyfill's wrapper of a field (Polymer's) is no instance of the DOM's classes.
  if (!cls && !['input', 'textarea', 'select'].includes(tag)) {
    return 'the focused element (' + tag + ') does not take text';
  }
  if (el.readOnly && String(el.role || '').toLowerCase() === 'combobox') {
    return 'this dropdown is drawn by the page and takes no typing: click it, then click one of '
      + 'the options it lists';
  }
  if (el.disabled || el.readOnly) return 'the focused field is disabled or read-only';
  if (cls === HTMLSelectElement) return choose(el, text);
  // A code editor's hidden field (see list.js): its value is not the editor's text, which only
  // the editor's own select-all, pressed as keys, selects to be pasted over.
  const listing = globalThis.__nanomuseListing;
  if (listing && listing.editorOf && listing.editorOf(el)) return {trusted: true, selectAll: true};
  let took = false;
  try {
    const value = Reflect.getOwnPropertyDescriptor(cls.prototype, 'value');
    value.set.call(el, text);
    // Checked before the events: what the page's handlers then do to the value is theirs.
    took = value.get.call(el) === text;
    if (took) {
      el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text}));
      el.dispatchEvent(new Event('change', {bubbles: true}));
      // The key's release too, as after a person's last key: widgets of the jQuery era read
      // the field on keyup (jQuery UI's datepicker takes the typed date then, or Enter picks
      // the day it had). Not the press, which masked fields answer by inserting its key.
      const last = [...text].pop() || '';
      el.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: last}));
      return null;
    }
  } catch (_) {
    // The page patched what the setter path uses, or wrapped the field: trusted input below,
    // unless its handlers already saw the value (a later event of ours failed).
    if (took) return null;
  }
  try { el.select(); } catch (_) { /* typed at the caret */ }
  return {trusted: true};

  // A select takes the option the text names, as a person reads it: its label, whatever the
  // value behind it (a database id, most often). The whole label (any case and spacing) first,
  // then the one option whose label starts with the text, then the value, then the one whose
  // label holds the text; several such, or none, change nothing and say which options there
  // are (a value named like the start of several labels is not what a person typing it meant).
  // A multiple select adds the option to what it has.
  function choose(select, wanted) {
    const squeeze = (s) => String(s).replace(/\s+/g, ' ').trim();
    const label = (o) => squeeze(o.label || o.text || '');
    const want = squeeze(wanted).toLowerCase();
    const named = (o) => label(o).toLowerCase();
    const options = Array.from(select.options).filter((o) => !o.disabled && !o.hidden);
    const ways = [
      (o) => named(o) === want,
      (o) => want !== '' && named(o).startsWith(want),
      (o) => o.value === wanted,
      (o) => want !== '' && named(o).includes(want),
    ];
    const quoted = (list, most) => list.slice(0, most).map((o) => JSON.stringify(label(o).slice(0, 60)))
      .join(', ') + (list.length > most ? ' and ' + (list.length - most) + ' more' : '');
    for (const [way, matches] of ways.entries()) {
      const found = options.filter(matches);
      if (found.length === 0) continue;
      // The same whole label twice is one choice for the reader: the first is taken.
      if (found.length > 1 && way !== 0) {
        return 'the text matches ' + found.length + ' options of this select: ' +
          quoted(found, 10) + '; type one of them whole';
      }
      const option = found[0];
      if (select.multiple) option.selected = true;
      else select.selectedIndex = option.index;
      try {
        select.dispatchEvent(new Event('input', {bubbles: true}));
        select.dispatchEvent(new Event('change', {bubbles: true}));
      } catch (_) { /* chosen all the same; a page that replaced Event hears no event */ }
      return null;
    }
    return options.length === 0
      ? 'this select has no option to choose'
      : 'no option of this select matches the text; its options: ' + quoted(options, 30);
  }
}
