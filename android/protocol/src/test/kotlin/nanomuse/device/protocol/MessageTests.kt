package nanomuse.device.protocol

/** The JSON reader/writer, the messages and the key names. */
fun messageTests() {
    test("json: values read and write back") {
        val text = """{"a":1,"b":-2.5,"c":"x\"y\\z\n\u00e9\ud83d\ude00","d":[true,false,null],"e":{},"f":[],"g":1e3,"h":9007199254740993}"""
        val value = Json.parse(text) as Map<*, *>
        assertEquals(1L, value["a"])
        assertEquals(-2.5, value["b"])
        assertEquals("x\"y\\z\né😀", value["c"])
        assertEquals(listOf(true, false, null), value["d"])
        assertEquals(1000.0, value["g"])
        assertEquals(9007199254740993L, value["h"], "a long beyond 2^53 stays exact")
        assertEquals(Json.write(value), Json.write(Json.parse(Json.write(value))))
        assertEquals("""{"a":1,"b":-2.5,"c":"x\"y\\z\né😀","d":[true,false,null],"e":{},"f":[],"g":1000,"h":9007199254740993}""", Json.write(value))
    }

    test("json: whole doubles are written as integers, NaN as null, control characters escaped") {
        assertEquals("[412,0.5,null,-3]", Json.write(listOf(412.0, 0.5, Double.NaN, -3f)))
        assertEquals("\"\\u0001\\u2028\\t\"", Json.write("\u0001\u2028\t"))
    }

    test("json: bad text says what and where") {
        for (bad in listOf("{", "{\"a\"}", "[1,]", "01", "1.", "\"abc", "tru", "{} x", "\"\u0001\"", "-", "\"\\x\"", "\"\\u12\"")) {
            assertThrows<JsonException> { Json.parse(bad) }
        }
        assertContains(assertThrows<JsonException> { Json.parse("[1, 2") }.message, "offset")
        val deep = "[".repeat(Json.MAX_DEPTH + 10) + "]".repeat(Json.MAX_DEPTH + 10)
        assertContains(assertThrows<JsonException> { Json.parse(deep) }.message, "nesting")
    }

    test("messages: the examples of PROTOCOL.md read as the protocol says") {
        val hello = Message.parse("""{"kind": "device", "device_id": "pixel-7-a1b2", "token": "t", "browser": true, "app": "nanomuse-android/1.0", "protocol": 1}""")
        assertEquals(Message.Hello("pixel-7-a1b2", "t", true, "nanomuse-android/1.0", 1), hello)
        val welcome = Message.parse("""{"kind": "welcome", "device_id": "p", "max_message_bytes": 16777216, "ping_interval_ms": 15000}""")
        assertEquals(Message.Welcome("p", 16777216, 15000), welcome)
        val request = Message.parse(
            """{"kind": "device_request", "id": "17", "op": "browser", "browser_op": "navigate",
               "args": {"url": "https://example.com/"}, "timeout_ms": 30000, "extra": [1],
               "trace": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}""",
        ) as Message.DeviceRequest
        assertEquals("navigate", request.browserOp)
        assertEquals(mapOf("url" to "https://example.com/"), request.args)
        assertEquals(30000L, request.timeoutMs)
        assertEquals(55, request.trace!!.traceparent.length)
        val result = Message.parse("""{"kind": "device_result", "id": "17", "ok": false, "error": "unknown browser op \"fly\"", "code": "invalid_argument"}""")
        assertEquals(Message.DeviceResult("17", false, error = "unknown browser op \"fly\"", code = "invalid_argument"), result)
        assertEquals(Message.DeviceEvent("take_over", "signing in"), Message.parse("""{"kind": "device_event", "event": "take_over", "reason": "signing in"}"""))
        assertEquals(Message.Hold("open", "h12", "sign in to 12306"), Message.parse("""{"kind": "hold", "state": "open", "hold_id": "h12", "reason": "sign in to 12306"}"""))
        assertEquals(Message.Ping, Message.parse("""{"kind":"ping"}"""))
        assertEquals(Message.Pong, Message.parse("""{"kind":"pong"}"""))
        assertEquals(Message.Error("no"), Message.parse("""{"kind":"error","error":"no"}"""))
    }

    test("messages: every kind writes what it reads") {
        val messages = listOf(
            Message.Hello("pixel", "token-token-token", true, "app", 1),
            Message.Welcome("pixel", 100000, 15000),
            Message.DeviceRequest("1", "browser", "tap", mapOf("x" to 1L, "y" to 2.5), 30000, Trace("00-a-b-01", "k=v")),
            Message.DeviceResult.ok("1", mapOf("url" to "u"), Trace("00-a-b-01")),
            Message.DeviceResult.failed("2", "no", ErrorCode.NOT_FOUND),
            Message.DeviceEvent("handed_back"),
            Message.Hold("closed", "h1"),
            Message.Ping, Message.Pong,
            Message.Error("bad", "3"),
        )
        for (message in messages) assertEquals(message, Message.parse(message.encode()), message.kind)
        assertEquals("""{"kind":"device_result","id":"1","ok":true,"result":{"url":"u"},"trace":{"traceparent":"00-a-b-01"}}""", messages[3].encode())
        check(!Message.Hello("p", "secret-token", true).toString().contains("secret")) { "the token shows in logs" }
    }

    test("messages: bad ones say what is wrong") {
        assertContains(assertThrows<ProtocolException> { Message.parse("{") }.message, "not JSON")
        assertContains(assertThrows<ProtocolException> { Message.parse("[]") }.message, "not a JSON object")
        assertContains(assertThrows<ProtocolException> { Message.parse("{}") }.message, "kind")
        assertContains(assertThrows<ProtocolException> { Message.parse("""{"kind":"fly"}""") }.message, "\"fly\"")
        assertContains(assertThrows<ProtocolException> { Message.parse("""{"kind":"device_result"}""") }.message, "id")
        assertContains(assertThrows<ProtocolException> { Message.parse("""{"kind":"device_request","id":1}""") }.message, "id must be a string")
        assertContains(assertThrows<ProtocolException> { Message.parse("""{"kind":"device_request","id":"1","op":"browser","browser_op":"x","timeout_ms":1.5}""") }.message, "timeout_ms")
    }

    test("messages: device ids") {
        check(Protocol.isValidDeviceId("pixel-7_a.B9")) { "a good id refused" }
        for (bad in listOf("", "a b", "é", "x".repeat(65), "a/b")) check(!Protocol.isValidDeviceId(bad)) { "<$bad> taken" }
    }

    test("keys: named keys, aliases and single characters") {
        assertEquals(Key("Enter", "Enter", "\r", named = true, virtualKey = 13), Key.parse("enter"))
        assertEquals(Key("Enter", "Enter", "\r", named = true, virtualKey = 13), Key.parse("Return\n"))
        assertEquals(Key("Escape", "Escape", "", named = true, virtualKey = 27), Key.parse("Esc"))
        assertEquals(Key(" ", "Space", " ", named = true, virtualKey = 32), Key.parse("Space"))
        assertEquals(Key(" ", "Space", " ", named = true, virtualKey = 32), Key.parse(" "))
        assertEquals(Key("ArrowUp", "ArrowUp", "", named = true, virtualKey = 38), Key.parse("arrowup"))
        assertEquals(Key("F5", "F5", "", named = true, virtualKey = 116), Key.parse("f5"))
        assertEquals(Key("a", "KeyA", "a", named = false, virtualKey = 65), Key.parse("a"))
        assertEquals(Key("7", "Digit7", "7", named = false, virtualKey = 55), Key.parse("7"))
        assertEquals(Key("+", "", "+", named = false, virtualKey = 0), Key.parse("+"))
        assertEquals(Key("😀", "", "😀", named = false, virtualKey = 0), Key.parse("😀"))
        assertEquals(15, Key.NAMED.size)
    }

    test("keys: modifiers are held, and a shortcut types nothing") {
        assertEquals(Key("Enter", "Enter", "\r", named = true, virtualKey = 13, modifiers = Key.SHIFT), Key.parse("Shift+Enter"))
        assertEquals(Key("A", "KeyA", "A", named = false, virtualKey = 65, modifiers = Key.SHIFT), Key.parse("shift+a"))
        assertEquals(Key("s", "KeyS", "", named = false, virtualKey = 83, modifiers = Key.CONTROL), Key.parse("Ctrl+S"))
        assertEquals(Key("s", "KeyS", "", named = false, virtualKey = 83, modifiers = Key.CONTROL), Key.parse("Control + s"))
        assertEquals(
            Key("ArrowLeft", "ArrowLeft", "", named = true, virtualKey = 37, modifiers = Key.CONTROL or Key.SHIFT),
            Key.parse("Control+Shift+ArrowLeft"),
        )
        assertEquals(Key("Enter", "Enter", "", named = true, virtualKey = 13, modifiers = Key.META), Key.parse("Cmd+Enter"))
        assertEquals(Key("+", "", "", named = false, virtualKey = 0, modifiers = Key.CONTROL), Key.parse("Control++"))
        assertEquals(Key("F4", "F4", "", named = true, virtualKey = 115, modifiers = Key.ALT), Key.parse("Alt+F4"))
        // Shift with a digit or a mark types what a US keyboard does, named by its key.
        assertEquals(Key("!", "Digit1", "!", named = false, virtualKey = 49, modifiers = Key.SHIFT), Key.parse("Shift+1"))
        assertEquals(Key("?", "Slash", "?", named = false, virtualKey = 191, modifiers = Key.SHIFT), Key.parse("shift+/"))
        assertEquals(Key(";", "Semicolon", ";", named = false, virtualKey = 186), Key.parse(";"))
        assertEquals(Key("+", "Equal", "", named = false, virtualKey = 187, modifiers = Key.CONTROL or Key.SHIFT), Key.parse("Control+Shift+="))
        assertEquals("Shift+1", Key.parse("Shift+1").name)
    }

    test("keys: a press is named back as the worker names it") {
        for ((asked, named) in listOf(
            "ctrl + enter" to "Control+Enter", " " to "Space", "esc" to "Escape", "shift+a" to "Shift+A",
            "Control++" to "Control++", "cmd+shift+z" to "Meta+Shift+Z", "é" to "é", "f5" to "F5",
        )) assertEquals(named, Key.parse(asked).name, asked)
    }

    test("keys: a name that is no key says why") {
        fun refused(name: String) = try {
            Key.parse(name)
            error("<$name> taken")
        } catch (e: BrowserException) {
            e.message!!.substringBefore(";")
        }
        assertEquals("unknown key \"ab\"", refused("ab"))
        assertEquals("unknown key \"\"", refused(""))
        assertEquals("unknown key \"F13\"", refused("F13"))
        assertEquals("unknown key \"F05\"", refused("F05"))
        assertEquals("\"Hyper\" is not a modifier", refused("Hyper+a"))
        assertEquals("\"\" is not a modifier", refused("+a"))
        assertEquals("a key is missing after Shift+: name it, as in Shift+a", refused("Shift+"))
        assertEquals("\"Shift\" is a modifier: name the key it goes with, as in Shift+a", refused("Shift"))
        assertEquals("\"é\" is no key of a keyboard to hold modifiers with: type it", refused("Control+é"))
    }
}
