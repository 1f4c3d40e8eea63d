package nanomuse.device.protocol.cdp

import nanomuse.device.protocol.BrowserEngine
import nanomuse.device.protocol.BrowserException
import nanomuse.device.protocol.ErrorCode
import nanomuse.device.protocol.Evaluations
import nanomuse.device.protocol.FetchRequest
import nanomuse.device.protocol.FetchResponse
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
import java.io.File
import java.util.Base64
import java.util.UUID
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicReference

/**
 * The fifteen ops on one page of a headless Chromium over CDP, done the way the phone's
 * `DeviceBrowser` (android/app/…/browser/DeviceBrowser.kt) does them on its WebView, so the
 * phone's own Kotlin code — [nanomuse.device.protocol.DeviceClient], the Dispatcher and the
 * page scripts of [Scripts] — runs against a real browser on a machine without Android.
 *
 * Where CDP and the WebView differ, this does it the WebView's way (each place says why):
 * - Sizes: the WebView is a view of W·d × H·d physical px with `useWideViewPort = false`, so
 *   the CSS layout width is always W, a viewport meta tag is not read, and the density d is
 *   the phone's whatever the profile: `setDeviceMetricsOverride {mobile: false}` at the
 *   phone's [density] for every profile.
 * - The phone has a touchscreen: touch emulation is always on and taps are always touches
 *   (DOWN, [TAP_MS], UP), at CSS px × visualViewport.scale (CDP takes DIPs where the WebView
 *   takes physical px: the same point without the density).
 * - Typing, "frame drawn" and evaluate run the page scripts of [Scripts], evaluate's result
 *   coming back through a bridge (`Runtime.addBinding` standing in for the WebView's
 *   `addWebMessageListener`), as on the phone.
 * - One tab, and popups: the start script keeps `target=_blank` and a plain `window.open` in
 *   the page and lets a popup (a size or a place, asked for by a tap) open as a window, as
 *   the phone's does; the popup, a target of its own, is what the ops act on until it closes
 *   (the WebView's `onCreateWindow` / `onCloseWindow`). Any other window is closed and its
 *   URL loaded in the page that opened it.
 * - Settle: loaded, no request *started* for [QUIET_MS], a frame drawn — the WebView cannot
 *   tell when a subresource ends, so neither does this.
 * - Cookies are "flushed" after every load and fetch: the persistent ones are written to
 *   [cookieFile] (Chromium commits its own store only every ~30 s) and read back at [start].
 * - Dialogs are answered as the offscreen WebView answers them (confirm; a prompt's default).
 * - Downloads are fetched by the phone itself with the page's cookies into [downloads], as the
 *   WebView's DownloadListener only reports them.
 *
 * Ops come from the client's worker threads; CDP calls are thread-safe and the page's state is
 * in volatile fields. Event listeners run on the connection's reader thread and never wait
 * for a CDP answer.
 */
