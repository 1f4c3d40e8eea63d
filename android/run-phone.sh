#!/usr/bin/env bash
# The phone program: the app's own DeviceClient and Dispatcher with a real headless Chromium
# over CDP in place of the WebView (android/protocol/src/cdp), connected to a device gateway.
# Compiled by run-tests.sh's one kotlinc call (when a source changed); see Phone.kt for what it
# prints and reads.
#
#   android/run-phone.sh ws://HOST:PORT/device DEVICE_ID TOKEN
exec "$(dirname "$0")/run-tests.sh" --cdp-phone "$@"
