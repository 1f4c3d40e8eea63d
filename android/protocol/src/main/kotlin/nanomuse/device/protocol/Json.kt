package nanomuse.device.protocol

/**
 * A small JSON reader and writer, enough for the protocol (no library can be fetched here, and
 * Android's org.json is not on the JVM).
 *
 * Values are plain Kotlin: `null`, [Boolean], [String], [Long] (a number without fraction or
 * exponent that fits), [Double] (any other number), [List] and [Map] with [String] keys (a
 * [LinkedHashMap], so keys keep their order).
 */
object Json {
    /** Nesting deeper than this is refused rather than risking the stack. */
    const val MAX_DEPTH = 256

    /** Reads one JSON value; anything after it but whitespace is an error. */
    fun parse(text: String): Any? = Reader(text).readDocument()

    /** Writes [value] as compact JSON text. */
    fun write(value: Any?): String = StringBuilder().also { write(value, it) }.toString()

    fun write(value: Any?, out: StringBuilder) {
        when (value) {
            null -> out.append("null")
            is Boolean -> out.append(if (value) "true" else "false")
            is String -> writeString(value, out)
            is Int, is Long, is Short, is Byte -> out.append(value.toString())
            is Double -> writeDouble(value, out)
            is Float -> writeDouble(value.toDouble(), out)
            is Number -> writeDouble(value.toDouble(), out)
            is Map<*, *> -> {
                out.append('{')
                var first = true
                for ((key, item) in value) {
                    require(key is String) { "a JSON object's keys are strings, not $key" }
                    if (!first) out.append(',')
                    first = false
                    writeString(key, out)
                    out.append(':')
                    write(item, out)
                }
                out.append('}')
            }
            is Iterable<*> -> {
                out.append('[')
                var first = true
                for (item in value) {
                    if (!first) out.append(',')
                    first = false
                    write(item, out)
                }
                out.append(']')
            }
            is Array<*> -> write(value.asList(), out)
            is JsonWritable -> write(value.toJson(), out)
            else -> throw IllegalArgumentException("cannot write a ${value::class.simpleName} as JSON")
        }
    }

    /**
     * A whole double is written without a fraction (412, not 412.0), so a reader that wants an
     * integer (serde_json's as_u64) gets one. NaN and the infinities have no JSON: they become
     * null, as JSON.stringify does.
     */
    private fun writeDouble(value: Double, out: StringBuilder) {
        when {
            value.isNaN() || value.isInfinite() -> out.append("null")
            value == Math.rint(value) && Math.abs(value) < 9.007199254740992E15 ->
                out.append(value.toLong().toString())
            else -> out.append(value.toString())
        }
    }

    private const val HEX = "0123456789abcdef"

