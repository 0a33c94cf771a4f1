"""`@modelcontextprotocol/server-everything` (the TypeScript SDK's reference server) over stdio.

The Node package's npm workspace installs it under the repository's `node_modules/`; this test
does not install it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
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


def params() -> StdioServerParameters:
    assert NODE is not None
    entry = PACKAGE / json.loads((PACKAGE / "package.json").read_text())["bin"]["mcp-server-everything"]
    return StdioServerParameters(command=NODE, args=[str(entry), "stdio"])


async def test_server_everything_over_stdio() -> None:
    async with stdio_client(params()) as (read, write), ClientSession(read, write) as session:
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


async def test_server_everything_list_changed_refreshes_the_catalog() -> None:
    """Its `gzip-file-as-resource` tool adds a session resource and sends
    `notifications/resources/list_changed`: the watched catalog refreshes and sees it."""
    seen: list[str] = []

    async def app_handler(message: object) -> None:
        seen.append(type(getattr(message, "root", message)).__name__)

    catalog = mcplens.Catalog(limits=mcplens.Limits(deadline_seconds=20))
    async with stdio_client(params()) as (read, write), ClientSession(read, write, message_handler=app_handler) as s:
        await s.initialize()
        status = await catalog.refresh("everything", s)
        assert (status.status, status.generation, status.templates, status.resources) == ("ok", 1, 2, 7)
        watch = catalog.watch("everything", s)
        await watch.ready()
        gzip = {"name": "x.gz", "data": "data:text/plain;base64,aGVsbG8="}
        await s.call_tool("gzip-file-as-resource", gzip)
        with anyio.fail_after(20):
            while catalog.status("everything").generation < 2:  # noqa: ASYNC110 (SDK tasks refresh it)
                await anyio.sleep(0.01)
        await catalog.settled()
        status = catalog.status("everything")
        assert (status.status, status.templates, status.resources) == ("ok", 2, 8)
        assert catalog.resources("everything")[-1].uri == "demo://resource/session/x.gz"
        assert "ResourceListChangedNotification" in seen  # the app's own handler still saw it
    assert catalog.status("everything").status == "unknown"
