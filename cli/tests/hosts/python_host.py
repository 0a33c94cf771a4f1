"""A Python `mcp` client as the host of `mcplens proxy` (run by cli/tests/proxy.rs).

    python python_host.py MCPLENS_BIN EVENTS_FILE -- SERVER_COMMAND...

Through the proxy, against `bindings-python/tests/servers/fast_server.py`: the server's own tool,
resources and templates work as they do directly; the resource tools are listed after the
server's tools and answer (a read before any listing included). Prints `ok` when every check held.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text(result: Any) -> str:
    assert result.content, result
    assert result.content[0].type == "text", result
    return result.content[0].text


async def main(mcplens: str, events: str, server: list[str]) -> None:
    params = StdioServerParameters(command=mcplens, args=["proxy", "--events", events, "--", *server])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "fast", init
        tools = [t.name for t in (await session.list_tools()).tools]
        ours = ["mcplens_ListMcpResourceTemplatesTool", "mcplens_ListMcpResourcesTool", "mcplens_ReadMcpResourceTool"]
        assert tools == ["add_template", *ours], tools

        # A read first: the proxy makes its catalog current, then checks the URI against it.
        out = await session.call_tool("mcplens_ReadMcpResourceTool", {"server": "fast", "uri": "file:///a.txt"})
        assert not out.is_error, out
        header, _, body = text(out).partition("\n")
        assert json.loads(header)["contents"][0]["textChars"] == 5, header
        assert body == "--- content 1 text (5 of 5 characters) ---\na.txt", body

        # The server's own surface, relayed.
        assert (await session.read_resource("docs://guide")).contents[0].text == "guide"
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["file:///{path}"], templates
        assert text(await session.call_tool("add_template", {"name": "n"})) == "added"

        listing = json.loads(text(await session.call_tool("mcplens_ListMcpResourceTemplatesTool", {})))
        uris = [t["uriTemplate"] for t in listing["resourceTemplates"]]
        assert uris == ["file:///{path}", "note://n/{id}"], uris
        refused = await session.call_tool("mcplens_ReadMcpResourceTool", {"server": "fast", "uri": "other://x"})
        assert refused.is_error, refused
        assert text(refused).startswith("error: unlisted_uri: "), refused
    print("ok")


if __name__ == "__main__":
    sep = sys.argv.index("--")
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[sep + 1 :])
