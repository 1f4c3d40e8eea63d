package nanomuse.device.protocol

import java.io.ByteArrayOutputStream
import java.io.EOFException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.ServerSocket
import java.net.SocketException
import java.security.MessageDigest
import java.util.Base64
import java.util.concurrent.CompletableFuture
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * A minimal WebSocket server (RFC 6455) on loopback that plays the gateway for the client's
 * tests: the test reads what the phone sent and sends what the gateway would, frame by frame.
 * Text, close, ping and pong frames; fragmented messages are put together; frames from the
 * client must be masked.
 */
class FakeGateway : AutoCloseable {
    private val server = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    val port: Int get() = server.localPort
    val url: String get() = "ws://127.0.0.1:$port${Protocol.PATH}"
    private val accepted = LinkedBlockingQueue<Conn>()
    private val all = mutableListOf<Conn>()

    init {
        Thread({
            while (!server.isClosed) {
                val socket = try {
                    server.accept()
                } catch (e: SocketException) {
                    break
                }
                Thread({
                    try {
                        val conn = Conn(socket)
                        if (conn.handshake()) {
                            synchronized(all) { all += conn }
                            accepted.put(conn)
                            conn.readLoop()
                        }
                    } catch (e: Exception) {
                        socket.close()
                    }
                }, "fake-gateway-conn").apply { isDaemon = true }.start()
            }
        }, "fake-gateway-accept").apply { isDaemon = true }.start()
    }

    /** The next connection a phone opened, or a failure after [timeoutMs]. */
    fun nextConnection(timeoutMs: Long = 5_000): Conn =
        accepted.poll(timeoutMs, TimeUnit.MILLISECONDS) ?: throw AssertionError("no connection within $timeoutMs ms")

    /** A connection that arrives within [timeoutMs], or null. */
    fun pollConnection(timeoutMs: Long): Conn? = accepted.poll(timeoutMs, TimeUnit.MILLISECONDS)

    override fun close() {
        server.close()
        synchronized(all) { all.forEach { it.drop() } }
    }

    class Conn(private val socket: java.net.Socket) {
        private val input: InputStream = socket.getInputStream().buffered()
        private val output: OutputStream = socket.getOutputStream()
        val path = CompletableFuture<String>()
        /** The text messages the phone sent, in order. */
        val texts = LinkedBlockingQueue<String>()
        val pongs = LinkedBlockingQueue<ByteArray>()
        /** The close code the phone sent (or -1 when the TCP connection just ended). */
        val closed = CompletableFuture<Int>()

        fun handshake(): Boolean {
            val lines = mutableListOf<String>()
            while (true) {
                val line = readLine() ?: return false
                if (line.isEmpty()) break
                lines += line
            }
            path.complete(lines.first().split(' ').getOrElse(1) { "" })
            val key = lines.drop(1).map { it.split(':', limit = 2) }
                .firstOrNull { it.size == 2 && it[0].trim().equals("Sec-WebSocket-Key", true) }
                ?.get(1)?.trim() ?: return false
            val accept = Base64.getEncoder().encodeToString(
                MessageDigest.getInstance("SHA-1").digest((key + GUID).toByteArray()),
            )
            val reply = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
                "Sec-WebSocket-Accept: $accept\r\n\r\n"
            synchronized(output) {
                output.write(reply.toByteArray())
                output.flush()
            }
            return true
        }

        private fun readLine(): String? {
            val bytes = ByteArrayOutputStream()
            while (true) {
                val b = input.read()
                if (b < 0) return null
                if (b == '\n'.code) return bytes.toString(Charsets.ISO_8859_1).trimEnd('\r')
                bytes.write(b)
            }
        }

