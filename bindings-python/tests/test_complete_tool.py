"""`CompleteMcpResourceTemplateTool` through `mcplens.Catalog.call_tool` (what every Python adapter
calls) over real `mcp` sessions: server-everything's `resourceId` completion fills a template that is
then read, and the hostile server (`tests/servers/hostile/server.py --completions`) answers too much,
the wrong types, unsafe text, lies about `total`/`hasMore`, -32601, -32603, or never: every output is
bounded and sanitized, and nothing it sent reaches the model unbounded."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import test_everything
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_everything import params as everything_params

import mcplens

pytestmark = pytest.mark.anyio

HOSTILE = Path(__file__).resolve().parents[2] / "tests" / "servers" / "hostile" / "server.py"
COMPLETE = mcplens.COMPLETE_TEMPLATE_TOOL.name
FILES = "file:///{path}"


def ask(template: str, variable: str, value: str, **extra: Any) -> dict[str, Any]:
    return {"server": "srv", "uriTemplate": template, "variable": variable, "value": value, **extra}


async def test_the_hostile_server_is_bounded_and_sanitized() -> None:
    hostile = StdioServerParameters(command=sys.executable, args=[str(HOSTILE), "--case", "good", "--completions"])
    catalog = mcplens.Catalog(complete=mcplens.CompleteConfig(timeout=0.5))
    async with stdio_client(hostile) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        catalog.watch("srv", session)
        listing = json.loads(await catalog.call_tool(mcplens.LIST_RESOURCE_TEMPLATES_TOOL.name, {}))
        assert listing["completion"] == ["srv"]
        assert COMPLETE in catalog.visible_tools()

        async def out(value: str) -> dict[str, Any]:
            return json.loads(await catalog.call_tool(COMPLETE, ask(FILES, "path", value)))

        head = {"server": "srv", "uriTemplate": FILES, "variable": "path"}
        assert await out("in") == {**head, "values": ["intro", "install"]}
        many = await out("many")
        assert many == {
            **head,
            "values": [f"v{i}" for i in range(100)],
            "total": 10_000,
            "hasMore": False,
            "omitted": {"cut": 9_900},
        }
        assert await out("huge") == {**head, "values": ["ok"], "omitted": {"tooLong": 1}}
        assert await out("evil") == {**head, "values": ["fine"], "omitted": {"unsafe": 4}}
        assert await out("types") == {**head, "values": ["fine"], "omitted": {"notString": 5}}
        assert await out("lies") == {**head, "values": ["a"], "ignored": ["total", "hasMore"]}
        for value, code in (("mnf", "not_offered"), ("boom", "server_error"), ("hang", "deadline")):
            with pytest.raises(mcplens.ToolError) as e:
                await out(value)
            assert (e.value.code, e.value.server) == (code, "srv")
            assert "secret" not in str(e.value)
            assert "\x1b" not in str(e.value)
        # Refused before anything is sent: a template the server did not list, another variable.
        for arguments, code in (
            (ask("file:///{x}", "x", ""), "unlisted_uri"),
            (ask(FILES, "nope", ""), "invalid_argument"),
        ):
            with pytest.raises(mcplens.ToolError) as e:
                await catalog.call_tool(COMPLETE, arguments)
            assert e.value.code == code


@pytest.mark.skipif(not (test_everything.PACKAGE / "package.json").is_file(), reason="`npm ci` installs it")
async def test_server_everything_completes_a_variable_that_is_then_read() -> None:
    """List the templates, complete `resourceId`, read the filled URI: the three steps a model takes."""
    catalog = mcplens.Catalog()
    async with stdio_client(everything_params()) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        catalog.watch("everything", session)
        listing = json.loads(await catalog.call_tool(mcplens.LIST_RESOURCE_TEMPLATES_TOOL.name, {}))
        assert listing["completion"] == ["everything"]
        template = listing["resourceTemplates"][0]["uriTemplate"]
        assert template == "demo://resource/dynamic/text/{resourceId}"
        arguments = {"server": "everything", "uriTemplate": template, "variable": "resourceId", "value": "3"}
        completed = json.loads(await catalog.call_tool(COMPLETE, arguments))
        assert completed["values"] == ["3"]
        uri = mcplens.expand(template, {"resourceId": completed["values"][0]})
        text = await catalog.call_tool(mcplens.READ_RESOURCE_TOOL.name, {"server": "everything", "uri": uri})
        assert "Resource 3: This is a plaintext resource" in text
        arguments["value"] = "x"  # not an integer: the server suggests nothing
        assert json.loads(await catalog.call_tool(COMPLETE, arguments))["values"] == []


async def test_a_server_without_completions_is_not_asked() -> None:
    hostile = StdioServerParameters(command=sys.executable, args=[str(HOSTILE), "--case", "good"])
    catalog = mcplens.Catalog()
    async with stdio_client(hostile) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        catalog.watch("srv", session)
        listing = json.loads(await catalog.call_tool(mcplens.LIST_RESOURCE_TEMPLATES_TOOL.name, {}))
        assert "completion" not in listing
        assert COMPLETE not in catalog.visible_tools()
        with pytest.raises(mcplens.ToolError) as e:
            await catalog.call_tool(COMPLETE, ask(FILES, "path", "in"))
        assert e.value.code == "not_offered"


async def test_the_sdks_own_completion_handler_with_context() -> None:
    """The installed SDK's high-level server (1.x FastMCP, 2.x MCPServer) with `@server.completion()`:
    a variable completed from what was typed, another from the context of the one already chosen."""
    notes = Path(__file__).parent / "servers" / "complete_server.py"
    catalog = mcplens.Catalog()
    params = StdioServerParameters(command=sys.executable, args=[str(notes)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        catalog.watch("notes", session)
        template = "notes://{folder}/{name}"

        async def values(variable: str, value: str, **arguments: str) -> list[str]:
            asked = {"server": "notes", "uriTemplate": template, "variable": variable, "value": value}
            out = json.loads(await catalog.call_tool(COMPLETE, {**asked, "arguments": arguments}))
            return list(out["values"])

        assert await values("folder", "") == ["work", "home"]
        assert await values("folder", "h") == ["home"]
        assert await values("name", "", folder="home") == ["garden"]
        assert await values("name", "b", folder="work") == ["budget"]
