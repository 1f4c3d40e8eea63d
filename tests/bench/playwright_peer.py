#!/usr/bin/env python3
"""Playwright peer for the latency benchmark.

The Rust benchmark program runs this script as a subprocess so that our browser tool and
Python Playwright are measured in one run, on the same machine, against the same Chromium
(/usr/bin/chromium) and the same pages (the benchmark's own test server, passed as --base):

    python3 tests/bench/playwright_peer.py --base http://127.0.0.1:PORT --list-js /path/to/list.js

A "full step" is what the original Playwright-based tool did for the agent on every step:
the action, then the element listing (the JavaScript function in --list-js, run with
page.evaluate and {"listing_id": <unique>, "max": 80}), then a JPEG q70 screenshot of the
viewport. The "_bare" steps time the action alone, so the report can show Playwright's own
split between the action and the listing + frame.

The benchmark takes turns with it, a block of runs of ours, then a block of its, for each
step, so that what the machine does meanwhile falls on both alike. The protocol, one JSON
object per line on stdout, answered by one line on stdin:
    -> {"event": "ready", "playwright_version": "...", "chromium_version": "..."}
    <- "step NAME RUNS WARMUP"
    -> {"event": "step", "samples_ms": {"NAME": [...], "NAME_bare": [...]}}
       (NAME, then NAME_bare where there is one: WARMUP untimed runs, then RUNS timed with
       time.perf_counter(), each after its setup)
    a line "done" (or the end of stdin) closes the browser and exits 0.
On any failure one line goes to stderr and the exit code is 1. A watchdog (--deadline-s,
default 110 s per step) turns a hang into such a failure.

Requires `pip install playwright==1.65.2` (tests/bench/requirements.txt); no browser download,
Playwright launches the system Chromium.
"""

import argparse
import gc
import importlib.metadata
import itertools
import json
import os
import sys
import threading
import time

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-gpu",
    "--mute-audio",
    "--hide-scrollbars",
]
VIEWPORT = {"width": 1280, "height": 900}
LISTING_MAX = 80
OP_TIMEOUT_MS = 15_000


class Peer:
    """One page plus what every step needs: the base URL and the listing function."""

    def __init__(self, page, base, list_js):
        self.page = page
        self.base = base
        self.list_js = list_js
        self.listing_ids = itertools.count(1)

    def url(self, path):
        return self.base + path

    def listing(self):
        result = self.page.evaluate(
            self.list_js,
            {"listing_id": f"pw-{next(self.listing_ids)}", "max": LISTING_MAX},
        )
        if not isinstance(result, dict) or not isinstance(result.get("elements"), list):
            raise RuntimeError("the listing function did not return an object with an elements array")
        return result

    def frame(self):
        return self.page.screenshot(type="jpeg", quality=70)

    def full(self):
        """What follows every action in a full step: the listing, then the JPEG frame."""
        self.listing()
        self.frame()

    def goto(self, path):
        self.page.goto(self.url(path), wait_until="load")


# --- Steps -----------------------------------------------------------------------------------
# Each step is (setup, run): setup is called once, untimed, before the warmup runs;
# run is one timed run.


def on_page(peer):
    peer.goto("/page")


def navigate_small(peer):
    peer.goto("/page")
    peer.full()


def navigate_small_bare(peer):
    peer.goto("/page")


def navigate_form(peer):
    peer.goto("/login")
    peer.full()


def navigate_2000(peer):
    peer.goto("/listing-many")
    peer.full()


def navigate_react(peer):
    peer.goto("/fixtures/react.html")
    peer.full()


def click_bare(peer):
    peer.page.mouse.click(110, 35)  # centre of the 200x50 button at (10, 10) on /page
    peer.page.wait_for_load_state("load")


def click(peer):
    click_bare(peer)
    peer.full()


def type_bare(peer):
    peer.page.fill("#q", "hello world")


def type_(peer):
    type_bare(peer)
    peer.full()


def extract(peer):
    peer.page.evaluate("() => document.body.innerText")


def screenshot(peer):
    peer.frame()


def fetch(peer):
    response = peer.page.context.request.get(peer.url("/api/whoami"))
    response.text()
    return response  # disposed after the clock stops


