package nanomuse.device.protocol

import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/** A client with a fake engine over the JDK's WebSocket, against [FakeGateway]. */
private class Rig(
    configure: (DeviceClient.Config) -> DeviceClient.Config = { it },
    val engine: FakeEngine = FakeEngine(),
) : AutoCloseable {
    val gateway = FakeGateway()
    val listener = RecordingListener()
    val config = configure(
        DeviceClient.Config(
            url = gateway.url, deviceId = "pixel-test", token = "token-0123456789abcdef",
            backoffInitialMs = 50, backoffMaxMs = 400, welcomeTimeoutMs = 2_000,
        ),
    )
    val client = DeviceClient(config, engine, JdkSocketFactory(), listener)

    /** Starts the client and welcomes its first connection. */
    fun connected(): FakeGateway.Conn {
        client.start()
        val conn = gateway.nextConnection()
        conn.welcome()
        listener.awaitStatus(DeviceClient.Status.CONNECTED)
        return conn
    }

    override fun close() {
        client.stop()
        gateway.close()
    }
}

private fun FakeGateway.Conn.call(id: String, op: String, args: Any?, trace: Trace? = null): Message.DeviceResult {
    send(Message.DeviceRequest(id, "browser", op, args, 30_000, trace))
    val result = expect<Message.DeviceResult>()
    assertEquals(id, result.id, "result id")
    return result
}

