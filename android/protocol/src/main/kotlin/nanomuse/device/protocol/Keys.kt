package nanomuse.device.protocol

/**
 * One press of the `key` op: a named key (its DOM `key` value: "Enter", "ArrowUp", "F5", " "
 * for Space…) or one character, with the modifiers named before it ("Shift+Enter",
 * "Control+s"). The names, aliases and rules are the worker's (worker/src/ops/key.rs), so both
 * backends take the same words.
 */
data class Key(
    /** The DOM `key` value: "Enter", "Tab", " ", "a", "é"… ("A" with Shift, "s" with Control). */
    val key: String,
    /** The DOM `code`: "Enter", "Space", "F5", "KeyA", "Digit7"; empty for other characters. */
    val code: String,
    /** The text the key types ("\r" for Enter, " " for Space, "A" for Shift+a); empty for
     *  keys that type nothing and for any key pressed with Control, Alt or Meta. */
    val text: String,
    /** A named key (Enter, F5), not a character. */
    val named: Boolean,
    /** The Windows virtual key code Chromium takes (13 for Enter, 65 for a); 0 for characters
     *  without one. */
    val virtualKey: Int,
    /** The modifiers held, as CDP's bits: [ALT], [CONTROL], [META], [SHIFT]. */
    val modifiers: Int = 0,
) {
    /** How the press is named back ("Control+Enter" for "ctrl + enter", "Space" for " "). */
    val name: String
        get() = (MODIFIERS.filter { modifiers and it.bit != 0 }.map { it.name } +
            when {
                named -> code
                // Shift+1 is named by its key, "1", though it types "!".
                else -> SYMBOL_KEYS.firstOrNull { it.code == code }?.plain?.toString() ?: key
            }).joinToString("+")

    /** A US keyboard's digit or punctuation key: its character, the one with Shift, its code and virtual key. */
    data class SymbolKey(val plain: Char, val shifted: Char, val code: String, val virtualKey: Int)

    /** A modifier: its name, other names, CDP bit, and its own key's code and virtual key. */
    data class Modifier(val name: String, val others: List<String>, val bit: Int, val code: String, val virtualKey: Int)

    companion object {
        const val ALT = 1
        const val CONTROL = 2
        const val META = 4
        const val SHIFT = 8

        /** The modifiers in the order they go down. */
        val MODIFIERS = listOf(
            Modifier("Alt", listOf("Option"), ALT, "AltLeft", 18),
            Modifier("Control", listOf("Ctrl"), CONTROL, "ControlLeft", 17),
            Modifier("Meta", listOf("Cmd", "Command", "Super"), META, "MetaLeft", 91),
            Modifier("Shift", emptyList(), SHIFT, "ShiftLeft", 16),
        )

        /** The named keys with their virtual key codes, in the order an error message lists them. */
        val NAMED = linkedMapOf(
            "Enter" to 13, "Tab" to 9, "Escape" to 27, "Backspace" to 8, "Delete" to 46, "Insert" to 45,
            "ArrowUp" to 38, "ArrowDown" to 40, "ArrowLeft" to 37, "ArrowRight" to 39,
            "Home" to 36, "End" to 35, "PageUp" to 33, "PageDown" to 34, "Space" to 32,
        )
        val SYMBOL_KEYS = listOf(
            SymbolKey('1', '!', "Digit1", 49), SymbolKey('2', '@', "Digit2", 50), SymbolKey('3', '#', "Digit3", 51),
            SymbolKey('4', '$', "Digit4", 52), SymbolKey('5', '%', "Digit5", 53), SymbolKey('6', '^', "Digit6", 54),
            SymbolKey('7', '&', "Digit7", 55), SymbolKey('8', '*', "Digit8", 56), SymbolKey('9', '(', "Digit9", 57),
            SymbolKey('0', ')', "Digit0", 48), SymbolKey('-', '_', "Minus", 189), SymbolKey('=', '+', "Equal", 187),
            SymbolKey('[', '{', "BracketLeft", 219), SymbolKey(']', '}', "BracketRight", 221),
            SymbolKey('\\', '|', "Backslash", 220), SymbolKey(';', ':', "Semicolon", 186),
            SymbolKey('\'', '"', "Quote", 222), SymbolKey(',', '<', "Comma", 188), SymbolKey('.', '>', "Period", 190),
            SymbolKey('/', '?', "Slash", 191), SymbolKey('`', '~', "Backquote", 192),
        )
        private val TEXTS = mapOf("Enter" to "\r", "Space" to " ")
        private val ALIASES = mapOf("return" to "Enter", "esc" to "Escape", " " to "Space")
        private val FUNCTION_KEY = Regex("[Ff]([1-9]|1[0-2])")

        private fun modifier(word: String) = MODIFIERS.firstOrNull { m ->
            m.name.equals(word, ignoreCase = true) || m.others.any { it.equals(word, ignoreCase = true) }
        }

        /** The press [name] names; an invalid-argument error saying why when it names none. */
        fun parse(name: String): Key {
            val trimmed = name.trim('\n')
            fun refuse(why: String): Nothing = throw BrowserException.invalid(
                "$why; use one of ${NAMED.keys.joinToString(", ")}, F1–F12 or a single " +
                    "character, after modifiers if any (Control, Shift, Alt, Meta) as in Shift+Enter or Control+a",
            )
            // The key is after the last "+", unless that "+" is the key itself ("Control++", "+").
            val (words, rawLast) = when {
                trimmed.endsWith("++") -> trimmed.dropLast(2) to "+"
                trimmed == "+" || '+' !in trimmed -> null to trimmed
                else -> trimmed.substringBeforeLast('+') to trimmed.substringAfterLast('+')
            }
            var modifiers = 0
            words?.split('+')?.forEach { word ->
                modifiers = modifiers or (modifier(word.trim())?.bit ?: refuse("${Json.quote(word.trim())} is not a modifier"))
            }
            // "Control + s" means "s"; a lone " " is Space.
            val last = rawLast.trim().ifEmpty { rawLast }
            if (last.isEmpty() && words != null) refuse("a key is missing after $words+: name it, as in $words+a")
            modifier(last)?.let { refuse("${Json.quote(last)} is a modifier: name the key it goes with, as in $last+a") }
            val alone = alone(last) ?: refuse("unknown key ${Json.quote(last)}")
            if (modifiers == 0) return alone
            if (!alone.named && alone.virtualKey == 0 && alone.key.any { it.code > 126 }) {
                refuse("${Json.quote(last)} is no key of a keyboard to hold modifiers with: type it")
            }
            // A letter with modifiers is the key's own letter, capital only with Shift; a digit
            // or a mark with Shift is what a US keyboard types with it (Shift+1 is "!").
            val shift = modifiers and SHIFT != 0
            val symbol = SYMBOL_KEYS.firstOrNull { it.code == alone.code }.takeIf { shift }
            val key = when {
                symbol != null -> symbol.shifted.toString()
                !alone.code.startsWith("Key") -> alone.key
                shift -> alone.key.uppercase()
                else -> alone.key.lowercase()
            }
            val text = when {
                modifiers and SHIFT.inv() != 0 -> ""
                alone.code.startsWith("Key") || symbol != null -> key
                else -> alone.text
            }
            return alone.copy(key = key, text = text, modifiers = modifiers)
        }

        /** A key without modifiers: a named key, F1–F12 or one character. */
        private fun alone(name: String): Key? {
            val canonical = ALIASES[name.lowercase()] ?: name
            NAMED.keys.firstOrNull { it.equals(canonical, ignoreCase = true) }?.let { named ->
                val key = if (named == "Space") " " else named
                return Key(key, named, TEXTS[named] ?: "", named = true, virtualKey = NAMED.getValue(named))
            }
            if (FUNCTION_KEY.matches(canonical)) {
                val n = canonical.drop(1).toInt()
                return Key("F$n", "F$n", "", named = true, virtualKey = 111 + n)
            }
            // One character: one code point (a surrogate pair is one character too).
            if (canonical.isEmpty() || canonical.codePointCount(0, canonical.length) != 1) return null
            val c = canonical.singleOrNull()
            return when {
                c != null && (c in 'a'..'z' || c in 'A'..'Z') ->
                    Key(canonical, "Key${c.uppercaseChar()}", canonical, named = false, virtualKey = c.uppercaseChar().code)
                c != null -> SYMBOL_KEYS.firstOrNull { it.plain == c }
                    ?.let { Key(canonical, it.code, canonical, named = false, virtualKey = it.virtualKey) }
                    ?: Key(canonical, "", canonical, named = false, virtualKey = 0)
                else -> Key(canonical, "", canonical, named = false, virtualKey = 0)
            }
        }
    }
}
