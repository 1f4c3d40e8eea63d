"""Ours against Playwright MCP, both as MCP servers over stdio, driven by one scripted client
(the official Python SDK) doing the same task on every app of the TodoMVC corpus, reading the
page between steps as a model would: navigate; type into "What needs to be done?"; Enter; see
the todo; click its checkbox → "0 items left"; click "Clear completed" → gone.

    mcp_peer.py --corpus DIR --ours "CMD ARGS" --playwright "CMD ARGS" [--apps a,b] \
        [--markdown FILE] > results.json

Each app is served on a port of its own (an origin each: many share a localStorage key). Per
server and app: passed, or the step that failed, and the seconds the task took; per server: the
median seconds per tool call (all of them; the page-changing ones; the reads) and characters per
reply. With --markdown FILE, the section SECTION of FILE is replaced by the results. Run by
tests/bench/mcp-peer.sh; not part of the test command.
"""

import argparse
import functools
import http.server
import json
import re
import shlex
import statistics
import sys
import threading
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sections import write_section  # noqa: E402

SECTION = "## MCP: ours against Playwright MCP"
# The calls that change the page, and those that only read it; the rest are waits of a second.
CHANGES = {"browser_navigate", "browser_type", "browser_key", "browser_click"}
READS = {"browser_snapshot", "browser_extract"}

TODO_TEXT = "buy milk"
LOOK_AGAIN = 5.0


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


class Failed(Exception):
    def __init__(self, step, why):
        super().__init__(f"{step}: {why}")
        self.step = step


class Driver:
    """One server's session; each tool call timed and its reply's size counted."""

    def __init__(self, session):
        self.session = session
        self.seconds = []
        self.chars = []
        self.by_tool = {}

    async def call(self, tool, **arguments):
        started = time.perf_counter()
        result = await self.session.call_tool(tool, arguments)
        self.seconds.append(time.perf_counter() - started)
        self.by_tool.setdefault(tool, []).append(self.seconds[-1])
        text = "\n".join(block.text for block in result.content if block.type == "text")
        self.chars.append(len(text))
        if result.is_error:
            raise RuntimeError(text)
        if tool != "browser_extract":
            self.last = text
        return text


class Ours(Driver):
    """nanomuse-browser: replies list the page as `[n] kind "label"`; extract reads its text."""

    # One thread, the session's own, as a model with one task uses it.
    async def open(self, app, url):
        return await self.call("browser_navigate", url=url)

    async def look(self):
        return await self.call("browser_wait", seconds=1)

    async def read(self):
        # The listing names the controls, not the page's text: that is extract's.
        return await self.call("browser_extract")

    async def current(self):
        # Every action's reply lists the page: the model has the numbers already.
        return self.last

    def find(self, page, kind, label):
        for line in page.splitlines():
            match = re.match(r"\s*\[(\d+)\] (\S+) \"(.*?)\"", line)
            if match and match.group(2).startswith(kind) and label(match.group(3)):
                return int(match.group(1))
        return None

    async def type(self, ref, text):
        await self.call("browser_type", n=ref, text=text)
        return await self.call("browser_key", key="Enter")

    async def click(self, ref):
        return await self.call("browser_click", n=ref)


class Playwright(Driver):
    """Playwright MCP: an accessibility snapshot with `[ref=eN]`, asked for by browser_snapshot."""

    # An action's reply says the snapshot went to a file: the model asks for it once after
    # each action or wait, and reads that one until the page may have changed again.
    async def open(self, app, url):
        await self.call("browser_navigate", url=url)
        return await self.call("browser_snapshot")

    async def look(self):
        await self.call("browser_wait_for", time=1)
        return await self.call("browser_snapshot")

    async def read(self):
        return self.last

    async def current(self):
        return self.last

    def find(self, page, kind, label):
        lines = page.splitlines()
        for i, line in enumerate(lines):
            match = re.match(r'\s*- (\w+)(?: "(.*?)")?.*[[]ref=(\w+)[]]', line)
            if not match or not match.group(1).startswith(kind):
                continue
            name = match.group(2) or ""
            if kind == "checkbox":
                # A todo's checkbox is named by its todo: the text in the lines around it.
                name += " " + " ".join(lines[max(0, i - 2) : i + 4])
            if label(name):
                return match.group(3)
        return None

    async def type(self, ref, text):
        await self.call("browser_type", element="the new todo field", target=ref, text=text, submit=True)
        return await self.call("browser_snapshot")

    async def click(self, ref):
        await self.call("browser_click", element="the element", target=ref)
        return await self.call("browser_snapshot")