fun clientTests() {
    test("client: hello, welcome, a request answered with its trace echoed") {
        Rig().use { rig ->
            rig.client.start()
            val conn = rig.gateway.nextConnection()
            assertEquals("/device", conn.path.get(2, TimeUnit.SECONDS))
            val hello = conn.expect<Message.Hello>()
            assertEquals(Message.Hello("pixel-test", "token-0123456789abcdef", true, "nanomuse-android/1.0", 1), hello)
            conn.send(Message.Welcome("pixel-test", Protocol.MAX_MESSAGE_BYTES.toLong(), 15_000))
            rig.listener.awaitStatus(DeviceClient.Status.CONNECTED)
            assertEquals(1, rig.listener.welcomes)
            val trace = Trace("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=1")
            val opened = conn.call("1", "open", mapOf("user_agent" to "", "width" to 412L, "height" to 915L, "mobile" to true), trace)
            check(opened.ok) { "open failed: ${opened.error}" }
            assertEquals(trace, opened.trace)
            val nav = conn.call("2", "navigate", mapOf("url" to "https://example.com/"))
            assertEquals("https://example.com/", nav.result!!["url"])
            assertEquals(null, nav.trace)
        }
    }

    test("client: an unknown op and bad args are answered ok:false, and the client goes on") {
        Rig().use { rig ->
            val conn = rig.connected()
            val unknown = conn.call("u1", "fly", emptyMap<String, Any?>())
            check(!unknown.ok) { "fly succeeded" }
            assertEquals("invalid_argument", unknown.code)
            assertContains(unknown.error, "unknown browser op \"fly\"")
            val bad = conn.call("u2", "tap", mapOf("x" to 1L))
            assertEquals("invalid_argument", bad.code)
            assertContains(bad.error, "tap needs y (a number)")
            check(conn.call("u3", "open", mapOf("mobile" to true)).ok) { "open failed after errors" }
        }
    }

    test("client: malformed messages from the gateway do not crash it") {
        Rig().use { rig ->
            val conn = rig.connected()
            conn.sendText("{nope")
            conn.sendText("[1,2]")
            conn.sendText("""{"kind":"fly"}""")
            conn.sendText("""{"kind":"device_request"}""")
            conn.sendText("""{"kind":"hold","state":"open"}""")
            conn.sendText("\u0000\uFFFF")
            conn.frame(0x2, byteArrayOf(1, 2, 3)) // a binary frame
            // A request that names its id but cannot be read is answered, so its op fails now.
            conn.sendText("""{"kind":"device_request","id":"m1","op":"browser","trace":{"traceparent":"00-x-y-01"}}""")
            val answered = conn.expect<Message.DeviceResult>()
            assertEquals("m1", answered.id)
            assertEquals("invalid_argument", answered.code)
            assertContains(answered.error, "browser_op")
            assertEquals(Trace("00-x-y-01"), answered.trace)
            rig.listener.awaitEvent("protocol error the message is not JSON")
            assertEquals(DeviceClient.Status.CONNECTED, rig.client.status)
            check(conn.call("ok", "open", mapOf("mobile" to true)).ok) { "the client stopped answering" }
        }
    }

    test("client: requests run concurrently and results come back as they finish") {
        val engine = FakeEngine()
        val release = CountDownLatch(1)
        engine.override["evaluate"] = { args ->
            if ((args[0] as String).contains("slow")) release.await(10, TimeUnit.SECONDS)
            "\"${args[0]}\""
        }
        Rig(engine = engine).use { rig ->
            val conn = rig.connected()
            conn.send(Message.DeviceRequest("slow", "browser", "evaluate", mapOf("js" to "slow"), 30_000))
            conn.send(Message.DeviceRequest("fast", "browser", "evaluate", mapOf("js" to "fast"), 30_000))
            assertEquals("fast", conn.expect<Message.DeviceResult>().id)
            eventually(what = "one request pending") { rig.client.pendingRequests == 1 }
            release.countDown()
            val slow = conn.expect<Message.DeviceResult>()
            assertEquals("slow", slow.id)
            assertEquals("\"slow\"", slow.result!!["value"])
        }
    }

    test("client: more than maxPending requests at once are refused with resource_exhausted") {
        val engine = FakeEngine()
        val release = CountDownLatch(1)
        engine.override["settle"] = { release.await(10, TimeUnit.SECONDS); Settled(true) }
        Rig({ it.copy(maxPending = 2) }, engine).use { rig ->
            val conn = rig.connected()
            for (id in listOf("a", "b", "c")) conn.send(Message.DeviceRequest(id, "browser", "settle", emptyMap<String, Any?>(), 30_000))
            val refused = conn.expect<Message.DeviceResult>()
            assertEquals("c", refused.id)
            assertEquals("resource_exhausted", refused.code)
            release.countDown()
            val rest = setOf(conn.expect<Message.DeviceResult>().id, conn.expect<Message.DeviceResult>().id)
            assertEquals(setOf("a", "b"), rest)
        }
    }

    test("client: pings are answered, both the protocol's and WebSocket's") {
        Rig().use { rig ->
            val conn = rig.connected()
            conn.send(Message.Ping)
            assertEquals(Message.Pong, conn.next())
            conn.sendPing("are you there".toByteArray())
            val pong = conn.pongs.poll(5, TimeUnit.SECONDS) ?: throw AssertionError("no pong frame")
            assertEquals("are you there", String(pong))
        }
    }

    test("client: a silent gateway is pinged, then dropped and connected again") {
        Rig({ it.copy(pingIntervalMs = 100, silenceLimitMs = 400) }).use { rig ->
            val conn = rig.connected()
            assertEquals(Message.Ping, conn.next(2_000))
            rig.listener.awaitEvent("status WAITING_TO_RETRY the gateway said nothing", 3_000)
            val again = rig.gateway.nextConnection()
            again.welcome()
            rig.listener.awaitStatus(DeviceClient.Status.CONNECTED)
        }
    }

    test("client: reconnects after the gateway drops the socket or closes it, and answers there") {
        // A drop shows as the socket's end, or failing that (once in many runs the JDK's
        // WebSocket did not report it) as the next ping's failed write: pinging every 5 s
        // keeps that within the 20 s this waits, where the default 20 s would not.
        Rig({ it.copy(pingIntervalMs = 5_000) }).use { rig ->
            val first = rig.connected()
            first.drop()
            rig.listener.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY)
            val second = rig.gateway.nextConnection()
            assertEquals("pixel-test", second.welcome().deviceId)
            rig.listener.awaitStatus(DeviceClient.Status.CONNECTED)
            check(second.call("r1", "open", mapOf("mobile" to true)).ok) { "no answer after the reconnect" }
            second.close(1001, "going away")
            assertContains(rig.listener.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY), "1001")
            val third = rig.gateway.nextConnection()
            third.welcome()
            check(third.call("r2", "state", emptyMap<String, Any?>()).ok) { "no answer after the second reconnect" }
            assertEquals(3, rig.listener.welcomes)
        }
    }

    test("client: the gateway not answering the hello, or not there at all, is retried") {
        Rig({ it.copy(welcomeTimeoutMs = 300) }).use { rig ->
            rig.client.start()
            val mute = rig.gateway.nextConnection()
            mute.expect<Message.Hello>()
            assertContains(rig.listener.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY), "no welcome within 300 ms")
            rig.gateway.nextConnection().welcome()
            rig.listener.awaitStatus(DeviceClient.Status.CONNECTED)
        }
        val nowhere = RecordingListener()
        val port = java.net.ServerSocket(0).use { it.localPort }
        val client = DeviceClient(
            DeviceClient.Config("ws://127.0.0.1:$port/device", "p", "token-0123456789abcdef", backoffInitialMs = 50, backoffMaxMs = 100),
            FakeEngine(), JdkSocketFactory(), nowhere,
        )
        client.start()
        nowhere.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY)
        nowhere.awaitStatus(DeviceClient.Status.CONNECTING)
        nowhere.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY)
        client.stop()
        nowhere.awaitStatus(DeviceClient.Status.STOPPED)
    }

    test("client: replaced by another connection (4002) it stays off; a bad token (4001) is retried at the longest backoff") {
        Rig().use { rig ->
            val conn = rig.connected()
            conn.close(Protocol.CLOSE_REPLACED, "replaced by a new connection")
            assertContains(rig.listener.awaitStatus(DeviceClient.Status.REPLACED), "4002")
            check(rig.gateway.pollConnection(600) == null) { "a replaced phone connected again" }
        }
        Rig({ it.copy(backoffInitialMs = 20, backoffMaxMs = 500) }).use { rig ->
            rig.client.start()
            val conn = rig.gateway.nextConnection()
            conn.expect<Message.Hello>()
            conn.send(Message.Error("unknown device token"))
            conn.close(Protocol.CLOSE_UNAUTHORIZED, "unauthorized")
            rig.listener.awaitEvent("gateway error unknown device token")
            val detail = rig.listener.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY)
            assertContains(detail, "4001")
            val delay = Regex("again in (\\d+) ms").find(detail)!!.groupValues[1].toLong()
            check(delay >= 375) { "a bad token retried after $delay ms, not the longest backoff" }
            rig.gateway.nextConnection(3_000).expect<Message.Hello>()
        }
    }

    test("client: take-over and hand-back go to the gateway; hold notices reach the listener") {
        Rig().use { rig ->
            val conn = rig.connected()
            conn.call("o", "open", mapOf("mobile" to true))
            rig.client.takeOver("signing in")
            assertEquals(Message.DeviceEvent("take_over", "signing in"), conn.next())
            rig.listener.awaitEvent("control true signing in")
            assertEquals(true, conn.call("s1", "state", emptyMap<String, Any?>()).result!!["user_control"])
            rig.client.takeOver("again") // the user has it already: nothing sent
            rig.client.handBack()
            assertEquals(Message.DeviceEvent("handed_back"), conn.next())
            rig.listener.awaitEvent("control false")
            val state = conn.call("s2", "state", emptyMap<String, Any?>()).result!!
            assertEquals(false, state["user_control"])
            assertEquals("pixel-test", state["host"])

            // The agent hands the page over: the sheet comes up; a close of another hold leaves it.
            conn.send(Message.Hold("open", "h12", "sign in to 12306"))
            assertEquals(Message.Hold("open", "h12", "sign in to 12306"), rig.listener.holds.poll(5, TimeUnit.SECONDS))
            rig.listener.awaitEvent("control true sign in to 12306")
            conn.send(Message.Hold("closed", "h11"))
            rig.listener.awaitEvent("hold closed h11")
            check(rig.client.userControl) { "an older hold's close took the sheet down" }
            conn.send(Message.Hold("closed", "h12"))
            rig.listener.awaitEvent("hold closed h12")
            rig.listener.awaitEvent("control false")
            // Closed elsewhere (the card's Done): the phone sends nothing back.
            conn.send(Message.Ping)
            assertEquals(Message.Pong, conn.next())
        }
    }

    test("client: an event made while disconnected is sent after the next welcome") {
        Rig().use { rig ->
            val first = rig.connected()
            first.drop()
            rig.listener.awaitStatus(DeviceClient.Status.WAITING_TO_RETRY)
            rig.client.takeOver("offline sign-in")
            val second = rig.gateway.nextConnection()
            second.welcome()
            assertEquals(Message.DeviceEvent("take_over", "offline sign-in"), second.next())
        }
    }

    test("client: a result above the gateway's message limit is refused, not sent") {
        val engine = FakeEngine()
        engine.override["screenshot"] = { Screenshot(byteArrayOf(0xFF.toByte(), 0xD8.toByte()) + ByteArray(100_000), 412, 915) }
        Rig(engine = engine).use { rig ->
            rig.client.start()
            val conn = rig.gateway.nextConnection()
            conn.welcome(maxMessageBytes = 65_536)
            conn.call("o", "open", mapOf("mobile" to true))
            val shot = conn.call("big", "screenshot", emptyMap<String, Any?>())
            assertEquals("resource_exhausted", shot.code)
            assertContains(shot.error, "65536")
        }
    }

    test("client: stop closes the socket with 1000") {
        val rig = Rig()
        val conn = rig.connected()
        rig.client.stop()
        assertEquals(1000, conn.closed.get(5, TimeUnit.SECONDS))
        rig.listener.awaitStatus(DeviceClient.Status.STOPPED)
        check(rig.gateway.pollConnection(300) == null) { "connected again after stop" }
        rig.gateway.close()
    }
}
