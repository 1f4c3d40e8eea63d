(entry) => {
  // What a JavaScript dialog said and how the backend answered it, kept for the next listing
  // to report (list.js takes them): in the tab's session storage, which outlives the document
  // when the answer sends a form whose reply replaces it (a confirmed "Delete?" posting, then
  // redirected), else in the window. A storm of dialogs keeps the first few.
  const KEY = '__nanomuseSaid';
  try {
    const said = JSON.parse(sessionStorage.getItem(KEY) || '[]');
    if (said.length < 20) said.push(entry);
    sessionStorage.setItem(KEY, JSON.stringify(said));
    return;
  } catch (_) {
    // No storage for this document (an opaque origin, a full or blocked one): the window.
  }
  try {
    const said = Array.isArray(window[KEY]) ? window[KEY] : [];
    if (said.length < 20) said.push(entry);
    // Not enumerable, as the listing's own, so the page's code that walks window's properties
    // does not trip on it.
    Object.defineProperty(window, KEY, { value: said, configurable: true, writable: true });
  } catch (_) {
    // A page that froze its window object: nothing is reported.
  }
}
