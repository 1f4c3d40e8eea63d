package nanomuse.device.protocol

import java.io.File
import java.util.concurrent.TimeUnit

/** Runs [program] in node and returns what it printed; skips the case when there is no node. */
private fun node(program: String): String {
    val dir = kotlin.io.path.createTempDirectory("scripts").toFile()
    try {
        val file = File(dir, "test.js").apply { writeText(program) }
        val process = try {
            ProcessBuilder("node", file.path).redirectErrorStream(true).start()
        } catch (e: java.io.IOException) {
            TestKit.skip("no node on this machine to run the page scripts")
        }
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly()
            throw AssertionError("node did not finish")
        }
        val output = process.inputStream.bufferedReader().readText()
        check(process.exitValue() == 0) { "node failed:\n$output" }
        return output.trim()
    } finally {
        dir.deleteRecursively()
    }
}

fun scriptTests() {
    test("scripts: evaluate reports values, awaited Promises and errors through the bridge") {
        val cases = listOf(
            "(a) => a.n + 1" to """{"n":1}""",
            "async (a) => { await null; return [a, 'x']; }" to "\"é\"",
            "() => undefined" to "null",
            "() => { throw new TypeError('bad thing'); }" to "null",
            "() => Promise.reject(new Error('no way'))" to "null",
            "() => { const o = {}; o.o = o; return o; }" to "null",
            "() => 'ends in a comment' // like this" to "null",
            "function (s) { return s.length; }" to "\"four\"",
        )
        val program = buildString {
            append("globalThis.window = globalThis;\nconst results = [];\n")
            append("window.${Scripts.BRIDGE} = { postMessage: (t) => results.push(JSON.parse(t)) };\n")
            append("const started = [];\n")
            cases.forEachIndexed { i, (js, arg) -> append("started.push(${Scripts.evaluate(js, arg, "id-$i")});\n") }
            append("setTimeout(() => console.log(JSON.stringify({started, results})), 50);\n")
        }
        val out = Json.parse(node(program)) as Map<*, *>
        assertEquals(cases.indices.map { "id-$it" }, out["started"])
        val results = (out["results"] as List<*>).associateBy { (it as Map<*, *>)["id"] }
        fun result(i: Int) = results["id-$i"] as Map<*, *>? ?: throw AssertionError("no result for case $i: $results")
        assertEquals("2", result(0)["value"])
        assertEquals("""["é","x"]""", result(1)["value"])
        assertEquals("null", result(2)["value"])
        assertEquals(false, result(3)["ok"])
        assertEquals("TypeError: bad thing", result(3)["error"])
        assertEquals("Error: no way", result(4)["error"])
        assertContains(result(5)["error"] as String, "circular")
        assertEquals("\"ends in a comment\"", result(6)["value"])
        assertEquals("4", result(7)["value"])
    }

    test("scripts: without a bridge the result waits in the page for poll") {
        val program = """
            globalThis.window = globalThis;
            const started = ${Scripts.evaluate("(x) => x * 2", "21", "p1")};
            setTimeout(() => {
              const first = ${Scripts.poll("p1")};
              const second = ${Scripts.poll("p1")};
              console.log(JSON.stringify({started, first, second}));
            }, 20);
        """
        val out = Json.parse(node(program)) as Map<*, *>
        assertEquals("p1", out["started"])
        assertEquals(mapOf("id" to "p1", "ok" to true, "value" to "42"), Json.parse(out["first"] as String))
        assertEquals(null, out["second"])
    }

    test("scripts: typing goes through the page's own setter and fires input and change") {
        val program = """
            const events = [];
            class Node_ { dispatchEvent(e) { events.push(e.type + ':' + this.value); } }
            class HTMLInputElement extends Node_ {}
            Object.defineProperty(HTMLInputElement.prototype, 'value', {
              get() { return this._v || ''; }, set(v) { this._v = v; events.push('set:' + v); } });
            class HTMLTextAreaElement extends Node_ {}
            class HTMLSelectElement extends Node_ {}
            class Event { constructor(type) { this.type = type; } }
            class InputEvent extends Event {}
            const input = new HTMLInputElement();
            input.tagName = 'INPUT';
            // A framework's own setter on the instance is bypassed, as React's is.
            Object.defineProperty(input, 'value', { get() { return 'x'; }, set(v) { events.push('instance setter'); } });
            const body = {};
            globalThis.document = { activeElement: input, body, documentElement: {} };
            const fill = ${Scripts.FILL_FOCUSED};
            const typed = fill('hello');
            document.activeElement = body;
            const nothing = fill('x');
            document.activeElement = { tagName: 'DIV' };
            const div = fill('x');
            input.readOnly = true; document.activeElement = input;
            const readOnly = fill('x');
            // A dropdown the page draws, reached through a read-only combobox field (Quasar's).
            input.role = 'combobox';
            const dropdown = fill('x');
            // A page that broke the setter path (troopjs): the field's text selected for trusted input.
            const broken = new HTMLTextAreaElement();
            broken.tagName = 'TEXTAREA';
            Object.defineProperty(HTMLTextAreaElement.prototype, 'value', {
              get() { return ''; }, set(v) { throw new TypeError('Illegal invocation'); } });
            broken.select = () => events.push('select');
            document.activeElement = broken;
            const trusted = fill('x');
            // The other scripts at least parse.
            const others = [${Scripts.INSERT_TEXT}, ${Scripts.SCROLL_BY}, ${Scripts.FRAME_DRAWN}, ${Scripts.VIEWPORT}].length;
            console.log(JSON.stringify({events, typed, nothing, div, readOnly, dropdown, trusted, others}));
        """
        val out = Json.parse(node(program)) as Map<*, *>
        assertEquals(listOf("set:hello", "input:x", "change:x", "select"), out["events"])
        assertEquals(mapOf("trusted" to true), out["trusted"])
        assertEquals(null, out["typed"])
        assertContains(out["nothing"] as String, "nothing is focused")
        assertContains(out["div"] as String, "(div) does not take text")
        assertContains(out["readOnly"] as String, "read-only")
        assertContains(out["dropdown"] as String, "click it, then click one of the options")
        assertEquals(4L, out["others"])
    }
}
