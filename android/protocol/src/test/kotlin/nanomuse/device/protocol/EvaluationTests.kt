package nanomuse.device.protocol

import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit

/** The scripts running in a page, and what becomes of them when the page loads another document. */
fun evaluationTests() {
    test("evaluations: an answer reaches its script; a replaced document fails the scripts started in it, not those sent after") {
        val scripts = Evaluations()
        val answered = scripts.begin("a")
        scripts.started("a")
        scripts.answered("a", "{\"id\":\"a\"}")
        assertEquals("{\"id\":\"a\"}", answered.get(1, TimeUnit.SECONDS))

        val cut = scripts.begin("cut")
        scripts.started("cut")
        // Sent, but its start not yet acknowledged: it may run in the new document.
        val sent = scripts.begin("sent")
        scripts.documentReplaced()
        val error = assertThrows<ExecutionException> { cut.get(1, TimeUnit.SECONDS) }.cause as BrowserException
        assertEquals(ErrorCode.FAILED_PRECONDITION, error.code)
        assertContains(error.message, "another document")
        check(!sent.isDone) { "a script whose start came after the change runs in the new document" }
        scripts.started("sent")
        scripts.answered("sent", "new")
        assertEquals("new", sent.get(1, TimeUnit.SECONDS))
    }

    test("evaluations: a page gone fails every script; an ended one is answered by no one") {
        val scripts = Evaluations()
        val waiting = scripts.begin("w")
        val ended = scripts.begin("e")
        scripts.end("e")
        scripts.answered("e", "late")
        check(!ended.isDone) { "an ended script takes no answer" }
        scripts.failAll(BrowserException.unavailable("gone"))
        val error = assertThrows<ExecutionException> { waiting.get(1, TimeUnit.SECONDS) }.cause as BrowserException
        assertEquals(ErrorCode.UNAVAILABLE, error.code)
    }
}
