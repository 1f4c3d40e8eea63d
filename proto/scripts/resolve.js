(args) => {
  const listing = window.__nanomuseListing;
  // Stale: with when this document began and where it is, to tell the listed page loaded
  // again at its address (a restart brings it back) from a page that went elsewhere.
  if (!listing || listing.id !== String(args.listing_id)) {
    return { error: 'stale', began: performance.timeOrigin, url: location.href };
  }
  const count = listing.elements.length;
  if (!Number.isInteger(args.n) || args.n < 1 || args.n > count) return { error: 'missing', count };
  const { label, kind } = listing.details[args.n - 1];
  const field = (listing.fields && listing.fields[args.n - 1]) || listing.elements[args.n - 1];
  // A double-click on a toggle is meant for the item its label names (a todo to edit, a file
  // to open), not for two ticks: it goes to the label a person reads for the box.
  const labelled = args.double && ['checkbox', 'radio', 'switch'].includes(kind) && listing.labelOfToggle
    ? listing.labelOfToggle(field) : null;
  const el = labelled && labelled.getClientRects().length > 0 ? labelled : listing.elements[args.n - 1];
  // An element of a frame that navigated away or was removed still thinks it is connected.
  let view = el.ownerDocument.defaultView;
  if (!el.isConnected || !view) return { error: 'detached' };
  for (let w = view; w !== window; w = w.parent) {
    if (!w.frameElement || !w.frameElement.isConnected) return { error: 'detached' };
  }
  if (args.scroll) el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  // A dropdown the page draws (listed as a select, but no <select>): typing chooses in it by
  // opening it and tapping the option.
  const drawn = kind === 'select' && field.localName !== 'select';
  let unfocused = null;
  if (args.focus) {
    const root = field.getRootNode();
    const before = root.activeElement;
    field.focus({ preventScroll: true });
    // What is typed goes where the focus is: a field that did not take it (an open menu or a
    // dialog keeps it, or it takes none) must not send the text to another — unless the page
    // handed the focus on to a field of its own as it took it (a box drawn for a hidden input).
    // A dropdown the page draws is chosen in by taps, not typed into.
    const holder = root.activeElement;
    const handedOn = holder && holder !== before
      && (holder.isContentEditable || ['input', 'textarea'].includes(holder.localName));
    if (!drawn && holder !== field && !(holder && field.contains(holder)) && !handedOn) {
      const page = field.ownerDocument;
      const away = holder && holder !== page.body && holder !== page.documentElement;
      unfocused = { error: 'unfocused', by: away && listing.describe ? listing.describe(holder) : '' };
    }
  }
  const rect = el.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) return { error: 'hidden' };
  if (unfocused) return unfocused;
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
  let x = (left + right) / 2;
  const y = (top + bottom) / 2;
  // A range is taken by its thumb, where its value puts it (less the thumb's half at each
  // end): a tap elsewhere on its track would move it there before any key does. So is a
  // slider drawn as its whole track (Quasar's: role=slider on the track, far wider than
  // high); one drawn as its thumb (Radix's) is pressed in its middle.
  const native = el.localName === 'input' && el.type === 'range';
  const track = !native && kind === 'slider' && box.right - box.left > 3 * (box.bottom - box.top)
    && el.getAttribute('aria-orientation') !== 'vertical';
  if (native || track) {
    const attribute = (name, otherwise) => {
      const value = parseFloat(el.getAttribute(name));
      return Number.isFinite(value) ? value : otherwise;
    };
    const min = native ? Number(el.min || 0) : attribute('aria-valuemin', 0);
    const max = native ? Number(el.max || 100) : attribute('aria-valuemax', 100);
    const value = native ? Number(el.value) : attribute('aria-valuenow', (min + max) / 2);
    const share = max > min ? Math.min(Math.max((value - min) / (max - min), 0), 1) : 0.5;
    const style = getComputedStyle(el);
    const start = box.left + el.clientLeft + parseFloat(style.paddingLeft);
    const end = box.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
    const inset = Math.min((box.bottom - box.top) / 2, 8);
    x = Math.min(Math.max(start + inset + share * (end - start - 2 * inset), left), right);
  }
  // Something over it there (a dialog, a banner): a tap would press that instead.
  const cover = args.tap && listing.coveredBy ? listing.coveredBy(el, x, y) : null;
  if (cover) return { error: 'covered', by: cover };
  // A select's choices (as `type` matches them): a tap opens no list a picture shows, so the
  // reply names them.
  const options = [];
  let optionCount = 0;
  if (field.localName === 'select' && !field.multiple && field.size <= 1) {
    for (let i = 0; i < field.options.length; i += 1) {
      const option = field.options[i];
      if (option.disabled || option.hidden) continue;
      optionCount += 1;
      if (options.length < 30) options.push(option.text.replace(/\s+/g, ' ').trim().slice(0, 60));
    }
  }
  return { x, y, label, kind, url: location.href, options, optionCount, drawn };
}
