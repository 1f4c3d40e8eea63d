// The Android build (needs the Android SDK, which the project's machines do not have):
//   cd android && gradle :app:assembleDebug
// The protocol part is also built and tested without Gradle by run-tests.sh.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
}

dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}

rootProject.name = "nanomuse-android"
include(":protocol", ":app")
