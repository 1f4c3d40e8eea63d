package nanomuse.device.protocol

/**
 * A WebSocket as the client needs it: text frames out, text frames and the end in. Shaped like
 * OkHttp's `WebSocket`, so the Android implementation is a thin wrapper; the JVM tests use the
 * JDK's `java.net.http` one (src/jdk). WebSocket pings are answered by the implementation.
 */
interface Socket {
    /** Queues one text frame; false when the socket is closing or closed. */
    fun send(text: String): Boolean

    /** Starts the closing handshake. */
    fun close(code: Int, reason: String)

    /** Drops the connection at once (no handshake). */
    fun cancel()
}

/**
 * What a socket tells its owner. Calls come from the implementation's own threads, one at a
 * time per socket; after [onClosed] or [onFailure] no more come.
 */
interface SocketListener {
    fun onOpen(socket: Socket)
    fun onText(socket: Socket, text: String)
    /** The peer closed (or the implementation did, e.g. 1009 for a message too big). */
    fun onClosed(socket: Socket, code: Int, reason: String)
    fun onFailure(socket: Socket, error: Throwable)
}

/** Opens a WebSocket to [url]; the result comes through [listener]. */
fun interface SocketFactory {
    fun connect(url: String, listener: SocketListener): Socket
}
