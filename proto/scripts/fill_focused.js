(text) => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body || el === document.documentElement) {
    return 'nothing is focused: tap or click a field first';
  }
  if (el.isContentEditable) {
    document.execCommand('selectAll', false);
    document.execCommand('insertText', false, text);
    return null;
  }
  const classes = [HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement];
  const cls = classes.find((c) => el instanceof c);
  const tag = String(el.tagName).toLowerCase();
  // A polyfill's wrapper of a field (Polymer's) is no instance of the DOM's classes.
  if (!cls && !['input', 'textarea', 'select'].includes(tag)) {
    return 'the focused element (' + tag + ') does not take text';
  }
  if (el.disabled || el.readOnly) return 'the focused field is disabled or read-only';
  let took = false;
  try {
    const value = Reflect.getOwnPropertyDescriptor(cls.prototype, 'value');
    value.set.call(el, text);
    // Checked before the events: what the page's handlers then do to the value is theirs.
    took = cls === HTMLSelectElement || value.get.call(el) === text;
    if (took) {
      el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text}));
      el.dispatchEvent(new Event('change', {bubbles: true}));
      return null;
    }
  } catch (_) {
    // The page patched what the setter path uses, or wrapped the field: trusted input below,
    // unless its handlers already saw the value (a later event of ours failed).
    if (took) return null;
  }
  try { el.select(); } catch (_) { /* typed at the caret */ }
  return {trusted: true};
}
