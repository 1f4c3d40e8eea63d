package nanomuse.android.browser

import android.annotation.SuppressLint
import android.app.Activity
import android.content.Context
import android.content.MutableContextWrapper
import android.graphics.Bitmap
import android.graphics.Rect
import android.os.Environment
import android.os.Handler
import android.os.Looper
import android.os.Message
import android.os.SystemClock
import android.view.InputDevice
import android.view.KeyCharacterMap
import android.view.KeyEvent
import android.view.MotionEvent
import android.view.PixelCopy
import android.view.View
import android.view.ViewConfiguration
import android.view.ViewGroup
import android.webkit.CookieManager
import android.webkit.GeolocationPermissions
import android.webkit.JsPromptResult
import android.webkit.JsResult
import android.webkit.PermissionRequest
import android.webkit.RenderProcessGoneDetail
import android.webkit.URLUtil
import android.webkit.ValueCallback
import android.webkit.WebChromeClient
import android.webkit.WebResourceError
import android.webkit.WebResourceRequest
import android.webkit.WebResourceResponse
import android.webkit.WebSettings
import android.webkit.WebView
import android.webkit.WebViewClient
import android.widget.FrameLayout
import androidx.webkit.WebViewCompat
import androidx.webkit.WebViewFeature
import nanomuse.device.protocol.BrowserEngine
import nanomuse.device.protocol.BrowserException
import nanomuse.device.protocol.ErrorCode
import nanomuse.device.protocol.Evaluations
import nanomuse.device.protocol.FetchRequest
import nanomuse.device.protocol.FetchResponse
import nanomuse.device.protocol.Header
import nanomuse.device.protocol.Json
import nanomuse.device.protocol.JsonException
import nanomuse.device.protocol.Key
import nanomuse.device.protocol.Navigation
import nanomuse.device.protocol.PageInfo
import nanomuse.device.protocol.Profile
import nanomuse.device.protocol.Screenshot
import nanomuse.device.protocol.Scripts
import nanomuse.device.protocol.Settled
import nanomuse.device.protocol.UploadFile
import nanomuse.device.protocol.WindowChange
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.RequestBody.Companion.toRequestBody
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.IOException
import java.util.UUID
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicReference
import kotlin.math.roundToInt

/**
 * The fifteen ops on one offscreen WebView — the phone's "one tab" (spec: "How the phone's
 * browser works"; facts: shared/notes/android.md).
 *
 * - The WebView lives in a [VirtualScreen]: a private virtual display whose frames go into an
 *   ImageReader, with a Presentation window holding the view, so Chromium believes it is on
 *   screen (rAF at 60/s, timers unthrottled, visibilityState visible). The latest frame is the
 *   screenshot, scaled to CSS px. A device that refuses the display gets a [DrawnScreen].
 * - Sizes: with `useWideViewPort = false` the CSS layout width is the view's width, so a
 *   W×H CSS viewport is a view of W·d × H·d physical px, d = densityDpi / 160.
 * - Taps are touch events (DOWN then UP, same downTime, SOURCE_TOUCHSCREEN, tool FINGER,
 *   buttonState 0) at CSS px × devicePixelRatio × visualViewport.scale; typing goes through the
 *   page's own value setter plus input/change events; Enter and the other named keys are key
 *   events to the focused view; the soft keyboard is never relied on.
 * - Cookies, third-party ones included, are on; CookieManager.flush() runs after every load
 *   and every fetch; fetch sends CookieManager.getCookie(url) for the full URL, hop by hop.
 * - Popups: every document starts with [Scripts.START] (WebViewCompat.addDocumentStartJavaScript),
 *   which keeps `target=_blank` and a plain `window.open` in the page and lets a popup (a size
 *   or a place, asked for by a tap) open; `onCreateWindow` gives it a WebView of its own,
 *   stacked over its opener's, and the ops act on it until `onCloseWindow` (the worker's
 *   rule). Any other window a page opens loads in the page. A WebView without document-start
 *   scripts keeps one page (`setSupportMultipleWindows(false)`).
 * - The take-over ([showIn] / [returnOffscreen]) moves this same WebView into the sheet and
 *   back: the view was made on a MutableContextWrapper, whose base context becomes the
 *   Activity while on screen; removeView + addView in one main-thread turn, nothing reloads.
 *   onPause()/pauseTimers() are never called: Chromium counts a paused view as hidden.
 *
 * Ops are called on the client's worker threads; each does its view work on the main thread
 * and waits for it, bounded. The WebView is only touched on the main thread.
 */
class DeviceBrowser(context: Context) : BrowserEngine {
    private val app: Context = context.applicationContext
    private val main = Handler(Looper.getMainLooper())
    private val density: Float = app.resources.displayMetrics.densityDpi / 160f
    private val densityDpi: Int = app.resources.displayMetrics.densityDpi
    private val http = OkHttpClient.Builder()
        .followRedirects(false)
        .followSslRedirects(false)
        .callTimeout(FETCH_TIMEOUT_MS, TimeUnit.MILLISECONDS)
        .build()

    /** The tab; null when closed. Set on the main thread, read anywhere. The ops act on its popup while one is open (see [front]). */
    @Volatile private var page: Page? = null
    /** How the page the ops act on changed windows since the last settle (see [settle]). */
    private val windowChange = AtomicReference<WindowChange?>()
    @Volatile private var profile = Profile("", Profile.MOBILE_WIDTH, Profile.MOBILE_HEIGHT, true)
    @Volatile private var userAgent = ""

    // Main-thread state.
    private var screen: OffscreenScreen? = null
    /** The take-over sheet's container and its Activity, while the user has the page. */
    private var sheet: ViewGroup? = null
    private var sheetActivity: Activity? = null

    /** A WebView (the tab or a popup) and what its callbacks found out. */
    private inner class Page(val context: MutableContextWrapper, val view: WebView, val opener: Page? = null) {
        /** How many popups deep: 0 for the tab. */
        val depth: Int = opener?.let { it.depth + 1 } ?: 0
        /** The popup this page opened, while it is open. Set on the main thread. */
        @Volatile var popup: Page? = null
        @Volatile var loading = false
        @Volatile var gone = false
        /** When the page last asked for anything over the network (shouldInterceptRequest). */
        @Volatile var lastRequestNanos = System.nanoTime()
        /** Scripts being evaluated (the bridge or a poll answers them). */
        val evaluations = Evaluations()
        var bridge = false
        // Main thread:
        val waiters = mutableListOf<LoadWaiter>()
        var mainStatus = 0
        /** (url, description) of the last main-frame load error. */
        var mainError: Pair<String, String>? = null
        var lastUrl: String? = null
        /** An upload waiting for the file chooser its tap opens (onShowFileChooser). Main thread. */
        var chooser: PendingChooser? = null
    }

