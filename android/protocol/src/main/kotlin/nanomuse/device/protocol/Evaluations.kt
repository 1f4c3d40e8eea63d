package nanomuse.device.protocol

import java.util.concurrent.CompletableFuture

/**
 * The scripts running in a page, by id: their answers come back through the page's bridge.
 *
 * A script's answer comes from the document it ran in. Once that document is replaced (a link,
 * a form, a script's `location = …`), the answer never comes, so the script fails at once,
 * not at its timeout: a settle looks again at the new document; other ops say the page was
 * replaced. Which document a script runs in is known when its start is acknowledged
 * ([started]); a document that commits before that is the script's own.
 */
class Evaluations {
    private class Running(val result: CompletableFuture<String>) {
        /** The document the script runs in, once its start is acknowledged. */
        var document: Long? = null
    }

    private val running = HashMap<String, Running>()
    private var document = 0L

    /** A script about to be sent to the page: its answer, when [answered]. */
    @Synchronized
    fun begin(id: String): CompletableFuture<String> = CompletableFuture<String>().also { running[id] = Running(it) }

    /** The page acknowledged the script's start: it runs in the current document. */
    @Synchronized
    fun started(id: String) {
        running[id]?.document = document
    }

    /** The script's answer, from the bridge. */
    @Synchronized
    fun answered(id: String, message: String) {
        running.remove(id)?.result?.complete(message)
    }

    /** No one waits for it any more (answered, timed out, or failed). */
    @Synchronized
    fun end(id: String) {
        running.remove(id)
    }

    /** The main frame committed a new document: the scripts started in the old one fail. */
    @Synchronized
    fun documentReplaced() {
        document += 1
        val orphans = running.filterValues { it.document != null }
        for ((id, script) in orphans) {
            running.remove(id)
            script.result.completeExceptionally(BrowserException.precondition(REPLACED))
        }
    }

    /** The page is gone: every script fails with [error]. */
    @Synchronized
    fun failAll(error: BrowserException) {
        running.values.forEach { it.result.completeExceptionally(error) }
        running.clear()
    }

    companion object {
        const val REPLACED = "the page loaded another document while the script ran"
    }
}
