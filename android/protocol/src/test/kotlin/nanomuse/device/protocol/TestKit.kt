package nanomuse.device.protocol

import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/** A tiny test runner (no JUnit here): named cases, assertions, a bound per case. */
object TestKit {
    class Skipped(reason: String) : Exception(reason)

    private val cases = mutableListOf<Pair<String, () -> Unit>>()

    fun test(name: String, body: () -> Unit) {
        cases += name to body
    }

    fun skip(reason: String): Nothing = throw Skipped(reason)

    /** Runs the cases whose name contains [filter]; returns the number that failed. */
    fun runAll(filter: String?, perCaseMs: Long = 60_000): Int {
        var passed = 0
        var failed = 0
        var skipped = 0
        val started = System.nanoTime()
        for ((name, body) in cases) {
            if (filter != null && !name.contains(filter)) continue
            val t0 = System.nanoTime()
            var error: Throwable? = null
            val thread = Thread({
                try {
                    body()
                } catch (e: Throwable) {
                    error = e
                }
            }, "test").apply { isDaemon = true }
            thread.start()
            thread.join(perCaseMs)
            if (thread.isAlive) {
                thread.interrupt()
                error = AssertionError("did not finish within $perCaseMs ms")
            }
            val ms = (System.nanoTime() - t0) / 1_000_000
            when (val e = error) {
                null -> { passed++; println("ok    $name (${ms} ms)") }
                is Skipped -> { skipped++; println("skip  $name: ${e.message}") }
                else -> {
                    failed++
                    println("FAIL  $name (${ms} ms): $e")
                    e.stackTrace.filter { it.className.startsWith("nanomuse") }.take(6).forEach { println("        at $it") }
                }
            }
        }
        val total = (System.nanoTime() - started) / 1_000_000
        println("protocol tests: ${total} ms")
        println("$passed passed, $failed failed" + if (skipped > 0) ", $skipped skipped" else "")
        return failed
    }
}

fun test(name: String, body: () -> Unit) = TestKit.test(name, body)

fun check(condition: Boolean, message: () -> String) {
    if (!condition) throw AssertionError(message())
}

fun <T> assertEquals(expected: T, actual: T, what: String = "value") {
    if (expected != actual) throw AssertionError("$what: expected <$expected>, got <$actual>")
}

fun assertContains(text: String?, part: String) {
    if (text == null || !text.contains(part)) throw AssertionError("expected <$text> to contain <$part>")
}

inline fun <reified T : Throwable> assertThrows(body: () -> Unit): T {
    try {
        body()
    } catch (e: Throwable) {
        if (e is T) return e
        throw AssertionError("expected ${T::class.simpleName}, got $e")
    }
    throw AssertionError("expected ${T::class.simpleName}, nothing was thrown")
}

/** Waits for [condition], polling, for at most [timeoutMs]. */
fun eventually(timeoutMs: Long = 5_000, what: String = "the condition", condition: () -> Boolean) {
    val deadline = System.nanoTime() + timeoutMs * 1_000_000
    while (!condition()) {
        if (System.nanoTime() > deadline) throw AssertionError("$what did not hold within $timeoutMs ms")
        Thread.sleep(10)
    }
}

/** A [DeviceClient.Listener] that keeps what it heard, in order, as short strings. */
class RecordingListener : DeviceClient.Listener {
    val events = LinkedBlockingQueue<String>()
    val holds = LinkedBlockingQueue<Message.Hold>()
    @Volatile var welcomes = 0
    val statuses = LinkedBlockingQueue<Pair<DeviceClient.Status, String>>()

    override fun onStatus(status: DeviceClient.Status, detail: String) {
        statuses.put(status to detail)
        events.put("status $status $detail")
    }
    override fun onWelcome(welcome: Message.Welcome) {
        welcomes++
        events.put("welcome")
    }
    override fun onHold(hold: Message.Hold) {
        holds.put(hold)
        events.put("hold ${hold.state} ${hold.holdId}")
    }
    override fun onUserControl(userControl: Boolean, reason: String?) {
        events.put("control $userControl $reason")
    }
    override fun onGatewayError(error: String) {
        events.put("gateway error $error")
    }
    override fun onProtocolError(problem: String) {
        events.put("protocol error $problem")
    }

    /** Waits for a status; returns its detail. */
    fun awaitStatus(status: DeviceClient.Status, timeoutMs: Long = 20_000): String {
        val deadline = System.nanoTime() + timeoutMs * 1_000_000
        while (true) {
            val left = (deadline - System.nanoTime()) / 1_000_000
            val next = statuses.poll(maxOf(left, 0), TimeUnit.MILLISECONDS)
                ?: throw AssertionError("no status $status within $timeoutMs ms")
            if (next.first == status) return next.second
        }
    }

    fun awaitEvent(prefix: String, timeoutMs: Long = 20_000): String {
        val deadline = System.nanoTime() + timeoutMs * 1_000_000
        while (true) {
            val left = (deadline - System.nanoTime()) / 1_000_000
            val next = events.poll(maxOf(left, 0), TimeUnit.MILLISECONDS)
                ?: throw AssertionError("no event starting <$prefix> within $timeoutMs ms")
            if (next.startsWith(prefix)) return next
        }
    }
}