STEPS = [
    ("navigate_small", None, navigate_small),
    ("navigate_small_bare", None, navigate_small_bare),
    ("navigate_form", None, navigate_form),
    ("navigate_2000", None, navigate_2000),
    ("navigate_react", None, navigate_react),
    ("click", on_page, click),
    ("click_bare", on_page, click_bare),
    ("type", on_page, type_),
    ("type_bare", on_page, type_bare),
    ("extract", on_page, extract),
    ("screenshot", on_page, screenshot),
    ("fetch", on_page, fetch),
]


# --- Measuring -------------------------------------------------------------------------------


def measure(peer, setup, run, warmup, runs):
    if setup is not None:
        setup(peer)
    for _ in range(warmup):
        dispose(run(peer))
    gc.collect()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        leftover = run(peer)
        samples.append(round((time.perf_counter() - start) * 1000.0, 3))
        dispose(leftover)
    return samples


def dispose(leftover):
    if leftover is not None:
        leftover.dispose()


# --- Entry point -----------------------------------------------------------------------------


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        fail(f"bad arguments: {message}")


def parse_args():
    parser = OneLineParser(description="Time Playwright's full agent steps for the Rust benchmark.")
    parser.add_argument("--base", required=True, help="test server, e.g. http://127.0.0.1:PORT")
    parser.add_argument("--list-js", required=True, help="file with the listing function (args) => {...}")
    parser.add_argument("--deadline-s", type=float, default=110.0,
                        help="give up (exit 1) when a step takes longer than this many seconds")
    return parser.parse_args()


def fail(message):
    first_line = (str(message).strip().splitlines() or ["unknown error"])[0]
    print(f"playwright_peer: {first_line}", file=sys.stderr, flush=True)
    sys.exit(1)


class Watchdog:
    """Ends the process when a step runs past its deadline."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.timer = None

    def arm(self):
        self.disarm()

        def expire():
            print(f"playwright_peer: a step timed out after {self.seconds:g} s", file=sys.stderr, flush=True)
            os._exit(1)  # the Playwright driver notices its parent is gone and closes the browser

        self.timer = threading.Timer(self.seconds, expire)
        self.timer.daemon = True
        self.timer.start()

    def disarm(self):
        if self.timer is not None:
            self.timer.cancel()


def send(value):
    print(json.dumps(value), flush=True)


def step_command(line):
    """(name, runs, warmup) of a "step NAME RUNS WARMUP" line."""
    parts = line.split()
    if len(parts) != 4 or parts[0] != "step":
        raise ValueError(f"not a step command: {line!r}")
    runs, warmup = int(parts[2]), int(parts[3])
    if runs < 1 or warmup < 0:
        raise ValueError(f"runs must be at least 1 and warmup at least 0: {line!r}")
    return parts[1], runs, warmup


def serve(args):
    with open(args.list_js, encoding="utf-8") as f:
        list_js = f.read()
    base = args.base.rstrip("/")
    watchdog = Watchdog(args.deadline_s)
    steps = {name: (setup, run) for name, setup, run in STEPS}
    with sync_playwright() as pw:
        watchdog.arm()
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
            page = context.new_page()
            page.set_default_timeout(OP_TIMEOUT_MS)
            peer = Peer(page, base, list_js)
            watchdog.disarm()
            send({
                "event": "ready",
                "playwright_version": importlib.metadata.version("playwright"),
                "chromium_version": browser.version,
            })
            for line in sys.stdin:
                if line.strip() == "done":
                    break
                name, runs, warmup = step_command(line)
                if name not in steps:
                    raise ValueError(f"no step {name!r}")
                watchdog.arm()
                samples = {
                    each: measure(peer, *steps[each], warmup, runs)
                    for each in (name, name + "_bare")
                    if each in steps
                }
                watchdog.disarm()
                send({"event": "step", "samples_ms": samples})
        finally:
            browser.close()


def main():
    args = parse_args()
    try:
        serve(args)
    except Exception as error:  # one line on stderr, exit 1: the Rust side's contract
        fail(f"{type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
