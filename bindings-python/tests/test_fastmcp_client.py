"""Discovery and the catalog through a community `fastmcp.Client` (2.x, 3.x or 4.x, whichever this
environment has), against a real fastmcp server (`servers/fastmcp_server.py`) in memory, over stdio
and over streamable HTTP. With fastmcp 3.x and 4.x the server paginates every list
(`list_page_size=2`, base64 cursors); fastmcp 2.x has no `list_page_size` and sends one page.

mcplens goes under the client's typed one-page call: through its SDK `ClientSession`, on the raw
path the SDK sessions use, so the core sees each page as sent. The hostile matrix through
`fastmcp.Client` is `test_hostile.py` (run in these environments too)."""

from __future__ import annotations

import base64
import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.server.middleware import Middleware
from mcp import types

import mcplens
from servers import fastmcp_server  # collected only where fastmcp is installed (conftest.py)
from support import SERVERS, V2, Outgoing, http_server, read_output, watch_not_offered_then_refresh

pytestmark = pytest.mark.anyio

PAGE = 2 if fastmcp_server.PAGINATES else None
PAGES = (3, 2) if PAGE else (1, 1)  # (templates, resources) pages
MAJOR = fastmcp_server.MAJOR
# fastmcp 4 negotiates 2026-07-28 by default, where its server does not serve `subscriptions/listen`:
# the watch tests hold a legacy connection (list_changed flows on the session).
LEGACY: dict[str, Any] = {"mode": "legacy"} if MAJOR >= 4 else {}
HOSTILE = Path(__file__).resolve().parents[2] / "tests" / "servers" / "hostile" / "server.py"


@asynccontextmanager
async def connected(transport: str, **client_options: Any) -> AsyncIterator[Any]:
    """A connected `fastmcp.Client` to the fastmcp server, in memory, over stdio or over HTTP."""
    args = [str(SERVERS / "fastmcp_server.py"), "stdio" if transport == "stdio" else "http"]
    args += [] if PAGE is None else ["--page-size", str(PAGE)]
    if transport == "memory":
        async with Client(fastmcp_server.build(PAGE), **client_options) as client:
            yield client
    elif transport == "stdio":
        # keep_alive=False: the server process ends with the client's session
        stdio = StdioTransport(sys.executable, args, log_file=Path(os.devnull), keep_alive=False)
        async with Client(stdio, **client_options) as client:
            yield client
    else:
        async with http_server(*args, "--port") as url, Client(url, **client_options) as client:
            yield client


