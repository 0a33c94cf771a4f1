"""`mcplens.Catalog` end to end against real `mcp` servers (the installed SDK major), in memory and
over stdio: refresh as one transaction, list_changed → coalesced refreshes, handler chaining,
connection close, hostile servers failing closed; and the listing tool's typed errors."""

from __future__ import annotations

import json
import pickle
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import mcplens
from servers import fast_server, sdk_server
from support import V2, eventually, in_memory, over_stdio, stdio_params

pytestmark = pytest.mark.anyio
TRANSPORTS = ["memory", "stdio"]
v2_only = pytest.mark.skipif(not V2, reason="mcp.Client and the 2026-07-28 era exist in mcp 2.x only")


def is_list_changed(message: Any) -> bool:
    return type(getattr(message, "root", message)).__name__ == "ResourceListChangedNotification"


@asynccontextmanager
async def fast(transport: str, **client_options: Any) -> AsyncIterator[tuple[Any, list[str] | None]]:
    """A session to the SDK's high-level server (1.x FastMCP, 2.x MCPServer), and its request log."""
    if transport == "memory":
        server, log = fast_server.build()
        async with in_memory(server, **client_options) as session:
            yield session, log
    else:
        async with over_stdio("fast_server.py", **client_options) as session:
            yield session, None


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_high_level_server_list_changed_refreshes(transport: str) -> None:
    """FastMCP (1.x) sends list_changed without advertising `listChanged`: watch refreshes anyway."""
    catalog = mcplens.Catalog()
    async with fast(transport) as (session, log):
        caps = session.server_capabilities if V2 else session.get_server_capabilities()
        assert not caps.resources.listChanged if not V2 else not caps.resources.list_changed
        status = await catalog.refresh("fast", session)
        assert (status.status, status.generation, status.templates, status.resources) == ("ok", 1, 1, 1)
        watch = catalog.watch("fast", session)
        await watch.ready()
        await session.call_tool("add_template", {"name": "notes"})
        await eventually(lambda: catalog.status("fast").generation == 2)
        assert [t.uri_template for t in catalog.templates("fast")] == ["file:///{path}", "note://notes/{id}"]
        assert catalog.templates()[0].to_dict() == {
            "uriTemplate": "file:///{path}",
            "name": "files",
            "description": "A file by its path",
            "mimeType": "text/plain",
            "server": "fast",
        }
        assert [r.uri for r in catalog.resources("fast")] == ["docs://guide"]
        if log is not None:
            assert log.count("resources/templates/list") == 2
        assert watch.active
    # The session closed: the entries are gone, the watch is over.
    assert (catalog.status("fast").status, watch.active) == ("unknown", False)
    assert catalog.templates() == []


@v2_only
@pytest.mark.parametrize("where", ["in_process", "stdio"])
async def test_v2_client_modern_era_listens(where: str) -> None:
    """On 2026-07-28 connections list_changed flows only through `Client.listen`, which watch opens."""
    from mcp import Client

    server, log = fast_server.build()
    catalog = mcplens.Catalog()
    async with Client(server if where == "in_process" else stdio_params("fast_server.py")) as client:
        assert client.protocol_version == "2026-07-28"
        await catalog.refresh("fast", client)
        assert client.server_capabilities.resources.list_changed  # MCPServer advertises it in this era
        watch = catalog.watch("fast", client)
        await watch.ready()
        assert watch.notifications == "listening"
        if where == "in_process":
            assert "subscriptions/listen" in log
        await client.call_tool("add_template", {"name": "notes"})
        await eventually(lambda: catalog.status("fast").generation == 2)
        await catalog.settled()
        # MCPServer answers with ttlMs 0 in this era: the pair is current for min_ttl (10 s).
        assert catalog.status("fast").status == "ok"
        assert [t.name for t in catalog.templates("fast")] == ["files", "notes"]
    assert (catalog.status("fast").status, watch.active) == ("unknown", False)