    /** What an upload hands the chooser its tap opens, and how that went. */
    private class PendingChooser(val files: List<android.net.Uri>, val count: Int) {
        /** True when the chooser took several files; an exception when it refused them. */
        val answered = CompletableFuture<Boolean>()
    }

    /** Someone waiting for a load ([target]: a navigation) or a history step ([history]). */
    private class LoadWaiter(val target: String?, val history: Boolean) {
        val result = CompletableFuture<LoadOutcome>()
        /** onPageStarted came after the waiter: its onPageFinished is ours. */
        var started = false
    }

    private sealed class LoadOutcome {
        data class Loaded(val status: Int) : LoadOutcome()
        data class Failed(val error: String) : LoadOutcome()
        data class Downloaded(val name: String) : LoadOutcome()
    }

    // ---- the ops ----

    override fun open(profile: Profile): PageInfo = onMain("open") {
        if (page?.takeIf { !it.gone } == null) createPage(profile) else applyProfile(windows(), profile)
        pageInfo(needPage())
    }

    override fun navigate(url: String, timeoutMs: Long): Navigation {
        val page = needPage()
        val waiter = onMain("navigate") {
            expect(page, target = url, history = false).also { page.view.loadUrl(url) }
        }
        val outcome = await(waiter.result, timeoutMs) {
            main.post { page.waiters.remove(waiter) }
            BrowserException.timeout("navigation to $url timed out after $timeoutMs ms")
        }
        CookieManager.getInstance().flush()
        return when (outcome) {
            is LoadOutcome.Failed -> throw BrowserException.precondition("navigation to $url failed: ${outcome.error}")
            is LoadOutcome.Downloaded -> Navigation(onMain("navigate") { pageInfo(page) }, 0, outcome.name)
            is LoadOutcome.Loaded -> Navigation(onMain("navigate") { pageInfo(page) }, outcome.status, "")
        }
    }

    override fun evaluate(js: String, argJson: String): String {
        val message = runScript(needPage(), js, argJson, EVALUATE_TIMEOUT_MS, "evaluate")
        val reply = try {
            Json.parse(message) as? Map<*, *>
        } catch (e: JsonException) {
            null
        } ?: throw BrowserException.internal("the page's bridge sent no result")
        if (reply["ok"] == true) return reply["value"] as? String ?: "null"
        throw BrowserException.precondition("the page raised an error: ${reply["error"] ?: "an exception"}")
    }

    override fun tap(x: Double, y: Double, count: Int) {
        val page = needPage()
        val (width, height) = onMain("tap") { viewportCss(page) }
        if (x >= width || y >= height) {
            throw BrowserException.invalid("($x, $y) is outside the $width×$height viewport")
        }
        val viewport = viewport(page)
        val px = ((x - viewport.left) * viewport.scale * viewport.dpr).toFloat()
        val py = ((y - viewport.top) * viewport.scale * viewport.dpr).toFloat()
        // A double tap's second DOWN follows the first UP at once, well within the double-tap time.
        repeat(count) {
            val done = CompletableFuture<Unit>()
            onMain("tap") {
                val downTime = SystemClock.uptimeMillis()
                touch(page.view, downTime, downTime, MotionEvent.ACTION_DOWN, px, py)
                // The UP a finger's moment later, with the same downTime: Chromium sees a tap.
                main.postDelayed({
                    try {
                        touch(page.view, downTime, SystemClock.uptimeMillis(), MotionEvent.ACTION_UP, px, py)
                        done.complete(Unit)
                    } catch (e: RuntimeException) {
                        done.completeExceptionally(e)
                    }
                }, TAP_MS)
            }
            await(done, MAIN_TIMEOUT_MS) { BrowserException.timeout("tap timed out after $MAIN_TIMEOUT_MS ms") }
        }
    }

    override fun type(text: String) {
        val why = Json.parse(evaluate(Scripts.FILL_FOCUSED, Json.quote(text))) ?: return
        if (why is Map<*, *> && why["trusted"] == true) {
            if (why["selectAll"] == true) {
                // A code editor's hidden field: the editor's own select-all, Ctrl+A from the
                // keyboard, so the text replaces the editor's.
                val page = needPage()
                onMain("type") { press(page.view, KeyEvent.KEYCODE_A, 0, Key.MODIFIERS.filter { it.bit == Key.CONTROL }) }
                if (text.isEmpty()) {
                    // No editor takes an empty paste: Delete empties what is selected.
                    onMain("type") { press(page.view, KeyEvent.KEYCODE_FORWARD_DEL, 0, emptyList()) }
                    return
                }
                // The text as a paste, which the editor keeps as it is.
                if (Json.parse(evaluate(Scripts.PASTE_FOCUSED, Json.quote(text))) == true) return
            }
            // The page broke the setter path: the editor's own insertText over the selected
            // text, trusted input as the keyboard's (the worker's Input.insertText).
            val failed = Json.parse(evaluate(Scripts.INSERT_TEXT, Json.quote(text)))
            if (failed != null) throw BrowserException.precondition(failed.toString())
            return
        }
        throw BrowserException.precondition(why.toString())
    }

    override fun key(key: Key) {
        val page = needPage()
        val meta = Key.MODIFIERS.filter { key.modifiers and it.bit != 0 }
        val named = if (key.named) KEY_CODES[key.code] ?: functionKeyCode(key.code) else null
        if (named != null) {
            onMain("key") { press(page.view, named, 0, meta) }
            return
        }
        // One character: the virtual keyboard's key events for it, else insertText.
        val sent = onMain("key") {
            val map = KeyCharacterMap.load(KeyCharacterMap.VIRTUAL_KEYBOARD)
            if (meta.isEmpty()) {
                val events = map.getEvents(key.text.toCharArray()) ?: return@onMain false
                page.view.requestFocus()
                events.forEach { page.view.dispatchKeyEvent(it) }
                return@onMain true
            }
            // With modifiers, the character's own key (the map's, with the meta state it needs)
            // pressed while they are held.
            val own = map.getEvents(key.key.toCharArray())?.firstOrNull { !KeyEvent.isModifierKey(it.keyCode) }
                ?: return@onMain false
            press(page.view, own.keyCode, own.metaState, meta)
            true
        }
        if (!sent) {
            if (meta.isNotEmpty()) throw BrowserException.invalid("${Json.quote(key.key)} has no key on this phone's keyboard to hold modifiers with")
            val why = Json.parse(evaluate(Scripts.INSERT_TEXT, Json.quote(key.text)))
            if (why != null) throw BrowserException.precondition(why.toString())
        }
    }