def wire(model: Any) -> Any:
    """A result model as JSON (1.x and 2.x models name their fields apart)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def changed(event: anyio.Event) -> Any:
    """A fastmcp message handler that sets `event` on resources list_changed."""

    async def handler(message: Any) -> None:
        if isinstance(getattr(message, "root", message), types.ResourceListChangedNotification):
            event.set()

    return handler


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_listings_are_fastmcps_own_walk_page_by_page(transport: str) -> None:
    async with connected(transport) as client:
        templates = await mcplens.list_resource_templates(client, server="docs")
        resources = await mcplens.list_resources(client, server="docs")
        own_templates = await client.list_resource_templates()
        own_resources = await client.list_resources()
        first = wire(await client.list_resource_templates_mcp())
    assert [t.uri_template for t in templates] == [wire(t)["uriTemplate"] for t in own_templates]
    assert [t.uri_template for t in templates] == fastmcp_server.TEMPLATES
    assert [r.uri for r in resources] == [wire(r)["uri"] for r in own_resources] == fastmcp_server.RESOURCES
    assert (templates.diagnostics["pages"], resources.diagnostics["pages"]) == PAGES
    assert all(t.server == "docs" for t in templates)
    docs = next(t for t in templates if t.uri_template == "docs://{section}/{page}")
    assert docs.description == "Documentation pages"
    if PAGE:  # the server's own cursor: base64 of {"o": offset}, sent back byte for byte
        assert json.loads(base64.urlsafe_b64decode(first["nextCursor"])) == {"o": PAGE}


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_catalog_refresh_watch_and_close(transport: str) -> None:
    catalog = mcplens.Catalog()
    notified = anyio.Event()
    async with connected(transport, message_handler=changed(notified), **LEGACY) as client:
        status = await catalog.refresh("docs", client)
        assert (status.status, status.templates, status.resources) == ("ok", 5, 3)
        watch = catalog.watch("docs", client)
        await watch.ready()
        assert watch.session is client.session  # the connection is the client's current session
        await client.call_tool("add_template", {"n": 1})
        await notified.wait()  # the watch saw it first, then handed it on to fastmcp's handler
        await catalog.settled("docs")
        assert [t.uri_template for t in catalog.templates("docs")] == [*fastmcp_server.TEMPLATES, "extra://1/{id}"]
        assert catalog.status("docs").generation == 2
        assert watch.active
    # The client closed its session: both lists are cleared together.
    assert not watch.active
    assert (catalog.status("docs").status, catalog.templates("docs"), catalog.resources("docs")) == ("unknown", [], [])


async def test_a_reconnected_client_is_a_new_connection() -> None:
    catalog = mcplens.Catalog()
    client = Client(fastmcp_server.build(PAGE), **LEGACY)
    async with client:
        await catalog.refresh("docs", client)
        old = catalog.watch("docs", client)
        await old.ready()
    assert not old.active
    assert catalog.templates("docs") == []
    async with client:  # the same Client, a new session under it
        status = await catalog.refresh("docs", client)
        assert (status.status, status.templates) == ("ok", 5)
        new = catalog.watch("docs", client)
        await new.ready()
        assert new.session is client.session is not old.session
    assert not new.active


async def test_a_client_that_is_not_connected_is_refused() -> None:
    client = Client(fastmcp_server.build(PAGE))
    with pytest.raises(mcplens.DiscoveryError) as e:
        await mcplens.list_resource_templates(client, server="docs")
    assert (e.value.code, e.value.server) == ("invalid_argument", "docs")
    with pytest.raises(mcplens.CatalogError) as c:
        await mcplens.Catalog().refresh("docs", client)
    assert (c.value.code, c.value.server) == ("invalid_argument", "docs")


async def test_the_deadline_bounds_each_request() -> None:
    stalled = anyio.Event()
    cancelled = anyio.Event()

    class Stall(Middleware):  # type: ignore[misc]
        async def on_list_resource_templates(self, context: Any, call_next: Any) -> Any:
            stalled.set()
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.set()

    server = fastmcp_server.build(PAGE)
    server.add_middleware(Stall())
    async with Client(server) as client:
        with pytest.raises(mcplens.DiscoveryError) as e:
            await mcplens.list_resource_templates(client, server="docs", limits=mcplens.Limits(deadline_seconds=0.2))
        assert e.value.code == "deadline"
        assert stalled.is_set()
        if MAJOR >= 4:  # mcp 2.x tells the server `notifications/cancelled` for the abandoned request
            await cancelled.wait()
        # The session still serves: only that request was given up.
        assert len(await mcplens.list_resources(client, server="docs")) == 3


async def test_a_repeated_cursor_fails_where_fastmcps_own_walk_returns_a_prefix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On a repeated cursor, fastmcp's own walk (3.x, 4.x) stops with a warning that includes the
    cursor and returns the pages so far; fastmcp 2.x's `list_resource_templates_mcp` takes no
    cursor, so its walk is page 1 alone. mcplens fails closed and never names the cursor."""
    args = [str(HOSTILE), "--case", "repeat_cursor", "--log", os.devnull]
    async with Client(StdioTransport(sys.executable, args, log_file=Path(os.devnull))) as client:
        assert len(await mcplens.list_resource_templates(client, server="hostile")) == 2  # well-formed at first
        first = wire(await client.list_resource_templates_mcp())  # from now on: nextCursor "same"
        cursor = first["nextCursor"]
        with pytest.raises(mcplens.DiscoveryError) as e:
            await mcplens.list_resource_templates(client, server="hostile")
        with caplog.at_level(logging.WARNING):
            own = await client.list_resource_templates()
    assert e.value.code == "repeated_cursor"
    assert cursor not in str(e.value)
    if MAJOR >= 3:
        assert len(own) == 2 * len(first["resourceTemplates"])
        assert any(cursor in r.getMessage() for r in caplog.records)
    else:
        assert len(own) == len(first["resourceTemplates"])


