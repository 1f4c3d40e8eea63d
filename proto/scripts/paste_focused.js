(text) => {
  // The text pasted into the focused field: what a code editor's own paste handler puts in
  // as it is, where typing it would not keep it (Monaco closes brackets and indents each new
  // line as it is typed). True when the page took the paste; false leaves typing to do it.
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body) return false;
  const data = new DataTransfer();
  data.setData('text/plain', text);
  const paste = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
  el.dispatchEvent(paste);
  return paste.defaultPrevented;
}
