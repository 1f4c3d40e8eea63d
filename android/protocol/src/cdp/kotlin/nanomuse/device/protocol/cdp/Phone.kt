package nanomuse.device.protocol.cdp

import nanomuse.device.protocol.DeviceClient
import nanomuse.device.protocol.JdkSocketFactory
import nanomuse.device.protocol.Message
import java.io.File
import kotlin.system.exitProcess

/**
 * The phone as the app runs it, minus Android: the real [DeviceClient] (and its Dispatcher)
 * with [CdpBrowser] — a headless Chromium over CDP — in place of the WebView, connected to a
 * device gateway:
 *
 *     android/run-phone.sh ws://HOST:PORT/device DEVICE_ID TOKEN
 *
 * Standard output has one line per thing the phone's screen would show: `phone <STATUS>
 * <detail>` (`phone CONNECTED …` once welcomed), `hold <open|closed> <id> [reason]` (the
 * sheet coming up or going), `user_control <true|false>`. Standard input is the user's
 * hand: `take_over [reason]` takes the page, `handed_back` (Done) gives it back. It runs until
 * its standard input closes or it is killed.
 *
 * NANOMUSE_PHONE_STATE names a folder for what the phone keeps (its flushed cookies, its
 * downloads) and its browser's profile, made afresh at every start; by default a temporary
 * one. CHROMIUM names the browser.
 */
object Phone {
    @Volatile private var stopping = false

    @JvmStatic
    fun main(args: Array<String>) {
        if (args.size != 3) {
            System.err.println("usage: run-phone.sh ws://HOST:PORT/device DEVICE_ID TOKEN")
            exitProcess(2)
        }
        val (url, deviceId, token) = args
        val given = System.getenv("NANOMUSE_PHONE_STATE")?.let(::File)
        val state = given ?: kotlin.io.path.createTempDirectory("nanomuse-phone-").toFile()
        state.mkdirs()
        val chromium = try {
            Chromium.launch(File(state, "browser"))
        } catch (e: Exception) {
            System.err.println("phone: ${e.message}")
            exitProcess(1)
        }
        // The browser gone (killed, crashed): the phone program ends, saying so, rather than
        // answering every op `unavailable` (a phone's WebView has no such state: the app would
        // be gone too).
        chromium.connection.onEvent { event ->
            if (event.method == "Connection.closed" && !stopping) {
                System.err.println("phone: the browser is gone (${event.params["reason"]}); stopping")
                if (given == null) state.deleteRecursively()
                Runtime.getRuntime().halt(1)
            }
        }
        val browser = CdpBrowser(chromium, cookieFile = File(state, "cookies.json"), downloads = File(state, "downloads")).start()
        val client = try {
            DeviceClient(
                DeviceClient.Config(url, deviceId, token, app = "nanomuse-jvm-phone/1.0", backoffInitialMs = 200, backoffMaxMs = 2_000),
                browser, JdkSocketFactory(),
                object : DeviceClient.Listener {
                    override fun onStatus(status: DeviceClient.Status, detail: String) = say("phone $status $detail")
                    override fun onHold(hold: Message.Hold) = say("hold ${hold.state} ${hold.holdId} ${hold.reason ?: ""}".trimEnd())
                    override fun onUserControl(userControl: Boolean, reason: String?) {
                        // The sheet comes up with the page in it.
                        if (userControl) Thread({ runCatching { browser.showPage() } }, "phone-sheet").start()
                        say("user_control $userControl")
                    }
                    override fun onGatewayError(error: String) = say("gateway error $error")
                    override fun onProtocolError(problem: String) = say("protocol error $problem")
                },
            )
        } catch (e: IllegalArgumentException) {
            System.err.println("phone: ${e.message}")
            browser.shutdown()
            exitProcess(2)
        }
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
        Thread.sleep(300) // the closing handshake
        stopping = true
        browser.shutdown()
        if (given == null) state.deleteRecursively()
        exitProcess(0)
    }

    private fun say(line: String) = synchronized(this) {
        println(line)
        System.out.flush()
    }
}