        fun readLoop() {
            val message = ByteArrayOutputStream()
            try {
                while (true) {
                    val b0 = input.read()
                    if (b0 < 0) throw EOFException()
                    val b1 = readByte()
                    val fin = b0 and 0x80 != 0
                    val opcode = b0 and 0x0F
                    val masked = b1 and 0x80 != 0
                    var length = (b1 and 0x7F).toLong()
                    if (length == 126L) length = ((readByte() shl 8) or readByte()).toLong()
                    else if (length == 127L) {
                        length = 0
                        repeat(8) { length = (length shl 8) or readByte().toLong() }
                    }
                    check(masked) { "a client frame must be masked" }
                    val mask = ByteArray(4) { readByte().toByte() }
                    val payload = readFully(length.toInt())
                    for (i in payload.indices) payload[i] = (payload[i].toInt() xor mask[i % 4].toInt()).toByte()
                    when (opcode) {
                        0x0, 0x1 -> {
                            message.write(payload)
                            if (fin) {
                                texts.put(message.toString(Charsets.UTF_8))
                                message.reset()
                            }
                        }
                        0x8 -> {
                            val code = if (payload.size >= 2) ((payload[0].toInt() and 0xFF) shl 8) or (payload[1].toInt() and 0xFF) else 1005
                            closed.complete(code)
                            try {
                                frame(0x8, payload)
                            } catch (e: Exception) {
                            }
                            socket.close()
                            return
                        }
                        0x9 -> frame(0xA, payload)
                        0xA -> pongs.put(payload)
                    }
                }
            } catch (e: Exception) {
                closed.complete(-1)
                socket.close()
            }
        }

        private fun readByte(): Int {
            val b = input.read()
            if (b < 0) throw EOFException()
            return b
        }

        private fun readFully(n: Int): ByteArray {
            val out = ByteArray(n)
            var off = 0
            while (off < n) {
                val got = input.read(out, off, n - off)
                if (got < 0) throw EOFException()
                off += got
            }
            return out
        }

        fun frame(opcode: Int, payload: ByteArray) = synchronized(output) {
            output.write(0x80 or opcode)
            when {
                payload.size < 126 -> output.write(payload.size)
                payload.size < 65536 -> {
                    output.write(126); output.write(payload.size shr 8); output.write(payload.size and 0xFF)
                }
                else -> {
                    output.write(127)
                    for (shift in 56 downTo 0 step 8) output.write(((payload.size.toLong() shr shift) and 0xFF).toInt())
                }
            }
            output.write(payload)
            output.flush()
        }

        fun sendText(text: String) = frame(0x1, text.toByteArray(Charsets.UTF_8))
        fun send(message: Message) = sendText(message.encode())
        fun sendPing(data: ByteArray) = frame(0x9, data)

        /** Sends a close frame with [code] and ends the connection. */
        fun close(code: Int, reason: String) {
            val reasonBytes = reason.toByteArray()
            try {
                frame(0x8, byteArrayOf((code shr 8).toByte(), code.toByte()) + reasonBytes)
            } catch (e: Exception) {
            }
            // Give the client a moment to answer the close, then end the TCP connection.
            Thread.sleep(50)
            socket.close()
        }

        /** Ends the TCP connection with no close frame (a network drop). */
        fun drop() = socket.close()

        /** The next text message from the phone, read as a [Message]. */
        fun next(timeoutMs: Long = 5_000): Message {
            val text = texts.poll(timeoutMs, TimeUnit.MILLISECONDS)
                ?: throw AssertionError("the phone sent nothing within $timeoutMs ms")
            return Message.parse(text)
        }

        inline fun <reified T : Message> expect(timeoutMs: Long = 5_000): T {
            val message = next(timeoutMs)
            return message as? T ?: throw AssertionError("expected a ${T::class.simpleName}, got $message")
        }

        /** Reads the hello and welcomes the phone. */
        fun welcome(maxMessageBytes: Long = Protocol.MAX_MESSAGE_BYTES.toLong()): Message.Hello {
            val hello = expect<Message.Hello>()
            send(Message.Welcome(hello.deviceId, maxMessageBytes, Protocol.PING_INTERVAL_MS))
            return hello
        }
    }

    companion object {
        private const val GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    }
}
