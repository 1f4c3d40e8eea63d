package nanomuse.device.protocol

import java.net.URI
import java.net.http.HttpClient
import java.net.http.WebSocket
import java.nio.ByteBuffer
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.atomic.AtomicBoolean

/**
 * [Socket] on the JDK's `java.net.http` WebSocket: the client on a desktop JVM and in the
 * tests. Not for Android (which has no java.net.http: there, OkHttpSocket). The JDK answers
 * WebSocket pings with pongs by itself.
 *
 * The JDK allows one send at a time, so sends are chained; a text message arriving in parts is
 * put together, and one above [maxMessageBytes] closes the socket with 1009.
 */
class JdkSocketFactory(
    private val client: HttpClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build(),
    private val maxMessageBytes: Int = Protocol.MAX_MESSAGE_BYTES,
) : SocketFactory {
    override fun connect(url: String, listener: SocketListener): Socket {
        val socket = JdkSocket(listener, maxMessageBytes)
        client.newWebSocketBuilder()
            .connectTimeout(Duration.ofSeconds(10))
            .buildAsync(URI.create(url), socket.jdkListener)
            .whenComplete { _, error -> if (error != null) socket.failed(error.cause ?: error) }
        return socket
    }
}

private class JdkSocket(private val listener: SocketListener, private val maxMessageBytes: Int) : Socket {
    @Volatile private var ws: WebSocket? = null
    private val done = AtomicBoolean(false)
    private val lock = Any()
    private var sends: CompletableFuture<*> = CompletableFuture.completedFuture(null)
    private var closing = false

    /** One event at a time reaches the listener: JDK callbacks may run on different threads. */
    private val events = Any()

    fun failed(error: Throwable) {
        if (done.compareAndSet(false, true)) synchronized(events) { listener.onFailure(this, error) }
    }

    private fun closed(code: Int, reason: String) {
        if (done.compareAndSet(false, true)) synchronized(events) { listener.onClosed(this, code, reason) }
    }

    override fun send(text: String): Boolean = synchronized(lock) {
        val ws = ws ?: return false
        if (closing || done.get() || ws.isOutputClosed) return false
        sends = sends.handle { _, _ -> null }.thenCompose { ws.sendText(text, true) }
            .whenComplete { _, error -> if (error != null) failed(error) }
        true
    }

    override fun close(code: Int, reason: String) {
        synchronized(lock) {
            val ws = ws ?: return cancel()
            if (closing) return
            closing = true
            sends = sends.handle { _, _ -> null }.thenCompose { ws.sendClose(code, reason) }
        }
    }

    override fun cancel() {
        ws?.abort()
        failed(java.io.IOException("cancelled"))
    }

    val jdkListener = object : WebSocket.Listener {
        private val text = StringBuilder()
        private var bytes = 0L

        override fun onOpen(webSocket: WebSocket) {
            ws = webSocket
            synchronized(events) { listener.onOpen(this@JdkSocket) }
            webSocket.request(1)
        }

        override fun onText(webSocket: WebSocket, data: CharSequence, last: Boolean): CompletionStage<*>? {
            text.append(data)
            bytes += DeviceClient.utf8Length(data.toString())
            if (bytes > maxMessageBytes) {
                text.setLength(0)
                bytes = 0
                webSocket.sendClose(Protocol.CLOSE_TOO_BIG, "message too big")
                webSocket.abort()
                closed(Protocol.CLOSE_TOO_BIG, "message too big")
                return null
            }
            if (last) {
                val message = text.toString()
                text.setLength(0)
                bytes = 0
                if (!done.get()) synchronized(events) { listener.onText(this@JdkSocket, message) }
            }
            webSocket.request(1)
            return null
        }

        override fun onBinary(webSocket: WebSocket, data: ByteBuffer, last: Boolean): CompletionStage<*>? {
            // The protocol has no binary frames: ignored.
            webSocket.request(1)
            return null
        }

        override fun onClose(webSocket: WebSocket, statusCode: Int, reason: String): CompletionStage<*>? {
            // The JDK answers the peer's close by itself.
            synchronized(lock) { closing = true }
            closed(statusCode, reason)
            return null
        }

        override fun onError(webSocket: WebSocket, error: Throwable) = failed(error)
    }
}
