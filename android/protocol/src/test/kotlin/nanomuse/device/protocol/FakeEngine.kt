package nanomuse.device.protocol

import java.util.concurrent.CopyOnWriteArrayList

/**
 * A browser that keeps a URL and a title and records every call; a test may replace any op's
 * behaviour through [override] (e.g. to block, or to throw).
 */
class FakeEngine : BrowserEngine {
    val calls = CopyOnWriteArrayList<String>()
    @Volatile var url = "about:blank"
    @Volatile var title = ""
    @Volatile var profile = Profile("", Profile.MOBILE_WIDTH, Profile.MOBILE_HEIGHT, true)
    @Volatile var open = false
    /** op name → what to do instead (its return value is used when the op returns one). */
    val override = java.util.concurrent.ConcurrentHashMap<String, (List<Any?>) -> Any?>()

    @Suppress("UNCHECKED_CAST")
    private fun <T> call(op: String, vararg args: Any?, default: () -> T): T {
        calls += "$op${args.toList()}"
        val replacement = override[op] ?: return default()
        return replacement(args.toList()) as T
    }

    private fun page() = PageInfo(url, title, profile.width, profile.height, false)

    private fun needPage() {
        if (!open) throw BrowserException.notFound(BrowserException.NO_PAGE)
    }

    override fun open(profile: Profile) = call("open", profile) {
        this.profile = profile
        open = true
        page()
    }

    override fun navigate(url: String, timeoutMs: Long) = call("navigate", url, timeoutMs) {
        needPage()
        this.url = url
        title = "Title of $url"
        Navigation(page(), 200, "")
    }

    override fun evaluate(js: String, argJson: String) = call("evaluate", js, argJson) {
        needPage()
        // Enough of a "page" for the tests: the function is echoed with its argument.
        Json.write(mapOf("js" to js, "arg" to Json.parse(argJson)))
    }

    override fun tap(x: Double, y: Double, count: Int) = call("tap", x, y, count) { needPage() }
    override fun type(text: String) = call("type", text) { needPage() }
    override fun key(key: Key) = call("key", key.key) { needPage() }
    override fun scroll(dy: Double) = call("scroll", dy) { needPage() }

    override fun back() = call("back") {
        needPage()
        page()
    }

    override fun settle(timeoutMs: Long) = call("settle", timeoutMs) { Settled(true) }

    override fun screenshot(quality: Int) = call("screenshot", quality) {
        needPage()
        Screenshot(byteArrayOf(0xFF.toByte(), 0xD8.toByte(), 1, 2, 0xFF.toByte(), 0xD9.toByte()), profile.width, profile.height)
    }

    override fun state() = call("state") {
        needPage()
        page()
    }

    override fun fetch(request: FetchRequest) = call("fetch", request.method, request.url, request.headers, String(request.body)) {
        FetchResponse(
            200,
            listOf(Header("content-type", "text/plain"), Header("set-cookie", "a=1")),
            "you sent ${request.body.size} bytes".toByteArray(),
            request.url,
        )
    }

    override fun profile(profile: Profile) = call("profile", profile) {
        needPage()
        this.profile = profile
    }

    override fun close() = call("close") {
        needPage()
        open = false
    }

    override fun upload(x: Double, y: Double, files: List<UploadFile>) =
        call("upload", x, y, files.map { "${it.name}:${String(it.content)}" }) { files.size > 1 }
}
