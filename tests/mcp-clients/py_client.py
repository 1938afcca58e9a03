"""End-to-end checks of a Toolhost MCP server with the official Python SDK (`mcp`).

    python py_client.py '{"transport": "stdio", "bin": ".../toolhost", "args": [...], "env": {...}, "home": "...", "tools": "...", "mode": "auto"}'
    python py_client.py '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "home": "...", "tools": "...", "mode": "auto"}'

`mode` is the SDK's: "auto" negotiates the stateless 2026-07-28 revision (server/discover,
list changes on a subscriptions/listen stream); "legacy" uses the initialize handshake.
Exits non-zero with a message on the first check that fails.
"""

import json
import os
import sys
from pathlib import Path

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

opts = json.loads(sys.argv[1])
mode = opts.get("mode", "auto")


def check(ok, what=None) -> None:
    """A check that `python -O` keeps: it strips bare `assert` statements, and the client
    would print `ok` having checked nothing."""
    if not ok:
        raise AssertionError("check failed" if what is None else what)


def step(name: str) -> None:
    print(f"py {opts['transport']} {mode}: {name}", file=sys.stderr, flush=True)


def server():
    if opts["transport"] == "stdio":
        env = dict(os.environ)
        env.update(opts.get("env", {}))
        return StdioServerParameters(command=opts["bin"], args=opts["args"], env=env)
    headers = {"Authorization": f"Bearer {opts['token']}"} if opts.get("token") else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
    return streamable_http_client(opts["url"], http_client=http)


async def wait_for(what, done, seconds=10.0):
    with anyio.fail_after(seconds):
        while not done():
            await anyio.sleep(0.025)


def text(result):
    return [c.text for c in result.content]


list_changed = []


async def on_message(message) -> None:
    if getattr(message, "method", None) == "notifications/tools/list_changed":
        list_changed.append(message)


async def main() -> None:
    async with Client(server(), mode=mode, message_handler=on_message) as client:
        step(f"connected with protocol {client.protocol_version}")
        if mode == "auto":
            check(client.protocol_version == "2026-07-28", client.protocol_version)

        step("tools/list")
        listing = await client.list_tools()
        tools = {t.name: t for t in listing.tools}
        check([t.name for t in listing.tools] == ["echo", "slow"], listing)
        check(tools["echo"].title == "Echo")
        check(tools["echo"].description.startswith("Returns the text it is given"))
        check(tools["echo"].input_schema == {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to return."}},
            "required": ["text"],
            "additionalProperties": False,
        }, tools["echo"].input_schema)
        check(tools["slow"].input_schema["required"] == ["steps"])
        check(tools["slow"].input_schema["properties"]["delay_ms"]["default"] == 50)

        step("tools/call")
        hello = await client.call_tool("echo", {"text": "hello"})
        check(not hello.is_error and text(hello) == ["hello"], hello)

        step("progress")
        seen = []

        async def on_progress(progress, total, message):
            seen.append((progress, message))

        done = await client.call_tool(
            "slow", {"steps": 3, "delay_ms": 20}, progress_callback=on_progress
        )
        check(not done.is_error and text(done) == ["done 3 steps"], done)
        check([m for _, m in seen] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"], seen)
        check(all(a[0] < b[0] for a, b in zip(seen, seen[1:])), seen)

        step("cancel")
        marker = f"aborted-py-{opts['transport']}-{mode}-{os.getpid()}"
        started = anyio.Event()

        async def started_progress(progress, total, message):
            started.set()

        async with anyio.create_task_group() as tg:

            async def slow_call():
                await client.call_tool(
                    "slow",
                    {"steps": 400, "delay_ms": 50, "marker": marker},
                    progress_callback=started_progress,
                )
                raise AssertionError("the cancelled call finished")

            tg.start_soon(slow_call)
            with anyio.fail_after(10):
                await started.wait()
            tg.cancel_scope.cancel()
        marker_path = Path(opts["home"]) / marker
        await wait_for(f"the abort handler's marker {marker_path}", marker_path.exists)

        step("invalid params")
        missing = await client.call_tool("echo", {})
        check(missing.is_error and "text" in text(missing)[0], missing)
        wrong = await client.call_tool("slow", {"steps": "lots"})
        check(wrong.is_error and "steps" in text(wrong)[0], wrong)
        try:
            await client.call_tool("no_such_tool", {})
            raise AssertionError("an unknown tool must be a JSON-RPC error")
        except MCPError as e:
            check(e.error.code == -32602, e.error)

        step("100 concurrent calls")
        results = [None] * 100

        async def one(i):
            results[i] = await client.call_tool("echo", {"text": f"call {i}"})

        async with anyio.create_task_group() as tg:
            for i in range(100):
                tg.start_soon(one, i)
        for i, r in enumerate(results):
            check(text(r) == [f"call {i}"], r)

        step("list_changed")
        tool_md = Path(opts["tools"]) / "echo" / "TOOL.md"
        edited = "Echoes the text back, edited by Python."
        if mode == "auto":
            async with client.listen(tools_list_changed=True) as sub:
                tool_md.write_text(
                    tool_md.read_text().replace("Returns the text it is given.", edited)
                )
                with anyio.fail_after(10):
                    async for _event in sub:
                        break
        else:
            # The initialize handshake: list changes come as plain notifications.
            tool_md.write_text(
                tool_md.read_text().replace("Returns the text it is given.", edited)
            )
            await wait_for("notifications/tools/list_changed", lambda: list_changed)
        listing = await client.list_tools()
        echo = next(t for t in listing.tools if t.name == "echo")
        check(echo.description.startswith(edited), echo.description)
    step("ok")


anyio.run(main)
