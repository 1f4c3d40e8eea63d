package nanomuse.device.protocol

/**
 * One key of the `key` op: a named key (its DOM `key` value: "Enter", "ArrowUp", " " for
 * Space…) or one character. The names and aliases are the worker's (worker/src/ops/key.rs), so
 * both backends take the same words.
 */
data class Key(
    /** The DOM `key` value: "Enter", "Tab", " ", "a", "é"… */
    val key: String,
    /** The DOM `code` of a named key ("Enter", "Space"); empty for a character. */
    val code: String,
    /** The text the key types ("\r" for Enter, " " for Space); empty for the others. */
    val text: String,
) {
    val named: Boolean get() = code.isNotEmpty()

    companion object {
        /** The named keys, in the order an error message lists them. */
        val NAMED = listOf(
            "Enter", "Tab", "Escape", "Backspace", "Delete", "ArrowUp", "ArrowDown",
            "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown", "Space",
        )
        private val TEXTS = mapOf("Enter" to "\r", "Space" to " ")
        private val ALIASES = mapOf("return" to "Enter", "esc" to "Escape", " " to "Space")

        /** The key [name] names, or null when it names none. */
        fun lookup(name: String): Key? {
            val trimmed = name.trim('\n')
            val canonical = ALIASES[trimmed.lowercase()] ?: trimmed
            NAMED.firstOrNull { it.equals(canonical, ignoreCase = true) }?.let { named ->
                val key = if (named == "Space") " " else named
                return Key(key, named, TEXTS[named] ?: "")
            }
            // One character: one code point (a surrogate pair is one character too).
            if (trimmed.isEmpty() || trimmed.codePointCount(0, trimmed.length) != 1) return null
            return Key(trimmed, "", trimmed)
        }

        fun unknown(name: String) = BrowserException.invalid(
            "unknown key ${Json.quote(name)}; use one of ${NAMED.joinToString(", ")} or a single character",
        )
    }
}
