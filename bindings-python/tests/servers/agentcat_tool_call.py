"""Sends one `tools/call` through a server tracked by agentcat 2.1.0 (the SDK people use today) and
waits until agentcat has POSTed its event to `argv[1]` (a loopback receiver the test runs).

Run with the `.build/venv-bench` interpreter (mcp 2.3.0 + agentcat 2.1.0): the test compares
this body, field by field, with the one mcplens sends for the same call. agentcat's tool-call
context injection, its `get_more_tools` tool and its diagnostics are off; nothing leaves the
machine."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

os.environ["DISABLE_DIAGNOSTICS"] = "true"

import agentcat
from agentcat.modules import event_queue
from mcp import Client, types
from mcp.server.lowlevel import Server

ECHO = types.Tool(name="echo", input_schema={"type": "object", "properties": {"text": {"type": "string"}}})


async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def on_call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.arguments["text"])])


async def main(base_url: str) -> None:
    server = Server("compare-server", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    options = agentcat.AgentCatOptions(
        enable_tool_call_context=False,
        enable_report_missing=False,
        disable_diagnostics=True,
        api_base_url=base_url,
    )
    agentcat.track(server, "proj_compare", options)
    async with Client(server, mode="legacy") as client:
        await client.call_tool("echo", {"text": "hello agentcat"})


def wait_until_sent() -> None:
    """agentcat's worker thread posts on its own; its exit hook never drains: wait (bounded)."""
    q = event_queue.event_queue
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (q.queue.empty() and q._active == 0):
        time.sleep(0.01)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
    wait_until_sent()
