"""`mcplens proxy` (the wheel's command, `python -m mcplens`) with the installed SDK's
`ClientSession` as the host: a templates-only server becomes usable through the resource tools, and
a community fastmcp 4 server keeps every tool, prompt and resource it has, plus the resource tools.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from support import SERVERS

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
        assert json.loads(text)["contents"][0]["text"] == "contents of a.txt"
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
        assert json.loads(text)["contents"][0]["uri"] == "note://7"