    override fun scroll(dy: Double) {
        val page = needPage()
        val viewport = viewport(page)
        // A wheel turn in the middle of the viewport, as the worker does: the element under it
        // (the page or an inner scroller) scrolls as it would for a person; where neither can
        // move that way, over the largest box in view that can (Scripts.SCROLL_POINT).
        val point = try {
            Json.parse(evaluate(Scripts.SCROLL_POINT, Json.write(dy))) as? Map<*, *>
        } catch (e: BrowserException) {
            null // a page being replaced: its middle
        } catch (e: JsonException) {
            null
        }
        fun toView(axis: String, offset: Double) = (point?.get(axis) as? Number)?.toDouble()
            ?.let { ((it - offset) * viewport.scale * viewport.dpr).toFloat() }
        val taken = onMain("scroll") {
            val view = page.view
            val factor = ViewConfiguration.get(view.context).scaledVerticalScrollFactor
            val pixels = dy * viewport.dpr * viewport.scale
            val coords = MotionEvent.PointerCoords().apply {
                x = toView("x", viewport.left) ?: (view.width / 2f)
                y = toView("y", viewport.top) ?: (view.height / 2f)
                setAxisValue(MotionEvent.AXIS_VSCROLL, (-pixels / factor).toFloat())
            }
            val properties = MotionEvent.PointerProperties().apply {
                id = 0
                toolType = MotionEvent.TOOL_TYPE_MOUSE
            }
            val now = SystemClock.uptimeMillis()
            val event = MotionEvent.obtain(
                now, now, MotionEvent.ACTION_SCROLL, 1, arrayOf(properties), arrayOf(coords),
                0, 0, 1f, 1f, 0, 0, InputDevice.SOURCE_MOUSE, 0,
            )
            try {
                view.dispatchGenericMotionEvent(event)
            } finally {
                event.recycle()
            }
        }
        if (!taken) evaluate(Scripts.SCROLL_BY, Json.write(dy))
    }

    override fun back(): PageInfo {
        val page = needPage()
        val waiter = onMain("back") {
            if (!page.view.canGoBack() && page.opener != null) {
                // Back from a popup's first page closes it, as a person closes a window.
                closePopup(page)
                return@onMain null
            }
            if (!page.view.canGoBack()) {
                throw BrowserException.precondition("there is no earlier page in this tab's history to go back to")
            }
            expect(page, target = null, history = true).also { page.view.goBack() }
        } ?: return onMain("back") { pageInfo(needPage()) }
        val outcome = await(waiter.result, DEFAULT_TIMEOUT_MS) {
            main.post { page.waiters.remove(waiter) }
            BrowserException.timeout("going back timed out after $DEFAULT_TIMEOUT_MS ms")
        }
        CookieManager.getInstance().flush()
        if (outcome is LoadOutcome.Failed) throw BrowserException.precondition("going back failed: ${outcome.error}")
        return onMain("back") { pageInfo(page) }
    }

    /**
     * Loaded, no request started for [QUIET_MS], and a frame drawn since (the worker's rule,
     * with "no request started lately" for "none in flight": a WebView does not tell when a
     * subresource ends) — on the page the ops act on, which a popup opening or closing
     * meanwhile changes.
     */
    override fun settle(timeoutMs: Long): Settled {
        val deadline = System.nanoTime() + timeoutMs * 1_000_000
        while (true) {
            val left = (deadline - System.nanoTime()) / 1_000_000
            if (left <= 0) return Settled(false, windowChange.getAndSet(null))
            val page = needPage()
            if (page.loading) {
                Thread.sleep(minOf(POLL_MS, left))
                continue
            }
            val state = try {
                val reply = Json.parse(runScript(page, Scripts.FRAME_DRAWN, "null", left, "settle")) as? Map<*, *>
                (reply?.get("value") as? String)?.let { Json.parse(it) as? String }
            } catch (e: BrowserException) {
                if (page !== front()) continue // the popup it looked at closed: its opener now
                if (e.code == ErrorCode.TIMEOUT) return Settled(false, windowChange.getAndSet(null))
                if (e.code == ErrorCode.NOT_FOUND) throw e
                null // a document being replaced draws no frames; look again
            }
            val quietSince = System.nanoTime() - QUIET_MS * 1_000_000
            val settled = state == "complete" && !page.loading && page.lastRequestNanos < quietSince
            if (settled && page === front()) return Settled(true, windowChange.getAndSet(null))
            Thread.sleep(minOf(POLL_MS, maxOf(1, (deadline - System.nanoTime()) / 1_000_000)))
        }
    }

    override fun screenshot(quality: Int): Screenshot {
        val page = needPage()
        val (frame, width, height) = capture(page)
        try {
            val scaled = if (frame.width == width && frame.height == height) frame
            else Bitmap.createScaledBitmap(frame, width, height, true)
            val out = ByteArrayOutputStream()
            scaled.compress(Bitmap.CompressFormat.JPEG, quality, out)
            if (scaled !== frame) scaled.recycle()
            return Screenshot(out.toByteArray(), width, height)
        } finally {
            frame.recycle()
        }
    }

    override fun state(): PageInfo {
        val page = needPage()
        return onMain("state") { pageInfo(page) }
    }

    /**
     * An HTTP request with the WebView's cookies for its URL; the cookies the responses set go
     * into the WebView's store. Redirects are followed here, hop by hop, so every hop's
     * cookies are sent and kept (the worker's rule). Needs no open page.
     */
    override fun fetch(request: FetchRequest): FetchResponse {
        val cookies = CookieManager.getInstance()
        var url = request.url
        var method = request.method
        var body: ByteArray? = request.body
        val agent = userAgent.ifEmpty { defaultUserAgent(profile.mobile) }
        for (hop in 0..MAX_REDIRECTS) {
            val builder = try {
                Request.Builder().url(url)
            } catch (e: IllegalArgumentException) {
                throw BrowserException.invalid("$url is not a URL OkHttp can fetch: ${e.message}")
            }
            for (header in request.headers) builder.addHeader(header.name, header.value)
            if (request.headers.none { it.name.equals("user-agent", ignoreCase = true) }) builder.header("User-Agent", agent)
            cookies.getCookie(url)?.takeIf { it.isNotEmpty() }?.let { builder.header("Cookie", it) }
            val requestBody = when (method) {
                "GET", "HEAD" -> null
                "POST", "PUT", "PATCH", "PROPPATCH", "REPORT" -> (body ?: ByteArray(0)).toRequestBody(null)
                else -> body?.takeIf { it.isNotEmpty() }?.toRequestBody(null)
            }
            try {
                builder.method(method, requestBody)
            } catch (e: IllegalArgumentException) {
                throw BrowserException.invalid("fetch cannot send $method: ${e.message}")
            }
            val response = try {
                http.newCall(builder.build()).execute()
            } catch (e: IOException) {
                throw BrowserException.precondition("fetch of $url failed: ${e.message ?: e::class.java.simpleName}")
            }
            response.use {
                for (setCookie in response.headers("Set-Cookie")) cookies.setCookie(url, setCookie)
                cookies.flush()
                val location = response.header("Location")
                if (response.isRedirect && location != null) {
                    val next = response.request.url.resolve(location)?.toString()
                        ?: throw BrowserException.precondition("$url redirected to a bad location \"$location\"")
                    if (!next.startsWith("http://") && !next.startsWith("https://")) {
                        throw BrowserException.precondition("a redirect led to $next, which is not http or https")
                    }
                    url = next
                    if (response.code in listOf(301, 302, 303) && method != "HEAD") {
                        method = "GET"
                        body = null
                    }
                    continue
                }
                val bytes = readLimited(response.body?.byteStream(), url)
                return FetchResponse(response.code, response.headers.map { (name, value) -> Header(name, value) }, bytes, url)
            }
        }
        throw BrowserException.precondition("${request.url} redirected more than $MAX_REDIRECTS times")
    }

