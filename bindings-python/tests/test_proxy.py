"""`mcplens proxy` (the wheel's command, `python -m mcplens`) with the installed SDK's
`ClientSession` as the host: a templates-only server becomes usable through the resource tools, and
a community fastmcp 4 server keeps every tool, prompt and resource it has, plus the resource tools.
On mcp 2.x, its `Client` as the host speaks 2026-07-28 through the proxy to an `MCPServer`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from support import SERVERS, V2, eventually, http_server, read_output

pytestmark = pytest.mark.anyio
OURS = ["mcplens_ListMcpResourceTemplatesTool", "mcplens_ListMcpResourcesTool", "mcplens_ReadMcpResourceTool"]
FASTMCP4 = Path(__file__).resolve().parents[2] / ".build" / "venv-fastmcp4" / "bin" / "python"


@asynccontextmanager
async def proxied(events: Path, *server: str) -> AsyncIterator[Any]:
    """A session to `server` (a command) through `mcplens proxy --server up`."""
    args = ["-m", "mcplens", "proxy", "--server", "up", "--events", str(events), "--", *server]
    params = StdioServerParameters(command=sys.executable, args=args)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def tool(session: Any, name: str, **arguments: Any) -> tuple[bool, str]:
    result = await session.call_tool(name, arguments)
    is_error = getattr(result, "isError", None) or getattr(result, "is_error", False)
    return bool(is_error), result.content[0].text


async def test_a_templates_only_server_is_usable_through_the_resource_tools(tmp_path: Path) -> None:
    async with proxied(tmp_path / "events.jsonl", sys.executable, str(SERVERS / "templates_only_server.py")) as s:
        assert [t.name for t in (await s.list_tools()).tools] == OURS
        assert (await s.list_resources()).resources == []
        error, text = await tool(s, OURS[0])
        assert not error, text
        assert [t["uriTemplate"] for t in json.loads(text)["resourceTemplates"]] == ["file:///{path}"]
        error, text = await tool(s, OURS[2], server="up", uri="file:///a.txt")
        assert not error, text
        assert read_output(text)["contents"][0]["text"] == "contents of a.txt"
        error, text = await tool(s, OURS[2], server="up", uri="https://example.com/secret")
        assert error
        assert "unlisted_uri" in text
        assert "secret" not in text
    types = [json.loads(line)["type"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert types.count("mcp:tools/call") == 3


async def test_a_fastmcp_4_server_keeps_everything_and_gains_the_resource_tools(tmp_path: Path) -> None:
    assert FASTMCP4.exists(), "make test-python builds .build/venv-fastmcp4"
    async with proxied(tmp_path / "events.jsonl", str(FASTMCP4), str(SERVERS / "fastmcp_server.py"), "stdio") as s:
        names = [t.name for t in (await s.list_tools()).tools]
        assert names[-3:] == OURS
        assert "echo" in names
        echoed = await s.call_tool("echo", {"text": "through"})
        assert echoed.content[0].text == "through"
        prompt = await s.get_prompt("greet", {"who": "Ada"})
        assert "Ada" in prompt.messages[0].content.text
        uris = [str(r.uri) for r in (await s.list_resources()).resources]
        assert "mem://static" in uris
        error, text = await tool(s, OURS[1])
        assert not error, text
        assert "mem://static" in [r["uri"] for r in json.loads(text)["resources"]]
        error, text = await tool(s, OURS[2], server="up", uri="note://7")
        assert not error, text
        assert read_output(text)["contents"][0]["uri"] == "note://7"


# reason: mcp 1.x has no Client and no 2026-07-28 era; this test runs in the mcp 2.3.0 pass of make test-python
@pytest.mark.skipif(not V2, reason="mcp.Client and the 2026-07-28 era exist in mcp 2.x only")
@pytest.mark.parametrize("upstream", ["stdio", "http"])
async def test_a_2026_07_28_host_and_server_through_the_proxy(
    tmp_path: Path, upstream: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proxy speaks the host's revision: its own requests carry the host's envelope (the
    server refuses them otherwise), its results `resultType`, over HTTP each request the
    revision's routing headers; and it hears of changes on a `subscriptions/listen` stream of
    its own (the only way they come in this revision)."""

    log, events = tmp_path / "methods.log", tmp_path / "events.jsonl"
    monkeypatch.setenv("FAST_SERVER_LOG", str(log))  # the server's environment, over stdio or HTTP
    async with contextlib.AsyncExitStack() as stack:
        if upstream == "http":
            url = await stack.enter_async_context(http_server(str(SERVERS / "fast_server.py"), "http"))
            target = ["--url", url]
        else:
            target = ["--", sys.executable, str(SERVERS / "fast_server.py")]
        args = ["-m", "mcplens", "proxy", "--events", str(events), *target]
        params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
        await a_change_heard_through_the_proxy(params, log)
    tracked = [json.loads(line) for line in events.read_text().splitlines()]
    assert {(e["client"]["name"], e["server"]["name"]) for e in tracked} == {("mcp", "fast")}
    assert [e["type"] for e in tracked].count("mcp:tools/call") == 4


async def a_change_heard_through_the_proxy(params: StdioServerParameters, log: Path) -> None:
    """A template added upstream reaches the proxy's tools with nothing but the proxy's own
    listen stream to tell it; `log` holds the methods the server was asked."""
    from mcp import Client

    def methods() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    async with Client(params) as c:
        assert c.protocol_version == "2026-07-28"
        assert [t.name for t in (await c.list_tools()).tools] == ["add_template", *OURS]
        error, text = await tool(c, OURS[0])
        assert not error, text
        assert [t["name"] for t in json.loads(text)["resourceTemplates"]] == ["files"]
        assert (await c.call_tool("add_template", {"name": "notes"})).content[0].text == "added"
        # Nothing the host does asks for the list again: the proxy's own stream brought the change.
        await eventually(lambda: methods().count("resources/templates/list") == 2)
        error, text = await tool(c, OURS[0])
        assert not error, text
        assert [t["name"] for t in json.loads(text)["resourceTemplates"]] == ["files", "notes"]
        error, text = await tool(c, OURS[2], server="fast", uri="note://notes/7")
        assert not error, text
        assert read_output(text)["contents"][0]["text"] == "7"
    assert methods().count("subscriptions/listen") == 1
