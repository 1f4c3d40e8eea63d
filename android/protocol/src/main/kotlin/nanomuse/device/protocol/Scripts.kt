package nanomuse.device.protocol

/**
 * The JavaScript a phone's browser runs in the page, kept here (plain strings) so both the
 * Android engine and the JVM tests (which run them in node) use the same text.
 */
object Scripts {
    /** The object `WebViewCompat.addWebMessageListener` puts in every frame. */
    const val BRIDGE = "__nanomuse"
    /** Where results wait when there is no bridge (old WebViews): read by [poll]. */
    const val RESULTS = "__nanomuseResults"

    /**
     * `(js)(arg)` that reports its value — a Promise's once settled — as one message through
     * the bridge: `{"id", "ok": true, "value": "<JSON text>"}` or `{"id", "ok": false, "error"}`.
     * `evaluateJavascript` alone cannot do this: it hands back `{}` for a Promise.
     * The script's own value is [id], so the caller can tell "did not parse" (null) from
     * "started".
     */
    fun evaluate(js: String, argJson: String, id: String): String = """
(function () {
  var id = ${Json.quote(id)};
  function post(m) {
    var text = JSON.stringify(m);
    var bridge = window.$BRIDGE;
    if (bridge && typeof bridge.postMessage === 'function') bridge.postMessage(text);
    else (window.$RESULTS = window.$RESULTS || {})[id] = text;
  }
  function failed(e) {
    var text = e && e.stack ? String(e.stack).split('\n')[0] : String(e);
    if (e && e.message && text.indexOf(e.message) < 0) text = String(e.name || 'Error') + ': ' + e.message;
    post({id: id, ok: false, error: text});
  }
  try {
    Promise.resolve((
$js
)($argJson)).then(function (v) {
      var text;
      try { text = JSON.stringify(v === undefined ? null : v); } catch (e) { failed(e); return; }
      post({id: id, ok: true, value: text === undefined ? 'null' : text});
    }, failed);
  } catch (e) { failed(e); }
  return id;
})()
"""

    /** Takes the result [id] left in the page without a bridge: a JSON string, or null. */
    fun poll(id: String): String = """
(function () {
  var store = window.$RESULTS, id = ${Json.quote(id)};
  if (!store || !(id in store)) return null;
  var text = store[id];
  delete store[id];
  return text;
})()
"""

    /**
     * Fills the focused field through the page's own value setter plus `input` and `change`
     * events, so React and Vue forms notice; a contenteditable gets `insertText`. Returns null,
     * `{trusted: true}` when the page broke that path (its field's text then selected, for
     * trusted input to type over), or why nothing was typed. The worker's
     * (worker/src/ops/type_text.rs), the same text.
     */
    const val FILL_FOCUSED = """(text) => {
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
}"""

    /** Types one character into the focused field (a key with no Android key code). */
    const val INSERT_TEXT = """(text) => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'nothing is focused: tap or click a field first';
  if (!document.execCommand('insertText', false, text)) {
    el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text}));
  }
  return null;
}"""

    /** Scrolls the page itself, when a wheel event found no taker. */
    const val SCROLL_BY = """(dy) => { window.scrollBy(0, dy); return null; }"""

    /**
     * A frame drawn: the task after an animation frame runs once that frame is produced; by
     * then the handlers of an input have run. Gives document.readyState. The worker's (settle).
     */
    const val FRAME_DRAWN = """() => new Promise((resolve) => requestAnimationFrame(() => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve(document.readyState);
  channel.port2.postMessage(null);
}))"""

    /** What a CSS px of the layout viewport is in view px: `{dpr, scale, left, top}`. */
    const val VIEWPORT = """() => {
  const v = window.visualViewport;
  return {dpr: window.devicePixelRatio || 1, scale: v ? v.scale : 1,
          left: v ? v.offsetLeft : 0, top: v ? v.offsetTop : 0};
}"""
}
