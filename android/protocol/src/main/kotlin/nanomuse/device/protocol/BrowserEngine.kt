package nanomuse.device.protocol

/**
 * The browser a phone lends: the fifteen ops of the protocol, with their arguments already
 * checked and defaulted by [Dispatcher]. Coordinates and sizes are CSS px of the viewport.
 *
 * Calls come from the client's worker threads, several at once; an implementation makes its
 * own threading right (the Android one runs each op on the main thread and waits, bounded).
 * A failure is a [BrowserException] with a code; anything else thrown reads as `internal`.
 */
interface BrowserEngine {
    /** Creates the page (or re-profiles the open one). */
    fun open(profile: Profile): PageInfo

    /** Loads [url] (absolute http(s) or about:blank) and waits for its load, at most [timeoutMs]. */
    fun navigate(url: String, timeoutMs: Long): Navigation

    /** Runs `(js)(arg)` in the page, awaiting a Promise; returns the JSON text of the value. */
    fun evaluate(js: String, argJson: String): String

    /** [count] taps in a row at ([x], [y]), CSS px: 2 is a double tap (the page's `dblclick`). */
    fun tap(x: Double, y: Double, count: Int)

    /** Fills the focused element with [text] through the page's own setter + input/change. */
    fun type(text: String)

    fun key(key: Key)

    fun scroll(dy: Double)

    fun back(): PageInfo

    /**
     * Waits until the page is loaded and quiet, at most [timeoutMs], following the thread into
     * a popup the page opened meanwhile or back to its opener when the popup closed.
     */
    fun settle(timeoutMs: Long): Settled

    /** A JPEG of the viewport in CSS px; [quality] is 1..100. */
    fun screenshot(quality: Int): Screenshot

    /** Where the page is. `user_control` and `host` are filled in by the dispatcher. */
    fun state(): PageInfo

    /** An HTTP request with the browser's cookies for its URL (cookies it sets are kept). */
    fun fetch(request: FetchRequest): FetchResponse

    /** Switches the open page's profile live. */
    fun profile(profile: Profile)

    /** The page goes; cookies stay. */
    fun close()

    /**
     * Taps ([x], [y]) as [tap] does and answers the file chooser the tap opens with [files]
     * (already checked: 1..10 plain names, 10 MiB each, 20 MiB in all); true when the chooser
     * takes several files. No chooser within [UploadFile.CHOOSER_WAIT_MS] is a precondition
     * failure; more than one file for a single-file chooser an invalid argument, nothing set.
     */
    fun upload(x: Double, y: Double, files: List<UploadFile>): Boolean
}

/** A file `upload` gives a page's file chooser. */
class UploadFile(val name: String, val mimeType: String, val content: ByteArray) {
    companion object {
        const val MAX_FILES = 10
        const val MAX_FILE_BYTES = 10 * 1024 * 1024
        const val MAX_TOTAL_BYTES = 20 * 1024 * 1024
        /** How long after the tap a file chooser may take to open (the worker's bound). */
        const val CHOOSER_WAIT_MS = 2_000L

        /** The worker's sentence for a tap that opened no chooser. */
        const val NO_CHOOSER = "the element opened no file chooser within 2 s — upload needs a file input, its label, or a control that opens one"

        fun tooMany(given: Int) = BrowserException.invalid("the file chooser takes one file, and $given were given: upload one")
    }
}

/** A failure with its protocol code and a sentence a person or a model can act on. */
open class BrowserException(val code: ErrorCode, message: String) : Exception(message) {
    companion object {
        fun invalid(message: String) = BrowserException(ErrorCode.INVALID_ARGUMENT, message)
        fun notFound(message: String) = BrowserException(ErrorCode.NOT_FOUND, message)
        fun timeout(message: String) = BrowserException(ErrorCode.TIMEOUT, message)
        fun unavailable(message: String) = BrowserException(ErrorCode.UNAVAILABLE, message)
        fun precondition(message: String) = BrowserException(ErrorCode.FAILED_PRECONDITION, message)
        fun exhausted(message: String) = BrowserException(ErrorCode.RESOURCE_EXHAUSTED, message)
        fun internal(message: String) = BrowserException(ErrorCode.INTERNAL, message)

        /** The message every op but open/close/fetch gives when there is no page. */
        const val NO_PAGE = "no page is open on the phone: open it first"
    }
}

/**
 * How the page presents itself. Sizes are already defaulted (412×915 mobile, 1280×900 desktop);
 * an empty [userAgent] means the browser's own.
 */
data class Profile(val userAgent: String, val width: Int, val height: Int, val mobile: Boolean) {
    companion object {
        const val MOBILE_WIDTH = 412
        const val MOBILE_HEIGHT = 915
        const val DESKTOP_WIDTH = 1280
        const val DESKTOP_HEIGHT = 900
        val SIZES = 100..4096
    }
}

data class PageInfo(
    val url: String,
    val title: String,
    val width: Int,
    val height: Int,
    val loading: Boolean,
) {
    fun toJson(): MutableMap<String, Any?> = linkedMapOf(
        "url" to url, "title" to title, "width" to width, "height" to height, "loading" to loading,
    )
}

/** What a navigation led to: the page, the main document's HTTP status (0: none), a download. */
data class Navigation(val page: PageInfo, val status: Int = 0, val download: String = "")

class Screenshot(val jpeg: ByteArray, val width: Int, val height: Int)

/**
 * What a settle found: whether the page settled within the bound (false: the bound won), and
 * whether the page the ops act on changed windows since the last settle.
 */
data class Settled(val settled: Boolean, val window: WindowChange? = null) {
    fun toJson(): MutableMap<String, Any?> = linkedMapOf<String, Any?>("settled" to settled).also { json ->
        window?.let { json["window"] = it.wire }
    }
}

/**
 * A page's windows, as the worker's: a popup the page opened (`window.open` with a size or a
 * place, asked for by a tap, its opener reachable) is the page the ops act on until it closes;
 * then its opener is again, as it was left.
 */
enum class WindowChange(val wire: String) {
    /** The ops act on a popup the page opened. */
    OPENED("opened"),

    /** The popup the ops acted on closed: they act on its opener again. */
    CLOSED("closed"),
}

data class Header(val name: String, val value: String)

class FetchRequest(
    val url: String,
    /** Upper case; GET when the request said none. */
    val method: String,
    val headers: List<Header>,
    val body: ByteArray,
)

class FetchResponse(
    val status: Int,
    val headers: List<Header>,
    val body: ByteArray,
    /** The final URL after redirects. */
    val url: String,
)
