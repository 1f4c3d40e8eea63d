package nanomuse.device.protocol

/**
 * The JavaScript a phone's browser runs in the page, so both the Android engine and the JVM
 * tests (which run them in node) use the same text. The scripts every backend runs alike are
 * the files of proto/scripts/, shared with the worker and loaded as resources (that folder is
 * on the classpath: the app's and the protocol's resources, run-tests.sh's `-cp`).
 */
object Scripts {
    /** The shared page script [name] (a file of proto/scripts/). */
    private fun shared(name: String): String =
        Scripts::class.java.getResourceAsStream("/$name")?.use { it.readBytes().decodeToString() }
            ?: error("the page script $name is not on the classpath (proto/scripts/)")

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
     * Keeps one tab in every document (`window.open`, links and forms aimed at another window
     * load in this page) and marks a navigation that replaces the document for [FRAME_DRAWN].
     * The worker's start script, the same file (proto/scripts/one_tab.js).
     */
    val ONE_TAB: String by lazy { shared("one_tab.js") }

    /**
     * Keeps the short timers a page begins on input (typing, a press, a click) until they fire,
     * for [FRAME_DRAWN] to wait for. Run in every document beside [ONE_TAB]
     * (proto/scripts/input_timers.js).
     */
    val INPUT_TIMERS: String by lazy { shared("input_timers.js") }

    /**
     * What the phone runs in every document before the page's own scripts: [ONE_TAB], told
     * that this browser holds a popup a page opens as a window of its own (the worker's does
     * the same), and [INPUT_TIMERS].
     */
    val START: String by lazy { "window.__nanomusePopupsOpen = true;\n$ONE_TAB\n$INPUT_TIMERS" }

    /**
     * Fills the focused field through the page's own value setter plus `input` and `change`
     * events, so React and Vue forms notice. Returns null, `{trusted: true}` when the page broke
     * that path (its field's text then selected, for trusted input to type over; with
     * `selectAll: true`, a code editor's hidden field or a rich text editor, a contenteditable,
     * whose editor's own select-all, Ctrl+A, goes first, then a paste), or why nothing was
     * typed. The worker's own file
     * (proto/scripts/fill_focused.js).
     */
    val FILL_FOCUSED: String by lazy { shared("fill_focused.js") }

    /**
     * The text as a paste into the focused field (a code editor's hidden field, after its
     * select-all): true when the page took it. The worker's own file
     * (proto/scripts/paste_focused.js).
     */
    val PASTE_FOCUSED: String by lazy { shared("paste_focused.js") }

    /** Types one character into the focused field (a key with no Android key code). */
    const val INSERT_TEXT = """(text) => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'nothing is focused: tap or click a field first';
  if (!document.execCommand('insertText', false, text)) {
    el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertText', data: text}));
  }
  return null;
}"""

    /**
     * Where a wheel turn scrolls what a person would turn it over: null for the middle of the
     * view, else the middle of the largest box in view that can still move that way (a sidebar
     * that scrolls apart), in CSS px of the layout viewport. The worker's, the same file
     * (proto/scripts/scroll_point.js).
     */
    val SCROLL_POINT: String by lazy { shared("scroll_point.js") }

    /** Scrolls the page itself, when a wheel event found no taker. */
    const val SCROLL_BY = """(dy) => { window.scrollBy(0, dy); return null; }"""

    /**
     * A frame drawn: the task after an animation frame runs once that frame is produced; by
     * then the handlers of an input have run. Gives document.readyState (or `leaving` on a page
     * whose start script marks a navigation that replaces it). The worker's (settle), the same
     * file (proto/scripts/frame_drawn.js).
     */
    val FRAME_DRAWN: String by lazy { shared("frame_drawn.js") }

    /**
     * Keeps in the page what a JavaScript dialog said and how it was answered, for the next
     * listing to report (proto/scripts/dialog_said.js): a statement, for the page once the
     * dialog is answered. [kind] is `alert`, `confirm` or `prompt`; [answer] `OK` or the prompt's text.
     */
    private val DIALOG_SAID: String by lazy { shared("dialog_said.js") }

    fun dialogSaid(kind: String, message: String, answer: String): String =
        "($DIALOG_SAID)(${Json.write(mapOf("kind" to kind, "message" to message, "answer" to answer))})"

    /** What a CSS px of the layout viewport is in view px: `{dpr, scale, left, top}`. */
    const val VIEWPORT = """() => {
  const v = window.visualViewport;
  return {dpr: window.devicePixelRatio || 1, scale: v ? v.scale : 1,
          left: v ? v.offsetLeft : 0, top: v ? v.offsetTop : 0};
}"""
}
