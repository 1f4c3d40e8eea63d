#!/usr/bin/env python3
"""Playwright peer for the TodoMVC corpus: the task tests/tests/e2e/todomvc.rs gives our tool, done
with Python Playwright's own `fill`, `press` and `click` on every app of the corpus.

    python3 tests/bench/todomvc_peer.py --corpus "$(tests/ensure-todomvc.sh)" [--out results.json]

The corpus (npm todomvc@0.1.1) is served on 127.0.0.1 by this script. Each app
(examples/<name>/index.html) gets a fresh browser context of one Chromium (/usr/bin/chromium)
and this task, every step waiting at most --step-timeout-ms:

    input  the field "What needs to be done?" (batman's: "… completed?") shows
    type   fill it with the todo's text, press Enter
    listed the todo's text shows, and a checkbox in the nearest box around it
    check  click that checkbox → "0 items left" on the page
    clear  click "Clear completed" → the todo is gone

It prints one line per app (pass, or the step that failed and why) and, with --out, writes
{"playwright_version", "chromium_version", "apps": {name: {"pass": bool, "failed": step|null,
"error": str|null}}}. With --markdown FILE it writes the per-app table, ours (--ours, the
results tests/tests/e2e/todomvc.rs leaves in target/tmp/todomvc-ours.json) against Playwright's,
as the section SECTION of FILE, replacing the one there (tests/bench.sh does this for
BENCHMARKS.md). Requires `pip install playwright==1.65.2` (tests/bench/requirements.txt).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sections import write_section  # noqa: E402

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
TODO_TEXT = "buy milk"
STEPS = ["input", "type", "listed", "check", "clear"]
SECTION = "## TodoMVC corpus: ours against Playwright"


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
        # Until the network is quiet, as our navigate settles: apps that load their scripts
        # one by one (RequireJS) show the static field before they listen to it.
        page.goto(f"{base}/examples/{name}/index.html", wait_until="networkidle")
        # Batman's says "What needs to be completed?".
        field = page.get_by_placeholder(re.compile("^What needs to be ")).first
        field.wait_for(state="visible")
        step = "type"
        field.fill(TODO_TEXT)
        field.press("Enter")
        step = "listed"
        todo = page.get_by_text(TODO_TEXT, exact=True).first
        todo.wait_for(state="visible")
        # Its checkbox: the one in the nearest box around the todo's text that has one (a list
        # item in most apps, a table row in GWT's).
        row = todo.locator("xpath=ancestor::*[.//input[@type='checkbox'] or .//*[@role='checkbox']][1]")
        checkbox = row.get_by_role("checkbox").first
        checkbox.wait_for(state="attached")
        step = "check"
        checkbox.click()
        page.wait_for_function(
            "() => /\\b0 items? left\\b/.test(document.body.innerText.replace(/\\s+/g, ' '))"
        )
        step = "clear"
        page.get_by_text(re.compile("Clear completed", re.I)).first.click()
        page.get_by_text(TODO_TEXT).first.wait_for(state="hidden")
        return None, None
    except Exception as error:  # noqa: BLE001 - every failure is a result of the app
        message = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        return step, message[:200]
    finally:
        context.close()


def outcome(result):
    if result is None:
        return "—"
    return "pass" if result["pass"] else f"fails at {result['failed']}"


def markdown(results, ours, playwright_version, chromium_version):
    """The section: how it was measured, the counts, then one row per app."""
    apps = sorted(set(results) | set(ours))
    passed = sum(r["pass"] for r in results.values())
    ours_passed = sum(r["pass"] for r in ours.values())
    lines = [
        SECTION,
        "",
        "The npm package `todomvc@0.1.1` (the TodoMVC app of each framework, "
        "`examples/<name>/index.html`), served on 127.0.0.1; on each app the task: the field "
        '"What needs to be done?" shows, type a todo, Enter, the todo is listed, click its '
        'checkbox → "0 items left", click "Clear completed" → the todo is gone; every step '
        "looks again for up to 5 s. **Ours**: `tests/tests/e2e/todomvc.rs` (`navigate`, `wait`, "
        "`type`, `key`, `click`, `extract` through a real controller and worker, the checkbox "
        "found by its listed label, the todo's text). **Playwright**: "
        f"`tests/bench/todomvc_peer.py` (Python Playwright {playwright_version}, `fill`, "
        f"`press`, `click`; Chromium {chromium_version}). A step names where an app failed: "
        "`input` (no field), `type`, `listed` (the todo never showed, or not as a named "
        "checkbox), `check`, `clear`. Where both fail, the app lacks files the package does not "
        "ship (`bower_components`), loads scripts from the network (which is not reached), was "
        "removed from the package, or breaks on today's Chromium.",
        "",
        f"**Ours: {ours_passed} of {len(ours)} pass; Playwright: {passed} of {len(results)}.**",
        "",
        "| app | ours | Playwright |",
        "|---|---|---|",
    ]
    for app in apps:
        lines.append(f"| {app} | {outcome(ours.get(app))} | {outcome(results.get(app))} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="the todomvc package's folder")
    parser.add_argument("--out", help="where to write the results as JSON")
    parser.add_argument("--step-timeout-ms", type=int, default=5000)
    parser.add_argument("--only", nargs="*", help="just these apps")
    parser.add_argument("--ours", help="ours per app (JSON, from tests/tests/e2e/todomvc.rs)")
    parser.add_argument("--markdown", help="the file whose TodoMVC section to write")
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
    playwright_version = importlib.metadata.version("playwright")
    if args.out:
        with open(args.out, "w") as out:
            json.dump(
                {
                    "playwright_version": playwright_version,
                    "chromium_version": version,
                    "apps": results,
                },
                out,
                indent=1,
            )
    if args.markdown:
        ours = {}
        if args.ours and os.path.exists(args.ours):
            with open(args.ours) as source:
                ours = json.load(source)
        section = markdown(results, ours, playwright_version, version)
        write_section(args.markdown, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
