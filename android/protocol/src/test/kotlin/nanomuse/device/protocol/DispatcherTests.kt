package nanomuse.device.protocol

import java.util.Base64

private fun request(op: String, args: Any?, id: String = "1", trace: Trace? = null) =
    Message.DeviceRequest(id, "browser", op, args, 30_000, trace)

private fun Dispatcher.run(op: String, args: Any? = emptyMap<String, Any?>()) = dispatch(request(op, args))

private fun Message.DeviceResult.expectOk(): Map<String, Any?> {
    check(ok) { "expected ok, got $error ($code)" }
    // What goes on the wire reads back the same.
    assertEquals(encode(), Message.parse(encode()).encode())
    return result!!
}

private fun Message.DeviceResult.expectFailed(code: ErrorCode, part: String) {
    check(!ok) { "expected a failure, got $result" }
    assertEquals(code.wire, this.code, "code")
    assertContains(error, part)
}

fun dispatcherTests() {
    test("dispatcher: the fifteen ops reach the engine and answer as the protocol's table says") {
        val engine = FakeEngine()
        var control = false
        val d = Dispatcher(engine, "pixel-7", { control })
        val opened = d.run("open", mapOf("user_agent" to "UA", "width" to 0L, "height" to 0L, "mobile" to true)).expectOk()
        assertEquals(mapOf("url" to "about:blank", "title" to "", "width" to 412, "height" to 915, "loading" to false), opened)
        assertEquals(Profile("UA", 412, 915, true), engine.profile)
        val nav = d.run("navigate", mapOf("url" to " https://example.com/a b?q=中", "timeout_ms" to 5000L)).expectOk()
        assertEquals("https://example.com/a b?q=中", nav["url"])
        assertEquals(200, nav["status"])
        assertEquals("", nav["download"])
        check(engine.calls.contains("navigate[https://example.com/a b?q=中, 5000]")) { "${engine.calls}" }
        val evaluated = d.run("evaluate", mapOf("js" to "(a) => a.n + 1", "arg" to mapOf("n" to 1L))).expectOk()
        assertEquals("json", evaluated["encoded"])
        assertEquals(mapOf("js" to "(a) => a.n + 1", "arg" to mapOf("n" to 1L)), Json.parse(evaluated["value"] as String))
        assertEquals(emptyMap<String, Any?>(), d.run("tap", mapOf("x" to 10.5, "y" to 20L)).expectOk())
        check(engine.calls.contains("tap[10.5, 20.0, 1]")) { "${engine.calls}" }
        d.run("type", mapOf("text" to "hello")).expectOk()
        d.run("key", mapOf("key" to "Return")).expectOk()
        d.run("scroll", mapOf("dy" to -300L)).expectOk()
        d.run("back").expectOk()
        assertEquals(mapOf("settled" to true), d.run("settle", mapOf("timeout_ms" to 0L)).expectOk())
        val shot = d.run("screenshot", mapOf("quality" to 0L)).expectOk()
        check(Base64.getDecoder().decode(shot["jpeg"] as String)[0] == 0xFF.toByte()) { "not the JPEG" }
        assertEquals(412, shot["width"])
        control = true
        val state = d.run("state").expectOk()
        assertEquals(true, state["user_control"])
        assertEquals("pixel-7", state["host"])
        val fetched = d.run(
            "fetch",
            mapOf(
                "url" to "https://example.com/api", "method" to "post",
                "headers" to listOf(mapOf("name" to "content-type", "value" to "application/json"), mapOf("name" to "Cookie", "value" to "x=1")),
                "body" to Base64.getEncoder().encodeToString("{}".toByteArray()),
            ),
        ).expectOk()
        assertEquals(200, fetched["status"])
        assertEquals("you sent 2 bytes", String(Base64.getDecoder().decode(fetched["body"] as String)))
        assertEquals(listOf(mapOf("name" to "content-type", "value" to "text/plain"), mapOf("name" to "set-cookie", "value" to "a=1")), fetched["headers"])
        check(engine.calls.contains("fetch[POST, https://example.com/api, [Header(name=content-type, value=application/json)], {}]")) {
            "the cookie header should be left to the browser: ${engine.calls}"
        }
        d.run("profile", mapOf("user_agent" to "", "width" to 1000L, "height" to 700L, "mobile" to false)).expectOk()
        assertEquals(Profile("", 1000, 700, false), engine.profile)
        d.run("close").expectOk()
        val b64 = Base64.getEncoder()
        val uploaded = d.run(
            "upload",
            mapOf(
                "x" to 5L, "y" to 6.5,
                "files" to listOf(
                    mapOf("name" to "a.txt", "mime_type" to "text/plain", "content" to b64.encodeToString("one".toByteArray())),
                    mapOf("name" to "b.bin", "content" to b64.encodeToString("two".toByteArray())),
                ),
            ),
        ).expectOk()
        assertEquals(mapOf("multiple" to true), uploaded)
        check(engine.calls.contains("upload[5.0, 6.5, [a.txt:one, b.bin:two]]")) { "${engine.calls}" }
        assertEquals(
            listOf("open", "navigate", "evaluate", "tap", "type", "key", "scroll", "back", "settle", "screenshot", "state", "fetch", "profile", "close", "upload"),
            engine.calls.map { it.substringBefore('[') },
        )
        assertEquals(Dispatcher.OPS, engine.calls.map { it.substringBefore('[') })
    }

    test("dispatcher: settle tells a window change since the last settle, and nothing when there was none") {
        val engine = FakeEngine()
        val d = Dispatcher(engine, "p")
        d.run("open").expectOk()
        assertEquals(mapOf("settled" to true), d.run("settle").expectOk())
        engine.override["settle"] = { Settled(true, WindowChange.OPENED) }
        assertEquals(mapOf("settled" to true, "window" to "opened"), d.run("settle").expectOk())
        engine.override["settle"] = { Settled(false, WindowChange.CLOSED) }
        assertEquals(mapOf("settled" to false, "window" to "closed"), d.run("settle").expectOk())
    }

    test("dispatcher: defaults are the worker's") {
        val engine = FakeEngine()
        val d = Dispatcher(engine, "p")
        d.run("open", mapOf("mobile" to false)).expectOk()
        assertEquals(Profile("", 1280, 900, false), engine.profile)
        d.run("settle").expectOk()
        d.run("settle", mapOf("timeout_ms" to 999_999L)).expectOk()
        d.run("screenshot").expectOk()
        d.run("navigate", mapOf("url" to "about:blank")).expectOk()
        assertEquals(listOf("settle[30000]", "settle[60000]", "screenshot[70]", "navigate[about:blank, 30000]"), engine.calls.drop(1))
    }

    test("dispatcher: a tap's count reaches the engine: one tap unless told") {
        val engine = FakeEngine()
        val d = Dispatcher(engine, "p")
        d.run("open", mapOf("mobile" to true, "width" to 412L, "height" to 915L)).expectOk()
        d.run("tap", mapOf("x" to 1L, "y" to 2L, "count" to 2L)).expectOk()
        d.run("tap", mapOf("x" to 1L, "y" to 2L, "count" to 0L)).expectOk()
        assertEquals(listOf("tap[1.0, 2.0, 2]", "tap[1.0, 2.0, 1]"), engine.calls.drop(1))
    }

    test("dispatcher: an unknown op, bad args and a wrong op kind are invalid_argument") {
        val d = Dispatcher(FakeEngine(), "p")
        d.run("fly").expectFailed(ErrorCode.INVALID_ARGUMENT, "unknown browser op \"fly\"")
        d.run("navigate").expectFailed(ErrorCode.INVALID_ARGUMENT, "navigate needs url (a string)")
        d.run("navigate", mapOf("url" to "ftp://x/")).expectFailed(ErrorCode.INVALID_ARGUMENT, "ftp: URLs are not allowed")
        d.run("navigate", mapOf("url" to "example.com")).expectFailed(ErrorCode.INVALID_ARGUMENT, "not an absolute URL")
        d.run("navigate", mapOf("url" to "javascript:alert(1)")).expectFailed(ErrorCode.INVALID_ARGUMENT, "javascript: URLs")
        d.run("tap", mapOf("x" to "1", "y" to 2L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "tap needs x (a number)")
        d.run("tap", mapOf("x" to -1L, "y" to 2L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "outside the viewport")
        d.run("tap", mapOf("x" to 1L, "y" to 2L, "count" to 4L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "at most 3 times in a row, not 4")
        d.run("type", mapOf("text" to 5L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "type needs text (a string)")
        d.run("key", mapOf("key" to "Hyper")).expectFailed(ErrorCode.INVALID_ARGUMENT, "unknown key \"Hyper\"")
        d.run("scroll", mapOf("dy" to 1e9)).expectFailed(ErrorCode.INVALID_ARGUMENT, "out of range")
        d.run("evaluate", mapOf("js" to "  ")).expectFailed(ErrorCode.INVALID_ARGUMENT, "evaluate needs a function")
        d.run("screenshot", mapOf("quality" to 101L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "quality 101")
        d.run("screenshot", mapOf("quality" to "high")).expectFailed(ErrorCode.INVALID_ARGUMENT, "quality must be a whole number")
        d.run("settle", mapOf("timeout_ms" to -5L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "timeout_ms must not be negative")
        d.run("open", mapOf("width" to 50L, "mobile" to true)).expectFailed(ErrorCode.INVALID_ARGUMENT, "width 50 is out of range")
        d.run("open", mapOf("user_agent" to "a\nb")).expectFailed(ErrorCode.INVALID_ARGUMENT, "one line")
        d.run("fetch", mapOf("url" to "https://x/", "body" to "!!")).expectFailed(ErrorCode.INVALID_ARGUMENT, "body is not base64")
        d.run("fetch", mapOf("url" to "https://x/", "method" to "GE T")).expectFailed(ErrorCode.INVALID_ARGUMENT, "not an HTTP method")
        d.run("fetch", mapOf("url" to "https://x/", "headers" to listOf(mapOf("name" to "a:b")))).expectFailed(ErrorCode.INVALID_ARGUMENT, "not a valid HTTP header")
        d.run("state", listOf(1)).expectFailed(ErrorCode.INVALID_ARGUMENT, "state's args must be a JSON object")
        val one = mapOf("name" to "a.txt", "content" to "aGk=")
        d.run("upload", mapOf("x" to 1L, "y" to 1L)).expectFailed(ErrorCode.INVALID_ARGUMENT, "upload needs files (a list)")
        d.run("upload", mapOf("x" to 1L, "y" to 1L, "files" to emptyList<Any>())).expectFailed(ErrorCode.INVALID_ARGUMENT, "at least one file")
        d.run("upload", mapOf("x" to 1L, "y" to 1L, "files" to List(11) { one })).expectFailed(ErrorCode.INVALID_ARGUMENT, "11 files is too many")
        d.run("upload", mapOf("x" to 1L, "y" to 1L, "files" to listOf(mapOf("name" to "../x", "content" to "")))).expectFailed(ErrorCode.INVALID_ARGUMENT, "no path")
        d.run("upload", mapOf("x" to 1L, "y" to 1L, "files" to listOf(mapOf("name" to "a", "content" to "!!")))).expectFailed(ErrorCode.INVALID_ARGUMENT, "not base64")
        d.run("upload", mapOf("y" to 1L, "files" to listOf(one))).expectFailed(ErrorCode.INVALID_ARGUMENT, "upload needs x (a number)")
        d.dispatch(Message.DeviceRequest("1", "camera", "snap", emptyMap<String, Any?>()))
            .expectFailed(ErrorCode.INVALID_ARGUMENT, "\"camera\" ops")
    }

    test("dispatcher: engine failures keep their code; anything else is internal; the trace is echoed") {
        val engine = FakeEngine()
        val d = Dispatcher(engine, "p")
        val trace = Trace("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "a=b")
        val noPage = d.dispatch(request("state", emptyMap<String, Any?>(), "7", trace))
        noPage.expectFailed(ErrorCode.NOT_FOUND, "no page is open")
        assertEquals("7", noPage.id)
        assertEquals(trace, noPage.trace)
        assertEquals(trace, Message.parse(noPage.encode()).let { (it as Message.DeviceResult).trace })
        engine.override["type"] = { throw BrowserException.precondition("nothing is focused: tap or click a field first") }
        d.run("type", mapOf("text" to "x")).expectFailed(ErrorCode.FAILED_PRECONDITION, "nothing is focused")
        engine.override["tap"] = { throw IllegalStateException("boom") }
        d.run("tap", mapOf("x" to 1L, "y" to 1L)).expectFailed(ErrorCode.INTERNAL, "IllegalStateException: boom")
        engine.override["evaluate"] = { "undefined" }
        d.run("evaluate", mapOf("js" to "() => undefined")).expectFailed(ErrorCode.INTERNAL, "no JSON")
        engine.override["screenshot"] = { Screenshot(byteArrayOf(1, 2, 3), 1, 1) }
        d.run("screenshot").expectFailed(ErrorCode.INTERNAL, "not a JPEG")
        val ok = d.dispatch(request("settle", emptyMap<String, Any?>(), "8", trace))
        assertEquals(trace, ok.trace)
        Dispatcher(null, "p").run("state").expectFailed(ErrorCode.UNAVAILABLE, "does not lend its browser")
    }
}