    override fun profile(profile: Profile) {
        needPage()
        onMain("profile") { applyProfile(windows(), profile) }
    }

    /**
     * The tap, with the files waiting for the chooser it opens: the WebView asks the app
     * (ChromeClient.onShowFileChooser) instead of showing a picker, and gets them as file Uris
     * of the app's cache dir. Written before the tap, each upload in a folder of its own.
     */
    override fun upload(x: Double, y: Double, files: List<UploadFile>): Boolean {
        val page = needPage()
        val folder = File(File(app.cacheDir, "uploads"), java.util.UUID.randomUUID().toString())
        val uris = files.mapIndexed { i, file ->
            val target = File(File(folder, i.toString()), file.name)
            target.parentFile?.mkdirs()
            target.writeBytes(file.content)
            android.net.Uri.fromFile(target)
        }
        val pending = PendingChooser(uris, files.size)
        onMain("upload") { page.chooser = pending }
        try {
            tap(x, y, 1)
            return await(pending.answered, UploadFile.CHOOSER_WAIT_MS) { BrowserException.precondition(UploadFile.NO_CHOOSER) }
        } finally {
            onMain("upload") { if (page.chooser === pending) page.chooser = null }
        }
    }

    /** The page goes, and its popups with it. */
    override fun close() {
        needPage()
        onMain("close") { windows().asReversed().forEach { closePage(it, "the page was closed") } }
        CookieManager.getInstance().flush()
    }

    // ---- the take-over sheet ----

