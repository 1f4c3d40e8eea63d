package nanomuse.device.protocol

import java.io.File
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * The client against the real `device-gateway` binary, when there is one: `DEVICE_GATEWAY_BIN`
 * (run-tests.sh sets it to ../target/debug/device-gateway when that exists). Without it these
 * cases are skipped. Requests through the gateway need its gRPC side, so that check is driven
 * from Rust; here: the hello and welcome, a bad token, a take-over by the same device id,
 * malformed messages, the protocol's ping.
 */
private class RealGateway(binary: File) : AutoCloseable {
    val process: Process = ProcessBuilder(
        binary.path, "--listen", "127.0.0.1:0", "--device-token", "$TOKEN=$TENANT",
    ).redirectErrorStream(true).start()
    private val lines = LinkedBlockingQueue<String>()
    val output = StringBuffer()
    val address: String

    init {
        Thread({
            try {
                process.inputStream.bufferedReader().forEachLine {
                    output.append(it).append('\n')
                    lines.put(it)
                }
            } catch (e: java.io.IOException) {
                // the gateway was stopped
            }
        }, "device-gateway-output").apply { isDaemon = true }.start()
        val deadline = System.nanoTime() + 20_000_000_000L
        var found: String? = null
        while (found == null) {
            val left = (deadline - System.nanoTime()) / 1_000_000
            val line = lines.poll(maxOf(left, 0), TimeUnit.MILLISECONDS)
            if (line == null) {
                close()
                throw AssertionError("device-gateway did not say where it listens within 20 s; it printed:\n$output")
            }
            found = Regex("device-gateway listening on (\\S+)").find(line)?.groupValues?.get(1)
        }
        address = found
    }

    val url get() = "ws://$address${Protocol.PATH}"

    override fun close() {
        process.destroy()
        if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly()
    }

    companion object {
        const val TOKEN = "phone-token-0123456789"
        const val TENANT = "tenant-a"
    }
}

/** A bare socket to the gateway: what it sends, in a queue. */
private class RawSocket(url: String) : SocketListener, AutoCloseable {
    val texts = LinkedBlockingQueue<String>()
    val ends = LinkedBlockingQueue<String>()
    val opened = java.util.concurrent.CompletableFuture<Unit>()
    val socket = JdkSocketFactory().connect(url, this)

    override fun onOpen(socket: Socket) { opened.complete(Unit) }
    override fun onText(socket: Socket, text: String) { texts.put(text) }
    override fun onClosed(socket: Socket, code: Int, reason: String) { ends.put("closed $code $reason") }
    override fun onFailure(socket: Socket, error: Throwable) {
        opened.completeExceptionally(error)
        ends.put("failed $error")
    }

    fun next(): Message = Message.parse(texts.poll(5, TimeUnit.SECONDS) ?: throw AssertionError("the gateway said nothing"))

    fun send(text: String) {
        opened.get(5, TimeUnit.SECONDS)
        check(socket.send(text)) { "the socket is closed" }
    }

    override fun close() = socket.cancel()
}

private fun gatewayBinary(): File {
    val path = System.getenv("DEVICE_GATEWAY_BIN")?.takeIf { it.isNotEmpty() }
        ?: TestKit.skip("no device-gateway binary (build it with cargo build -p nanomuse-device-gateway, or set DEVICE_GATEWAY_BIN)")
    val file = File(path)
    if (!file.canExecute()) TestKit.skip("DEVICE_GATEWAY_BIN=$path is not an executable file")
    return file
}

private fun client(url: String, listener: RecordingListener, deviceId: String = "pixel-real", token: String = RealGateway.TOKEN) =
    DeviceClient(
        DeviceClient.Config(url, deviceId, token, backoffInitialMs = 100, backoffMaxMs = 2_000),
        FakeEngine(), JdkSocketFactory(), listener,
    )

fun realGatewayTests() {
    test("real gateway: hello and welcome; the protocol's ping") {
        RealGateway(gatewayBinary()).use { gateway ->
            val welcomes = LinkedBlockingQueue<Message.Welcome>()
            val listener = object : DeviceClient.Listener {
                override fun onWelcome(welcome: Message.Welcome) { welcomes.put(welcome) }
            }
            val phone = DeviceClient(
                DeviceClient.Config(gateway.url, "pixel-real", RealGateway.TOKEN), FakeEngine(), JdkSocketFactory(), listener,
            )
            phone.start()
            val welcome = welcomes.poll(10, TimeUnit.SECONDS) ?: throw AssertionError("no welcome; the gateway printed:\n${gateway.output}")
            assertEquals("pixel-real", welcome.deviceId)
            assertEquals(Protocol.MAX_MESSAGE_BYTES.toLong(), welcome.maxMessageBytes)
            assertEquals(Protocol.PING_INTERVAL_MS, welcome.pingIntervalMs)
            eventually(what = "the client connected") { phone.status == DeviceClient.Status.CONNECTED }
            phone.stop()

            RawSocket(gateway.url).use { raw ->
                raw.send(Message.Hello("pixel-raw", RealGateway.TOKEN, true, "test").encode())
                check(raw.next() is Message.Welcome) { "no welcome for a raw hello" }
                raw.send("""{"kind":"ping"}""")
                assertEquals(Message.Pong, raw.next())
            }
        }
    }

    test("real gateway: a bad token is refused with 4001 and retried") {
        RealGateway(gatewayBinary()).use { gateway ->
            val listener = RecordingListener()
            val phone = client(gateway.url, listener, token = "not-the-token-at-all")
            phone.start()
            listener.awaitEvent("gateway error", 10_000)
            assertContains(listener.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY, 10_000), "4001")
            phone.stop()
        }
    }

    test("real gateway: a second connection with the same device id takes over (4002); the first stays off") {
        RealGateway(gatewayBinary()).use { gateway ->
            val first = RecordingListener()
            val a = client(gateway.url, first)
            a.start()
            first.awaitStatus(DeviceClient.Status.CONNECTED, 10_000)
            val second = RecordingListener()
            val b = client(gateway.url, second)
            b.start()
            second.awaitStatus(DeviceClient.Status.CONNECTED, 10_000)
            assertContains(first.awaitStatus(DeviceClient.Status.REPLACED, 10_000), "4002")
            Thread.sleep(500)
            assertEquals(DeviceClient.Status.CONNECTED, b.status)
            a.stop()
            b.stop()
        }
    }

    test("real gateway: malformed messages are answered with an error and the connection stays") {
        RealGateway(gatewayBinary()).use { gateway ->
            RawSocket(gateway.url).use { raw ->
                raw.send(Message.Hello("pixel-raw", RealGateway.TOKEN, true).encode())
                check(raw.next() is Message.Welcome) { "no welcome" }
                for (bad in listOf("{nope", """{"kind":"fly"}""", """{"kind":"device_result","id":"404","ok":true,"result":{}}""")) {
                    raw.send(bad)
                    val answer = raw.next()
                    check(answer is Message.Error) { "the gateway answered <$bad> with $answer" }
                }
                raw.send("""{"kind":"ping"}""")
                assertEquals(Message.Pong, raw.next())
                check(raw.ends.isEmpty()) { "the connection ended: ${raw.ends}" }
            }
        }
    }
}
