"""A scripted MCP client on the official Python SDK (`mcp` on PyPI), for tests/tests/e2e/mcp.rs.

    client.py http URL [--token T] [--origin O]  < plan.json
    client.py stdio COMMAND [ARG ...]            < plan.json

It connects over Streamable HTTP or stdio, initializes, lists the tools, then makes the plan's
tool calls in order, as a model would: an argument {"$element": "Label"} is the number [n] of
the element so labelled in the last reply's listing. A step with "release_hold" presses Done on
the open hold with that reason through the HTTP API once the call reports its first progress
(the call is waiting for the user then). It prints what it saw as one JSON object on stdout;
the Rust test judges it. With "list_resources", it lists the thread's frames and reads the
newest; "read_resources" names frames to read. The plan is the first line of stdin; a step
{"pause": true} prints {"paused": true} on a line of its own and waits for the next line of
stdin before the steps after it (the test restarts the server meanwhile), in the same session.
"""

import argparse
import base64
import json
import re
import sys
import urllib.request

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def element_number(text, label):
    """The n of `[n] kind "label"` (or 'label') in a listing."""
    for line in text.splitlines():
        match = re.match(r"\s*\[(\d+)\]\s.*[\"']" + re.escape(label) + r"[\"']", line)
        if match:
            return int(match.group(1))
    raise LookupError(f"no element {label!r} in:\n{text}")


def resolve(arguments, last_text):
    return {
        name: element_number(last_text, value["$element"]) if isinstance(value, dict) and "$element" in value else value
        for name, value in arguments.items()
    }


def press_done(api, token, reason):
    """Done on the open hold whose reason is `reason`, as the card's API takes it."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"{api}/api/state", headers=headers)
    with urllib.request.urlopen(request) as answer:
        state = json.load(answer)
    (hold,) = [hold for hold in state["holds"] if hold["reason"] == reason]
    # The API takes JSON POSTs only (a page's form cannot send one).
    headers["content-type"] = "application/json"
    request = urllib.request.Request(f"{api}/api/holds/{hold['id']}/done", method="POST", headers=headers, data=b"{}")
    with urllib.request.urlopen(request):
        pass
    return hold["id"]


async def run_step(session, step, last_text):
    seen = {"tool": step["tool"], "progress": [], "texts": [], "images": [], "is_error": None, "error": None}
    release = step.get("release_hold")
    released = anyio.Event()

    async def on_progress(progress, total, message):
        seen["progress"].append({"progress": progress, "total": total, "message": message})
        if release and not released.is_set():
            released.set()
            try:
                seen["released"] = await anyio.to_thread.run_sync(
                    press_done, release["api"], release.get("token"), release["reason"]
                )
            except Exception as error:
                # The call would wait for the hold's timeout: give up on it, saying why.
                seen["release_error"] = f"{type(error).__name__}: {error}"
                waiting.set()

    cancel = step.get("cancel_on_progress")
    waiting = anyio.Event()
    result = None

    async def on_progress_or_cancel(progress, total, message):
        await on_progress(progress, total, message)
        if cancel:
            waiting.set()

    async def call(scope):
        nonlocal result
        result = await session.call_tool(
            step["tool"],
            resolve(step.get("args", {}), last_text),
            progress_callback=on_progress_or_cancel if release or cancel else None,
        )
        scope.cancel()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(call, group.cancel_scope)
            if cancel or release:
                await waiting.wait()
                # The client gives up on the call, as a user stopping the agent would.
                group.cancel_scope.cancel()
                seen["cancelled"] = True
    except Exception as error:  # a protocol error: the test says whether one was expected
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        seen["error"] = f"{type(error).__name__}: {error}"
        return seen
    if result is None:
        return seen
    seen["is_error"] = bool(result.is_error)
    for block in result.content:
        if block.type == "text":
            seen["texts"].append(block.text)
        elif block.type == "image":
            base64.b64decode(block.data, validate=True)
            seen["images"].append({"mime": block.mime_type, "data": block.data})
    return seen


async def session_run(read, write, plan):
    report = {"steps": []}
    async with ClientSession(read, write) as session:
        initialized = await session.initialize()
        report["protocol_version"] = initialized.protocol_version
        report["server"] = initialized.server_info.name
        listed = await session.list_tools()
        report["tools"] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
            for tool in listed.tools
        ]
        last_text = ""
        for step in plan.get("steps", []):
            if step.get("pause"):
                print(json.dumps({"paused": True}), flush=True)
                await anyio.to_thread.run_sync(sys.stdin.readline)
                continue
            seen = await run_step(session, step, last_text)
            if seen["texts"]:
                last_text = seen["texts"][0]
            report["steps"].append(seen)
        if plan.get("list_resources"):
            listed = await session.list_resources()
            report["resources"] = [{"uri": str(r.uri), "mime": r.mime_type, "name": r.name} for r in listed.resources]
        report["reads"] = []
        for uri in plan.get("read_resources", []) + [r["uri"] for r in report.get("resources", [])[:1]]:
            try:
                read = await session.read_resource(uri)
                (contents,) = read.contents
                base64.b64decode(contents.blob, validate=True)
                report["reads"].append({"uri": uri, "mime": contents.mime_type, "data": contents.blob})
            except Exception as error:
                report["reads"].append({"uri": uri, "error": f"{type(error).__name__}: {error}"})
    return report


async def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="transport", required=True)
    http = sub.add_parser("http")
    http.add_argument("url")
    http.add_argument("--token")
    http.add_argument("--origin")
    stdio = sub.add_parser("stdio")
    stdio.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    plan = json.loads(sys.stdin.readline())

    if args.transport == "http":
        headers = {}
        if args.token:
            headers["authorization"] = f"Bearer {args.token}"
        if args.origin:
            headers["origin"] = args.origin
        async with create_mcp_http_client(headers=headers) as client:
            async with streamable_http_client(args.url, http_client=client) as (read, write):
                report = await session_run(read, write, plan)
    else:
        command, *rest = args.command
        server = StdioServerParameters(command=command, args=rest, env={"RUST_LOG": "warn"})
        async with stdio_client(server) as (read, write):
            report = await session_run(read, write, plan)
    print(json.dumps(report))


if __name__ == "__main__":
    anyio.run(main)
