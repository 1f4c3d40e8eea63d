package nanomuse.device.protocol

import java.util.ArrayDeque
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.ScheduledFuture
import java.util.concurrent.ThreadFactory
import java.util.concurrent.ThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random

/**
 * The phone's side of the protocol: connects to the gateway, says hello, waits for the
 * welcome, carries out `device_request`s on the [BrowserEngine] (several at once, at most
 * [Config.maxPending]) and answers each with its `device_result` (the request's trace context
 * echoed), tells the gateway when the user takes the page and gives it back, hands `hold`
 * notices to the [Listener], and reconnects with backoff whenever the socket ends.
 *
 * Not reconnected: a socket closed with 4002 (another connection with the same device id took
 * over: reconnecting would take it back, and the two would fight), and [stop].
 * A 4000 (bad hello) or 4001 (bad token) is retried at the longest backoff: a token fixed on
 * the server is picked up without the user's help.
 *
 * Every state change runs on one thread (the loop); the engine's ops run on a pool. Listener
 * calls come from the loop thread: an Android listener posts to the main thread itself.
 * A client is used once: [start], then [stop].
 */
class DeviceClient(
    private val config: Config,
    engine: BrowserEngine?,
    private val sockets: SocketFactory,
    private val listener: Listener = object : Listener {},
) {
    data class Config(
        /** `ws(s)://<gateway>/device`. */
        val url: String,
        val deviceId: String,
        val token: String,
        val app: String = "nanomuse-android/1.0",
        /** The first retry's delay, doubled at each failure up to [backoffMaxMs]. */
        val backoffInitialMs: Long = 1_000,
        val backoffMaxMs: Long = 60_000,
        /** How long the gateway has to answer the hello. */
        val welcomeTimeoutMs: Long = 10_000,
        /** A `{"kind":"ping"}` is sent when the gateway has said nothing this long (0: never). */
        val pingIntervalMs: Long = 20_000,
        /** The gateway silent this long (not even a pong): the socket is dropped and made anew. */
        val silenceLimitMs: Long = 60_000,
        val maxPending: Int = Protocol.MAX_PENDING,
        val dispatcherDefaults: Dispatcher.Defaults = Dispatcher.Defaults(),
    ) {
        init {
            require(Protocol.isValidDeviceId(deviceId)) {
                "a device id is 1–64 characters of A-Z a-z 0-9 . _ -, not \"$deviceId\""
            }
            require(backoffInitialMs > 0 && backoffMaxMs >= backoffInitialMs) { "bad backoff" }
            require(maxPending in 1..Protocol.MAX_PENDING) { "maxPending is 1..${Protocol.MAX_PENDING}" }
        }

        override fun toString() = "Config(url=$url, deviceId=$deviceId, token=…, app=$app)"
    }

    enum class Status {
        STOPPED, CONNECTING, WAITING_FOR_WELCOME, CONNECTED, WAITING_TO_RETRY,
        /** Another connection with this device id took over; this client stays off. */
        REPLACED,
    }

    /** What the app hears. All calls come from the client's loop thread. */
    interface Listener {
        /** [detail] says why (the close code and reason, the error, the retry delay). */
        fun onStatus(status: Status, detail: String) {}
        fun onWelcome(welcome: Message.Welcome) {}
        /** The server opened a hold (show the sheet with its reason) or closed it (take it down). */
        fun onHold(hold: Message.Hold) {}
        /** The user has (true) or no longer has (false) the page, by whichever side's doing. */
        fun onUserControl(userControl: Boolean, reason: String?) {}
        /** The gateway's `{"kind":"error"}`: it could not use something the phone sent. */
        fun onGatewayError(error: String) {}
        /** The gateway sent something this client cannot read; it was ignored. */
        fun onProtocolError(problem: String) {}
    }

    private val loop = ScheduledThreadPoolExecutor(1, threads("nanomuse-device-loop")).apply {
        // stop() shuts the loop down from inside: timers still waiting are dropped then.
        executeExistingDelayedTasksAfterShutdownPolicy = false
    }
    private val ops = ThreadPoolExecutor(
        config.maxPending, config.maxPending, 30, TimeUnit.SECONDS, LinkedBlockingQueue(),
        threads("nanomuse-device-op"),
    ).apply { allowCoreThreadTimeOut(true) }
    private val pending = AtomicInteger()

    private val hasBrowser = engine != null
    @Volatile private var userControlNow = false
    private val dispatcher = Dispatcher(engine, config.deviceId, { userControlNow }, config.dispatcherDefaults)

    // Loop-thread state.
    private var started = false
    private var stopped = false
    private var connection: Connection? = null
    private var generation = 0
    private var failures = 0
    private var retry: ScheduledFuture<*>? = null
    private var holdId: String? = null
    private val queuedEvents = ArrayDeque<Message.DeviceEvent>()

    @Volatile var status: Status = Status.STOPPED
        private set

    /** Whether the user has the page (the take-over sheet is up). */
    val userControl: Boolean get() = userControlNow

    /** Requests being carried out now. */
    val pendingRequests: Int get() = pending.get()

    fun start() = onLoop {
        check(!started) { "a DeviceClient starts once" }
        started = true
        connect()
    }

    /** Closes the socket (1000) and stops for good. Requests still running are not answered. */
    fun stop() {
        onLoop {
            if (stopped) return@onLoop
            stopped = true
            retry?.cancel(false)
            connection?.let {
                it.end()
                it.socket?.close(Protocol.CLOSE_NORMAL, "the phone stopped lending its browser")
            }
            connection = null
            setStatus(Status.STOPPED, "stopped")
            loop.shutdown()
        }
        ops.shutdownNow()
    }

    /**
     * The user took the page (opened the sheet themselves): the gateway is told `take_over`,
     * now or, while disconnected, after the next welcome. Nothing is sent when the user has the
     * page already (a hold the server opened).
     */
    fun takeOver(reason: String? = null) = onLoop {
        if (userControlNow) return@onLoop
        setUserControl(true, reason)
        sendEvent(Message.DeviceEvent(Message.DeviceEvent.TAKE_OVER, reason?.takeIf { it.isNotBlank() }))
    }

    /** The user tapped Done: the gateway is told `handed_back` (which closes its hold). */
    fun handBack() = onLoop {
        if (!userControlNow) return@onLoop
        holdId = null
        setUserControl(false, null)
        sendEvent(Message.DeviceEvent(Message.DeviceEvent.HANDED_BACK))
    }

    // ---- the connection ----

    /** One socket and what belongs to it; callbacks of an older one are ignored. */
    private inner class Connection(val generation: Int) : SocketListener {
        @Volatile var socket: Socket? = null
        @Volatile var lastHeard = System.nanoTime()
        var welcomed = false
        var maxMessageBytes = Protocol.MAX_MESSAGE_BYTES.toLong()
        private var timers = mutableListOf<ScheduledFuture<*>>()
        @Volatile private var ended = false

        fun current() = !ended && connection === this

        fun end() {
            ended = true
            timers.forEach { it.cancel(false) }
        }

        fun schedule(delayMs: Long, task: () -> Unit) {
            timers += loop.schedule({ if (current()) task() }, delayMs, TimeUnit.MILLISECONDS)
        }

        fun every(periodMs: Long, task: () -> Unit) {
            timers += loop.scheduleWithFixedDelay({ if (current()) task() }, periodMs, periodMs, TimeUnit.MILLISECONDS)
        }

        fun send(message: Message): Boolean = socket?.send(message.encode()) ?: false

        override fun onOpen(socket: Socket) = onLoop {
            this.socket = socket
            if (!current()) return@onLoop
            lastHeard = System.nanoTime()
            send(Message.Hello(config.deviceId, config.token, browser = hasBrowser, app = config.app))
            setStatus(Status.WAITING_FOR_WELCOME, "hello sent")
            schedule(config.welcomeTimeoutMs) {
                if (!welcomed) lost(this, "no welcome within ${config.welcomeTimeoutMs} ms")
            }
        }

        override fun onText(socket: Socket, text: String) {
            lastHeard = System.nanoTime()
            onLoop { if (current()) received(this, text) }
        }

        override fun onClosed(socket: Socket, code: Int, reason: String) = onLoop {
            if (!current()) return@onLoop
            closed(this, code, reason)
        }

        override fun onFailure(socket: Socket, error: Throwable) = onLoop {
            if (!current()) return@onLoop
            lost(this, "the socket failed: ${error.message ?: error::class.java.simpleName}")
        }
    }

    private fun connect() {
        if (stopped) return
        retry = null
        val conn = Connection(++generation)
        connection = conn
        setStatus(Status.CONNECTING, config.url)
        try {
            conn.socket = sockets.connect(config.url, conn)
        } catch (e: Exception) {
            lost(conn, "cannot open ${config.url}: ${e.message}")
            return
        }
        if (config.pingIntervalMs > 0) {
            conn.every(minOf(config.pingIntervalMs, config.silenceLimitMs) / 2 + 1) {
                val silentMs = (System.nanoTime() - conn.lastHeard) / 1_000_000
                when {
                    silentMs >= config.silenceLimitMs -> {
                        conn.socket?.cancel()
                        lost(conn, "the gateway said nothing for $silentMs ms")
                    }
                    silentMs >= config.pingIntervalMs && conn.welcomed -> conn.send(Message.Ping)
                }
            }
        }
    }

    private fun closed(conn: Connection, code: Int, reason: String) {
        val detail = "closed by the gateway ($code${if (reason.isNotEmpty()) " $reason" else ""})"
        when (code) {
            Protocol.CLOSE_REPLACED -> {
                conn.end()
                connection = null
                setStatus(Status.REPLACED, "$detail: another connection of ${config.deviceId} took over")
            }
            Protocol.CLOSE_UNAUTHORIZED, Protocol.CLOSE_BAD_HELLO -> {
                failures = Int.MAX_VALUE / 2 // the longest backoff
                lost(conn, detail)
            }
            else -> lost(conn, detail)
        }
    }

    /**
     * The connection is over: retried after the backoff, which a welcome resets (a link that
     * was good retries at the first delay).
     */
    private fun lost(conn: Connection, detail: String) {
        if (connection !== conn) return
        conn.end()
        conn.socket?.cancel()
        connection = null
        if (stopped) return
        val base = config.backoffInitialMs.toDouble() * Math.pow(2.0, minOf(failures, 30).toDouble())
        val delay = (minOf(base, config.backoffMaxMs.toDouble()) * (0.75 + Random.nextDouble() * 0.25)).toLong()
        failures = minOf(failures + 1, 31)
        setStatus(Status.WAITING_TO_RETRY, "$detail; trying again in $delay ms")
        retry = loop.schedule({ connect() }, delay, TimeUnit.MILLISECONDS)
    }

    private fun received(conn: Connection, text: String) {
        val message = try {
            Message.parse(text)
        } catch (e: ProtocolException) {
            listener.onProtocolError("${e.message}: ${text.take(200)}")
            answerBadRequest(conn, text, e.message ?: "a bad request")
            return
        }
        when (message) {
            is Message.Welcome -> {
                conn.welcomed = true
                if (message.maxMessageBytes > 0) conn.maxMessageBytes = message.maxMessageBytes
                failures = 0
                listener.onWelcome(message)
                setStatus(Status.CONNECTED, "welcomed as ${message.deviceId.ifEmpty { config.deviceId }}")
                while (queuedEvents.isNotEmpty()) conn.send(queuedEvents.removeFirst())
            }
            is Message.DeviceRequest -> request(conn, message)
            is Message.Hold -> hold(message)
            is Message.Ping -> conn.send(Message.Pong)
            is Message.Pong -> {}
            is Message.Error -> listener.onGatewayError(message.error)
            else -> listener.onProtocolError("the gateway sent a \"${message.kind}\" message, which only a phone sends")
        }
    }

    /** A request that could not be read but names its id is answered, so its op fails now. */
    private fun answerBadRequest(conn: Connection, text: String, problem: String) {
        val map = try {
            Json.parse(text) as? Map<*, *>
        } catch (e: JsonException) {
            null
        } ?: return
        val id = map["id"] as? String ?: return
        if (map["kind"] != "device_request") return
        conn.send(
            Message.DeviceResult.failed(id, problem, ErrorCode.INVALID_ARGUMENT, Trace.read(map["trace"])),
        )
    }

    private fun request(conn: Connection, request: Message.DeviceRequest) {
        if (pending.incrementAndGet() > config.maxPending) {
            pending.decrementAndGet()
            conn.send(
                Message.DeviceResult.failed(
                    request.id, "the phone is busy with ${config.maxPending} requests already",
                    ErrorCode.RESOURCE_EXHAUSTED, request.trace,
                ),
            )
            return
        }
        try {
            ops.execute {
                try {
                    answer(conn, dispatcher.dispatch(request))
                } finally {
                    pending.decrementAndGet()
                }
            }
        } catch (e: java.util.concurrent.RejectedExecutionException) {
            pending.decrementAndGet() // stopping
        }
    }

    /** Sends a result on the socket its request came on (a dead socket drops it: the gateway has failed the op already). */
    private fun answer(conn: Connection, result: Message.DeviceResult) {
        var text = result.encode()
        if (utf8Length(text) > conn.maxMessageBytes) {
            text = Message.DeviceResult.failed(
                result.id,
                "the result is larger than the gateway's ${conn.maxMessageBytes} bytes a message",
                ErrorCode.RESOURCE_EXHAUSTED, result.trace,
            ).encode()
        }
        conn.socket?.send(text)
    }

    private fun hold(hold: Message.Hold) {
        if (hold.open) {
            holdId = hold.holdId
            listener.onHold(hold)
            if (!userControlNow) setUserControl(true, hold.reason)
        } else {
            listener.onHold(hold)
            // A close of an older hold than the one the sheet shows leaves the sheet up.
            if (userControlNow && (holdId == null || holdId == hold.holdId)) {
                holdId = null
                setUserControl(false, null)
            }
        }
    }

    private fun sendEvent(event: Message.DeviceEvent) {
        val conn = connection
        if (conn != null && conn.welcomed && conn.send(event)) return
        if (queuedEvents.size >= MAX_QUEUED_EVENTS) queuedEvents.removeFirst()
        queuedEvents.addLast(event)
    }

    private fun setUserControl(value: Boolean, reason: String?) {
        userControlNow = value
        listener.onUserControl(value, reason)
    }

    private fun setStatus(status: Status, detail: String) {
        this.status = status
        listener.onStatus(status, detail)
    }

    private fun onLoop(task: () -> Unit) {
        try {
            loop.execute {
                try {
                    task()
                } catch (e: Exception) {
                    listener.onProtocolError("the client's loop failed: $e")
                }
            }
        } catch (e: java.util.concurrent.RejectedExecutionException) {
            // stopped
        }
    }

    companion object {
        private const val MAX_QUEUED_EVENTS = 16

        private fun threads(name: String): ThreadFactory {
            val count = AtomicInteger()
            return ThreadFactory { r ->
                Thread(r, "$name-${count.incrementAndGet()}").apply { isDaemon = true }
            }
        }

        fun utf8Length(text: String): Long {
            var bytes = 0L
            var i = 0
            while (i < text.length) {
                val c = text[i]
                bytes += when {
                    c.code < 0x80 -> 1
                    c.code < 0x800 -> 2
                    Character.isHighSurrogate(c) && i + 1 < text.length && Character.isLowSurrogate(text[i + 1]) -> { i++; 4 }
                    else -> 3
                }
                i++
            }
            return bytes
        }
    }
}
