package nanomuse.device.protocol

/**
 * The Kotlin client with [FakeEngine] as a program, for a test on the gateway's side to drive
 * through gRPC:
 *
 *     android/run-tests.sh --phone ws://127.0.0.1:PORT/device DEVICE_ID TOKEN
 *
 * It prints one line per status change (`phone CONNECTED welcomed as …` once welcomed) and
 * one per op it carries out (`op navigate[https://…, 30000]`), and runs until killed or until
 * its standard input closes. The fake engine's answers: `open` → about:blank at the profile's
 * size; `navigate` → that URL, title "Title of <url>", status 200; `evaluate` → the JSON
 * `{"js": …, "arg": …}`; `screenshot` → a 6-byte JPEG (FF D8 … FF D9); `fetch` → 200, body
 * "you sent N bytes"; `state` without `open` → not_found.
 * The lines `take_over [reason]` and `handed_back` on standard input send those events.
 */
object FakePhone {
    @JvmStatic
    fun main(args: Array<String>) {
        if (args.size != 3) {
            System.err.println("usage: FakePhone ws://HOST:PORT/device DEVICE_ID TOKEN")
            kotlin.system.exitProcess(2)
        }
        val (url, deviceId, token) = args
        val fake = FakeEngine()
        val client = DeviceClient(
            DeviceClient.Config(url, deviceId, token, app = "nanomuse-fake-phone/1.0", backoffInitialMs = 200, backoffMaxMs = 2_000),
            fake, JdkSocketFactory(),
            object : DeviceClient.Listener {
                override fun onStatus(status: DeviceClient.Status, detail: String) = say("phone $status $detail")
                override fun onHold(hold: Message.Hold) = say("hold ${hold.state} ${hold.holdId} ${hold.reason ?: ""}".trimEnd())
                override fun onGatewayError(error: String) = say("gateway error $error")
                override fun onProtocolError(problem: String) = say("protocol error $problem")
            },
        )
        // Every call the engine records is printed as it happens.
        Thread({
            var seen = 0
            while (true) {
                while (seen < fake.calls.size) say("op ${fake.calls[seen++]}")
                Thread.sleep(20)
            }
        }, "fake-phone-ops").apply { isDaemon = true }.start()
        client.start()
        val input = System.`in`.bufferedReader()
        while (true) {
            val line = input.readLine() ?: break
            when {
                line.startsWith("take_over") -> client.takeOver(line.removePrefix("take_over").trim().ifEmpty { null })
                line.trim() == "handed_back" -> client.handBack()
            }
        }
        client.stop()
        Thread.sleep(500) // the closing handshake
    }

    private fun say(line: String) = synchronized(this) {
        println(line)
        System.out.flush()
    }
}
