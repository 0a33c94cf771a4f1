"""`@modelcontextprotocol/server-everything` (the TypeScript SDK's reference server) over stdio.

The Node package's npm workspace installs it under the repository's `node_modules/`; this test
does not install it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens

PACKAGE = Path(__file__).resolve().parents[2] / "node_modules" / "@modelcontextprotocol" / "server-everything"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not (PACKAGE / "package.json").is_file(),
        reason=f"{PACKAGE} is absent: the Node package's `npm ci` installs it (run `make build-node`)",
    ),
    pytest.mark.skipif(NODE is None, reason="node is not on PATH"),
]


async def test_server_everything_over_stdio() -> None:
    assert NODE is not None
    entry = PACKAGE / json.loads((PACKAGE / "package.json").read_text())["bin"]["mcp-server-everything"]
    params = StdioServerParameters(command=NODE, args=[str(entry), "stdio"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        templates = await mcplens.list_resource_templates(session, server="everything")
        resources = await mcplens.list_resources(session, server="everything")
    assert [t.uri_template for t in templates.items] == [
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    ]
    assert all(t.server == "everything" and t.name and t.mime_type for t in templates.items)
    assert len(resources) == 7
    assert all(r.uri.startswith("demo://resource/static/") for r in resources.items)
    assert templates.diagnostics["droppedFields"] == {} == resources.diagnostics["droppedItems"]