@v2_only
async def test_v2_rewatch_closes_the_old_listen_stream() -> None:
    from mcp import Client

    server, log = fast_server.build()
    catalog = mcplens.Catalog()
    async with Client(server) as client:
        await catalog.refresh("fast", client)
        first = catalog.watch("fast", client)
        await first.ready()
        second = catalog.watch("fast", client)
        await second.ready()
        assert (first.active, second.active) == (False, True)
        await client.call_tool("add_template", {"name": "notes"})
        await eventually(lambda: catalog.status("fast").generation == 2)
        await anyio.sleep(0.2)
        await catalog.settled()
        # One list_changed, one refresh: the replaced watch's stream no longer delivers.
        assert log.count("subscriptions/listen") == 2
        assert log.count("resources/templates/list") == 2
        assert catalog.remove("fast")
        assert not second.active


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_paginated_templates_committed_with_resources(transport: str) -> None:
    async with (
        over_stdio("sdk_server.py", "paged")
        if transport == "stdio"
        else in_memory(sdk_server.build("paged")[0]) as session
    ):
        catalog = mcplens.Catalog()
        status = await catalog.refresh("paged", session)
    assert (status.status, status.templates, status.resources, status.last_error) == ("ok", 8, 2, None)
    assert [t.name for t in catalog.templates()] == [f"t{n}" for n in range(8)]
    out = json.loads(catalog.call_list_templates_tool({"limit": 3, "offset": 6}))
    assert out == {
        "resourceTemplates": [
            {"uriTemplate": "mem://t6/{id}", "name": "t6", "description": "six\nlines", "server": "paged"},
            {
                "uriTemplate": "mem://t7/{id}",
                "name": "t7",
                "mimeType": "text/plain",
                "annotations": {"priority": 0.5},
                "server": "paged",
            },
        ],
        "failures": [],
        "total": 8,
    }


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_method_not_found_and_no_capability(transport: str) -> None:
    catalog = mcplens.Catalog()
    for scenario in ("no_templates", "no_capability"):
        async with (
            over_stdio("sdk_server.py", scenario)
            if transport == "stdio"
            else in_memory(sdk_server.build(scenario)[0]) as session
        ):
            await catalog.refresh(scenario, session)
    legacy, tools_only = catalog.status("no_templates"), catalog.status("no_capability")
    assert (legacy.status, legacy.templates, legacy.resources) == ("ok", 0, 2)
    assert (tools_only.status, tools_only.templates, tools_only.resources) == ("unsupported", 0, 0)
    assert json.loads(catalog.call_list_templates_tool()) == {"resourceTemplates": [], "failures": [], "total": 0}


async def test_burst_during_slow_refresh_gives_exactly_one_more() -> None:
    """Six list_changed: one starts a refresh, five arrive while it is parked. The parked refresh is
    discarded and exactly one more runs. The app's own message handler still sees every message."""
    server, log, gate = sdk_server.build_gated()
    seen: list[Any] = []

    async def app_handler(message: Any) -> None:
        seen.append(message)

    def first_pages(method: str) -> int:
        return sum(1 for m, cursor in log if m == method and cursor is None)

    catalog = mcplens.Catalog()
    async with in_memory(server, message_handler=app_handler) as session:
        await catalog.refresh("paged", session)
        watch = catalog.watch("paged", session)
        await watch.ready()
        gate.arm()
        await gate.list_changed()
        await eventually(lambda: gate.parked == 1)
        for _ in range(5):
            await gate.list_changed()
        # The app's handler runs after mcplens' for each message: all six decisions are taken.
        await eventually(lambda: sum(map(is_list_changed, seen)) == 6)
        assert catalog.status("paged").refreshing
        assert (first_pages("resources/list"), first_pages("resources/templates/list")) == (2, 2)
        gate.release()
        await eventually(lambda: not catalog.status("paged").refreshing)
        await catalog.settled()
        await anyio.sleep(0.3)  # nothing else is coming
        await catalog.settled()
        status = catalog.status("paged")
        assert (first_pages("resources/list"), first_pages("resources/templates/list")) == (3, 3)
        assert (status.status, status.generation, status.templates) == ("ok", 2, 8)
        assert gate.parked == 1
    assert sum(map(is_list_changed, seen)) == 6


