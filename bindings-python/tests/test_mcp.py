"""End to end against real `mcp` servers (the installed SDK major), in memory and over stdio."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import mcplens
from servers import sdk_server
from support import V2, in_memory, over_stdio, stdio_params

pytestmark = pytest.mark.anyio
TEMPLATES = "resources/templates/list"
TRANSPORTS = ["memory", "stdio"]


@asynccontextmanager
async def connect(transport: str, scenario: str) -> AsyncIterator[tuple[Any, list[Any] | None]]:
    """A session to the SDK server for `scenario`, and its request log (in memory only)."""
    if transport == "memory":
        server, log = sdk_server.build(scenario)
        async with in_memory(server) as session:
            yield session, log
    else:
        async with over_stdio("sdk_server.py", scenario) as session:
            yield session, None


def check_paged_templates(listing: mcplens.Listing) -> None:
    assert listing.kind == "resource_templates"
    assert listing.support == "listed"
    assert [t.name for t in listing.items] == [f"t{n}" for n in range(8)]
    assert all(isinstance(t, mcplens.ResourceTemplate) and t.server == "paged" for t in listing.items)
    first, sloppy, last = listing.items[0], listing.items[3], listing.items[7]
    assert (first.uri_template, first.title, first.annotations) == ("mem://t0/{id}", "Zero", None)
    # Date-only lastModified: the field is dropped, the item and its valid priority kept.
    assert sloppy.annotations is not None
    assert (sloppy.annotations.priority, sloppy.annotations.last_modified) == (0.5, None)
    assert listing.items[6].description == "six\nlines"
    assert last.to_dict() == {
        "uriTemplate": "mem://t7/{id}",
        "name": "t7",
        "mimeType": "text/plain",
        "annotations": {"priority": 0.5},
        "server": "paged",
    }
    d = listing.diagnostics
    assert (d["requests"], d["pages"], d["items"]) == (3, 3, 8)
    assert d["droppedFields"] == {"annotations.lastModified": 2}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_templates_over_pages_with_empty_cursor(transport: str) -> None:
    async with connect(transport, "paged") as (session, log):
        listing = await mcplens.list_resource_templates(session, server="paged")
    check_paged_templates(listing)
    if log is not None:
        assert log == [(TEMPLATES, None), (TEMPLATES, "opaque:2"), (TEMPLATES, "")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_resources_over_pages(transport: str) -> None:
    async with connect(transport, "paged") as (session, _log):
        listing = await mcplens.list_resources(session, server="paged")
    assert listing.kind == "resources"
    assert [(r.uri, r.name, r.size, r.mime_type) for r in listing.items] == [
        ("mem://docs/a.md", "a", 10, None),
        ("mem://docs/b.md", "b", None, "text/markdown"),
    ]
    assert all(isinstance(r, mcplens.Resource) for r in listing)
    assert listing.diagnostics["requests"] == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_repeated_cursor_fails_whole_traversal(transport: str) -> None:
    async with connect(transport, "repeat") as (session, log):
        with pytest.raises(mcplens.DiscoveryError) as info:
            await mcplens.list_resource_templates(session, server="rep")
    assert (info.value.code, info.value.server) == ("repeated_cursor", "rep")
    assert "again" not in str(info.value)
    if log is not None:
        assert log == [(TEMPLATES, None), (TEMPLATES, "again")]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_templates_method_not_found_is_empty(transport: str) -> None:
    async with connect(transport, "no_templates") as (session, _log):
        templates = await mcplens.list_resource_templates(session, server="legacy")
        resources = await mcplens.list_resources(session, server="legacy")
    assert (templates.support, len(templates), templates.diagnostics["requests"]) == ("method_not_found", 0, 1)
    assert (resources.support, len(resources)) == ("listed", 2)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_no_resources_capability_sends_nothing(transport: str) -> None:
    async with connect(transport, "no_capability") as (session, log):
        templates = await mcplens.list_resource_templates(session, server="tools-only")
        resources = await mcplens.list_resources(session, server="tools-only")
    for listing in (templates, resources):
        assert (listing.support, len(listing), listing.diagnostics["requests"]) == ("no_capability", 0, 0)
    if log is not None:
        assert log == []


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_slow_server_hits_deadline_and_is_cancelled(transport: str) -> None:
    async with connect(transport, "slow") as (session, log):
        started = time.monotonic()
        with pytest.raises(mcplens.DiscoveryError) as info:
            await mcplens.list_resource_templates(session, server="slow", limits=mcplens.Limits(deadline_seconds=0.5))
        elapsed = time.monotonic() - started
        # The session is still usable after the cancelled request.
        resources = await mcplens.list_resources(session, server="slow")
        if V2 and log is not None:
            # 2.x tells the server (notifications/cancelled) and the handler is cancelled; 1.x
            # only abandons the request on the client side.
            with anyio.fail_after(5):
                while ("cancelled", None) not in log:  # noqa: ASYNC110 (the server appends to a list)
                    await anyio.sleep(0.01)
    assert (info.value.code, info.value.server) == ("deadline", "slow")
    assert 0.4 < elapsed < 5
    assert len(resources) == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_json_rpc_error_is_server_error(transport: str) -> None:
    async with connect(transport, "error") as (session, _log):
        with pytest.raises(mcplens.DiscoveryError) as info:
            await mcplens.list_resource_templates(session, server="err")
    assert (info.value.code, info.value.rpc_code, info.value.server) == ("server_error", -32602, "err")
    assert "no templates for you" not in str(info.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_page_limit(transport: str) -> None:
    async with connect(transport, "paged") as (session, _log):
        with pytest.raises(mcplens.DiscoveryError) as info:
            await mcplens.list_resource_templates(session, server="paged", limits=mcplens.Limits(max_pages=2))
    assert info.value.code == "page_limit"


async def test_raw_page_sloppy_fields_dropped_per_item() -> None:
    """Fields no SDK model accepts (priority 2, audience "system", a numeric title) reach the core."""
    async with over_stdio("raw_server.py", "sloppy") as session:
        listing = await mcplens.list_resource_templates(session, server="raw")
    files, rows = listing.items
    assert files.to_dict() == {
        "uriTemplate": "file:///{path}",
        "name": "files",
        "description": "line one\nline two",
        "server": "raw",
    }
    assert rows.annotations is not None
    assert rows.annotations.audience == ("user",)
    assert rows.annotations.priority == 1
    dropped = listing.diagnostics["droppedFields"]
    for field in ("title", "mimeType", "annotations.priority", "annotations.audience", "annotations.lastModified"):
        assert dropped[field] == 1, field
    assert listing.diagnostics["ignoredKeys"] == 3  # _meta, icons, xExtra


@pytest.mark.parametrize(
    ("scenario", "code"),
    [("malformed", "malformed_result"), ("cursor_int", "malformed_result"), ("crash", "transport_error")],
)
async def test_raw_page_failures(scenario: str, code: str) -> None:
    async with over_stdio("raw_server.py", scenario) as session:
        with pytest.raises(mcplens.DiscoveryError) as info:
            await mcplens.list_resource_templates(session, server="raw", limits=mcplens.Limits(deadline_seconds=10))
    assert (info.value.code, info.value.server) == (code, "raw")


async def test_uninitialized_session_is_refused() -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async with (
        stdio_client(stdio_params("raw_server.py", "sloppy")) as (read, write),
        ClientSession(read, write) as session,
    ):
        with pytest.raises(mcplens.DiscoveryError) as info:
            await mcplens.list_resource_templates(session, server="raw")
    assert (info.value.code, info.value.server) == ("invalid_argument", "raw")


async def test_not_a_session() -> None:
    with pytest.raises(TypeError, match="ClientSession"):
        await mcplens.list_resources(object(), server="x")


v2_only = pytest.mark.skipif(not V2, reason="mcp.Client and the 2026-07-28 era exist in mcp 2.x only")


@v2_only
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_v2_client_in_process(mode: str) -> None:
    from mcp import Client

    server, log = sdk_server.build("paged")
    async with Client(server, mode=mode) as client:
        listing = await mcplens.list_resource_templates(client, server="paged")
        resources = await mcplens.list_resources(client, server="paged")
        era = client.protocol_version
    assert era == ("2026-07-28" if mode == "auto" else "2025-11-25")
    check_paged_templates(listing)
    assert len(resources) == 2
    assert [c for m, c in log if m == TEMPLATES] == [None, "opaque:2", ""]


@v2_only
async def test_v2_client_over_stdio_modern_era() -> None:
    from mcp import Client

    async with Client(stdio_params("sdk_server.py", "paged")) as client:
        listing = await mcplens.list_resource_templates(client, server="paged")
        era = client.protocol_version
    assert era == "2026-07-28"
    check_paged_templates(listing)


@v2_only
async def test_v2_client_response_cache_is_bypassed() -> None:
    from mcp import Client
    from mcp.server.caching import CacheHint

    server, log = sdk_server.build("paged", cache_hints={TEMPLATES: CacheHint(ttl_ms=60_000)})
    async with Client(server) as client:
        await client.list_resource_templates()
        await client.list_resource_templates()
        sdk_hits = len(log)
        first = await mcplens.list_resource_templates(client, server="paged")
        second = await mcplens.list_resource_templates(client, server="paged")
    assert sdk_hits == 1  # the SDK served its second call from its cache
    assert len(log) == 1 + 3 + 3  # every mcplens traversal reached the server
    assert first.ttl_ms == second.ttl_ms == 60_000
    assert first.to_dict() == second.to_dict()


@v2_only
async def test_v2_deadline_cancels_server_handler() -> None:
    from mcp import Client

    server, log = sdk_server.build("slow")
    async with Client(server) as client:
        started = time.monotonic()
        with pytest.raises(mcplens.DiscoveryError, match="deadline") as info:
            await mcplens.list_resource_templates(client, server="slow", limits=mcplens.Limits(deadline_seconds=0.3))
        elapsed = time.monotonic() - started
    assert info.value.code == "deadline"
    assert elapsed < 5
    assert log == [(TEMPLATES, None), ("cancelled", None)]
