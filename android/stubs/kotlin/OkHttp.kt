// Signatures of the parts of OkHttp 4.12 and Okio 3 the app uses, so that kotlinc can
// type-check the app here (the real jars come from Maven with the Android build). Bodies are
// never run.
@file:Suppress("UNUSED_PARAMETER", "unused")

package okhttp3

import java.io.Closeable
import java.io.InputStream
import java.util.concurrent.TimeUnit

private fun stub(): Nothing = throw UnsupportedOperationException("a stub")

class MediaType private constructor()

abstract class RequestBody {
    companion object {
        fun ByteArray.toRequestBody(contentType: MediaType? = null, offset: Int = 0, byteCount: Int = size): RequestBody = stub()
    }
}

abstract class ResponseBody : Closeable {
    fun byteStream(): InputStream = stub()
    override fun close() {}
}

class HttpUrl private constructor() {
    fun resolve(link: String): HttpUrl? = stub()
}

class Headers private constructor() : Iterable<Pair<String, String>> {
    override fun iterator(): Iterator<Pair<String, String>> = stub()
}

class Request private constructor() {
    val url: HttpUrl get() = stub()

    class Builder {
        fun url(url: String): Builder = stub()
        fun header(name: String, value: String): Builder = stub()
        fun addHeader(name: String, value: String): Builder = stub()
        fun method(method: String, body: RequestBody?): Builder = stub()
        fun build(): Request = stub()
    }
}

class Response private constructor() : Closeable {
    val request: Request get() = stub()
    val code: Int get() = stub()
    val headers: Headers get() = stub()
    val body: ResponseBody? get() = stub()
    val isSuccessful: Boolean get() = stub()
    val isRedirect: Boolean get() = stub()
    fun header(name: String, defaultValue: String? = null): String? = stub()
    fun headers(name: String): List<String> = stub()
    override fun close() {}
}

interface Call {
    fun execute(): Response
}

interface WebSocket {
    fun send(text: String): Boolean
    fun close(code: Int, reason: String?): Boolean
    fun cancel()
}

abstract class WebSocketListener {
    open fun onOpen(webSocket: WebSocket, response: Response) {}
    open fun onMessage(webSocket: WebSocket, text: String) {}
    open fun onMessage(webSocket: WebSocket, bytes: okio.ByteString) {}
    open fun onClosing(webSocket: WebSocket, code: Int, reason: String) {}
    open fun onClosed(webSocket: WebSocket, code: Int, reason: String) {}
    open fun onFailure(webSocket: WebSocket, t: Throwable, response: Response?) {}
}

open class OkHttpClient {
    fun newCall(request: Request): Call = stub()
    fun newWebSocket(request: Request, listener: WebSocketListener): WebSocket = stub()
    fun newBuilder(): Builder = stub()

    class Builder {
        fun followRedirects(followRedirects: Boolean): Builder = stub()
        fun followSslRedirects(followProtocolRedirects: Boolean): Builder = stub()
        fun callTimeout(timeout: Long, unit: TimeUnit): Builder = stub()
        fun connectTimeout(timeout: Long, unit: TimeUnit): Builder = stub()
        fun readTimeout(timeout: Long, unit: TimeUnit): Builder = stub()
        fun pingInterval(interval: Long, unit: TimeUnit): Builder = stub()
        fun build(): OkHttpClient = stub()
    }
}
