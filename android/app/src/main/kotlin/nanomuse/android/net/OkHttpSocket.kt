package nanomuse.android.net

import nanomuse.device.protocol.Protocol
import nanomuse.device.protocol.Socket
import nanomuse.device.protocol.SocketFactory
import nanomuse.device.protocol.SocketListener
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.Response
import okhttp3.WebSocket
import okhttp3.WebSocketListener
import okio.ByteString
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean

/**
 * [Socket] on OkHttp's WebSocket: Android has no java.net.http and no WebSocket client of its
 * own. OkHttp answers the gateway's pings by itself and, with [pingIntervalMs], pings too and
 * fails a socket whose pong does not come back. Its callbacks arrive on OkHttp's threads; the
 * DeviceClient moves them onto its own loop, and the browser posts to the main Looper before
 * touching the WebView.
 */
class OkHttpSocketFactory(
    pingIntervalMs: Long = 20_000,
    private val client: OkHttpClient = OkHttpClient.Builder()
        .pingInterval(pingIntervalMs, TimeUnit.MILLISECONDS)
        .connectTimeout(15, TimeUnit.SECONDS)
        .readTimeout(0, TimeUnit.MILLISECONDS) // the socket is quiet between ops; pings keep it honest
        .build(),
) : SocketFactory {
    override fun connect(url: String, listener: SocketListener): Socket {
        val socket = OkHttpSocket()
        // OkHttp takes ws:// and wss:// here (as http:// and https://).
        val request = Request.Builder().url(url).header("User-Agent", "nanomuse-android").build()
        socket.ws = client.newWebSocket(request, socket.Events(listener))
        return socket
    }
}

private class OkHttpSocket : Socket {
    /** Set right after newWebSocket returns, before the DeviceClient's loop can send. */
    @Volatile var ws: WebSocket? = null
    private val ended = AtomicBoolean(false)

    override fun send(text: String): Boolean = ws?.send(text) ?: false

    override fun close(code: Int, reason: String) {
        ws?.close(code, reason.take(100)) // a close reason is at most 123 bytes
    }

    override fun cancel() {
        ws?.cancel()
    }

    inner class Events(private val listener: SocketListener) : WebSocketListener() {
        override fun onOpen(webSocket: WebSocket, response: Response) = listener.onOpen(this@OkHttpSocket)

        override fun onMessage(webSocket: WebSocket, text: String) {
            if (!ended.get()) listener.onText(this@OkHttpSocket, text)
        }

        override fun onMessage(webSocket: WebSocket, bytes: ByteString) {
            // The protocol has no binary frames: ignored.
        }

        /** The gateway closes: answer its close, and tell the client now (with its code). */
        override fun onClosing(webSocket: WebSocket, code: Int, reason: String) {
            webSocket.close(Protocol.CLOSE_NORMAL, null) // (OkHttp refuses reserved codes such as 1005)
            if (ended.compareAndSet(false, true)) listener.onClosed(this@OkHttpSocket, code, reason)
        }

        override fun onClosed(webSocket: WebSocket, code: Int, reason: String) {
            if (ended.compareAndSet(false, true)) listener.onClosed(this@OkHttpSocket, code, reason)
        }

        override fun onFailure(webSocket: WebSocket, t: Throwable, response: Response?) {
            if (ended.compareAndSet(false, true)) {
                val status = response?.let { " (HTTP ${it.code})" } ?: ""
                listener.onFailure(this@OkHttpSocket, java.io.IOException("${t.message ?: t::class.java.simpleName}$status", t))
            }
        }
    }
}
