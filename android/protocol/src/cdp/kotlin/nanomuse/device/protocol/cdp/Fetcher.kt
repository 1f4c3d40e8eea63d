package nanomuse.device.protocol.cdp

import nanomuse.device.protocol.BrowserException
import nanomuse.device.protocol.FetchRequest
import nanomuse.device.protocol.FetchResponse
import nanomuse.device.protocol.Header
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.IOException
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URI
import java.net.URL

/**
 * The phone's `fetch` and downloads, as DeviceBrowser does them with OkHttp: a request from
 * the app with the browser's cookies for its URL, redirects followed here hop by hop so every
 * hop's cookies are sent and kept, the Set-Cookies written back into the browser.
 *
 * HttpURLConnection, not java.net.http: it gives the response headers in the order they came
 * (as OkHttp does; java.net.http sorts them), which the agent sees. It knows only the standard
 * methods: others (PATCH, WebDAV's) go through java.net.http.
 */
internal class Fetcher(private val browser: CdpBrowser) {
    fun fetch(request: FetchRequest): FetchResponse {
        var url = request.url
        var method = request.method
        var body: ByteArray? = request.body
        for (hop in 0..MAX_REDIRECTS) {
            val response = try {
                send(url, method, request.headers, body)
            } catch (e: IOException) {
                throw BrowserException.precondition("fetch of $url failed: ${e.message ?: e::class.java.simpleName}")
            }
            for (setCookie in response.headers.filter { it.name.equals("set-cookie", true) }) browser.setCookie(url, setCookie.value)
            val location = response.headers.firstOrNull { it.name.equals("location", true) }?.value
            if (response.status in REDIRECTS && location != null) {
                val next = try {
                    URI(url).resolve(location).toString()
                } catch (e: Exception) {
                    throw BrowserException.precondition("$url redirected to a bad location \"$location\"")
                }
                if (!next.startsWith("http://") && !next.startsWith("https://")) {
                    throw BrowserException.precondition("a redirect led to $next, which is not http or https")
                }
                url = next
                if (response.status in listOf(301, 302, 303) && method != "HEAD") {
                    method = "GET"
                    body = null
                }
                continue
            }
            return FetchResponse(response.status, response.headers, response.body, url)
        }
        throw BrowserException.precondition("${request.url} redirected more than $MAX_REDIRECTS times")
    }

    /** Fetches [url] into [dir] with the browser's cookies; returns the file's name. */
    fun download(url: String, dir: File): String {
        if (!url.startsWith("http://") && !url.startsWith("https://")) {
            throw BrowserException.precondition("${url.substringBefore(':')}: downloads cannot be fetched by the phone")
        }
        val response = fetch(FetchRequest(url, "GET", emptyList(), ByteArray(0)))
        if (response.status !in 200..299) throw BrowserException.precondition("the download of $url failed: HTTP ${response.status}")
        dir.mkdirs()
        val disposition = response.headers.firstOrNull { it.name.equals("content-disposition", true) }?.value
        val named = disposition?.let { Regex("filename\\*?=\"?(?:UTF-8'')?([^\";]+)\"?", RegexOption.IGNORE_CASE).find(it)?.groupValues?.get(1) }
        val name = (named ?: URI(response.url).path.substringAfterLast('/').ifEmpty { "downloadfile.bin" }).replace('/', '_')
        var file = File(dir, name)
        var n = 1
        while (file.exists()) {
            val ext = name.substringAfterLast('.', "").let { if (it.isEmpty()) "" else ".$it" }
            file = File(dir, "${name.substringBeforeLast('.')} ($n)$ext")
            n++
        }
        file.writeBytes(response.body)
        return file.name
    }

    private class Response(val status: Int, val headers: List<Header>, val body: ByteArray)

