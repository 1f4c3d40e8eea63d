package nanomuse.device.protocol.cdp

import nanomuse.device.protocol.BrowserException
import nanomuse.device.protocol.Json
import nanomuse.device.protocol.JsonException
import java.io.File
import java.net.URI
import java.net.http.HttpClient
import java.net.http.WebSocket
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionStage
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicLong

/**
 * A headless Chromium of its own (a fresh `--user-data-dir`, deleted at [close]) and one CDP
 * connection to it over the JDK's WebSocket. The DevTools port is 0 on 127.0.0.1 (the address
 * comes from Chromium's stderr), so it is never reachable off the machine.
 *
 * Chromium dies with this JVM: it is started under `setpriv --pdeathsig KILL` where setpriv
 * exists (a SIGKILLed JVM runs no shutdown hook), and [close] and a shutdown hook stop it.
 */
class Chromium private constructor(
    private val process: Process,
    private val profileDir: File,
    val connection: CdpConnection,
) : AutoCloseable {
    /** The major version, from `Browser.getVersion` ("156"). */
    val major: String by lazy {
        val product = connection.call("Browser.getVersion")["product"] as? String ?: ""
        Regex("/(\\d+)").find(product)?.groupValues?.get(1) ?: "120"
    }

    override fun close() {
        runCatching { connection.call("Browser.close", timeoutMs = 2_000) }
        connection.close()
        if (!process.waitFor(3, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(3, TimeUnit.SECONDS)
        profileDir.deleteRecursively()
    }

    companion object {
        /** The flags of a quiet browser (the worker's, worker/src/browser.rs and chromium.rs). */
        private val FLAGS = listOf(
            "--headless=new", "--remote-debugging-port=0",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--disable-quic", "--no-default-browser-check",
            "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
            "--disable-renderer-backgrounding", "--disable-breakpad", "--disable-extensions",
            "--disable-default-apps", "--disable-dev-shm-usage", "--disable-popup-blocking",
            "--password-store=basic", "--use-mock-keychain", "--mute-audio", "--lang=en_US",
            "--force-color-profile=srgb",
            // A WebView on Android draws overlay scrollbars, which take no layout width.
            "--hide-scrollbars",
        )

        /**
         * Starts [executable] (Debian's chromium unless given) on a fresh profile in [profile]
         * (emptied first; a temporary folder when null) and connects to it.
         */
        fun launch(profile: File? = null, executable: String = System.getenv("CHROMIUM") ?: "/usr/bin/chromium"): Chromium {
            val profileDir = profile?.apply { deleteRecursively(); mkdirs() }
                ?: Files.createTempDirectory("nanomuse-phone-browser-").toFile()
            val command = mutableListOf<String>()
            if (File("/usr/bin/setpriv").canExecute()) command += listOf("/usr/bin/setpriv", "--pdeathsig", "KILL", "--")
            command += executable
            command += FLAGS
            // Root cannot use Chromium's sandbox.
            if (System.getProperty("user.name") == "root") command += "--no-sandbox"
            command += listOf("--user-data-dir=${profileDir.absolutePath}", "about:blank")
            val process = ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
            Runtime.getRuntime().addShutdownHook(Thread { process.destroyForcibly() })
            val address = CompletableFuture<String>()
            Thread({
                val lines = process.errorStream.bufferedReader()
                while (true) {
                    val line = lines.readLine() ?: break
                    val at = line.indexOf("ws://")
                    if (line.startsWith("DevTools listening on") && at >= 0) address.complete(line.substring(at).trim())
                    // The rest is drained so the pipe never fills.
                }
                address.completeExceptionally(IllegalStateException("Chromium exited (${runCatching { process.waitFor() }.getOrNull()}) before listening"))
            }, "chromium-stderr").apply { isDaemon = true }.start()
            val url = try {
                address.get(30, TimeUnit.SECONDS)
            } catch (e: Exception) {
                process.destroyForcibly()
                profileDir.deleteRecursively()
                throw IllegalStateException("Chromium ($executable) did not start: ${e.cause?.message ?: e}")
            }
            require(URI.create(url).host == "127.0.0.1") { "Chromium listens on $url, not on loopback" }
            return Chromium(process, profileDir, CdpConnection.open(url))
        }
    }
}

/**
 * One CDP WebSocket: commands by id, answered by their results; events handed to the
 * listeners in the order they arrive (one reader thread). A browser-level connection; pages
 * are reached through flat sessions (`Target.attachToTarget {flatten: true}`), whose commands
 * and events carry a `sessionId`.
 */
class CdpConnection private constructor() : AutoCloseable {
    /** A CDP event: its method, params and the session it came from ("" for the browser's). */
    class Event(val method: String, val params: Map<String, Any?>, val sessionId: String)

    private val ids = AtomicLong()
    /** A command waiting for its answer, and the session it was sent to ("" for the browser's). */
    private class Pending(val future: CompletableFuture<Map<String, Any?>>, val sessionId: String)

    private val pending = ConcurrentHashMap<Long, Pending>()
    private val listeners = CopyOnWriteArrayList<(Event) -> Unit>()
    private lateinit var socket: WebSocket
    private val sendLock = Any()
    private var sends: CompletableFuture<*> = CompletableFuture.completedFuture(null)
    @Volatile private var closedWhy: String? = null

    fun onEvent(listener: (Event) -> Unit) {
        listeners += listener
    }

    /** Sends [method] and waits for its result, at most [timeoutMs]. CDP errors are [CdpException]. */
    fun call(method: String, params: Map<String, Any?> = emptyMap(), sessionId: String = "", timeoutMs: Long = 30_000): Map<String, Any?> {
        val future = send(method, params, sessionId)
        return try {
            future.get(timeoutMs, TimeUnit.MILLISECONDS)
        } catch (e: TimeoutException) {
            throw BrowserException.timeout("the browser did not answer $method within $timeoutMs ms")
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        }
    }

    /** Sends [method]; the future completes with its result. */
    fun send(method: String, params: Map<String, Any?> = emptyMap(), sessionId: String = ""): CompletableFuture<Map<String, Any?>> {
        val id = ids.incrementAndGet()
        val future = CompletableFuture<Map<String, Any?>>()
        closedWhy?.let {
            future.completeExceptionally(BrowserException.unavailable("the phone's browser is gone ($it)"))
            return future
        }
        pending[id] = Pending(future, sessionId)
        val message = linkedMapOf<String, Any?>("id" to id, "method" to method, "params" to params)
        if (sessionId.isNotEmpty()) message["sessionId"] = sessionId
        val text = Json.write(message)
        synchronized(sendLock) {
            sends = sends.handle { _, _ -> null }.thenCompose { socket.sendText(text, true) }
                .whenComplete { _, error -> if (error != null) ended("sending failed: ${error.message}") }
        }
        return future
    }

    private fun received(text: String) {
        val message = try {
            Json.parse(text) as? Map<*, *>
        } catch (e: JsonException) {
            null
        } ?: return
        @Suppress("UNCHECKED_CAST")
        val params = (message["params"] as? Map<String, Any?>) ?: emptyMap()
        val id = (message["id"] as? Number)?.toLong()
        if (id != null) {
            val future = pending.remove(id)?.future ?: return
            val error = message["error"] as? Map<*, *>
            @Suppress("UNCHECKED_CAST")
            if (error != null) {
                future.completeExceptionally(CdpException((error["code"] as? Number)?.toInt() ?: 0, error["message"]?.toString() ?: "error"))
            } else {
                future.complete((message["result"] as? Map<String, Any?>) ?: emptyMap())
            }
            return
        }
        val method = message["method"] as? String ?: return
        if (method == "Target.detachedFromTarget") {
            // A session whose target went (a window that closed itself) answers nothing more:
            // what was sent to it fails now, not at its timeout.
            val detached = params["sessionId"] as? String
            val orphans = pending.filterValues { it.sessionId == detached }.keys
            for (orphan in orphans) {
                pending.remove(orphan)?.future?.completeExceptionally(CdpException(0, "the target went away (its session was detached)"))
            }
        }
        val event = Event(method, params, message["sessionId"] as? String ?: "")
        for (listener in listeners) {
            try {
                listener(event)
            } catch (e: Exception) {
                System.err.println("cdp: a listener of $method failed: $e")
            }
        }
    }

    private fun ended(why: String) {
        if (closedWhy != null) return
        closedWhy = why
        val gone = BrowserException.unavailable("the phone's browser is gone ($why)")
        pending.values.forEach { it.future.completeExceptionally(gone) }
        pending.clear()
        listeners.forEach { runCatching { it(Event("Connection.closed", mapOf("reason" to why), "")) } }
    }

    override fun close() {
        ended("closed")
        runCatching { socket.abort() }
    }

    private val listener = object : WebSocket.Listener {
        private val text = StringBuilder()

        override fun onText(webSocket: WebSocket, data: CharSequence, last: Boolean): CompletionStage<*>? {
            text.append(data)
            if (last) {
                val message = text.toString()
                text.setLength(0)
                received(message)
            }
            webSocket.request(1)
            return null
        }

        override fun onClose(webSocket: WebSocket, statusCode: Int, reason: String): CompletionStage<*>? {
            ended("closed with $statusCode $reason")
            return null
        }

        override fun onError(webSocket: WebSocket, error: Throwable) = ended(error.message ?: error.toString())
    }

    companion object {
        fun open(url: String): CdpConnection {
            val connection = CdpConnection()
            connection.socket = HttpClient.newHttpClient().newWebSocketBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .buildAsync(URI.create(url), connection.listener)
                .get(15, TimeUnit.SECONDS)
            return connection
        }
    }
}

class CdpException(val code: Int, message: String) : Exception(message)