    fun writeString(value: String, out: StringBuilder) {
        out.append('"')
        for (c in value) {
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                '\b' -> out.append("\\b")
                '\u000c' -> out.append("\\f")
                // Valid JSON either way; escaped so the text can also sit inside a <script>.
                '\u2028', '\u2029' -> unicodeEscape(c, out)
                else -> if (c < ' ') unicodeEscape(c, out) else out.append(c)
            }
        }
        out.append('"')
    }

    private fun unicodeEscape(c: Char, out: StringBuilder) {
        val code = c.code
        out.append("\\u")
            .append(HEX[(code shr 12) and 15]).append(HEX[(code shr 8) and 15])
            .append(HEX[(code shr 4) and 15]).append(HEX[code and 15])
    }

    /** A JSON string literal of [value], quotes included (for building scripts). */
    fun quote(value: String): String = StringBuilder().also { writeString(value, it) }.toString()

    private class Reader(private val text: String) {
        private var pos = 0

        fun readDocument(): Any? {
            skipSpace()
            val value = readValue(0)
            skipSpace()
            if (pos != text.length) fail("unexpected text after the value")
            return value
        }

        private fun fail(what: String): Nothing = throw JsonException("$what at offset $pos")

        private fun skipSpace() {
            while (pos < text.length) {
                when (text[pos]) {
                    ' ', '\t', '\n', '\r' -> pos++
                    else -> return
                }
            }
        }

        private fun readValue(depth: Int): Any? {
            if (depth > MAX_DEPTH) fail("nesting deeper than $MAX_DEPTH")
            if (pos >= text.length) fail("the text ends where a value should be")
            return when (val c = text[pos]) {
                '{' -> readObject(depth)
                '[' -> readArray(depth)
                '"' -> readString()
                't' -> literal("true", true)
                'f' -> literal("false", false)
                'n' -> literal("null", null)
                else -> if (c == '-' || c in '0'..'9') readNumber() else fail("unexpected '$c'")
            }
        }

        private fun literal(word: String, value: Any?): Any? {
            if (!text.startsWith(word, pos)) fail("unexpected text")
            pos += word.length
            return value
        }

        private fun readObject(depth: Int): Map<String, Any?> {
            pos++ // {
            val map = LinkedHashMap<String, Any?>()
            skipSpace()
            if (pos < text.length && text[pos] == '}') {
                pos++
                return map
            }
            while (true) {
                skipSpace()
                if (pos >= text.length || text[pos] != '"') fail("expected a key in quotes")
                val key = readString()
                skipSpace()
                if (pos >= text.length || text[pos] != ':') fail("expected ':'")
                pos++
                skipSpace()
                map[key] = readValue(depth + 1)
                skipSpace()
                if (pos >= text.length) fail("the object is not closed")
                when (text[pos++]) {
                    ',' -> continue
                    '}' -> return map
                    else -> { pos--; fail("expected ',' or '}'") }
                }
            }
        }

        private fun readArray(depth: Int): List<Any?> {
            pos++ // [
            val list = ArrayList<Any?>()
            skipSpace()
            if (pos < text.length && text[pos] == ']') {
                pos++
                return list
            }
            while (true) {
                skipSpace()
                list.add(readValue(depth + 1))
                skipSpace()
                if (pos >= text.length) fail("the array is not closed")
                when (text[pos++]) {
                    ',' -> continue
                    ']' -> return list
                    else -> { pos--; fail("expected ',' or ']'") }
                }
            }
        }

        private fun readString(): String {
            pos++ // opening quote
            val start = pos
            // Fast path: no escapes.
            while (pos < text.length) {
                val c = text[pos]
                if (c == '"') return text.substring(start, pos++)
                if (c == '\\' || c < ' ') break
                pos++
            }
            val out = StringBuilder().append(text, start, pos)
            while (true) {
                if (pos >= text.length) fail("the string is not closed")
                val c = text[pos++]
                when {
                    c == '"' -> return out.toString()
                    c < ' ' -> { pos--; fail("a control character inside a string") }
                    c != '\\' -> out.append(c)
                    else -> {
                        if (pos >= text.length) fail("the string is not closed")
                        when (val e = text[pos++]) {
                            '"' -> out.append('"')
                            '\\' -> out.append('\\')
                            '/' -> out.append('/')
                            'b' -> out.append('\b')
                            'f' -> out.append('\u000c')
                            'n' -> out.append('\n')
                            'r' -> out.append('\r')
                            't' -> out.append('\t')
                            'u' -> {
                                if (pos + 4 > text.length) fail("a short \\u escape")
                                var code = 0
                                for (i in 0 until 4) {
                                    val digit = Character.digit(text[pos + i], 16)
                                    if (digit < 0) fail("a bad \\u escape")
                                    code = code * 16 + digit
                                }
                                pos += 4
                                out.append(code.toChar())
                            }
                            else -> { pos--; fail("a bad escape '\\$e'") }
                        }
                    }
                }
            }
        }

        private fun readNumber(): Any {
            val start = pos
            if (text[pos] == '-') pos++
            if (pos >= text.length) fail("a number without digits")
            if (text[pos] == '0') {
                pos++
            } else if (text[pos] in '1'..'9') {
                while (pos < text.length && text[pos] in '0'..'9') pos++
            } else {
                fail("a number without digits")
            }
            var whole = true
            if (pos < text.length && text[pos] == '.') {
                whole = false
                pos++
                val digits = pos
                while (pos < text.length && text[pos] in '0'..'9') pos++
                if (pos == digits) fail("a number without digits after '.'")
            }
            if (pos < text.length && (text[pos] == 'e' || text[pos] == 'E')) {
                whole = false
                pos++
                if (pos < text.length && (text[pos] == '+' || text[pos] == '-')) pos++
                val digits = pos
                while (pos < text.length && text[pos] in '0'..'9') pos++
                if (pos == digits) fail("a number without digits in its exponent")
            }
            val literal = text.substring(start, pos)
            if (whole) literal.toLongOrNull()?.let { return it }
            return literal.toDouble()
        }
    }
}

/** A JSON text that could not be read; the message says what and where. */
class JsonException(message: String) : Exception(message)

/** Something that writes itself as a JSON value (a map, a list, a string…). */
interface JsonWritable {
    fun toJson(): Any?
}