    private fun send(url: String, method: String, headers: List<Header>, body: ByteArray?): Response {
        val wantsBody = when (method) {
            "GET", "HEAD" -> false
            "POST", "PUT", "PATCH", "PROPPATCH", "REPORT" -> true
            else -> body != null && body.isNotEmpty()
        }
        val cookie = browser.cookieHeader(url)
        val agent = browser.userAgent
        if (method !in URL_CONNECTION_METHODS) return sendOther(url, method, headers, if (wantsBody) body ?: ByteArray(0) else null, cookie, agent)
        val connection = try {
            URL(url).openConnection() as HttpURLConnection
        } catch (e: Exception) {
            throw BrowserException.invalid("$url is not a URL the phone can fetch: ${e.message}")
        }
        connection.instanceFollowRedirects = false
        connection.useCaches = false
        connection.connectTimeout = TIMEOUT_MS
        connection.readTimeout = TIMEOUT_MS
        connection.requestMethod = method
        for (header in headers) if (header.name.lowercase() !in HOP_BY_HOP) connection.addRequestProperty(header.name, header.value)
        if (headers.none { it.name.equals("user-agent", true) }) connection.setRequestProperty("User-Agent", agent)
        if (headers.none { it.name.equals("accept", true) }) connection.setRequestProperty("Accept", "*/*")
        cookie?.let { connection.setRequestProperty("Cookie", it) }
        try {
            if (wantsBody) {
                connection.doOutput = true
                connection.setFixedLengthStreamingMode((body ?: ByteArray(0)).size)
                connection.outputStream.use { it.write(body ?: ByteArray(0)) }
            }
            val status = connection.responseCode
            val received = mutableListOf<Header>()
            var i = 1
            while (true) {
                val name = connection.getHeaderFieldKey(i) ?: break
                received += Header(name, connection.getHeaderField(i) ?: "")
                i++
            }
            val stream = if (status >= 400) connection.errorStream else runCatching { connection.inputStream }.getOrNull()
            val bytes = if (method == "HEAD") ByteArray(0) else readLimited(stream, url)
            return Response(status, received, bytes)
        } finally {
            connection.disconnect()
        }
    }

    private fun sendOther(url: String, method: String, headers: List<Header>, body: ByteArray?, cookie: String?, agent: String): Response {
        val client = java.net.http.HttpClient.newBuilder().followRedirects(java.net.http.HttpClient.Redirect.NEVER).build()
        val builder = java.net.http.HttpRequest.newBuilder(URI(url)).timeout(java.time.Duration.ofMillis(TIMEOUT_MS.toLong()))
        for (header in headers) if (header.name.lowercase() !in HOP_BY_HOP) builder.header(header.name, header.value)
        if (headers.none { it.name.equals("user-agent", true) }) builder.header("User-Agent", agent)
        cookie?.let { builder.header("Cookie", it) }
        builder.method(
            method,
            if (body == null) java.net.http.HttpRequest.BodyPublishers.noBody() else java.net.http.HttpRequest.BodyPublishers.ofByteArray(body),
        )
        val response = try {
            client.send(builder.build(), java.net.http.HttpResponse.BodyHandlers.ofInputStream())
        } catch (e: IllegalArgumentException) {
            throw BrowserException.invalid("fetch cannot send $method: ${e.message}")
        }
        val received = response.headers().map().flatMap { (name, values) -> values.map { Header(name, it) } }
        return Response(response.statusCode(), received, readLimited(response.body(), url))
    }

    private fun readLimited(stream: InputStream?, url: String): ByteArray {
        if (stream == null) return ByteArray(0)
        stream.use {
            val out = ByteArrayOutputStream()
            val buffer = ByteArray(64 * 1024)
            while (true) {
                val n = it.read(buffer)
                if (n < 0) return out.toByteArray()
                if (out.size() + n > MAX_FETCH_BYTES) {
                    throw BrowserException.exhausted("the response of $url is larger than $MAX_FETCH_BYTES bytes, the phone's fetch limit")
                }
                out.write(buffer, 0, n)
            }
        }
    }

    companion object {
        private const val MAX_REDIRECTS = 20
        private const val TIMEOUT_MS = 60_000
        /** Base64 inside a 16 MiB message leaves room for about 12 MiB (DeviceBrowser's limit). */
        private const val MAX_FETCH_BYTES = 10 * 1024 * 1024
        private val REDIRECTS = setOf(300, 301, 302, 303, 307, 308)
        private val URL_CONNECTION_METHODS = setOf("GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE")
        /** The connection's own business (OkHttp sets them itself too). */
        private val HOP_BY_HOP = setOf("host", "connection", "content-length", "transfer-encoding", "expect", "upgrade", "keep-alive")
    }
}