@pytest.mark.skipif(MAJOR < 4, reason="fastmcp 4.x negotiates 2026-07-28 (mode='auto', its default)")
async def test_the_2026_07_28_era() -> None:
    """fastmcp 4's client negotiates 2026-07-28 with a fastmcp 4 server by default: its pages carry
    `ttlMs: 0` and `cacheScope: "private"`; the server does not advertise `resources.listChanged`
    there (and would answer `subscriptions/listen` with -32601), so a watch stands without a stream:
    `ready()` returns, `notifications == "not_offered"`; the pair stays `ok` for the `min_ttl` floor
    (10 s), and the connection's closing still clears it."""
    catalog = mcplens.Catalog()
    async with connected("memory") as client:
        assert client.protocol_version == "2026-07-28"
        assert not client.server_capabilities.resources.list_changed
        templates = await mcplens.list_resource_templates(client, server="docs")
        assert [t.uri_template for t in templates] == fastmcp_server.TEMPLATES
        assert (templates.ttl_ms, templates.cache_scope) == (0, "private")
        status = await catalog.refresh("docs", client)
        assert (status.status, status.templates, status.resources) == ("ok", 5, 3)
        watch = catalog.watch("docs", client)
        await watch.ready()
        assert (watch.notifications, watch.active) == ("not_offered", True)
        assert len(catalog.templates("docs")) == 5
        after = catalog.status("docs")
        assert (after.status, after.last_error) == ("ok", None)  # ttlMs 0: current for min_ttl
    assert catalog.templates("docs") == []  # the connection closed
    assert catalog.status("docs").status == "unknown"


