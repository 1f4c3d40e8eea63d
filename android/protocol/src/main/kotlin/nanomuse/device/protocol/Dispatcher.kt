package nanomuse.device.protocol

import java.util.Base64

/**
 * Maps one `device_request` to the [BrowserEngine] and builds its `device_result`: the
 * arguments are checked the way the gateway's `ops.rs` and the worker check them (a missing or
 * mistyped field, a bad URL, a quality out of range → `invalid_argument` naming it), defaults
 * are filled in, and any failure becomes `ok: false` with an `error` sentence and a `code`.
 * [dispatch] never throws.
 *
 * [host] is the device id `state` reports; [userControl] says whether the user has the page in
 * the take-over sheet right now.
 */
class Dispatcher(
    private val engine: BrowserEngine?,
    private val host: String,
    private val userControl: () -> Boolean = { false },
    private val defaults: Defaults = Defaults(),
) {
    /** The bounds used when a request gives none (the worker's defaults). */
    data class Defaults(
        val timeoutMs: Long = 30_000,
        val jpegQuality: Int = 70,
        /** The longest settle anyone may ask for. */
        val maxSettleMs: Long = 60_000,
        /** The longest navigation anyone may ask for. */
        val maxNavigateMs: Long = 600_000,
    )

    fun dispatch(request: Message.DeviceRequest): Message.DeviceResult {
        val id = request.id
        val trace = request.trace
        return try {
            if (request.op != "browser") {
                throw BrowserException.invalid(
                    "this phone does not carry out ${Json.quote(request.op)} ops; it takes \"browser\" ops",
                )
            }
            val engine = engine ?: throw BrowserException.unavailable("this phone does not lend its browser")
            val args = request.args as? Map<*, *>
                ?: throw BrowserException.invalid("${request.browserOp}'s args must be a JSON object")
            @Suppress("UNCHECKED_CAST")
            val result = run(engine, request.browserOp, Fields(args as Map<String, Any?>, request.browserOp))
            Message.DeviceResult.ok(id, result, trace)
        } catch (e: BrowserException) {
            Message.DeviceResult.failed(id, e.message ?: e.code.wire, e.code, trace)
        } catch (e: ProtocolException) {
            Message.DeviceResult.failed(id, e.message ?: "bad arguments", ErrorCode.INVALID_ARGUMENT, trace)
        } catch (e: InterruptedException) {
            Thread.currentThread().interrupt()
            Message.DeviceResult.failed(id, "the phone stopped the op (the app is closing)", ErrorCode.UNAVAILABLE, trace)
        } catch (e: OutOfMemoryError) {
            Message.DeviceResult.failed(id, "the phone ran out of memory for ${request.browserOp}", ErrorCode.RESOURCE_EXHAUSTED, trace)
        } catch (e: Exception) {
            val what = e.message?.let { ": $it" } ?: ""
            Message.DeviceResult.failed(
                id, "the phone's browser failed in ${request.browserOp}: ${e::class.java.simpleName}$what",
                ErrorCode.INTERNAL, trace,
            )
        }
    }

    private fun run(engine: BrowserEngine, op: String, args: Fields): Map<String, Any?> = when (op) {
        "open" -> engine.open(profile(args)).toJson()
        "navigate" -> {
            val url = checkedUrl(args.needString("navigate", "url"))
            val timeout = bound(args.nonNegative("timeout_ms"), defaults.timeoutMs, defaults.maxNavigateMs)
            val navigation = engine.navigate(url, timeout)
            navigation.page.toJson().apply {
                put("status", navigation.status)
                put("download", navigation.download)
            }
        }
        "evaluate" -> {
            val js = args.needString("evaluate", "js")
            if (js.isBlank()) throw BrowserException.invalid("evaluate needs a function in js")
            val argJson = Json.write(args.map["arg"])
            if (js.length + argJson.length > MAX_SCRIPT_CHARS) {
                throw BrowserException.invalid("the script and its argument exceed $MAX_SCRIPT_CHARS characters")
            }
            val value = engine.evaluate(js, argJson)
            try {
                Json.parse(value)
            } catch (e: JsonException) {
                throw BrowserException.internal("evaluate's value came back as no JSON (${e.message})")
            }
            linkedMapOf("value" to value, "encoded" to "json")
        }
        "tap" -> {
            val x = args.needNumber("tap", "x")
            val y = args.needNumber("tap", "y")
            if (!x.isFinite() || !y.isFinite() || x < 0 || y < 0) {
                throw BrowserException.invalid("($x, $y) is outside the viewport")
            }
            val count = args.nonNegative("count") ?: 1
            if (count > MAX_TAPS) throw BrowserException.invalid("a tap is repeated at most $MAX_TAPS times in a row, not $count")
            engine.tap(x, y, count.coerceAtLeast(1).toInt())
            linkedMapOf()
        }
        "type" -> {
            val text = args.needString("type", "text")
            if (text.codePointCount(0, text.length) > MAX_TEXT_CHARS) {
                throw BrowserException.invalid("the text is longer than $MAX_TEXT_CHARS characters")
            }
            engine.type(text)
            linkedMapOf()
        }
        "key" -> {
            val key = Key.parse(args.needString("key", "key"))
            engine.key(key)
            linkedMapOf("pressed" to key.name)
        }
        "scroll" -> {
            val dy = args.needNumber("scroll", "dy")
            if (!dy.isFinite() || Math.abs(dy) > MAX_SCROLL_PX) {
                throw BrowserException.invalid("scroll by $dy px is out of range: use -$MAX_SCROLL_PX..=$MAX_SCROLL_PX")
            }
            engine.scroll(dy)
            linkedMapOf()
        }
        "back" -> engine.back().toJson()
        "settle" -> {
            val timeout = bound(args.nonNegative("timeout_ms"), defaults.timeoutMs, defaults.maxSettleMs)
            engine.settle(timeout).toJson()
        }
        "screenshot" -> {
            val quality = when (val q = args.nonNegative("quality") ?: 0L) {
                0L -> defaults.jpegQuality
                in 1L..100L -> q.toInt()
                else -> throw BrowserException.invalid("JPEG quality $q is out of range: use 1..=100")
            }
            val shot = engine.screenshot(quality)
            if (shot.jpeg.size < 2 || shot.jpeg[0] != 0xFF.toByte() || shot.jpeg[1] != 0xD8.toByte()) {
                throw BrowserException.internal("the phone's screenshot is not a JPEG")
            }
            linkedMapOf(
                "jpeg" to Base64.getEncoder().encodeToString(shot.jpeg),
                "width" to shot.width,
                "height" to shot.height,
            )
        }
        "state" -> engine.state().toJson().apply {
            put("user_control", userControl())
            put("host", host)
        }
        "fetch" -> {
            val response = engine.fetch(fetchRequest(args))
            linkedMapOf(
                "status" to response.status,
                "headers" to response.headers.map { linkedMapOf("name" to it.name, "value" to it.value) },
                "body" to Base64.getEncoder().encodeToString(response.body),
                "url" to response.url,
            )
        }
        "profile" -> {
            engine.profile(profile(args))
            linkedMapOf()
        }
        "close" -> {
            engine.close()
            linkedMapOf()
        }
        "upload" -> {
            val x = args.needNumber("upload", "x")
            val y = args.needNumber("upload", "y")
            if (!x.isFinite() || !y.isFinite() || x < 0 || y < 0) {
                throw BrowserException.invalid("($x, $y) is outside the viewport")
            }
            linkedMapOf("multiple" to engine.upload(x, y, uploadFiles(args)))
        }
        else -> throw BrowserException.invalid(
            "unknown browser op ${Json.quote(op)}; the ops are ${OPS.joinToString(", ")}",
        )
    }

    private fun bound(asked: Long?, default: Long, max: Long): Long =
        if (asked == null || asked == 0L) minOf(default, max) else minOf(asked, max)

    private fun profile(args: Fields): Profile {
        val userAgent = args.string("user_agent") ?: ""
        if (userAgent.length > 1024 || userAgent.contains('\r') || userAgent.contains('\n')) {
            throw BrowserException.invalid("the user agent must be one line of at most 1024 characters")
        }
        val mobile = args.boolean("mobile") ?: false
        fun size(name: String, default: Int): Int {
            val asked = args.nonNegative(name) ?: 0L
            val size = if (asked == 0L) default.toLong() else asked
            if (size !in Profile.SIZES.first..Profile.SIZES.last) {
                throw BrowserException.invalid(
                    "$name $size is out of range: a viewport is ${Profile.SIZES.first}..=${Profile.SIZES.last} CSS px (0 picks the profile's default)",
                )
            }
            return size.toInt()
        }
        return Profile(
            userAgent = userAgent,
            width = size("width", if (mobile) Profile.MOBILE_WIDTH else Profile.DESKTOP_WIDTH),
            height = size("height", if (mobile) Profile.MOBILE_HEIGHT else Profile.DESKTOP_HEIGHT),
            mobile = mobile,
        )
    }

    private fun fetchRequest(args: Fields): FetchRequest {
        val url = checkedUrl(args.needString("fetch", "url"))
        if (!url.startsWith("http", ignoreCase = true)) throw BrowserException.invalid("fetch takes an http or https URL")
        val method = (args.string("method") ?: "").ifEmpty { "GET" }
        if (!METHOD.matches(method)) throw BrowserException.invalid("${Json.quote(method)} is not an HTTP method")
        val headers = (args.list("headers") ?: emptyList()).mapIndexed { i, item ->
            val header = item as? Map<*, *> ?: throw BrowserException.invalid("fetch's headers[$i] must be {name, value}")
            val name = header["name"] as? String ?: throw BrowserException.invalid("fetch's headers[$i].name must be a string")
            val value = header["value"] as? String ?: ""
            if (!HEADER_NAME.matches(name) || value.contains('\r') || value.contains('\n')) {
                throw BrowserException.invalid("fetch's header ${Json.quote(name)} is not a valid HTTP header")
            }
            Header(name, value)
        }.filterNot { it.name.equals("cookie", ignoreCase = true) } // the browser's cookies are sent
        val body = try {
            Base64.getDecoder().decode(args.string("body") ?: "")
        } catch (e: IllegalArgumentException) {
            throw BrowserException.invalid("body is not base64: ${e.message}")
        }
        return FetchRequest(url, method.uppercase(), headers, body)
    }

    /** An upload's files, checked as the worker checks them (`proto/src/upload.rs`). */
    private fun uploadFiles(args: Fields): List<UploadFile> {
        val items = args.list("files") ?: throw BrowserException.invalid("upload needs files (a list)")
        if (items.isEmpty()) throw BrowserException.invalid("upload needs at least one file")
        if (items.size > UploadFile.MAX_FILES) {
            throw BrowserException.invalid("${items.size} files is too many for one upload: at most ${UploadFile.MAX_FILES}")
        }
        var total = 0L
        return items.mapIndexed { i, item ->
            val file = item as? Map<*, *> ?: throw BrowserException.invalid("upload's files[$i] must be {name, mime_type, content}")
            val name = file["name"] as? String ?: throw BrowserException.invalid("upload's files[$i].name must be a string")
            val why = when {
                name.isEmpty() -> "it is empty"
                name.contains('/') || name.contains('\\') -> "a name has no path (no / or \\)"
                name.any { it.isISOControl() } -> "it holds a control character"
                name.startsWith('.') -> "it starts with a dot"
                name.toByteArray().size > 255 -> "it is longer than 255 bytes"
                else -> null
            }
            if (why != null) throw BrowserException.invalid("${Json.quote(name)} cannot be an uploaded file's name: $why")
            val content = try {
                Base64.getDecoder().decode(file["content"] as? String ?: "")
            } catch (e: IllegalArgumentException) {
                throw BrowserException.invalid("upload's files[$i].content is not base64: ${e.message}")
            }
            if (content.size > UploadFile.MAX_FILE_BYTES) {
                throw BrowserException.exhausted("${Json.quote(name)} is more than an upload takes per file (10 MiB)")
            }
            total += content.size
            if (total > UploadFile.MAX_TOTAL_BYTES) {
                throw BrowserException.exhausted("the files come to more than one upload takes (20 MiB)")
            }
            UploadFile(name, file["mime_type"] as? String ?: "", content)
        }
    }

    companion object {
        /** The protocol's names of the fifteen ops: the spec's fourteen, and upload. */
        val OPS = listOf(
            "open", "navigate", "evaluate", "tap", "type", "key", "scroll", "back", "settle",
            "screenshot", "state", "fetch", "profile", "close", "upload",
        )
        const val MAX_SCRIPT_CHARS = 1024 * 1024
        const val MAX_TEXT_CHARS = 100_000
        const val MAX_SCROLL_PX = 100_000.0
        /** The most taps in a row (a triple-click), as the worker. */
        const val MAX_TAPS = 3L

        private val METHOD = Regex("[A-Za-z]{1,16}")
        private val HEADER_NAME = Regex("[!#$%&'*+.^_`|~0-9A-Za-z-]+")
        private val HTTP_URL = Regex("(?i)https?://[^\\s/?#]+(?:[/?#][^\r\n]*)?")

        /** A URL the browser may be sent to: absolute http(s), or about:blank. */
        fun checkedUrl(raw: String): String {
            val url = raw.trim()
            if (url == "about:blank") return url
            if (HTTP_URL.matches(url)) return url
            val scheme = Regex("^([A-Za-z][A-Za-z0-9+.-]*):").find(url)?.groupValues?.get(1)
            if (scheme != null && !scheme.equals("http", true) && !scheme.equals("https", true)) {
                throw BrowserException.invalid("$scheme: URLs are not allowed; only http and https")
            }
            throw BrowserException.invalid(
                "${Json.quote(url)} is not an absolute URL; give one like https://example.com/",
            )
        }
    }
}

/** A field the op cannot do without (the gateway's `needed`): "navigate needs url (a string)". */
private fun Fields.needString(op: String, name: String): String =
    map[name] as? String ?: throw BrowserException.invalid("$op needs $name (a string)")

private fun Fields.needNumber(op: String, name: String): Double =
    (map[name] as? Number)?.toDouble() ?: throw BrowserException.invalid("$op needs $name (a number)")

/** A whole number ≥ 0, or null when absent. */
private fun Fields.nonNegative(name: String): Long? {
    val value = long(name) ?: return null
    if (value < 0) throw BrowserException.invalid("$name must not be negative")
    return value
}
