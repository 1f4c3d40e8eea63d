#!/usr/bin/env python3
"""Playwright peer for the TodoMVC corpus: the task tests/tests/todomvc.rs gives our tool, done
with Python Playwright's own `fill`, `press` and `click` on every app of the corpus.

    python3 tests/bench/todomvc_peer.py --corpus "$(tests/ensure-todomvc.sh)" [--out results.json]

The corpus (npm todomvc@0.1.1) is served on 127.0.0.1 by this script. Each app
(examples/<name>/index.html) gets a fresh browser context of one Chromium (/usr/bin/chromium)
and this task, every step waiting at most --step-timeout-ms:

    input  the field "What needs to be done?" shows (get_by_placeholder)
    type   fill it with the todo's text, press Enter
    listed the todo shows as an item of the list
    check  click that item's checkbox → "0 items left" on the page
    clear  click "Clear completed" → the todo is gone

It prints one line per app (pass, or the step that failed and why) and, with --out, writes
{"playwright_version", "chromium_version", "apps": {name: {"pass": bool, "failed": step|null,
"error": str|null}}}. Requires `pip install playwright==1.65.2` (tests/bench/requirements.txt).
"""

import argparse
import functools
import http.server
import importlib.metadata
import json
import os
import re
import sys
import threading

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
]
VIEWPORT = {"width": 1280, "height": 900}
TODO = "buy milk"
STEPS = ["input", "type", "listed", "check", "clear"]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(Quiet, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def apps(corpus):
    examples = os.path.join(corpus, "examples")
    return sorted(
        name
        for name in os.listdir(examples)
        if os.path.isfile(os.path.join(examples, name, "index.html"))
    )


def words(page):
    return re.sub(r"\s+", " ", page.inner_text("body"))


def run_app(browser, base, name, timeout_ms):
    """The first step that failed and why, or (None, None)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(timeout_ms)
    page = context.new_page()
    step = "input"
    try:
        page.goto(f"{base}/examples/{name}/index.html", wait_until="load")
        field = page.get_by_placeholder("What needs to be done?").first
        field.wait_for(state="visible")
        step = "type"
        field.fill(TODO)
        field.press("Enter")
        step = "listed"
        item = page.get_by_role("listitem").filter(has_text=TODO).first
        item.wait_for(state="visible")
        step = "check"
        item.get_by_role("checkbox").first.click()
        page.wait_for_function(
            "() => /\\b0 items? left\\b/.test(document.body.innerText.replace(/\\s+/g, ' '))"
        )
        step = "clear"
        page.get_by_text(re.compile("Clear completed", re.I)).first.click()
        page.get_by_text(TODO).first.wait_for(state="hidden")
        return None, None
    except Exception as error:  # noqa: BLE001 - every failure is a result of the app
        message = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        return step, message[:200]
    finally:
        context.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="the todomvc package's folder")
    parser.add_argument("--out", help="where to write the results as JSON")
    parser.add_argument("--step-timeout-ms", type=int, default=5000)
    parser.add_argument("--only", nargs="*", help="just these apps")
    args = parser.parse_args()

    server = serve(args.corpus)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for name in args.only or apps(args.corpus):
            failed, error = run_app(browser, base, name, args.step_timeout_ms)
            results[name] = {"pass": failed is None, "failed": failed, "error": error}
            print(f"{name:28} {'pass' if failed is None else 'FAIL at ' + failed + ': ' + error}",
                  flush=True)
        version = browser.version
        browser.close()
    server.shutdown()
    passed = sum(r["pass"] for r in results.values())
    print(f"Playwright passes {passed} of {len(results)} apps", flush=True)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(
                {
                    "playwright_version": importlib.metadata.version("playwright"),
                    "chromium_version": version,
                    "apps": results,
                },
                out,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