async def look_for(driver, page, kind, label):
    started = time.perf_counter()
    while True:
        ref = driver.find(page, kind, label)
        if ref is not None or time.perf_counter() - started > LOOK_AGAIN:
            return ref
        page = await driver.look()


async def text_comes(driver, test):
    started = time.perf_counter()
    while True:
        text = " " + " ".join((await driver.read()).split()) + " "
        if test(text):
            return True
        if time.perf_counter() - started > LOOK_AGAIN:
            return False
        await driver.look()


async def task(driver, app, url):
    try:
        page = await driver.open(app, url)
    except Exception as error:
        raise Failed("input", error)
    field = await look_for(driver, page, "input" if isinstance(driver, Ours) else "textbox",
                           lambda name: name.startswith("What needs to be "))
    if field is None:
        raise Failed("input", 'no field "What needs to be done?"')
    try:
        await driver.type(field, TODO_TEXT)
    except Exception as error:
        raise Failed("type", error)
    if not await text_comes(driver, lambda text: TODO_TEXT in text):
        raise Failed("listed", "the todo is not on the page")
    checkbox = await look_for(driver, await driver.current(), "checkbox", lambda name: TODO_TEXT in name)
    if checkbox is None:
        raise Failed("listed", f"no checkbox {TODO_TEXT!r}")
    try:
        await driver.click(checkbox)
    except Exception as error:
        raise Failed("check", error)
    # Dojo's says "0 item left"; a snapshot puts the count in a node of its own.
    none_left = re.compile(r"\b0\b[^A-Za-z0-9]*(?:text:)?\s*items? left")
    if not await text_comes(driver, lambda text: none_left.search(text) is not None):
        raise Failed("check", 'no "0 items left"')
    clear = await look_for(driver, await driver.current(), "button", lambda name: "clear completed" in name.lower())
    if clear is None:
        raise Failed("clear", 'no "Clear completed"')
    try:
        await driver.click(clear)
    except Exception as error:
        raise Failed("clear", error)
    if not await text_comes(driver, lambda text: TODO_TEXT not in text):
        raise Failed("clear", "the todo is still on the page")