class CdpBrowser(
    private val chromium: Chromium,
    /** The phone's density (devicePixelRatio): 2.625 is a 420 dpi phone. */
    private val density: Double = 2.625,
    private val cookieFile: File? = null,
    private val downloads: File = File(System.getProperty("java.io.tmpdir"), "nanomuse-phone-downloads"),
    /** Where upload writes the files it gives a chooser (the app's cache dir on the phone). */
    private val uploads: File = File(System.getProperty("java.io.tmpdir"), "nanomuse-phone-uploads-${UUID.randomUUID()}"),
) : BrowserEngine {
    private val cdp = chromium.connection
    private val fetcher = Fetcher(this)
    private val lock = Any()
    /** Downloads being fetched, by URL (see [download]). */
    private val fetching = ConcurrentHashMap<String, CompletableFuture<String>>()

    /** The tab; the ops act on its popup while one is open (see [front]). */
    @Volatile private var page: Page? = null
    /** How the page the ops act on changed windows since the last settle (see [settle]). */
    private val windowChange = AtomicReference<WindowChange?>()
    @Volatile private var profile = Profile("", Profile.MOBILE_WIDTH, Profile.MOBILE_HEIGHT, true)
    @Volatile internal var userAgent = ""
        private set

    /** The tab or a popup, and what its events told. */
    private inner class Page(val targetId: String, val sessionId: String, val opener: Page? = null) {
        /** How many popups deep: 0 for the tab. */
        val depth: Int = opener?.let { it.depth + 1 } ?: 0
        /** The popup this page opened, while it is open. */
        @Volatile var popup: Page? = null
        /** A window this page just opened that is being made its popup. */
        @Volatile var opening: String? = null
        @Volatile var loading = false
        @Volatile var gone = false
        @Volatile var lastRequestNanos = System.nanoTime()
        @Volatile var lastUrl: String? = null
        /** The main document's status by loader id. */
        val statuses = ConcurrentHashMap<String, Int>()
        /** Someone waiting for a load event: by loader id, or "" for whichever comes next. */
        val loads = ConcurrentHashMap<String, CompletableFuture<Unit>>()
        /**
         * The loaders whose load came before anyone waited for it: Page.navigate's answer and
         * a quick page's load event can both be read before the op registers its waiter.
         */
        val loaded = java.util.Collections.synchronizedSet(LinkedHashSet<String>())
        /** Someone waiting for a history step to commit (a back). */
        @Volatile var history: CompletableFuture<Unit>? = null
        /** An upload waiting for the file chooser its tap opens (Page.fileChooserOpened). */
        @Volatile var chooser: CompletableFuture<Map<*, *>>? = null
        val evaluations = Evaluations()

        /** A CDP command on the page; what the browser refuses is a precondition the page set. */
        fun call(method: String, params: Map<String, Any?> = emptyMap(), timeoutMs: Long = MAIN_TIMEOUT_MS) =
            try {
                cdp.call(method, params, sessionId, timeoutMs)
            } catch (e: CdpException) {
                if (gone) throw BrowserException.unavailable("the page went away during $method")
                throw BrowserException.precondition("the page could not take $method: ${e.message}")
            }
    }

    init {
        cdp.onEvent(::event)
    }

    /** The browser-wide setup: windows watched (one tab), downloads ours, cookies restored. */
    fun start(): CdpBrowser {
        cdp.call("Target.setDiscoverTargets", mapOf("discover" to true))
        // The WebView downloads nothing itself: the app does (see [download]).
        cdp.call("Browser.setDownloadBehavior", mapOf("behavior" to "deny", "eventsEnabled" to true))
        restoreCookies()
        return this
    }

    // ---- the ops ----

    override fun open(profile: Profile): PageInfo = synchronized(lock) {
        if (page?.takeIf { !it.gone } == null) createPage(profile) else windows().forEach { applyProfile(it, profile) }
        pageInfo(needPage())
    }

    override fun navigate(url: String, timeoutMs: Long): Navigation {
        val page = needPage()
        val waiter = CompletableFuture<Unit>()
        val reply = page.call("Page.navigate", mapOf("url" to url), timeoutMs)
        val error = reply["errorText"] as? String
        if (error != null) {
            if (reply["isDownload"] == true) {
                val name = await(download(url), DOWNLOAD_TIMEOUT_MS) { BrowserException.timeout("the download of $url timed out after $DOWNLOAD_TIMEOUT_MS ms") }
                return Navigation(pageInfo(page), 0, name)
            }
            // The worker's words: a WebView's onPageFinished never comes for a 204.
            if (error == "net::ERR_ABORTED") {
                throw BrowserException.precondition(
                    "navigation to $url was aborted: the server sent no page (e.g. 204 No Content); the page stays where it was",
                )
            }
            throw BrowserException.precondition("navigation to $url failed: $error")
        }
        // No loader: a same-document navigation (a #fragment), nothing loads.
        val loader = reply["loaderId"] as? String ?: return Navigation(pageInfo(page), 0, "")
        page.loads[loader] = waiter
        if (page.loaded.remove(loader)) waiter.complete(Unit)
        try {
            await(waiter, timeoutMs) { BrowserException.timeout("navigation to $url timed out after $timeoutMs ms") }
        } finally {
            page.loads.remove(loader)
        }
        flushCookies()
        // onPageFinished without onReceivedHttpError is a 200 to the WebView.
        return Navigation(pageInfo(page), page.statuses.remove(loader) ?: 200, "")
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
        val profile = profile
        if (x >= profile.width || y >= profile.height) {
            throw BrowserException.invalid("($x, $y) is outside the ${profile.width}×${profile.height} viewport")
        }
        val viewport = viewport(page)
        val point = mapOf("x" to (x - viewport.left) * viewport.scale, "y" to (y - viewport.top) * viewport.scale)
        repeat(count) {
            page.call("Input.dispatchTouchEvent", mapOf("type" to "touchStart", "touchPoints" to listOf(point)))
            // The UP a finger's moment later, as the phone sends it. touchEnd needs its (empty)
            // touchPoints or Chromium answers -32602. A double tap's second DOWN follows its
            // UP at once, well within the double-tap time.
            Thread.sleep(TAP_MS)
            page.call("Input.dispatchTouchEvent", mapOf("type" to "touchEnd", "touchPoints" to emptyList<Any>()))
        }
    }

    /** DeviceBrowser.type: the setter path, else the editor's insertText over the selected text. */
    override fun type(text: String) {
        val why = Json.parse(evaluate(Scripts.FILL_FOCUSED, Json.quote(text))) ?: return
        if (why is Map<*, *> && why["trusted"] == true) {
            if (why["selectAll"] == true) {
                // A code editor's hidden field: the editor's own select-all, Ctrl+A as the
                // phone's keyboard sends it, so the text replaces the editor's.
                val page = needPage()
                val key = mapOf("key" to "a", "code" to "KeyA", "windowsVirtualKeyCode" to 65, "nativeVirtualKeyCode" to 65, "modifiers" to 2)
                page.call("Input.dispatchKeyEvent", key + mapOf("type" to "rawKeyDown", "commands" to listOf("selectAll")))
                page.call("Input.dispatchKeyEvent", key + mapOf("type" to "keyUp"))
                if (text.isEmpty()) {
                    // No editor takes an empty paste: Delete empties what is selected.
                    val delete = mapOf("key" to "Delete", "code" to "Delete", "windowsVirtualKeyCode" to 46, "nativeVirtualKeyCode" to 46)
                    page.call("Input.dispatchKeyEvent", delete + mapOf("type" to "rawKeyDown", "commands" to listOf("deleteForward")))
                    page.call("Input.dispatchKeyEvent", delete + mapOf("type" to "keyUp"))
                    return
                }
                // The text as a paste, which the editor keeps as it is.
                if (Json.parse(evaluate(Scripts.PASTE_FOCUSED, Json.quote(text))) == true) return
            }
            // Not CDP's Input.insertText (the worker's): the phone has only the page's editor.
            val failed = Json.parse(evaluate(Scripts.INSERT_TEXT, Json.quote(text)))
            if (failed != null) throw BrowserException.precondition(failed.toString())
            return
        }
        throw BrowserException.precondition(why.toString())
    }

    /**
     * A named key as the WebView turns an Android KeyEvent into one (key, code, keyCode, and
     * the text it types), its modifiers' own keys down first and up last; a character the
     * phone's virtual keyboard map has (ASCII) as its key event, any other through
     * [Scripts.INSERT_TEXT].
     */
    override fun key(key: Key) {
        val page = needPage()
        if (!key.named && key.key.any { it.code !in 32..126 }) {
            val why = Json.parse(evaluate(Scripts.INSERT_TEXT, Json.quote(key.text)))
            if (why != null) throw BrowserException.precondition(why.toString())
            return
        }
        fun event(type: String, name: String, code: String, vk: Int, modifiers: Int) = linkedMapOf<String, Any?>(
            "type" to type, "key" to name, "code" to code, "modifiers" to modifiers,
            "windowsVirtualKeyCode" to vk, "nativeVirtualKeyCode" to vk,
        )
        val held = Key.MODIFIERS.filter { key.modifiers and it.bit != 0 }
        var down = 0
        for (m in held) {
            down = down or m.bit
            page.call("Input.dispatchKeyEvent", event("rawKeyDown", m.name, m.code, m.virtualKey, down))
        }
        val press = event(if (key.text.isEmpty()) "rawKeyDown" else "keyDown", key.key, key.code, key.virtualKey, down)
        if (key.text.isNotEmpty()) {
            press["text"] = key.text
            press["unmodifiedText"] = key.text
        }
        page.call("Input.dispatchKeyEvent", press)
        page.call("Input.dispatchKeyEvent", event("keyUp", key.key, key.code, key.virtualKey, down))
        for (m in held.asReversed()) {
            down = down and m.bit.inv()
            page.call("Input.dispatchKeyEvent", event("keyUp", m.name, m.code, m.virtualKey, down))
        }
    }

    /**
     * A wheel turn in the middle of the viewport, as the phone sends one: the element under it
     * scrolls as it would for a person. The WebView says whether the wheel was taken (and the
     * phone scrolls the page itself when not); CDP does not tell, and Chromium always routes it.
     */
    override fun scroll(dy: Double) {
        val page = needPage()
        val viewport = viewport(page)
        val profile = profile
        val point = scrollPoint(page, dy)
        page.call(
            "Input.dispatchMouseEvent",
            mapOf(
                "type" to "mouseWheel",
                "x" to (point?.first ?: (profile.width / 2.0)), "y" to (point?.second ?: (profile.height / 2.0)),
                "deltaX" to 0, "deltaY" to dy * viewport.scale,
            ),
        )
    }

    /** Where [Scripts.SCROLL_POINT] turns the wheel, or null for the middle of the view. */
    private fun scrollPoint(page: Page, dy: Double): Pair<Double, Double>? {
        val reply = try {
            page.call(
                "Runtime.evaluate",
                mapOf("expression" to "(${Scripts.SCROLL_POINT})(${Json.write(dy)})", "returnByValue" to true),
            )
        } catch (e: BrowserException) {
            return null // a page being replaced: its middle
        }
        val point = (reply["result"] as? Map<*, *>)?.get("value") as? Map<*, *> ?: return null
        val x = (point["x"] as? Number)?.toDouble() ?: return null
        val y = (point["y"] as? Number)?.toDouble() ?: return null
        return x to y
    }

    override fun back(): PageInfo {
        val page = needPage()
        val history = page.call("Page.getNavigationHistory")
        val current = (history["currentIndex"] as? Number)?.toInt() ?: 0
        val entries = history["entries"] as? List<*> ?: emptyList<Any>()
        // A new target's first entry is about:blank, which a fresh WebView does not have.
        val previous = (entries.getOrNull(current - 1) as? Map<*, *>)
            ?.takeIf { it["url"] != "about:blank" || current > 1 }
        val opener = page.opener
        if (previous == null && opener != null) {
            // Back from a popup's first page closes it, as a person closes a window.
            runCatching { cdp.call("Target.closeTarget", mapOf("targetId" to page.targetId)) }
            popupClosed(page)
            return pageInfo(needPage())
        }
        if (previous == null) throw BrowserException.precondition("there is no earlier page in this tab's history to go back to")
        val committed = CompletableFuture<Unit>()
        val loaded = CompletableFuture<Unit>()
        page.history = committed
        page.loads[ANY_LOAD] = loaded
        try {
            val deadline = System.nanoTime() + DEFAULT_TIMEOUT_MS * 1_000_000
            page.call("Page.navigateToHistoryEntry", mapOf("entryId" to previous["id"]))
            val timedOut = { BrowserException.timeout("going back timed out after $DEFAULT_TIMEOUT_MS ms") }
            await(committed, left(deadline), timedOut)
            // A page restored from the back-forward cache is complete at once; others load again.
            if (readyState(page) != "complete") await(loaded, left(deadline), timedOut)
        } finally {
            page.history = null
            page.loads.remove(ANY_LOAD, loaded)
        }
        flushCookies()
        return pageInfo(page)
    }

    /**
     * The phone's rule: loaded, no request started for [QUIET_MS], and a frame drawn since — on
     * the page the ops act on, which a popup opening or closing meanwhile changes.
     */
    override fun settle(timeoutMs: Long): Settled {
        val deadline = System.nanoTime() + timeoutMs * 1_000_000
        var seen = "nothing yet"
        while (true) {
            val left = left(deadline)
            if (left <= 0) {
                // Said for whoever reads the phone's log: a page that never settles is the page's
                // doing or the phone's, and this tells which.
                System.err.println("phone: settle ended at its bound of $timeoutMs ms; last seen: $seen")
                return Settled(false, windowChange.getAndSet(null))
            }
            val page = needPage()
            seen = "${page.lastUrl} (${if (page.opener == null) "the tab" else "a popup"}), loading=${page.loading}, opening=${page.opening}"
            if (page.loading || page.opening != null) {
                Thread.sleep(minOf(POLL_MS, left))
                continue
            }
            val state = try {
                val reply = Json.parse(runScript(page, Scripts.FRAME_DRAWN, "null", left, "settle")) as? Map<*, *>
                (reply?.get("value") as? String)?.let { Json.parse(it) as? String }
            } catch (e: BrowserException) {
                seen += ", the frame script failed: ${e.message}"
                if (page !== front()) continue // the popup it looked at closed: its opener now
                if (e.code == ErrorCode.TIMEOUT) continue // the bound, said above
                if (e.code == ErrorCode.NOT_FOUND) throw e
                null // a document being replaced draws no frames; look again
            }
            val quietSince = System.nanoTime() - QUIET_MS * 1_000_000
            val settled = state == "complete" && !page.loading && page.lastRequestNanos < quietSince
            seen += ", frame script: $state, quiet: ${page.lastRequestNanos < quietSince}"
            if (settled && page === front() && page.opening == null) return Settled(true, windowChange.getAndSet(null))
            Thread.sleep(minOf(POLL_MS, maxOf(1, left(deadline))))
        }
    }

    /**
     * The viewport as the phone's screen shows it — the visual viewport, scaled to the
     * profile's CSS size — as a JPEG. Clip x/y are document coordinates (a scrolled page comes
     * back blank otherwise).
     */
    override fun screenshot(quality: Int): Screenshot {
        val page = needPage()
        val profile = profile
        val metrics = page.call("Page.getLayoutMetrics")["cssVisualViewport"] as? Map<*, *> ?: emptyMap<String, Any>()
        fun number(name: String, default: Double) = (metrics[name] as? Number)?.toDouble()?.takeIf { it.isFinite() && it > 0 } ?: default
        val clientWidth = number("clientWidth", profile.width.toDouble())
        val clip = mapOf(
            "x" to ((metrics["pageX"] as? Number)?.toDouble() ?: 0.0),
            "y" to ((metrics["pageY"] as? Number)?.toDouble() ?: 0.0),
            "width" to clientWidth,
            "height" to number("clientHeight", profile.height.toDouble()),
            "scale" to profile.width / (clientWidth * density),
        )
        val reply = page.call("Page.captureScreenshot", mapOf("format" to "jpeg", "quality" to quality, "clip" to clip))
        val jpeg = Base64.getDecoder().decode(reply["data"] as? String ?: "")
        return Screenshot(jpeg, profile.width, profile.height)
    }

    override fun state(): PageInfo = pageInfo(needPage())

    override fun fetch(request: FetchRequest): FetchResponse = fetcher.fetch(request).also { flushCookies() }

    override fun profile(profile: Profile) {
        needPage()
        synchronized(lock) { windows().forEach { applyProfile(it, profile) } }
    }

    /** The page goes, and its popups with it. */
    override fun close() {
        needPage()
        synchronized(lock) { windows().asReversed().forEach { closePage(it, "the page was closed") } }
        flushCookies()
    }

    /**
     * DeviceBrowser.upload: the tap, then the chooser it opens answered with the files. The
     * WebView hands the app its onShowFileChooser; Chromium its Page.fileChooserOpened while
     * choosers are intercepted (only around the tap: the page's own choosers stay its own).
     */
    override fun upload(x: Double, y: Double, files: List<UploadFile>): Boolean {
        val page = needPage()
        val chooser = CompletableFuture<Map<*, *>>()
        page.chooser = chooser
        page.call("Page.setInterceptFileChooserDialog", mapOf("enabled" to true))
        try {
            tap(x, y, 1)
            val opened = await(chooser, UploadFile.CHOOSER_WAIT_MS) { BrowserException.precondition(UploadFile.NO_CHOOSER) }
            val multiple = opened["mode"] == "selectMultiple"
            if (!multiple && files.size > 1) throw UploadFile.tooMany(files.size)
            val node = (opened["backendNodeId"] as? Number)?.toLong()
                ?: throw BrowserException.precondition("the page opened a file picker that is not a file input; upload can only fill <input type=file>")
            // A folder per upload and per file: a form may still need an earlier upload's
            // files, and two files of one upload may share a name.
            val folder = File(uploads, UUID.randomUUID().toString())
            val paths = files.mapIndexed { i, file ->
                val target = File(File(folder, i.toString()), file.name)
                target.parentFile.mkdirs()
                target.writeBytes(file.content)
                target.absolutePath
            }
            page.call("DOM.setFileInputFiles", mapOf("files" to paths, "backendNodeId" to node))
            return multiple
        } finally {
            page.chooser = null
            runCatching { page.call("Page.setInterceptFileChooserDialog", mapOf("enabled" to false)) }
        }
    }

    /**
     * The take-over sheet's `showIn`: the user gets the page, one is made with the profile in
     * force (the phone's own, mobile 412×915, at first) when none is open. Headless, there is
     * no sheet to move it into.
     */
    fun showPage() {
        synchronized(lock) { if (page?.takeIf { !it.gone } == null) createPage(profile) }
    }

    /** The page goes, and the browser with it. */
    fun shutdown() {
        windows().asReversed().forEach { runCatching { closePage(it, "the phone is stopping") } }
        uploads.deleteRecursively()
        chromium.close()
    }

    // ---- cookies, for the fetcher ----

    /** The Cookie header the browser would send to [url] (HttpOnly ones too), or null. */
    internal fun cookieHeader(url: String): String? {
        val cookies = cdp.call("Network.getCookies", mapOf("urls" to listOf(url)), pageSession())["cookies"] as? List<*>
        // CookieManager.getCookie gives Chromium's order: longer paths first, then older ones.
        // CDP gives no creation times and its order varies from call to call, so names break
        // ties (the worker's rule): the same jar always makes the same header.
        return cookies.orEmpty().mapNotNull { it as? Map<*, *> }
            .sortedWith(compareBy({ -(it["path"] as? String ?: "").length }, { it["name"] as? String ?: "" }))
            .joinToString("; ") { "${it["name"]}=${it["value"]}" }.ifEmpty { null }
    }

    /** Keeps what a `Set-Cookie` of a response to [url] says, as CookieManager.setCookie does. */
    internal fun setCookie(url: String, setCookie: String) {
        val parsed = try {
            java.net.HttpCookie.parse(setCookie)
        } catch (e: IllegalArgumentException) {
            return // CookieManager ignores what it cannot parse
        }
        val sameSite = Regex("(?i);\\s*samesite\\s*=\\s*(strict|lax|none)").find(setCookie)?.groupValues?.get(1)
        for (cookie in parsed) {
            if (cookie.maxAge == 0L) {
                cdp.call("Network.deleteCookies", mapOf("name" to cookie.name, "url" to url), pageSession())
                continue
            }
            val params = linkedMapOf<String, Any?>("name" to cookie.name, "value" to cookie.value, "url" to url)
            cookie.domain?.let { params["domain"] = it }
            cookie.path?.let { params["path"] = it }
            if (cookie.secure) params["secure"] = true
            if (cookie.isHttpOnly) params["httpOnly"] = true
            sameSite?.let { params["sameSite"] = it.lowercase().replaceFirstChar(Char::uppercaseChar) }
            if (cookie.maxAge > 0) params["expires"] = System.currentTimeMillis() / 1000.0 + cookie.maxAge
            cdp.call("Network.setCookie", params, pageSession())
        }
    }

    /** Network.* needs a page's session; with none open, the browser's cookies are reached through Storage. */
    private fun pageSession(): String = page?.takeIf { !it.gone }?.sessionId ?: ensureCookieSession()

    @Volatile private var cookieSession: String? = null

    /** A session on a blank target of its own, for cookies while no page is open. */
    private fun ensureCookieSession(): String = synchronized(lock) {
        cookieSession ?: run {
            val target = cdp.call("Target.createTarget", mapOf("url" to "about:blank", "background" to true))["targetId"] as String
            val session = cdp.call("Target.attachToTarget", mapOf("targetId" to target, "flatten" to true))["sessionId"] as String
            cdp.call("Network.enable", emptyMap(), session)
            session.also { cookieSession = it }
        }
    }

    /**
     * CookieManager.flush(): the persistent cookies written to [cookieFile], so a phone program
     * that is killed keeps a fresh login (Chromium itself commits its store every ~30 s).
     */
    private fun flushCookies() {
        val file = cookieFile ?: return
        val cookies = (cdp.call("Storage.getCookies")["cookies"] as? List<*>).orEmpty().mapNotNull { it as? Map<*, *> }
            .filter { it["session"] != true }
            .map { cookie -> COOKIE_FIELDS.filter { cookie[it] != null }.associateWith { cookie[it] } }
        val temporary = File(file.parentFile, file.name + ".new")
        temporary.writeText(Json.write(cookies))
        temporary.setReadable(false, false)
        temporary.setReadable(true, true)
        temporary.renameTo(file)
    }

    private fun restoreCookies() {
        val file = cookieFile?.takeIf { it.isFile } ?: return
        val cookies = try {
            Json.parse(file.readText()) as? List<*>
        } catch (e: JsonException) {
            System.err.println("phone: the cookie file $file is not JSON (${e.message}); starting without cookies")
            null
        } ?: return
        if (cookies.isNotEmpty()) cdp.call("Storage.setCookies", mapOf("cookies" to cookies))
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

    private fun createPage(profile: Profile): Page {
        // A window of its own: only a window's newest page is drawn.
        val target = cdp.call("Target.createTarget", mapOf("url" to "about:blank", "newWindow" to true))["targetId"] as String
        val session = cdp.call("Target.attachToTarget", mapOf("targetId" to target, "flatten" to true))["sessionId"] as String
        val page = Page(target, session)
        this.page = page
        setUp(page)
        applyProfile(page, profile)
        // The startup tab and any other page go: the phone has one tab.
        val targets = cdp.call("Target.getTargets")["targetInfos"] as? List<*>
        targets.orEmpty().mapNotNull { it as? Map<*, *> }
            .filter { it["type"] == "page" && it["targetId"] != target && it["attached"] != true }
            .forEach { cdp.send("Target.closeTarget", mapOf("targetId" to it["targetId"])) }
        return page
    }

    /** What every page of ours gets: its events, the bridge, the start script (now and in each document). */
    private fun setUp(page: Page) {
        for (method in listOf("Page.enable", "Network.enable", "Runtime.enable", "Inspector.enable")) page.call(method)
        page.call("Page.setLifecycleEventsEnabled", mapOf("enabled" to true))
        page.call("Runtime.addBinding", mapOf("name" to BINDING))
        page.call("Page.addScriptToEvaluateOnNewDocument", mapOf("source" to START_SCRIPT, "runImmediately" to true))
        page.call("Runtime.evaluate", mapOf("expression" to START_SCRIPT))
    }

    /**
     * Makes [target], a window [opener] just opened, its popup: the page the ops act on from
     * now until it closes (the WebView's onCreateWindow, with the view it hands the page).
     * Not on the connection's reader thread: it waits for answers.
     */
    private fun adoptPopup(opener: Page, target: String) {
        val popup = try {
            synchronized(lock) {
                val session = cdp.call("Target.attachToTarget", mapOf("targetId" to target, "flatten" to true))["sessionId"] as String
                Page(target, session, opener).also {
                    setUp(it)
                    applyProfile(it, profile)
                }
            }
        } catch (e: Exception) {
            null // it closed before it was ours: the page stays where it was
        }
        if (popup != null && !opener.gone && opener.opening == target) {
            opener.popup = popup
            windowChange.set(WindowChange.OPENED)
            // The opener's mark of the popup it asked for has done its part (see one_tab.js).
            runCatching { cdp.send("Runtime.evaluate", mapOf("expression" to "delete window.__nanomusePopupAt"), opener.sessionId) }
        } else if (popup != null) {
            runCatching { cdp.send("Target.closeTarget", mapOf("targetId" to target)) }
        }
        opener.opening = null
    }

    /**
     * [popup] closed (its page's `window.close()`, a back from its first page, its renderer
     * gone): the ops act on its opener again. Popups it opened close with it.
     */
    private fun popupClosed(popup: Page) {
        if (popup.gone) return
        popup.gone = true
        popup.popup?.let { child ->
            runCatching { cdp.send("Target.closeTarget", mapOf("targetId" to child.targetId)) }
            popupClosed(child)
        }
        fail(popup, BrowserException.unavailable("the popup closed"))
        val opener = popup.opener ?: return
        if (opener.popup === popup) opener.popup = null
        // A popup that closed before any settle saw it open changed nothing for the agent.
        windowChange.updateAndGet { if (it == WindowChange.OPENED) null else WindowChange.CLOSED }
    }

    private fun applyProfile(page: Page, profile: Profile) {
        this.profile = profile
        userAgent = profile.userAgent.ifEmpty { defaultUserAgent(profile.mobile) }
        // mobile: false — the WebView's useWideViewPort = false (see the class comment).
        page.call(
            "Emulation.setDeviceMetricsOverride",
            mapOf(
                "width" to profile.width, "height" to profile.height, "deviceScaleFactor" to density,
                "mobile" to false, "screenWidth" to profile.width, "screenHeight" to profile.height,
            ),
        )
        // settings.userAgentString: the string only, navigator.platform stays the phone's.
        page.call("Emulation.setUserAgentOverride", mapOf("userAgent" to userAgent, "platform" to "Linux aarch64"))
        // The phone's touchscreen is there whatever the profile says.
        page.call("Emulation.setTouchEmulationEnabled", mapOf("enabled" to true, "maxTouchPoints" to 5))
    }

    /**
     * The WebView's own user agent for a phone (it says `; wv)`), a desktop one built from its
     * Chrome version: DeviceBrowser.defaultUserAgent.
     */
    private fun defaultUserAgent(mobile: Boolean): String {
        val chrome = chromium.major
        if (mobile) {
            return "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 " +
                "(KHTML, like Gecko) Version/4.0 Chrome/$chrome.0.0.0 Mobile Safari/537.36"
        }
        return "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/$chrome.0.0.0 Safari/537.36"
    }

    private fun closePage(page: Page, why: String) {
        page.gone = true
        fail(page, BrowserException.notFound("$why: open it again"))
        if (this.page === page) this.page = null
        runCatching { cdp.call("Target.closeTarget", mapOf("targetId" to page.targetId)) }
    }

    private fun fail(page: Page, error: BrowserException) {
        page.loads.values.forEach { it.completeExceptionally(error) }
        page.loads.clear()
        page.history?.completeExceptionally(error)
        page.evaluations.failAll(error)
    }

    /** view.url, view.title and the page's loading flag, as the WebView reports them. */
    private fun pageInfo(page: Page): PageInfo {
        // view.url and view.title answer while a document is being replaced; a script in the
        // page may not (its context goes): then the target's own record says.
        val info = try {
            val value = page.call(
                "Runtime.evaluate",
                mapOf("expression" to "({url: location.href, title: document.title})", "returnByValue" to true),
            )
            (value["result"] as? Map<*, *>)?.get("value") as? Map<*, *>
        } catch (e: BrowserException) {
            if (e.code != ErrorCode.FAILED_PRECONDITION) throw e
            cdp.call("Target.getTargetInfo", mapOf("targetId" to page.targetId))["targetInfo"] as? Map<*, *>
        }
        val url = info?.get("url") as? String ?: page.lastUrl ?: "about:blank"
        val profile = profile
        return PageInfo(url, info?.get("title") as? String ?: "", profile.width, profile.height, page.loading)
    }

    private fun readyState(page: Page): String? = try {
        val value = page.call("Runtime.evaluate", mapOf("expression" to "document.readyState", "returnByValue" to true))
        (value["result"] as? Map<*, *>)?.get("value") as? String
    } catch (e: Exception) {
        null
    }

    private class Viewport(val scale: Double, val left: Double, val top: Double)

    /** The visual viewport, read from the page with [Scripts.VIEWPORT] (its dpr is the density). */
    private fun viewport(page: Page): Viewport {
        val reply = page.call(
            "Runtime.evaluate",
            mapOf("expression" to "(${Scripts.VIEWPORT})()", "returnByValue" to true),
        )
        val map = (reply["result"] as? Map<*, *>)?.get("value") as? Map<*, *>
        fun number(name: String, default: Double, positive: Boolean) =
            (map?.get(name) as? Number)?.toDouble()?.takeIf { it.isFinite() && (!positive || it > 0) } ?: default
        return Viewport(number("scale", 1.0, true), number("left", 0.0, false), number("top", 0.0, false))
    }

    /**
     * Runs `(js)(arg)` through [Scripts.evaluate]; the result arrives through the bridge.
     * Returns the bridge's JSON message.
     */
    private fun runScript(page: Page, js: String, argJson: String, timeoutMs: Long, what: String): String {
        val id = UUID.randomUUID().toString()
        val result = page.evaluations.begin(id)
        try {
            val started = try {
                page.call(
                    "Runtime.evaluate",
                    mapOf("expression" to Scripts.evaluate(js, argJson, id), "returnByValue" to true),
                    minOf(timeoutMs, MAIN_TIMEOUT_MS),
                )
            } catch (e: BrowserException) {
                if (e.code != ErrorCode.FAILED_PRECONDITION) throw e
                emptyMap() // its document went meanwhile: as evaluateJavascript's null, below
            }
            // evaluateJavascript hands back null for a script that did not parse or threw.
            val value = (started["result"] as? Map<*, *>)?.get("value")
            if (started["exceptionDetails"] != null || value != id) {
                throw BrowserException.precondition(
                    "the page raised an error: the script did not run (js must be a function expression that parses), or the page was replaced meanwhile",
                )
            }
            page.evaluations.started(id)
            return await(result, timeoutMs) { BrowserException.timeout("$what timed out after $timeoutMs ms") }
        } finally {
            page.evaluations.end(id)
        }
    }

    // ---- events (the connection's reader thread; nothing here waits for an answer) ----

    private fun event(event: CdpConnection.Event) {
        val params = event.params
        if (event.method == "Connection.closed") {
            windows().forEach { it.gone = true; fail(it, BrowserException.unavailable("the phone's browser is gone")) }
            return
        }
        if (event.method == "Target.targetCreated") return windowOpened(params["targetInfo"] as? Map<*, *>)
        if (event.method == "Target.detachedFromTarget") {
            windows().firstOrNull { it.sessionId == params["sessionId"] && it.opener != null }?.let(::popupClosed)
            return
        }
        if (event.method == "Target.targetDestroyed") {
            val target = params["targetId"] as? String
            windows().firstOrNull { it.targetId == target && it.opener != null }?.let(::popupClosed)
            windows().filter { it.opening == target }.forEach { it.opening = null }
            return
        }
        if (event.method == "Browser.downloadWillBegin") return downloadStarted(params)
        val page = windows().firstOrNull { event.sessionId == it.sessionId } ?: return
        val frame = params["frameId"] as? String
        when (event.method) {
            "Runtime.bindingCalled" -> if (params["name"] == BINDING) bridged(page, params["payload"] as? String ?: "")
            // onPageStarted / onPageFinished.
            "Page.frameStartedLoading" -> if (frame == page.targetId) {
                page.loading = true
                page.lastRequestNanos = System.nanoTime()
            }
            "Page.frameStoppedLoading" -> if (frame == page.targetId) page.loading = false
            "Page.lifecycleEvent" -> if (frame == page.targetId && params["name"] == "load") {
                (params["loaderId"] as? String)?.let { loader ->
                    val waiter = page.loads.remove(loader)
                    if (waiter != null) {
                        waiter.complete(Unit)
                    } else {
                        synchronized(page.loaded) {
                            page.loaded += loader
                            if (page.loaded.size > KEPT_LOADS) page.loaded.remove(page.loaded.first())
                        }
                    }
                }
                page.loads.remove(ANY_LOAD)?.complete(Unit)
            }
            "Page.frameNavigated" -> {
                val navigated = params["frame"] as? Map<*, *>
                if (navigated?.get("parentId") == null && navigated?.get("id") == page.targetId) {
                    page.evaluations.documentReplaced()
                    page.lastUrl = navigated["url"] as? String
                    page.history?.complete(Unit)
                }
            }
            "Page.navigatedWithinDocument" -> if (frame == page.targetId) {
                page.lastUrl = params["url"] as? String
                page.history?.complete(Unit)
                // A same-document step is "complete" already: nothing will load.
                page.loads.remove(ANY_LOAD)?.complete(Unit)
            }
            // shouldInterceptRequest: the WebView sees every request start, and nothing else.
            "Network.requestWillBeSent" -> {
                page.lastRequestNanos = System.nanoTime()
                if (params["type"] == "Document" && params["frameId"] == page.targetId) page.lastUrl = (params["request"] as? Map<*, *>)?.get("url") as? String
            }
            "Network.responseReceived" -> if (params["type"] == "Document" && frame == page.targetId) {
                val status = ((params["response"] as? Map<*, *>)?.get("status") as? Number)?.toInt()
                val loader = params["loaderId"] as? String
                if (status != null && loader != null) {
                    // Kept for navigate, which takes its own; those of taps and scripts are dropped in time.
                    if (page.statuses.size > KEPT_LOADS) page.statuses.clear()
                    page.statuses[loader] = status
                }
            }
            // The offscreen WebView's onJsAlert/Confirm/Prompt/BeforeUnload: confirmed, the prompt's
            // default; what it said kept in the page for the next listing.
            "Page.javascriptDialogOpening" -> {
                val answer = params["defaultPrompt"] as? String ?: ""
                cdp.send("Page.handleJavaScriptDialog", mapOf("accept" to true, "promptText" to answer), page.sessionId)
                val kind = params["type"] as? String ?: "alert"
                if (kind != "beforeunload") {
                    val said = Scripts.dialogSaid(kind, params["message"] as? String ?: "", if (kind == "prompt") answer else "OK")
                    cdp.send("Runtime.evaluate", mapOf("expression" to said), page.sessionId)
                }
            }
            "Page.fileChooserOpened" -> page.chooser?.complete(params)
            "Inspector.targetCrashed" -> rendererGone(page)
        }
    }

    private fun bridged(page: Page, data: String) {
        val id = ((try { Json.parse(data) } catch (e: JsonException) { null }) as? Map<*, *>)?.get("id") as? String ?: return
        page.evaluations.answered(id, data)
    }

    /**
     * A window a page of ours opened: its popup when the page can have one (none open, fewer
     * than [MAX_POPUP_DEPTH] deep) and the window can reach it, as a popup the start script let
     * open can; any other is closed, and its URL loaded in the page (a POST is lost).
     */
    private fun windowOpened(info: Map<*, *>?) {
        if (info?.get("type") != "page") return
        val page = windows().firstOrNull { it.targetId == info["openerId"] } ?: return
        val target = info["targetId"] as? String ?: return
        val popup = info["canAccessOpener"] == true && page.depth < MAX_POPUP_DEPTH &&
            page.popup == null && page.opening == null
        if (popup) {
            page.opening = target
            Thread({ adoptPopup(page, target) }, "phone-popup").apply { isDaemon = true }.start()
            return
        }
        val url = info["url"] as? String
        cdp.send("Target.closeTarget", mapOf("targetId" to target))
        if (url != null && (url.startsWith("http://") || url.startsWith("https://"))) {
            cdp.send("Page.navigate", mapOf("url" to url), page.sessionId)
        }
    }

    /** A download a tap or a navigation started (Browser.downloadWillBegin). */
    private fun downloadStarted(params: Map<String, Any?>) {
        val url = params["url"] as? String ?: return
        download(url).exceptionally { e ->
            System.err.println("phone: the download of $url failed: ${(e.cause ?: e).message}")
            null
        }
    }

    /**
     * The phone fetches a download itself with the page's cookies (DeviceBrowser.download:
     * DownloadListener only reports it). Chromium both answers the navigation `isDownload` and
     * sends downloadWillBegin: the one fetch they share is kept for [DOWNLOAD_KEPT_MS].
     */
    private fun download(url: String): CompletableFuture<String> = fetching.computeIfAbsent(url) {
        CompletableFuture.supplyAsync { fetcher.download(url, downloads) }.whenComplete { _, _ ->
            Thread({
                Thread.sleep(DOWNLOAD_KEPT_MS)
                fetching.remove(url)
            }, "phone-download-done").apply { isDaemon = true }.start()
        }
    }

    /** onRenderProcessGone: the page is unusable; a new one loads the last URL (a popup just closes). */
    private fun rendererGone(page: Page) {
        if (page.gone) return
        if (page.opener != null) {
            runCatching { cdp.send("Target.closeTarget", mapOf("targetId" to page.targetId)) }
            return popupClosed(page)
        }
        page.gone = true
        fail(page, BrowserException.unavailable("the page's renderer crashed; the page is being loaded again"))
        val url = page.lastUrl
        Thread({
            synchronized(lock) {
                if (this.page !== page) return@Thread
                runCatching { cdp.call("Target.closeTarget", mapOf("targetId" to page.targetId)) }
                this.page = null
                val fresh = createPage(profile)
                if (url != null && (url.startsWith("http://") || url.startsWith("https://"))) {
                    cdp.send("Page.navigate", mapOf("url" to url), fresh.sessionId)
                }
            }
        }, "phone-renderer-gone").apply { isDaemon = true }.start()
    }

    private fun left(deadline: Long) = (deadline - System.nanoTime()) / 1_000_000

    private fun <T> await(future: CompletableFuture<T>, timeoutMs: Long, timedOut: () -> BrowserException): T =
        try {
            future.get(maxOf(timeoutMs, 1), TimeUnit.MILLISECONDS)
        } catch (e: TimeoutException) {
            throw timedOut()
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        }

    companion object {
        private const val MAIN_TIMEOUT_MS = 10_000L
        private const val EVALUATE_TIMEOUT_MS = 30_000L
        private const val DEFAULT_TIMEOUT_MS = 30_000L
        private const val TAP_MS = 50L
        private const val DOWNLOAD_TIMEOUT_MS = 600_000L
        private const val DOWNLOAD_KEPT_MS = 10_000L
        private const val POLL_MS = 100L
        private const val QUIET_MS = 500L
        private const val ANY_LOAD = ""
        private const val KEPT_LOADS = 32
        /** How many popups deep a page may open one (the worker's: Django's related objects). */
        private const val MAX_POPUP_DEPTH = 3

        /** The binding behind the bridge object ([Scripts.BRIDGE]) the start script makes. */
        private const val BINDING = "__nanomuseBinding"

        /**
         * Run in every document before its own scripts. The bridge: `window.__nanomuse` with
         * `postMessage`, as `addWebMessageListener` puts it in the page. One tab and popups, as
         * the phone's start script has them: links and forms aimed at another window and a
         * plain `window.open` load in this page, a popup opens (see [windowOpened]).
         */
        private val START_SCRIPT = """(() => {
  if (!window.${Scripts.BRIDGE} && typeof window.$BINDING === 'function') {
    const binding = window.$BINDING;
    Object.defineProperty(window, '${Scripts.BRIDGE}', {
      value: Object.freeze({postMessage: (text) => binding(String(text))}), configurable: true,
    });
  }
})();
""" + Scripts.START

        /** What Storage.setCookies takes back of what Storage.getCookies gives. */
        private val COOKIE_FIELDS = listOf(
            "name", "value", "domain", "path", "expires", "httpOnly", "secure", "sameSite", "priority",
            "sourceScheme", "sourcePort",
        )
    }
}