async def test_chained_handler_sees_every_message_and_errors_do_not_block_it() -> None:
    """A list_changed for a removed server is ignored, and the chain still delivers the message."""
    server, _log, gate = sdk_server.build_gated()
    seen: list[Any] = []

    async def app_handler(message: Any) -> None:
        seen.append(message)

    catalog = mcplens.Catalog()
    async with in_memory(server, message_handler=app_handler) as session:
        await catalog.refresh("paged", session)
        watch = catalog.watch("paged", session)
        await watch.ready()
        assert catalog.remove("paged")
        assert not watch.active
        await gate.list_changed()
        await eventually(lambda: sum(map(is_list_changed, seen)) == 1)
        assert catalog.servers() == []  # a late notification never brings a removed server back


@pytest.mark.parametrize(
    ("variant", "code"),
    [("items", "item_limit"), ("bytes", "byte_limit"), ("deep_meta", "deadline")],
)
async def test_hostile_server_fails_closed_previous_state_survives(variant: str, code: str) -> None:
    # deep_meta: the SDK's own JSON parser drops the answer, so only the deadline ends the wait.
    catalog = mcplens.Catalog(limits=mcplens.Limits(deadline_seconds=3 if variant == "deep_meta" else 30))
    async with over_stdio("raw_server.py", f"hostile:{variant}") as session:
        await catalog.refresh("h", session)
        good = catalog.call_list_templates_tool()
        with pytest.raises(mcplens.DiscoveryError) as info:
            await catalog.refresh("h", session)
        # The session is still usable after a refused page.
        assert (await mcplens.list_resources(session, server="h")).items[0].name == "readme"
    assert (info.value.code, info.value.server) == (code, "h")
    status = catalog.status("h")
    assert (status.status, status.generation, status.templates) == ("stale", 1, 2)
    assert status.last_error is not None
    assert (status.last_error.code, status.last_error.message) == (code, str(info.value))
    assert [t.name for t in catalog.templates("h")] == ["files", "rows"]
    out = json.loads(catalog.call_list_templates_tool())
    assert out["resourceTemplates"] == json.loads(good)["resourceTemplates"]
    assert out["failures"] == [{"server": "h", "code": code, "message": str(info.value)}]


@pytest.mark.parametrize("variant", ["description", "meta"])
async def test_hostile_text_and_nesting_are_projected(variant: str) -> None:
    catalog = mcplens.Catalog()
    async with over_stdio("raw_server.py", f"hostile:{variant}") as session:
        await catalog.refresh("h", session)
        await catalog.refresh("h", session)
    (item,) = catalog.templates("h")
    assert catalog.status("h").generation == 2
    if variant == "description":
        assert item.description is not None
        assert item.description.startswith("desc x")
        assert item.description.endswith("…")
        assert len(item.description) <= 2048
    else:
        assert item.to_dict() == {"uriTemplate": "meta://{id}", "name": "meta", "server": "h"}


async def test_end_of_stream_invalidates_while_the_session_is_open() -> None:
    catalog = mcplens.Catalog()
    async with over_stdio("raw_server.py", "mortal") as session:
        await catalog.refresh("raw", session)
        watch = catalog.watch("raw", session)
        await watch.ready()
        assert catalog.status("raw").status == "ok"
        with pytest.raises(Exception):  # noqa: B017, PT011 (the SDK's connection-closed error)
            await session.send_ping()
        await eventually(lambda: catalog.status("raw").status == "unknown")
        assert not watch.active
        # A later refresh over the dead connection fails; nothing is cached.
        with pytest.raises(mcplens.DiscoveryError) as info:
            await catalog.refresh("raw", session)
        assert info.value.code == "transport_error"
        assert catalog.status("raw").status == "failed"


