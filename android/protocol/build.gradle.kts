// The protocol in plain Kotlin: no Android, so the app and a desktop JVM share it.
// src/main/kotlin goes into the app. src/jdk/kotlin (a java.net.http socket, which Android
// lacks) and src/test/kotlin are for the JVM only: ../run-tests.sh, or `gradle :protocol:check`.
plugins {
    id("org.jetbrains.kotlin.jvm")
}

kotlin {
    jvmToolchain(17)
    sourceSets.getByName("test").kotlin.srcDir("src/jdk/kotlin")
}

// The page scripts shared with the worker (proto/scripts/*.js), as resources: Scripts.kt
// loads them, in the app and in the tests.
sourceSets {
    main {
        resources.srcDir("../../proto/scripts")
    }
}

// The tests have their own small runner (RunTests.kt), not JUnit.
val protocolTests by tasks.registering(JavaExec::class) {
    classpath = sourceSets["test"].runtimeClasspath
    mainClass.set("nanomuse.device.protocol.RunTestsKt")
}

tasks.named("check") {
    dependsOn(protocolTests)
}