    /**
     * Moves the page into [container] (the take-over sheet) — the same WebView, nothing
     * reloads, a popup open on it over it; a page is made when none is open. Main thread.
     */
    fun showIn(container: ViewGroup, activity: Activity) {
        if (page?.takeIf { !it.gone } == null) createPage(profile)
        val windows = windows()
        if (windows.first().view.parent === container) return
        sheet = container
        sheetActivity = activity
        for (window in windows) {
            unplace(window.view)
            window.context.baseContext = activity
            container.addView(window.view, FrameLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT))
        }
        windows.last().view.requestFocus()
    }

    /** Moves the page (and its popups) from the sheet back to its offscreen screen. Main thread. */
    fun returnOffscreen() {
        val container = sheet ?: return
        sheet = null
        sheetActivity = null
        for (window in windows()) {
            if (window.view.parent === container) container.removeView(window.view)
            window.context.baseContext = app
            window.view.clearFocus()
            screenFor(profile).attach(window.view)
        }
    }

    /**
     * One step back in the page while it is in the sheet, a popup's first page closing it;
     * false when there is none. Main thread.
     */
    fun goBackOnScreen(): Boolean {
        val front = front()?.takeIf { !it.gone && it.view.parent === sheet } ?: return false
        if (!front.view.canGoBack()) {
            if (front.opener == null) return false
            closePopup(front)
            return true
        }
        front.view.goBack()
        return true
    }

    /** The URL of the page on screen, for the sheet's "open in the system browser". Main thread. */
    fun currentUrl(): String? = front()?.view?.url

    /** Closes the page and frees the screen (the service is going). Main thread. */
    fun release() {
        windows().asReversed().forEach { closePage(it, "the app is closing") }
        screen?.release()
        screen = null
    }

    // ---- the page ----

    /** The page the ops act on: the tab, or the popup open on it (the newest of a chain). */
    private fun needPage(): Page {
        val page = front() ?: throw BrowserException.notFound(BrowserException.NO_PAGE)
        if (page.gone) throw BrowserException.unavailable("the page's renderer went away; it is being loaded again, try in a moment")
        return page
    }

    private fun front(): Page? {
        var front = page ?: return null
        while (true) front = front.popup?.takeIf { !it.gone } ?: return front
    }

    /** The tab and the popups open on it, the front last. */
    private fun windows(): List<Page> {
        val windows = mutableListOf(page ?: return emptyList())
        while (true) windows += windows.last().popup?.takeIf { !it.gone } ?: return windows
    }

    /** Main thread. */
    private fun createPage(profile: Profile): Page {
        val page = makePage(opener = null)
        this.page = page
        applyProfile(listOf(page), profile, placed = false)
        place(page)
        return page
    }

    /** A WebView with its settings and callbacks, not yet placed. Main thread. */
    @SuppressLint("SetJavaScriptEnabled")
    private fun makePage(opener: Page?): Page {
        val context = MutableContextWrapper(sheetActivity ?: app)
        val view = WebView(context)
        val page = Page(context, view, opener)
        val started = WebViewFeature.isFeatureSupported(WebViewFeature.DOCUMENT_START_SCRIPT)
        if (started) WebViewCompat.addDocumentStartJavaScript(view, Scripts.START, setOf("*"))
        with(view.settings) {
            javaScriptEnabled = true
            domStorageEnabled = true
            // Windows for popups, which the start script alone lets open (see the class
            // comment); without it, one tab: window.open and target=_blank load in this view.
            setSupportMultipleWindows(started)
            javaScriptCanOpenWindowsAutomatically = false
            // The CSS layout width is the view's width (see the class comment).
            useWideViewPort = false
            loadWithOverviewMode = false
            builtInZoomControls = true // pinch-zoom for the user in the sheet
            displayZoomControls = false
            mixedContentMode = WebSettings.MIXED_CONTENT_COMPATIBILITY_MODE
        }
        CookieManager.getInstance().apply {
            setAcceptCookie(true)
            setAcceptThirdPartyCookies(view, true)
        }
        view.isFocusable = true
        view.isFocusableInTouchMode = true
        view.webViewClient = PageClient(page)
        view.webChromeClient = ChromeClient(page)
        view.setDownloadListener { url, _, disposition, mime, _ -> download(page, url, disposition, mime) }
        if (WebViewFeature.isFeatureSupported(WebViewFeature.WEB_MESSAGE_LISTENER)) {
            WebViewCompat.addWebMessageListener(view, Scripts.BRIDGE, setOf("*")) { _, message, _, isMainFrame, _ ->
                if (isMainFrame) message.data?.let { bridged(page, it) }
            }
            page.bridge = true
        }
        view.settings.userAgentString = userAgent
        return page
    }

    /**
     * [opener]'s popup, a WebView stacked over its own (onCreateWindow): the page the ops act
     * on from now until it closes. Main thread.
     */
    private fun openPopup(opener: Page): WebView {
        val popup = makePage(opener)
        opener.popup = popup
        place(popup)
        windowChange.set(WindowChange.OPENED)
        // The opener's mark of the popup it asked for has done its part (see one_tab.js).
        opener.view.evaluateJavascript("delete window.__nanomusePopupAt", null)
        return popup.view
    }

    /**
     * [popup] closed (its page's `window.close()`, a back from its first page, its renderer
     * gone): the ops act on its opener again, as it was left. Popups it opened close with it.
     * Main thread.
     */
    private fun closePopup(popup: Page) {
        if (popup.gone) return
        popup.popup?.let(::closePopup)
        closePage(popup, "the popup closed")
        val opener = popup.opener ?: return
        if (opener.popup === popup) opener.popup = null
        // A screen that draws one view draws the opener again.
        if (opener.view.parent == null && !opener.gone) place(opener)
        // A popup that closed before any settle saw it open changed nothing for the agent.
        windowChange.updateAndGet { if (it == WindowChange.OPENED) null else WindowChange.CLOSED }
    }

    /**
     * A WebView for a window a page may not have as a popup (one open already, too deep, no
     * tap asked for it): it is never shown, and the first URL it is sent to loads in [opener]
     * instead, as the worker loads such a window in its page. Main thread.
     */
    private fun loadInOpener(opener: Page): WebView {
        val stand = WebView(app)
        stand.webViewClient = object : WebViewClient() {
            private var followed = false

            private fun follow(view: WebView, url: String) {
                if (followed) return
                followed = true
                if (!opener.gone && (url.startsWith("http://") || url.startsWith("https://"))) opener.view.loadUrl(url)
                main.post { view.destroy() }
            }

            override fun shouldOverrideUrlLoading(view: WebView, request: WebResourceRequest): Boolean {
                follow(view, request.url.toString())
                return true
            }

            override fun onPageStarted(view: WebView, url: String, favicon: Bitmap?) {
                if (url != "about:blank") follow(view, url)
            }
        }
        return stand
    }

    /** Main thread. The windows' user agent, and their screen when the size changed. */
    private fun applyProfile(windows: List<Page>, profile: Profile, placed: Boolean = true) {
        val resized = placed && (profile.width != this.profile.width || profile.height != this.profile.height)
        this.profile = profile
        userAgent = profile.userAgent.ifEmpty { defaultUserAgent(profile.mobile) }
        windows.forEach { it.view.settings.userAgentString = userAgent }
        val offscreen = windows.filter { it.view.parent !== sheet }
        if (resized && offscreen.isNotEmpty()) {
            // A Presentation cancels itself when its display's size changes: a new screen,
            // the same WebViews moved over, the front last.
            offscreen.forEach { unplace(it.view) }
            val screen = screenFor(profile)
            offscreen.forEach { screen.attach(it.view) }
        }
    }

    /** Puts the page's view where it belongs now: the sheet, or the offscreen screen. */
    private fun place(page: Page) {
        val container = sheet
        if (container != null) {
            page.context.baseContext = sheetActivity ?: app
            container.addView(page.view, FrameLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT))
        } else {
            screenFor(profile).attach(page.view)
        }
    }

    private fun unplace(view: WebView) {
        screen?.detach(view)
        (view.parent as? ViewGroup)?.removeView(view)
    }

    /**
     * The offscreen screen for [profile]'s size: the current one when it fits (displays are
     * few and reused: system_server has died past a few hundred), else a new one.
     */
    private fun screenFor(profile: Profile): OffscreenScreen {
        val width = (profile.width * density).roundToInt()
        val height = (profile.height * density).roundToInt()
        screen?.let { if (it.widthPx == width && it.heightPx == height) return it }
        screen?.release()
        val made = try {
            VirtualScreen(app, width, height, densityDpi)
        } catch (e: RuntimeException) {
            android.util.Log.w(TAG, "no virtual display (${e.message}); drawing the page by hand", e)
            DrawnScreen(width, height)
        }
        screen = made
        return made
    }

    /** Main thread. */
    private fun closePage(page: Page, why: String) {
        page.gone = true
        fail(page, BrowserException.notFound("$why: open it again"))
        unplace(page.view)
        page.view.stopLoading()
        page.view.destroy()
        if (this.page === page) this.page = null
    }

    private fun fail(page: Page, error: BrowserException) {
        page.waiters.forEach { it.result.completeExceptionally(error) }
        page.waiters.clear()
        page.evaluations.failAll(error)
    }

    /** Main thread. */
    private fun pageInfo(page: Page): PageInfo {
        val (width, height) = viewportCss(page)
        return PageInfo(page.view.url ?: "about:blank", page.view.title ?: "", width, height, page.loading)
    }

    /** The CSS viewport: the profile's, or the sheet's while the user has the page. Main thread. */
    private fun viewportCss(page: Page): Pair<Int, Int> {
        val view = page.view
        if (view.parent === sheet && view.width > 0 && view.height > 0) {
            return (view.width / density).roundToInt() to (view.height / density).roundToInt()
        }
        return profile.width to profile.height
    }

    private class Viewport(val dpr: Double, val scale: Double, val left: Double, val top: Double)

    /** devicePixelRatio and the visual viewport, read from the page. */
    private fun viewport(page: Page): Viewport {
        val result = CompletableFuture<String?>()
        onMain("viewport") { page.view.evaluateJavascript("(${Scripts.VIEWPORT})()") { result.complete(it) } }
        val text = await(result, MAIN_TIMEOUT_MS) { BrowserException.timeout("reading the viewport timed out after $MAIN_TIMEOUT_MS ms") }
        val map = (try { Json.parse(text ?: "null") } catch (e: JsonException) { null }) as? Map<*, *>
        fun number(name: String, default: Double, positive: Boolean) =
            (map?.get(name) as? Number)?.toDouble()?.takeIf { it.isFinite() && (!positive || it > 0) } ?: default
        return Viewport(
            dpr = number("dpr", density.toDouble(), positive = true),
            scale = number("scale", 1.0, positive = true),
            left = number("left", 0.0, positive = false),
            top = number("top", 0.0, positive = false),
        )
    }

    /** Main thread: a waiter for the next load or history step. */
    private fun expect(page: Page, target: String?, history: Boolean): LoadWaiter {
        page.mainStatus = 0
        page.mainError = null
        return LoadWaiter(target, history).also { page.waiters += it }
    }

    /** Main thread. */
    private fun complete(page: Page, outcome: LoadOutcome, which: (LoadWaiter) -> Boolean) {
        val done = page.waiters.filter(which)
        page.waiters.removeAll(done)
        done.forEach { it.result.complete(outcome) }
    }

    /**
     * Runs `(js)(arg)` through [Scripts.evaluate]; the result arrives through the bridge (or is
     * polled for on a WebView without one). Returns the bridge's JSON message.
     */
    private fun runScript(page: Page, js: String, argJson: String, timeoutMs: Long, what: String): String {
        val id = UUID.randomUUID().toString()
        val result = page.evaluations.begin(id)
        try {
            onMain(what) {
                page.view.evaluateJavascript(Scripts.evaluate(js, argJson, id)) { started ->
                    when {
                        started == null || started == "null" -> result.completeExceptionally(
                            BrowserException.precondition(
                                "the page raised an error: the script did not run (js must be a function expression that parses), or the page was replaced meanwhile",
                            ),
                        )
                        // Without a bridge the result waits in the page; with one, polling is
                        // only the backstop (a frame the bridge was not put into).
                        else -> {
                            page.evaluations.started(id)
                            poll(page, id, result, if (page.bridge) BRIDGE_BACKSTOP_MS else POLL_MS)
                        }
                    }
                }
            }
            return await(result, timeoutMs) { BrowserException.timeout("$what timed out after $timeoutMs ms") }
        } finally {
            page.evaluations.end(id)
        }
    }

    /** A message from the page's bridge (main thread). */
    private fun bridged(page: Page, data: String) {
        val id = ((try { Json.parse(data) } catch (e: JsonException) { null }) as? Map<*, *>)?.get("id") as? String ?: return
        page.evaluations.answered(id, data)
    }

    /** Asks the page for a result left there (no bridge) every [POLL_MS] until it is there. */
    private fun poll(page: Page, id: String, result: CompletableFuture<String>, firstDelayMs: Long) {
        main.postDelayed(object : Runnable {
            override fun run() {
                if (result.isDone || page.gone) return
                page.view.evaluateJavascript(Scripts.poll(id)) { value ->
                    val text = try {
                        Json.parse(value ?: "null") as? String
                    } catch (e: JsonException) {
                        null
                    }
                    if (text != null) result.complete(text) else main.postDelayed(this, POLL_MS)
                }
            }
        }, firstDelayMs)
    }

    private fun capture(page: Page): Triple<Bitmap, Int, Int> {
        val onScreen = onMain("screenshot") { sheet != null && page.view.parent === sheet }
        if (onScreen) return pixelCopy(page)
        val (screen, size) = onMain("screenshot") { screen to viewportCss(page) }
        val frame = screen?.frame(FIRST_FRAME_MS)
            ?: throw BrowserException.unavailable("the phone's offscreen screen has drawn no frame of the page yet")
        return Triple(frame, size.first, size.second)
    }

    /** The page in the sheet, copied from the Activity's window (API 26). */
    private fun pixelCopy(page: Page): Triple<Bitmap, Int, Int> {
        val copied = CompletableFuture<Bitmap>()
        val size = onMain("screenshot") {
            val view = page.view
            val activity = sheetActivity ?: throw BrowserException.unavailable("the take-over sheet has no window")
            if (view.width <= 0 || view.height <= 0) throw BrowserException.unavailable("the take-over sheet is not laid out yet")
            val at = IntArray(2).also { view.getLocationInWindow(it) }
            val bitmap = Bitmap.createBitmap(view.width, view.height, Bitmap.Config.ARGB_8888)
            PixelCopy.request(
                activity.window, Rect(at[0], at[1], at[0] + view.width, at[1] + view.height), bitmap,
                { result ->
                    if (result == PixelCopy.SUCCESS) {
                        copied.complete(bitmap)
                    } else {
                        bitmap.recycle()
                        copied.completeExceptionally(BrowserException.unavailable("the screen could not be copied (PixelCopy $result)"))
                    }
                },
                main,
            )
            viewportCss(page)
        }
        val bitmap = await(copied, MAIN_TIMEOUT_MS) { BrowserException.timeout("screenshot timed out after $MAIN_TIMEOUT_MS ms") }
        return Triple(bitmap, size.first, size.second)
    }

    private fun touch(view: View, downTime: Long, eventTime: Long, action: Int, x: Float, y: Float) {
        val properties = MotionEvent.PointerProperties().apply {
            id = 0
            toolType = MotionEvent.TOOL_TYPE_FINGER
        }
        val coords = MotionEvent.PointerCoords().apply {
            this.x = x
            this.y = y
            pressure = 1f
            size = 1f
        }
        // buttonState 0: Chromium ignores mouse-tool DOWN/UP, and a finger has no buttons.
        val event = MotionEvent.obtain(
            downTime, eventTime, action, 1, arrayOf(properties), arrayOf(coords),
            0, 0, 1f, 1f, 0, 0, InputDevice.SOURCE_TOUCHSCREEN, 0,
        )
        try {
            view.dispatchTouchEvent(event)
        } finally {
            event.recycle()
        }
    }

    /**
     * [code]'s key down and up with [meta] held: each modifier's own key goes down first and up
     * last, as on a keyboard, and the key's events carry them all. Main thread.
     */
    private fun press(view: View, code: Int, ownMeta: Int, meta: List<Key.Modifier>) {
        view.requestFocus()
        val down = SystemClock.uptimeMillis()
        fun send(action: Int, keyCode: Int, state: Int) =
            view.dispatchKeyEvent(KeyEvent(down, SystemClock.uptimeMillis(), action, keyCode, 0, state))
        var state = 0
        for (m in meta) {
            state = state or META_STATES.getValue(m.bit)
            send(KeyEvent.ACTION_DOWN, MODIFIER_KEY_CODES.getValue(m.bit), state)
        }
        send(KeyEvent.ACTION_DOWN, code, state or ownMeta)
        send(KeyEvent.ACTION_UP, code, state or ownMeta)
        for (m in meta.asReversed()) {
            state = state and META_STATES.getValue(m.bit).inv()
            send(KeyEvent.ACTION_UP, MODIFIER_KEY_CODES.getValue(m.bit), state)
        }
    }

    /**
     * A download the page started (a navigation that turned out to be a file, or a tap on a
     * link): DownloadListener only reports it, so the app fetches it itself with the
     * WebView's cookies and keeps it in its downloads folder. The navigation waiting for it
     * gets the file's name. Main thread.
     */
    private fun download(page: Page, url: String, disposition: String?, mime: String?) {
        val waiting = page.waiters.toList()
        page.loading = false
        Thread({
            val outcome = try {
                LoadOutcome.Downloaded(fetchToFile(url, disposition, mime))
            } catch (e: Exception) {
                LoadOutcome.Failed("the download of $url failed: ${e.message ?: e::class.java.simpleName}")
            }
            main.post { complete(page, outcome) { it in waiting } }
        }, "nanomuse-download").start()
    }

    private fun fetchToFile(url: String, disposition: String?, mime: String?): String {
        if (!url.startsWith("http://") && !url.startsWith("https://")) {
            throw IOException("${url.substringBefore(':')}: downloads cannot be fetched by the phone")
        }
        val dir = (app.getExternalFilesDir(Environment.DIRECTORY_DOWNLOADS) ?: File(app.filesDir, "downloads")).apply { mkdirs() }
        val name = URLUtil.guessFileName(url, disposition, mime).replace('/', '_')
        var file = File(dir, name)
        var n = 1
        while (file.exists()) file = File(dir, "${name.substringBeforeLast('.')} ($n)${name.substringAfterLast('.', "").let { if (it.isEmpty()) "" else ".$it" }}").also { n++ }
        val cookies = CookieManager.getInstance()
        val request = Request.Builder().url(url).header("User-Agent", userAgent.ifEmpty { defaultUserAgent(true) }).apply {
            cookies.getCookie(url)?.takeIf { it.isNotEmpty() }?.let { header("Cookie", it) }
        }.build()
        http.newBuilder().followRedirects(true).followSslRedirects(true).callTimeout(0, TimeUnit.MILLISECONDS).build()
            .newCall(request).execute().use { response ->
                for (setCookie in response.headers("Set-Cookie")) cookies.setCookie(url, setCookie)
                cookies.flush()
                if (!response.isSuccessful) throw IOException("HTTP ${response.code}")
                val body = response.body ?: throw IOException("no body")
                file.outputStream().use { body.byteStream().copyTo(it) }
            }
        return file.name
    }

    private fun readLimited(stream: java.io.InputStream?, url: String): ByteArray {
        if (stream == null) return ByteArray(0)
        val out = ByteArrayOutputStream()
        val buffer = ByteArray(64 * 1024)
        while (true) {
            val n = stream.read(buffer)
            if (n < 0) return out.toByteArray()
            if (out.size() + n > MAX_FETCH_BYTES) {
                throw BrowserException.exhausted("the response of $url is larger than $MAX_FETCH_BYTES bytes, the phone's fetch limit")
            }
            out.write(buffer, 0, n)
        }
    }

    /** The WebView's own user agent for a phone (it says `; wv)`: no spoofing); a desktop one built from its Chrome version. */
    private fun defaultUserAgent(mobile: Boolean): String {
        val own = WebSettings.getDefaultUserAgent(app)
        if (mobile) return own
        val chrome = Regex("Chrome/(\\d+)").find(own)?.groupValues?.get(1) ?: "120"
        return "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/$chrome.0.0.0 Safari/537.36"
    }

    // ---- the WebView's callbacks (main thread) ----

    private inner class PageClient(private val page: Page) : WebViewClient() {
        override fun shouldOverrideUrlLoading(view: WebView, request: WebResourceRequest): Boolean {
            // Other apps' links (intent:, market:, tel:…) are not followed from the offscreen tab.
            val scheme = request.url.scheme?.lowercase()
            return scheme !in setOf("http", "https", "about", "data", "blob", "javascript")
        }

        override fun shouldInterceptRequest(view: WebView, request: WebResourceRequest): WebResourceResponse? {
            page.lastRequestNanos = System.nanoTime() // on a network thread; nothing is intercepted
            return null
        }

        override fun onPageStarted(view: WebView, url: String, favicon: Bitmap?) {
            // Scripts of the document being replaced will not answer: they fail now rather
            // than at their timeout (a settle looks again).
            page.evaluations.documentReplaced()
            page.loading = true
            page.lastRequestNanos = System.nanoTime()
            page.waiters.forEach { it.started = true }
        }

        override fun onReceivedHttpError(view: WebView, request: WebResourceRequest, response: WebResourceResponse) {
            if (request.isForMainFrame) page.mainStatus = response.statusCode
        }

        override fun onReceivedError(view: WebView, request: WebResourceRequest, error: WebResourceError) {
            if (request.isForMainFrame) page.mainError = request.url.toString() to error.description.toString()
        }

        /** Fires on errors too, and may fire more than once: only waiters whose load started take it. */
        override fun onPageFinished(view: WebView, url: String) {
            page.lastUrl = url
            page.loading = false
            CookieManager.getInstance().flush()
            val error = page.mainError?.takeIf { it.first == url }?.second
            val outcome = if (error != null) LoadOutcome.Failed(error) else LoadOutcome.Loaded(page.mainStatus.takeIf { it != 0 } ?: 200)
            complete(page, outcome) { it.started }
        }

        /** Same-document navigations (a #fragment, pushState, a back within the page) load nothing. */
        override fun doUpdateVisitedHistory(view: WebView, url: String, isReload: Boolean) {
            page.lastUrl = url
            main.postDelayed({
                if (!page.loading) {
                    complete(page, LoadOutcome.Loaded(0)) { it.history || (!it.started && it.target?.trimEnd('/') == url.trimEnd('/')) }
                }
            }, HISTORY_SETTLE_MS)
        }

        /** The renderer died: the view is unusable; a new one loads the last URL (a popup just closes). Return true or the app dies. */
        override fun onRenderProcessGone(view: WebView, detail: RenderProcessGoneDetail): Boolean {
            if (page.view !== view || page.gone) return true
            if (page.opener != null) {
                closePopup(page)
                return true
            }
            val why = if (detail.didCrash()) "crashed" else "was stopped by the system to free memory"
            page.gone = true
            fail(page, BrowserException.unavailable("the page's renderer $why; the page is being loaded again"))
            val url = page.lastUrl
            main.post {
                unplace(view)
                view.destroy()
                if (this@DeviceBrowser.page === page) {
                    this@DeviceBrowser.page = null
                    val fresh = createPage(profile)
                    if (url != null && (url.startsWith("http://") || url.startsWith("https://"))) fresh.view.loadUrl(url)
                }
            }
            return true
        }
    }

    private inner class ChromeClient(private val page: Page) : WebChromeClient() {
        /** On screen (the sheet, an Activity's context) the WebView shows its own dialogs; offscreen none may open. */
        private fun onScreen() = sheet != null && page.view.parent === sheet

        /** What a dialog said, kept in the page for the next listing once its script goes on. */
        private fun said(view: WebView, kind: String, message: String, answer: String) {
            main.post { view.evaluateJavascript(Scripts.dialogSaid(kind, message, answer), null) }
        }

        override fun onJsAlert(view: WebView, url: String, message: String, result: JsResult): Boolean {
            if (onScreen()) return false
            result.confirm()
            said(view, "alert", message, "OK")
            return true
        }

        override fun onJsConfirm(view: WebView, url: String, message: String, result: JsResult): Boolean {
            if (onScreen()) return false
            result.confirm()
            said(view, "confirm", message, "OK")
            return true
        }

        override fun onJsPrompt(view: WebView, url: String, message: String, defaultValue: String?, result: JsPromptResult): Boolean {
            if (onScreen()) return false
            result.confirm(defaultValue ?: "")
            said(view, "prompt", message, defaultValue ?: "")
            return true
        }

        override fun onJsBeforeUnload(view: WebView, url: String, message: String, result: JsResult): Boolean {
            if (onScreen()) return false
            result.confirm()
            return true
        }

        override fun onPermissionRequest(request: PermissionRequest) = request.deny()

        /**
         * A window the page opened: its popup, when the page may have one (a tap asked for it,
         * none open, fewer than [MAX_POPUP_DEPTH] deep); any other loads in the page.
         */
        override fun onCreateWindow(view: WebView, isDialog: Boolean, isUserGesture: Boolean, resultMsg: Message): Boolean {
            val transport = resultMsg.obj as? WebView.WebViewTransport ?: return false
            if (page.gone) return false
            val popup = isUserGesture && page.depth < MAX_POPUP_DEPTH && page.popup?.takeIf { !it.gone } == null
            transport.webView = if (popup) openPopup(page) else loadInOpener(page)
            resultMsg.sendToTarget()
            return true
        }

        override fun onCloseWindow(window: WebView) {
            if (window === page.view) closePopup(page)
        }

        /** An upload's chooser gets its files; any other the user answers on screen, or none offscreen. */
        override fun onShowFileChooser(
            webView: WebView,
            filePathCallback: ValueCallback<Array<android.net.Uri>>,
            fileChooserParams: FileChooserParams,
        ): Boolean {
            val pending = page.chooser
            if (pending == null) {
                if (onScreen()) return false
                filePathCallback.onReceiveValue(null)
                return true
            }
            page.chooser = null
            val multiple = fileChooserParams.mode == FileChooserParams.MODE_OPEN_MULTIPLE
            if (!multiple && pending.count > 1) {
                filePathCallback.onReceiveValue(null)
                pending.answered.completeExceptionally(UploadFile.tooMany(pending.count))
                return true
            }
            filePathCallback.onReceiveValue(pending.files.toTypedArray())
            pending.answered.complete(multiple)
            return true
        }

        override fun onGeolocationPermissionsShowPrompt(origin: String, callback: GeolocationPermissions.Callback) =
            callback.invoke(origin, false, false)
    }

    // ---- threads ----

    /** Runs [block] on the main thread and waits for it, at most [timeoutMs]. */
    private fun <T> onMain(what: String, timeoutMs: Long = MAIN_TIMEOUT_MS, block: () -> T): T {
        if (Looper.myLooper() == Looper.getMainLooper()) return block()
        val future = CompletableFuture<T>()
        main.post {
            try {
                future.complete(block())
            } catch (t: Throwable) {
                future.completeExceptionally(t)
            }
        }
        return await(future, timeoutMs) { BrowserException.timeout("$what: the phone's main thread did not answer within $timeoutMs ms") }
    }

    private fun <T> await(future: CompletableFuture<T>, timeoutMs: Long, timedOut: () -> BrowserException): T =
        try {
            future.get(maxOf(timeoutMs, 1), TimeUnit.MILLISECONDS)
        } catch (e: TimeoutException) {
            throw timedOut()
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        }

    companion object {
        private const val TAG = "nanomuse.browser"
        private const val MAIN_TIMEOUT_MS = 10_000L
        private const val EVALUATE_TIMEOUT_MS = 30_000L
        private const val DEFAULT_TIMEOUT_MS = 30_000L
        private const val FETCH_TIMEOUT_MS = 60_000L
        private const val FIRST_FRAME_MS = 2_000L
        private const val TAP_MS = 50L
        private const val POLL_MS = 100L
        private const val QUIET_MS = 500L
        private const val HISTORY_SETTLE_MS = 100L
        private const val BRIDGE_BACKSTOP_MS = 1_000L
        private const val MAX_REDIRECTS = 20
        /** How many popups deep a page may open one (the worker's: Django's related objects). */
        private const val MAX_POPUP_DEPTH = 3
        /** Base64 inside a 32 MiB message leaves room for about 24 MiB. */
        private const val MAX_FETCH_BYTES = 10 * 1024 * 1024

        /** The named keys' Android key codes, by their DOM code. */
        private val KEY_CODES = mapOf(
            "Enter" to KeyEvent.KEYCODE_ENTER,
            "Tab" to KeyEvent.KEYCODE_TAB,
            "Escape" to KeyEvent.KEYCODE_ESCAPE,
            "Backspace" to KeyEvent.KEYCODE_DEL,
            "Delete" to KeyEvent.KEYCODE_FORWARD_DEL,
            "Insert" to KeyEvent.KEYCODE_INSERT,
            "ArrowUp" to KeyEvent.KEYCODE_DPAD_UP,
            "ArrowDown" to KeyEvent.KEYCODE_DPAD_DOWN,
            "ArrowLeft" to KeyEvent.KEYCODE_DPAD_LEFT,
            "ArrowRight" to KeyEvent.KEYCODE_DPAD_RIGHT,
            "Home" to KeyEvent.KEYCODE_MOVE_HOME,
            "End" to KeyEvent.KEYCODE_MOVE_END,
            "PageUp" to KeyEvent.KEYCODE_PAGE_UP,
            "PageDown" to KeyEvent.KEYCODE_PAGE_DOWN,
            "Space" to KeyEvent.KEYCODE_SPACE,
        )

        /** F1–F12's Android key code (KEYCODE_F1 … KEYCODE_F12 run on). */
        private fun functionKeyCode(code: String) =
            code.removePrefix("F").toIntOrNull()?.takeIf { it in 1..12 }?.let { KeyEvent.KEYCODE_F1 + it - 1 }

        /** Each modifier's meta state, by its [Key] bit. */
        private val META_STATES = mapOf(
            Key.ALT to (KeyEvent.META_ALT_ON or KeyEvent.META_ALT_LEFT_ON),
            Key.CONTROL to (KeyEvent.META_CTRL_ON or KeyEvent.META_CTRL_LEFT_ON),
            Key.META to (KeyEvent.META_META_ON or KeyEvent.META_META_LEFT_ON),
            Key.SHIFT to (KeyEvent.META_SHIFT_ON or KeyEvent.META_SHIFT_LEFT_ON),
        )

        /** Each modifier's own key, by its [Key] bit. */
        private val MODIFIER_KEY_CODES = mapOf(
            Key.ALT to KeyEvent.KEYCODE_ALT_LEFT,
            Key.CONTROL to KeyEvent.KEYCODE_CTRL_LEFT,
            Key.META to KeyEvent.KEYCODE_META_LEFT,
            Key.SHIFT to KeyEvent.KEYCODE_SHIFT_LEFT,
        )
    }
}
