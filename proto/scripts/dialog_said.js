(entry) => {
  // What a JavaScript dialog said and how the backend answered it, kept in the page for the
  // next listing to report (list.js takes them). A storm of dialogs keeps the first few.
  try {
    const said = Array.isArray(window.__nanomuseSaid) ? window.__nanomuseSaid : [];
    if (said.length < 20) said.push(entry);
    // Not enumerable, as the listing's own, so the page's code that walks window's properties
    // does not trip on it.
    Object.defineProperty(window, '__nanomuseSaid', { value: said, configurable: true, writable: true });
  } catch (_) {
    // A page that froze its window object: nothing is reported.
  }
}