async def test_rewatch_replaces_the_old_watch() -> None:
    catalog = mcplens.Catalog()
    async with in_memory(sdk_server.build("paged")[0]) as one, in_memory(sdk_server.build("paged")[0]) as two:
        await catalog.refresh("paged", one)
        first = catalog.watch("paged", one)
        second = catalog.watch("paged", two)
        assert (first.active, second.active) == (False, True)
    # The first session closed after the second watch took over; the second's close invalidated.
    assert catalog.status("paged").status == "unknown"


async def test_watch_needs_an_entered_session() -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    catalog = mcplens.Catalog()
    with pytest.raises(TypeError, match="ClientSession"):
        catalog.watch("x", object())
    async with stdio_client(stdio_params("raw_server.py", "sloppy")) as (read, write):
        session = ClientSession(read, write)
        with pytest.raises(mcplens.CatalogError) as info:
            catalog.watch("x", session)
    assert (info.value.code, info.value.server) == ("invalid_argument", "x")


async def test_a_cancelled_caller_leaves_the_traversal_to_the_session() -> None:
    """A caller that stops waiting does not stop the traversal (other callers may share it); the
    session ending abandons it: nothing recorded, nothing left refreshing."""
    catalog = mcplens.Catalog()
    async with in_memory(sdk_server.build("slow")[0]) as session:
        with anyio.move_on_after(0.3):
            await catalog.refresh("slow", session)
        assert catalog.status("slow").refreshing
    status = catalog.status("slow")
    assert (status.status, status.refreshing, status.last_error) == ("unknown", False, None)


# --- the listing tool and the sans-IO surface, no server ---


def catalog_with(*pages: tuple[str, str]) -> tuple[mcplens._core.Catalog, mcplens.Refresher]:
    """A catalog (and its machine) whose servers committed the given templates pages (JSON text)."""
    catalog = mcplens._core.Catalog()
    machine = mcplens.Refresher(catalog, seed=0)
    for server, page in pages:
        machine.attach(server, True)
        machine.request(server, "refresh", now=0)
        (action,) = machine.poll_actions()
        pair = mcplens.Pager.pair(action["traverse"]["traversal"], server, capabilities='{"resources":{}}', now=0)
        while (request := pair.next_request()) is not None:
            pair.accept_page('{"resources":[]}' if request.method == "resources/list" else page, now=0)
        assert machine.traversed(pair, now=0) == "committed"
        assert [a["resolve"]["outcome"] for a in machine.poll_actions()] == ["committed"]
    return catalog, machine


PAGE = json.dumps({"resourceTemplates": [{"uriTemplate": f"f://{n}/{{x}}", "name": f"f{n}"} for n in range(3)]})


def test_tool_spec_is_the_cores() -> None:
    spec = mcplens.LIST_RESOURCE_TEMPLATES_TOOL
    assert spec.name == "ListMcpResourceTemplatesTool"
    assert spec.annotations["readOnlyHint"] is True
    assert spec.deferred is True
    assert set(spec.input_schema["properties"]) == {"server", "offset", "limit"}
    assert spec.to_dict() == json.loads(spec.to_json())
    keys = ["name", "description", "inputSchema", "strictInputSchema", "annotations", "deferred"]
    assert list(spec.to_dict()) == keys
    spec.input_schema["properties"].clear()  # a fresh copy: the spec itself cannot be changed
    assert spec.input_schema["properties"]


def test_tool_output_and_typed_errors() -> None:
    catalog, _ = catalog_with(("a", PAGE), ("b", PAGE))
    out = catalog.call_list_templates_tool({"server": "b", "limit": 2})
    assert out == catalog.call_list_templates_tool('{"server": "b", "limit": 2}')
    assert json.loads(out)["nextOffset"] == 2
    with pytest.raises(mcplens.ToolError) as info:
        catalog.call_list_templates_tool({"server": "c"})
    assert (info.value.code, info.value.server) == ("unknown_server", "c")
    assert str(info.value) == 'Server "c" not found. Available servers: a, b'
    assert isinstance(info.value, mcplens.McplensError)
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"x": 1}, "not json", [1], {"limit": {1}}):
        with pytest.raises(mcplens.ToolError) as info:
            catalog.call_list_templates_tool(bad)  # type: ignore[arg-type]
        assert info.value.code == "invalid_argument", bad
    copy = pickle.loads(pickle.dumps(info.value))
    assert (type(copy), copy.args) == (mcplens.ToolError, info.value.args)


