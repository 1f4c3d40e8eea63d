package nanomuse.device.protocol

/**
 * The messages of the phone protocol (device-gateway/PROTOCOL.md, version 1): one JSON object
 * per WebSocket text frame, told apart by `kind`. Both directions are here, so a test can play
 * the gateway with the same code. Fields a message does not list are ignored when read.
 */
object Protocol {
    const val VERSION = 1
    /** The largest message either side accepts (a screenshot is base64 inside JSON). */
    const val MAX_MESSAGE_BYTES = 32 * 1024 * 1024
    /** Requests that may wait for one phone's answers at once. */
    const val MAX_PENDING = 32
    const val PING_INTERVAL_MS = 15_000L
    const val SILENCE_LIMIT_MS = 45_000L
    const val HELLO_WITHIN_MS = 10_000L

    /** Close codes. */
    const val CLOSE_NORMAL = 1000
    const val CLOSE_GOING_AWAY = 1001
    const val CLOSE_TOO_BIG = 1009
    const val CLOSE_BAD_HELLO = 4000
    const val CLOSE_UNAUTHORIZED = 4001
    const val CLOSE_REPLACED = 4002

    /** The path of the gateway's WebSocket. */
    const val PATH = "/device"

    private val DEVICE_ID = Regex("[A-Za-z0-9._-]{1,64}")

    fun isValidDeviceId(id: String): Boolean = DEVICE_ID.matches(id)
}

/** The error codes of a failed result. */
enum class ErrorCode(val wire: String) {
    INVALID_ARGUMENT("invalid_argument"),
    NOT_FOUND("not_found"),
    TIMEOUT("timeout"),
    UNAVAILABLE("unavailable"),
    FAILED_PRECONDITION("failed_precondition"),
    RESOURCE_EXHAUSTED("resource_exhausted"),
    INTERNAL("internal");

    companion object {
        fun of(wire: String?): ErrorCode = entries.firstOrNull { it.wire == wire } ?: INTERNAL
    }
}

/** A message that is not what the protocol says; the text says what is wrong. */
class ProtocolException(message: String) : Exception(message)

/** W3C trace context carried inside a message. */
data class Trace(val traceparent: String = "", val tracestate: String = "") : JsonWritable {
    override fun toJson(): Map<String, Any?> = buildMap {
        if (traceparent.isNotEmpty()) put("traceparent", traceparent)
        if (tracestate.isNotEmpty()) put("tracestate", tracestate)
    }

    companion object {
        fun read(value: Any?): Trace? {
            val map = value as? Map<*, *> ?: return null
            val parent = map["traceparent"] as? String ?: ""
            val state = map["tracestate"] as? String ?: ""
            return if (parent.isEmpty() && state.isEmpty()) null else Trace(parent, state)
        }
    }
}

sealed class Message : JsonWritable {
    abstract val kind: String

    /** The message as one text frame. */
    fun encode(): String = Json.write(toJson())

    /** The phone's hello. */
    data class Hello(
        val deviceId: String,
        val token: String,
        val browser: Boolean = true,
        val app: String = "",
        val protocol: Int = Protocol.VERSION,
    ) : Message() {
        override val kind get() = "device"
        override fun toJson() = buildMap<String, Any?> {
            put("kind", kind)
            put("device_id", deviceId)
            put("token", token)
            put("browser", browser)
            if (app.isNotEmpty()) put("app", app)
            put("protocol", protocol)
        }

        /** The hello with the token hidden, for logs. */
        override fun toString() =
            "Hello(deviceId=$deviceId, token=…, browser=$browser, app=$app, protocol=$protocol)"
    }

    data class Welcome(
        val deviceId: String,
        val maxMessageBytes: Long = Protocol.MAX_MESSAGE_BYTES.toLong(),
        val pingIntervalMs: Long = Protocol.PING_INTERVAL_MS,
    ) : Message() {
        override val kind get() = "welcome"
        override fun toJson() = mapOf(
            "kind" to kind,
            "device_id" to deviceId,
            "max_message_bytes" to maxMessageBytes,
            "ping_interval_ms" to pingIntervalMs,
        )
    }

    /**
     * One op for the phone. [args] is kept as it came (normally an object); the dispatcher
     * says what is wrong with it.
     */
    data class DeviceRequest(
        val id: String,
        val op: String,
        val browserOp: String,
        val args: Any? = emptyMap<String, Any?>(),
        val timeoutMs: Long = 0,
        val trace: Trace? = null,
    ) : Message() {
        override val kind get() = "device_request"
        override fun toJson() = buildMap<String, Any?> {
            put("kind", kind)
            put("id", id)
            put("op", op)
            put("browser_op", browserOp)
            put("args", args)
            put("timeout_ms", timeoutMs)
            trace?.let { put("trace", it) }
        }
    }

    data class DeviceResult(
        val id: String,
        val ok: Boolean,
        val result: Map<String, Any?>? = null,
        val error: String? = null,
        val code: String? = null,
        val trace: Trace? = null,
    ) : Message() {
        override val kind get() = "device_result"
        override fun toJson() = buildMap<String, Any?> {
            put("kind", kind)
            put("id", id)
            put("ok", ok)
            result?.let { put("result", it) }
            error?.let { put("error", it) }
            code?.let { put("code", it) }
            trace?.let { put("trace", it) }
        }

        companion object {
            fun ok(id: String, result: Map<String, Any?>, trace: Trace? = null) =
                DeviceResult(id, true, result = result, trace = trace)

            fun failed(id: String, error: String, code: ErrorCode, trace: Trace? = null) =
                DeviceResult(id, false, error = error, code = code.wire, trace = trace)
        }
    }

