package nanomuse.device.protocol

import kotlin.system.exitProcess

/** Runs every test; an argument runs only the cases whose name contains it. Exit 1 on a failure. */
fun main(args: Array<String>) {
    messageTests()
    dispatcherTests()
    scriptTests()
    evaluationTests()
    clientTests()
    realGatewayTests()
    val failed = TestKit.runAll(args.firstOrNull())
    exitProcess(if (failed == 0) 0 else 1)
}
