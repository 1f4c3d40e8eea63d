#!/usr/bin/env python3
"""Playwright's side of the benchmark's load and cold-start rows (Python Playwright, async API).

The Rust benchmark runs this script as a subprocess and drives it line by line, so that each of
its rows runs right next to ours on the same machine, the same Chromium (/usr/bin/chromium, the
flags of playwright_peer.py) and the same pages (the benchmark's server, --base):

    python3 tests/bench/playwright_load.py --base http://127.0.0.1:PORT --list-js FILE \
        --profiles DIR --cold-runs 5

Cold start first, on a quiet machine: --cold-runs times `launch_persistent_context` on a fresh
folder + its first page + `goto(small page, wait_until="load")` until loaded ("new"), then the
same on the folder just closed ("relaunch"). Then 4 persistent contexts on 4 fresh folders stay
open for the load rows.

A load row: N pages spread over the 4 contexts (page i in context i % 4; pages of earlier rows
are reused, as ours reuses its threads), each first doing one untimed step, then each in a
closed loop of `goto(small page, wait_until="load")` + `evaluate(the listing function of
--list-js, {"listing_id": <unique>, "max": 80})` + `screenshot(type="jpeg", quality=70)` for the
row's seconds; a step that raises is counted as failed and the loop goes on.

The protocol, one JSON object per line on stdout, answered by one line on stdin:
    -> {"event": "cold", "new_ms": [...], "relaunch_ms": [...]}
    then (the 4 contexts launched) for each row the Rust side asks for with "row N SECONDS":
    -> {"event": "ready", "agents": N}   (pages open)                       <- "go"
    -> {"event": "row", "agents": N, "actions": ..., "rate": ..., "median_ms": ...,
        "p95_ms": ..., "failed": ...}                                        <- next request
    a line "done" (or the end of stdin) closes the contexts and exits 0.
Between "ready" and "row" nothing but the row runs, so that the Rust side's CPU samples of this
process's tree (python, Playwright's node driver, the Chromiums) at those two points are the
row's. Errors: one line on stderr, exit 1.
"""

import argparse
import asyncio
import itertools
import json
import math
import os
import shutil
import statistics
import sys
import time

from playwright.async_api import async_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from playwright_peer import CHROMIUM, CHROMIUM_ARGS, LISTING_MAX, VIEWPORT  # noqa: E402

CONTEXTS = 4
# As long as ours waits for a reply in its load rows: a queued step at 64 agents is slow, not
# failed.
OP_TIMEOUT_MS = 90_000


def send(value):
    print(json.dumps(value), flush=True)


def receive():
    line = sys.stdin.readline()
    return line.strip() if line else "done"


def fail(message):
    first_line = (str(message).strip().splitlines() or ["unknown error"])[0]
    print(f"playwright_load: {first_line}", file=sys.stderr, flush=True)
    sys.exit(1)


async def launch(pw, folder):
    return await pw.chromium.launch_persistent_context(
        folder,
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
        device_scale_factor=1,
    )


async def first_page(context):
    return context.pages[0] if context.pages else await context.new_page()


async def cold(pw, root, url, runs):
    """Launch + first page + goto until loaded, on a fresh folder and again on the same one."""
    new_ms, relaunch_ms = [], []
    for i in range(runs):
        folder = os.path.join(root, f"cold-{i}")
        for samples in (new_ms, relaunch_ms):
            start = time.perf_counter()
            context = await launch(pw, folder)
            page = await first_page(context)
            await page.goto(url, wait_until="load")
            samples.append((time.perf_counter() - start) * 1000.0)
            await context.close()
        shutil.rmtree(folder, ignore_errors=True)
    return new_ms, relaunch_ms


class Agents:
    def __init__(self, contexts, url, list_js):
        self.contexts = contexts
        self.url = url
        self.list_js = list_js
        self.pages = []
        self.listing_ids = itertools.count(1)

    async def step(self, page):
        await page.goto(self.url, wait_until="load")
        result = await page.evaluate(
            self.list_js, {"listing_id": f"pw-{next(self.listing_ids)}", "max": LISTING_MAX}
        )
        if not isinstance(result, dict) or not isinstance(result.get("elements"), list):
            raise RuntimeError("the listing function did not return an object with an elements array")
        await page.screenshot(type="jpeg", quality=70)

    async def tried(self, page):
        """One step's seconds, or None (and a line on stderr) when it raised."""
        start = time.perf_counter()
        try:
            await self.step(page)
        except Exception as error:  # counted as failed, as ours counts a refused action
            first = (str(error).strip().splitlines() or [""])[0]
            print(f"playwright_load: {type(error).__name__}: {first}", file=sys.stderr, flush=True)
            return None
        return time.perf_counter() - start

    async def open(self, agents):
        """Pages up to `agents`, and one untimed step on each; how many of those failed."""
        while len(self.pages) < agents:
            i = len(self.pages)
            context = self.contexts[i % CONTEXTS]
            page = await first_page(context) if i < CONTEXTS else await context.new_page()
            page.set_default_timeout(OP_TIMEOUT_MS)
            self.pages.append(page)
        opened = await asyncio.gather(*(self.tried(p) for p in self.pages[:agents]))
        return sum(1 for t in opened if t is None)

    async def row(self, agents, seconds, unopened):
        began = time.perf_counter()

        async def loop(page):
            times = []
            while time.perf_counter() - began < seconds:
                times.append(await self.tried(page))
            return times

        per_page = await asyncio.gather(*(loop(p) for p in self.pages[:agents]))
        elapsed = time.perf_counter() - began
        times = [t for page in per_page for t in page]
        answered = sorted(t * 1000.0 for t in times if t is not None)
        row = {
            "event": "row",
            "agents": agents,
            "actions": len(answered),
            "rate": len(answered) / elapsed,
            "failed": unopened + sum(1 for t in times if t is None),
        }
        if answered:
            row["median_ms"] = statistics.median(answered)
            row["p95_ms"] = answered[math.ceil(0.95 * len(answered)) - 1]
        return row


async def run(args):
    with open(args.list_js, encoding="utf-8") as f:
        list_js = f.read()
    url = args.base.rstrip("/") + "/page"
    async with async_playwright() as pw:
        new_ms, relaunch_ms = await cold(pw, args.profiles, url, args.cold_runs)
        send({"event": "cold", "new_ms": new_ms, "relaunch_ms": relaunch_ms})
        contexts = [
            await launch(pw, os.path.join(args.profiles, f"load-{i}")) for i in range(CONTEXTS)
        ]
        agents = Agents(contexts, url, list_js)
        try:
            while (request := receive()) != "done":
                words = request.split()
                if len(words) != 3 or words[0] != "row":
                    fail(f"bad request {request!r}: expected 'row N SECONDS' or 'done'")
                count, seconds = int(words[1]), float(words[2])
                unopened = await agents.open(count)
                send({"event": "ready", "agents": count})
                if receive() != "go":
                    fail("expected 'go' after 'ready'")
                send(await agents.row(count, seconds, unopened))
        finally:
            for context in contexts:
                await context.close()


def main():
    parser = argparse.ArgumentParser(description="Playwright's load and cold-start rows.")
    parser.add_argument("--base", required=True, help="test server, e.g. http://127.0.0.1:PORT")
    parser.add_argument("--list-js", required=True, help="file with the listing function")
    parser.add_argument("--profiles", required=True, help="an empty folder for the profiles")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold starts of each kind")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except SystemExit:
        raise
    except Exception as error:  # one line on stderr, exit 1: the Rust side's contract
        fail(f"{type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
