() => {
  const body = document.body;
  // What holds a shadow root or a <slot>, which innerText does not read through.
  const holders = new Set();
  const mark = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (!el.shadowRoot && el.localName !== 'slot') continue;
      for (let n = el; n && !holders.has(n); n = n.parentNode || n.host) holders.add(n);
      if (el.shadowRoot) mark(el.shadowRoot);
    }
  };
  const SKIPPED = ['script', 'style', 'template', 'link', 'head'];
  // The white space of a text node read here (not by innerText, which minds CSS) is marked,
  // and reduced once all is read; code's indentation (innerText's, a <pre>'s) stays as it is.
  const SPACE = '\uE000';
  const kept = (el) => !!el && /^(pre|break-spaces)/.test(getComputedStyle(el).whiteSpace);
  const each = (nodes) => Array.from(nodes, drawn).join('');
  const drawn = (node) => {
    if (node.nodeType === 3) return kept(node.parentElement) ? node.data : node.data.replace(/\s+/g, SPACE);
    if (node.nodeType === 11) return each(node.childNodes);
    if (node.nodeType !== 1 || SKIPPED.includes(node.localName)) return '';
    if (node.localName === 'slot') return each(node.assignedNodes({flatten: true}));
    const style = getComputedStyle(node);
    if (style.display === 'none') return '';
    const inner = !holders.has(node) ? node.innerText || ''
      : each(node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes);
    return /^(inline|contents)/.test(style.display) ? inner : '\n' + inner + '\n';
  };
  let text = body ? body.innerText : '';
  try {
    if (body) mark(document);
    if (holders.has(body)) {
      text = drawn(body).replace(/\uE000*\n\uE000*/g, '\n').replace(/\uE000+/g, ' ').replace(/\n{3,}/g, '\n\n');
    }
  } catch (_) { /* the body's innerText, then */ }
  // What fields hold is no part of the text (a textarea's innerText is its first value): an
  // app's answer in a read-only box (Gradio's), a field a script filled. A secret's, never.
  const fields = [];
  // Named as the last listing of this document names it, where one ran: a dialog's field by
  // its title, a cell's by its column, as the model read them; else by the field's own words.
  const listedName = (field) => {
    try {
      const listing = window.__nanomuseListing;
      const name = listing && typeof listing.nameOf === 'function' ? listing.nameOf(field) : '';
      return typeof name === 'string' ? name : '';
    } catch (_) {
      return '';
    }
  };
  try {
    const TEXTLESS = ['password', 'hidden', 'checkbox', 'radio', 'file', 'submit', 'button',
      'reset', 'image', 'range', 'color'];
    for (const field of body ? body.querySelectorAll('textarea, input') : []) {
      const value = field.value;
      if (!value || !value.trim() || TEXTLESS.includes(field.type)) continue;
      if (!field.getClientRects().length || (field.checkVisibility && !field.checkVisibility({visibilityProperty: true}))) continue;
      if (secretField(field)) continue;
      const label = listedName(field) || field.getAttribute('aria-label') || (field.labels && field.labels[0] && field.labels[0].innerText)
        || field.placeholder || field.name || field.id || field.localName;
      fields.push({label: String(label).replace(/\s+/g, ' ').trim().slice(0, 80), value});
    }
  } catch (_) { /* the text alone */ }
  const page = {url: location.href, title: document.title, text, fields};
  let shown = '', from = 0;
  try {
    for (const select of body ? body.querySelectorAll('select') : []) {
      // A select not drawn is not in the text (its innerText would be its options' source).
      if (select.multiple || select.size > 1 || !select.getClientRects().length) continue;
      const every = select.innerText;
      const at = every ? text.indexOf(every, from) : -1;
      if (at < 0) continue;
      const chosen = select.selectedOptions[0];
      shown += text.slice(from, at) + (chosen ? chosen.text.trim() : '');
      from = at + every.length;
    }
  } catch (_) {
    return page;
  }
  return {...page, text: shown + text.slice(from)};
}