async def run_server(kind, command, corpus, apps, ports):
    server = StdioServerParameters(command=command[0], args=command[1:], env={"RUST_LOG": "warn"})
    results, task_seconds = {}, []
    async with stdio_client(server, errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            driver = kind(session)
            for app, port in zip(apps, ports):
                url = f"http://127.0.0.1:{port}/examples/{app}/index.html"
                try:
                    started = time.perf_counter()
                    with anyio.fail_after(120):
                        await task(driver, app, url)
                    task_seconds.append(time.perf_counter() - started)
                    results[app] = "pass"
                except Failed as failure:
                    results[app] = str(failure).replace("\n", " ")[:200]
                except Exception as error:
                    results[app] = f"error: {error}".replace("\n", " ")[:200]
                print(f"{kind.__name__} {app}: {results[app]}", file=sys.stderr)
    def median_of(tools):
        seconds = [s for tool, times in driver.by_tool.items() if tool in tools for s in times]
        return statistics.median(seconds) if seconds else None

    return {
        "apps": results,
        "passed": sum(1 for r in results.values() if r == "pass"),
        "calls": len(driver.seconds),
        "median_seconds_per_call": statistics.median(driver.seconds) if driver.seconds else None,
        "median_seconds_per_change": median_of(CHANGES),
        "median_seconds_per_read": median_of(READS),
        "median_seconds_per_passed_task": statistics.median(task_seconds) if task_seconds else None,
        "median_chars_per_reply": statistics.median(driver.chars) if driver.chars else None,
        "by_tool": {
            tool: {"calls": len(seconds), "median_seconds": statistics.median(seconds)}
            for tool, seconds in sorted(driver.by_tool.items())
        },
    }


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--ours", required=True, help="the command line of our server")
    parser.add_argument("--playwright", required=True, help="the command line of Playwright MCP")
    parser.add_argument("--apps")
    parser.add_argument("--markdown", help="a file whose SECTION the results replace")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    apps = sorted(p.parent.name for p in corpus.glob("examples/*/index.html"))
    if args.apps:
        apps = [app for app in apps if app in args.apps.split(",")]
    # A port per app and per server: each app an origin of its own, in each browser.
    report = {"apps": apps}
    for name, kind, command in [("ours", Ours, args.ours), ("playwright", Playwright, args.playwright)]:
        command = shlex.split(command)
        ports = [serve(corpus) for _ in apps]
        report[name] = await run_server(kind, command, corpus, apps, ports)
    print(json.dumps(report))
    if args.markdown:
        write_section(args.markdown, markdown(report))


def markdown(report):
    ours, pw = report["ours"], report["playwright"]
    apps = report["apps"]

    def ratio(key):
        if ours[key] is None or pw[key] is None:
            return "—"
        return f"{ours[key] / pw[key]:.2f}×"

    def seconds(value):
        return "—" if value is None else f"{value:.3f}"

    lines = [
        SECTION,
        "",
        "Both as MCP servers over stdio, one scripted client (`tests/bench/mcp_peer.py`, the "
        "official Python SDK) doing the TodoMVC task on every app of npm `todomvc@0.1.1` "
        "(`tests/bench/mcp-peer.sh`): navigate; type a todo into \"What needs to be done?\"; "
        "Enter; the todo is listed; click its checkbox → \"0 items left\"; click \"Clear "
        "completed\" → gone; reading the page between steps as a model would. **Ours**: "
        "`nanomuse-browser mcp` (the embedded server, one thread: the session's); every action's "
        "reply lists the page, `browser_extract` reads its text. **Playwright MCP** "
        "(`@playwright/mcp` 0.0.83, `--headless --isolated`, the same Chromium): an action's reply "
        "says its snapshot went to a file, so the client asks for `browser_snapshot` once after "
        "each action or wait. Seconds; a wait is `browser_wait` / `browser_wait_for` of 1 s, "
        "when a step looks again.",
        "",
        "| | ours | Playwright MCP | ours / PW |",
        "|---|---|---|---|",
        f"| apps passed (of {len(apps)}) | {ours['passed']} | {pw['passed']} | |",
        f"| tool calls | {ours['calls']} | {pw['calls']} | |",
        f"| median per call, all calls | {seconds(ours['median_seconds_per_call'])} | "
        f"{seconds(pw['median_seconds_per_call'])} | {ratio('median_seconds_per_call')} |",
        f"| median per page-changing call (navigate, type, key, click) | "
        f"{seconds(ours['median_seconds_per_change'])} | {seconds(pw['median_seconds_per_change'])} | "
        f"{ratio('median_seconds_per_change')} |",
        f"| median per read (extract; snapshot) | {seconds(ours['median_seconds_per_read'])} | "
        f"{seconds(pw['median_seconds_per_read'])} | {ratio('median_seconds_per_read')} |",
        f"| median per passed app, the whole task | "
        f"{seconds(ours['median_seconds_per_passed_task'])} | "
        f"{seconds(pw['median_seconds_per_passed_task'])} | "
        f"{ratio('median_seconds_per_passed_task')} |",
        f"| median characters per reply | {ours['median_chars_per_reply']:.0f} | "
        f"{pw['median_chars_per_reply']:.0f} | |",
        "",
        "Per tool: calls, median seconds.",
        "",
        "| tool | ours | Playwright MCP |",
        "|---|---|---|",
    ]
    for tool in sorted(set(ours["by_tool"]) | set(pw["by_tool"])):
        cells = []
        for side in (ours, pw):
            entry = side["by_tool"].get(tool)
            cells.append("—" if entry is None else f"{entry['calls']}: {entry['median_seconds']:.3f}")
        lines.append(f"| `{tool}` | {cells[0]} | {cells[1]} |")
    differ = [app for app in apps if ours["apps"][app] != pw["apps"][app]]
    lines += ["", "Apps where the two differ (elsewhere both pass or both fail alike):", ""]
    lines += ["| app | ours | Playwright MCP |", "|---|---|---|"]
    lines += [f"| {app} | {ours['apps'][app]} | {pw['apps'][app]} |" for app in differ]
    if not differ:
        lines.append("| none | | |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    anyio.run(main)