@pytest.mark.skipif(MAJOR < 4, reason="fastmcp 4.x negotiates 2026-07-28 (mode='auto', its default)")
@pytest.mark.parametrize("server", ["fastmcp", "mcp"])
async def test_a_2026_07_28_watch_without_list_changed_opens_no_stream(server: str) -> None:
    """Over stdio to the fastmcp 4 server and to an `mcp` 2.3 low-level server (`sdk_server.py
    paged`, on the `mcp` 2.3.0 fastmcp 4 runs on): on 2026-07-28 neither advertises
    `resources.listChanged` (both answer `subscriptions/listen` with -32601), so the watch writes no
    `subscriptions/listen`, `ready()` returns with `notifications == "not_offered"`, the refresh
    commits `ok` (`ttlMs: 0` is current for `min_ttl`), and the client's closing clears the pair.
    The `mcp.Client` side, and a legacy connection's `"unsolicited"`: test_watch_not_offered.py."""
    assert V2, "fastmcp 4 runs on mcp 2.x"
    script, templates, resources = ("fastmcp_server.py", 5, 3) if server == "fastmcp" else ("sdk_server.py", 8, 2)
    pages = (1, 1) if server == "fastmcp" else (3, 2)  # (templates, resources): no --page-size here
    args = [str(SERVERS / script), "stdio" if server == "fastmcp" else "paged"]
    outgoing = Outgoing()
    catalog = mcplens.Catalog()
    stdio = StdioTransport(sys.executable, args, log_file=Path(os.devnull), keep_alive=False)
    async with Client(stdio) as client:
        outgoing.tap(client.session)
        watch = await watch_not_offered_then_refresh(catalog, client, templates, resources)
        assert outgoing.methods == ["resources/list"] * pages[1] + ["resources/templates/list"] * pages[0]
    after = catalog.status("docs")
    assert (after.status, after.templates, after.resources, watch.active) == ("unknown", 0, 0, False)
    assert "subscriptions/listen" not in outgoing.methods


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_the_read_tool_reads_over_the_clients_session(transport: str) -> None:
    """`ReadMcpResourceTool` through a `fastmcp.Client`: a filled-in template, a blob summarized, a
    failing resource a tool error naming the server (never the server's text)."""
    catalog = mcplens.Catalog()
    async with connected(transport, **LEGACY) as client:
        catalog.watch("docs", client)
        listing = json.loads(await catalog.call_tool("ListMcpResourceTemplatesTool", {"server": "docs"}))
        docs = next(t for t in listing["resourceTemplates"] if t["name"] == "docs")
        uri = mcplens.expand(docs["uriTemplate"], {"section": "api", "page": "intro"})
        out = read_output(await catalog.call_tool("ReadMcpResourceTool", {"server": "docs", "uri": uri}))
        assert out["contents"][0]["text"] == "api/intro"
        avatar = next(t for t in listing["resourceTemplates"] if t["name"] == "avatar")
        uri = mcplens.expand(avatar["uriTemplate"], {"name": "ada"})
        out = read_output(await catalog.call_tool("ReadMcpResourceTool", {"server": "docs", "uri": uri}))
        [blob] = out["contents"]  # the MIME type of a bytes resource differs between fastmcp majors
        assert (blob["uri"], blob["blobBytes"], "blob" in blob) == (uri, 3, False)
        with pytest.raises(mcplens.ToolError) as failed:
            await catalog.call_tool("ReadMcpResourceTool", {"server": "docs", "uri": "mem://broken"})
        assert (failed.value.code, failed.value.server) == ("server_error", "docs")
        assert "the resource failed" not in str(failed.value)


@pytest.mark.skipif(MAJOR < 4, reason="fastmcp 4 added @mcp.completion (and declares completions with it)")
async def test_a_fastmcp_completion_handler_fills_a_template() -> None:
    """fastmcp's own `@mcp.completion` (which declares `completions`): the model lists the template,
    completes its variables (the folder as context for the note), and reads the filled URI."""
    server = fastmcp_server.FastMCP("notes")

    @server.resource("notes://{folder}/{name}", name="notes")
    def note(folder: str, name: str) -> str:
        return f"{folder}/{name}"

    def complete(ref: Any, argument: Any, context: Any) -> list[str] | None:
        chosen = (getattr(context, "arguments", None) or {}).get("folder")
        options = ["work", "home"] if argument.name == "folder" else {"work": ["launch"]}.get(chosen, [])
        return [o for o in options if o.startswith(argument.value)]

    server.completion(complete)
    catalog = mcplens.Catalog()
    async with Client(server) as client:
        catalog.watch("notes", client)
        listing = json.loads(await catalog.call_tool(mcplens.LIST_RESOURCE_TEMPLATES_TOOL.name, {}))
        assert listing["completion"] == ["notes"]
        template = listing["resourceTemplates"][0]["uriTemplate"]
        ask = {"server": "notes", "uriTemplate": template}
        complete_tool = mcplens.COMPLETE_TEMPLATE_TOOL.name
        folder = json.loads(await catalog.call_tool(complete_tool, {**ask, "variable": "folder", "value": "w"}))
        assert folder["values"] == ["work"]
        name = {**ask, "variable": "name", "value": "", "arguments": {"folder": "work"}}
        assert json.loads(await catalog.call_tool(complete_tool, name))["values"] == ["launch"]
        uri = mcplens.expand(template, {"folder": "work", "name": "launch"})
        text = read_output(await catalog.call_tool(mcplens.READ_RESOURCE_TOOL.name, {"server": "notes", "uri": uri}))
        assert text["contents"][0]["text"] == "work/launch"