    /** The user took the page (`take_over`) or gave it back (`handed_back`). */
    data class DeviceEvent(
        val event: String,
        val reason: String? = null,
        val trace: Trace? = null,
    ) : Message() {
        override val kind get() = "device_event"
        override fun toJson() = buildMap<String, Any?> {
            put("kind", kind)
            put("event", event)
            reason?.let { put("reason", it) }
            trace?.let { put("trace", it) }
        }

        companion object {
            const val TAKE_OVER = "take_over"
            const val HANDED_BACK = "handed_back"
        }
    }

    /** A hold on the phone's page opened or closed on the server. */
    data class Hold(
        val state: String,
        val holdId: String,
        val reason: String? = null,
    ) : Message() {
        override val kind get() = "hold"
        val open get() = state == OPEN
        override fun toJson() = buildMap<String, Any?> {
            put("kind", kind)
            put("state", state)
            put("hold_id", holdId)
            reason?.let { put("reason", it) }
        }

        companion object {
            const val OPEN = "open"
            const val CLOSED = "closed"
        }
    }

    object Ping : Message() {
        override val kind get() = "ping"
        override fun toJson() = mapOf("kind" to kind)
        override fun toString() = "Ping"
    }

    object Pong : Message() {
        override val kind get() = "pong"
        override fun toJson() = mapOf("kind" to kind)
        override fun toString() = "Pong"
    }

    data class Error(val error: String, val id: String? = null) : Message() {
        override val kind get() = "error"
        override fun toJson() = buildMap<String, Any?> {
            put("kind", kind)
            put("error", error)
            id?.let { put("id", it) }
        }
    }

    companion object {
        /** Reads one message, or says what is wrong with it in a [ProtocolException]. */
        fun parse(text: String): Message {
            val value = try {
                Json.parse(text)
            } catch (e: JsonException) {
                throw ProtocolException("the message is not JSON: ${e.message}")
            }
            val map = value as? Map<*, *> ?: throw ProtocolException("the message is not a JSON object")
            val kind = map["kind"] as? String ?: throw ProtocolException("the message has no \"kind\"")
            @Suppress("UNCHECKED_CAST")
            val f = Fields(map as Map<String, Any?>, "a bad \"$kind\" message")
            return when (kind) {
                "device" -> Hello(
                    deviceId = f.requireString("device_id"),
                    token = f.requireString("token"),
                    browser = f.boolean("browser") ?: false,
                    app = f.string("app") ?: "",
                    protocol = f.long("protocol")?.toInt() ?: Protocol.VERSION,
                )
                "welcome" -> Welcome(
                    deviceId = f.string("device_id") ?: "",
                    maxMessageBytes = f.long("max_message_bytes") ?: Protocol.MAX_MESSAGE_BYTES.toLong(),
                    pingIntervalMs = f.long("ping_interval_ms") ?: Protocol.PING_INTERVAL_MS,
                )
                "device_request" -> DeviceRequest(
                    id = f.requireString("id"),
                    op = f.requireString("op"),
                    browserOp = f.requireString("browser_op"),
                    args = map["args"] ?: emptyMap<String, Any?>(),
                    timeoutMs = f.long("timeout_ms") ?: 0,
                    trace = Trace.read(map["trace"]),
                )
                "device_result" -> DeviceResult(
                    id = f.requireString("id"),
                    ok = f.boolean("ok") ?: throw ProtocolException("a bad \"device_result\" message: missing field `ok`"),
                    result = f.obj("result"),
                    error = f.string("error"),
                    code = f.string("code"),
                    trace = Trace.read(map["trace"]),
                )
                "device_event" -> DeviceEvent(
                    event = f.requireString("event"),
                    reason = f.string("reason"),
                    trace = Trace.read(map["trace"]),
                )
                "hold" -> Hold(
                    state = f.requireString("state"),
                    holdId = f.requireString("hold_id"),
                    reason = f.string("reason"),
                )
                "ping" -> Ping
                "pong" -> Pong
                "error" -> Error(error = f.string("error") ?: "", id = f.string("id"))
                else -> throw ProtocolException("unknown message kind \"$kind\"")
            }
        }
    }
}

/**
 * Typed reads from a JSON object. A field of the wrong type is an error that names it; a
 * missing one (or null) reads as null.
 */
class Fields(val map: Map<String, Any?>, private val what: String) {
    private fun wrong(name: String, kind: String): Nothing =
        throw ProtocolException("$what: $name must be $kind")

    fun has(name: String) = map[name] != null

    fun string(name: String): String? = when (val v = map[name]) {
        null -> null
        is String -> v
        else -> wrong(name, "a string")
    }

    fun requireString(name: String): String =
        string(name) ?: throw ProtocolException("$what: missing field `$name`")

    fun boolean(name: String): Boolean? = when (val v = map[name]) {
        null -> null
        is Boolean -> v
        else -> wrong(name, "true or false")
    }

    fun number(name: String): Double? = when (val v = map[name]) {
        null -> null
        is Number -> v.toDouble()
        else -> wrong(name, "a number")
    }

    /** A whole number; a fraction is refused, a float that is whole (412.0) is taken. */
    fun long(name: String): Long? = when (val v = map[name]) {
        null -> null
        is Long -> v
        is Int -> v.toLong()
        is Double -> if (v == Math.rint(v) && Math.abs(v) < 9.2e18) v.toLong() else wrong(name, "a whole number")
        else -> wrong(name, "a whole number")
    }

    @Suppress("UNCHECKED_CAST")
    fun obj(name: String): Map<String, Any?>? = when (val v = map[name]) {
        null -> null
        is Map<*, *> -> v as Map<String, Any?>
        else -> wrong(name, "an object")
    }

    fun list(name: String): List<Any?>? = when (val v = map[name]) {
        null -> null
        is List<*> -> v
        else -> wrong(name, "a list")
    }
}