def test_output_too_large_is_an_error_not_a_truncation() -> None:
    long = [{"uriTemplate": f"f://{n}/{{x}}", "name": f"f{n}", "description": "d" * 500} for n in range(300)]
    catalog, _ = catalog_with(("a", json.dumps({"resourceTemplates": long})))
    with pytest.raises(mcplens.ToolError) as info:
        catalog.call_list_templates_tool({"limit": 300})
    assert info.value.code == "output_too_large"
    assert "limit" in str(info.value)
    assert len(catalog.call_list_templates_tool({"limit": 100})) < 100_000


def test_catalog_errors_are_typed() -> None:
    catalog, machine = catalog_with(("a", PAGE))
    with pytest.raises(mcplens.CatalogError) as info:
        catalog.status("nope")
    assert (info.value.code, info.value.server) == ("unknown_server", "nope")
    with pytest.raises(mcplens.CatalogError) as info:
        catalog.templates("nope")
    assert info.value.code == "unknown_server"
    with pytest.raises(mcplens.CatalogError) as info:
        machine.invalidate("a", "whatever")  # type: ignore[arg-type]
    assert info.value.code == "invalid_argument"


def test_one_machine_drives_a_catalog() -> None:
    catalog, machine = catalog_with(("a", PAGE))
    assert catalog.limits is None
    assert mcplens.Catalog(limits=mcplens.Limits(max_pages=3)).limits == mcplens.Limits(max_pages=3)
    # The catalog-level refresh API is gone: the machine is the only writer.
    for gone in ("begin_refresh", "commit", "fail", "abandon", "on_list_changed", "declare_resources"):
        assert not hasattr(catalog, gone), gone
        assert not hasattr(mcplens.Catalog, gone), gone
    # One machine per catalog, mcplens.Catalog's own included.
    for driven in (catalog, mcplens.Catalog()):
        with pytest.raises(mcplens.CatalogError) as info:
            mcplens.Refresher(driven)
        assert (info.value.code, info.value.server) == ("invalid_argument", None)
        assert str(info.value) == (
            "invalid argument: this catalog already has its refresher (one refresher drives a catalog)"
        )
    epoch = machine.epoch("a")
    assert epoch is not None
    machine.request("a", "refresh")
    (action,) = machine.poll_actions()
    assert machine.on_list_changed("a", epoch) == "queued"
    assert machine.on_list_changed("a", epoch) == "already_queued"
    assert machine.on_list_changed("zzz", epoch) == "ignored"
    # The traversal in flight predates the change: discarded, and the queued one starts.
    traversal = action["traverse"]["traversal"]
    pair = mcplens.Pager.pair(traversal, "a", capabilities='{"resources":{}}')
    assert pair.next_request() is not None
    pair.accept_rpc_error(-32603)
    assert machine.traversed(pair) == "discarded"
    assert [a["traverse"]["traversal"] for a in machine.poll_actions() if "traverse" in a] == [traversal + 1]
    assert catalog.needs_refresh("a")
    status = catalog.status("a", now=0)
    # list_changed keeps the last good pair, marked outdated, until a newer refresh commits.
    assert status.to_dict() == {
        "server": "a",
        "status": "outdated",
        "generation": 1,
        "lastError": None,
        "resources": 0,
        "templates": 3,
        "refreshing": True,
    }
    assert catalog.servers() == ["a"]
    generation = catalog.generation
    machine.invalidate("a", "disabled")
    assert (catalog.status("a").status, catalog.status("a").templates) == ("unknown", 0)
    assert catalog.generation > generation
    assert catalog.visible_tools() == []
    machine.attach("a", True)
    assert catalog.visible_tools() == ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"]
    machine.clear()
    assert catalog.servers() == []
