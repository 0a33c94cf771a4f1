"""`Catalog.watch` on 2026-07-28 connections to real servers that offer no change notifications,
through the `mcp` 2.x `Client` over stdio (the `fastmcp.Client` side: `test_fastmcp_client.py`).

Servers built on `mcp` 2.3 or community fastmcp 4.x declare `resources.listChanged: false` on
2026-07-28 and answer `subscriptions/listen` with -32601; their list pages carry `ttlMs: 0`. Against
each of them, run as its own process with its own environment's Python:
- a community fastmcp 4 server (`servers/fastmcp_server.py stdio`, .build/venv-fastmcp4);
- an `mcp` 2.3 low-level server (`servers/sdk_server.py paged`, .build/venv-mcp2),
a watch stands without a listen stream (`notifications == "not_offered"`, `ready()` returns, no
`subscriptions/listen` is written), a refresh commits `ok` (a `ttlMs` under the `min_ttl` floor
keeps the pair current that long, then it is `outdated`, never `stale`), and the connection's end
clears the pair. On a legacy connection to the same servers the watch takes list_changed unasked
(`"unsolicited"`), on either SDK major.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import mcplens
from support import SERVERS, V2, Outgoing, eventually, watch_not_offered_then_refresh

pytestmark = pytest.mark.anyio

BUILD = Path(__file__).resolve().parents[2] / ".build"
# name: (Python of the server's environment, script and arguments, templates, resources, their pages)
SERVED: dict[str, tuple[Path, list[str], int, int, tuple[int, int]]] = {
    "fastmcp4": (BUILD / "venv-fastmcp4" / "bin" / "python", ["fastmcp_server.py", "stdio"], 5, 3, (1, 1)),
    "mcp2": (BUILD / "venv-mcp2" / "bin" / "python", ["sdk_server.py", "paged"], 8, 2, (3, 2)),
}
ERA = "2026-07-28"


def needs_v2() -> None:
    if not V2:
        # reason: mcp 1.x has no 2026-07-28 era; this test runs in the mcp 2.3.0 pass of make test-python
        pytest.skip("protocol 2026-07-28 is served by mcp 2.x")


def command(server: str) -> list[str]:
    python, (script, *args), *_ = SERVED[server]
    assert python.exists(), f"make test-python creates {python.parents[1].name} (the {server} server's own SDK)"
    return [str(python), str(SERVERS / script), *args]


@asynccontextmanager
async def client(server: str, outgoing: Outgoing, mode: str = "auto") -> AsyncIterator[Any]:
    """A 2.x `mcp.Client` (`mode`: "auto" negotiates 2026-07-28) to `server` over stdio, recorded."""
    from mcp import Client

    async with Client(outgoing.stdio(*command(server)), mode=mode) as connected:
        yield connected


@pytest.mark.parametrize("server", SERVED)
async def test_a_2026_07_28_watch_without_list_changed_is_not_offered(server: str) -> None:
    """The old code opened the listen stream anyway: `ready()` raised `server_error` (-32601), and
    the `ttlMs: 0` pair was `stale` right after its refresh."""
    needs_v2()
    _, _, templates, resources, (template_pages, resource_pages) = SERVED[server]
    outgoing = Outgoing()
    catalog = mcplens.Catalog()
    async with client(server, outgoing) as connected:
        watch = await watch_not_offered_then_refresh(catalog, connected, templates, resources)
        assert len(catalog.resources("docs")) == resources
        assert "subscriptions/listen" not in outgoing.methods
        assert outgoing.methods == [
            "server/discover",
            *["resources/list"] * resource_pages,
            *["resources/templates/list"] * template_pages,
        ]
        assert watch.active
    # The client closed: both lists are cleared, the watch is over.
    after = catalog.status("docs")
    assert (after.status, after.templates, after.resources, watch.active) == ("unknown", 0, 0, False)
    assert catalog.templates("docs") == []
    assert "subscriptions/listen" not in outgoing.methods


@pytest.mark.parametrize("server", SERVED)
async def test_ttl_zero_keeps_the_pair_ok_for_min_ttl_then_outdated(server: str) -> None:
    """`ttlMs: 0` with a 0.3 s floor: `ok` after the commit, `outdated` once it ran out (never
    `stale`: nothing failed), and the next `ensure_fresh` traverses again."""
    needs_v2()
    _, _, templates, _, (template_pages, _) = SERVED[server]
    outgoing = Outgoing()
    catalog = mcplens.Catalog(refresh=mcplens.RefreshConfig(min_ttl_seconds=0.3))
    async with client(server, outgoing) as connected:
        watch = catalog.watch("docs", connected)
        await watch.ready()
        assert watch.notifications == "not_offered"
        status = await catalog.refresh("docs", connected)
        assert (status.status, status.generation) == ("ok", 1)
        seen: set[str] = set()

        def ran_out() -> bool:
            seen.add(now := catalog.status("docs").status)
            return now == "outdated"

        await eventually(ran_out)
        assert seen <= {"ok", "outdated"}
        assert len(catalog.templates("docs")) == templates  # the outdated pair is still listed
        await catalog.ensure_fresh("docs")
        again = catalog.status("docs")
        assert (again.status, again.generation, again.templates, again.last_error) == ("ok", 2, templates, None)
        assert outgoing.methods.count("resources/templates/list") == 2 * template_pages
        assert "subscriptions/listen" not in outgoing.methods
    assert catalog.status("docs").status == "unknown"


@pytest.mark.parametrize("server", SERVED)
async def test_a_legacy_watch_takes_list_changed_unsolicited(server: str) -> None:
    """The same servers over the initialize handshake (2.x `Client(mode="legacy")`, or a 1.x
    `ClientSession`): list_changed arrives unasked, no stream is opened."""
    outgoing = Outgoing()
    catalog = mcplens.Catalog()
    async with legacy_session(server, outgoing) as (session, era):
        assert era == "2025-11-25"
        watch = catalog.watch("docs", session)
        await watch.ready()
        assert watch.notifications == "unsolicited"
        assert catalog._machine.notifications("docs") == "unsolicited"
        status = await catalog.refresh("docs", session)
        assert (status.status, status.templates, status.resources) == ("ok", *SERVED[server][2:4])
        assert catalog.status("docs").status == "ok"
        assert outgoing.methods[:2] == ["initialize", "notifications/initialized"]
        assert "subscriptions/listen" not in outgoing.methods
    after = catalog.status("docs")
    assert (after.status, after.templates, watch.active) == ("unknown", 0, False)


@asynccontextmanager
async def legacy_session(server: str, outgoing: Outgoing) -> AsyncIterator[tuple[Any, str]]:
    """A handshake-era connection to `server` and its negotiated version."""
    if V2:
        async with client(server, outgoing, mode="legacy") as connected:
            yield connected, connected.protocol_version
        return
    from mcp import ClientSession

    async with outgoing.stdio(*command(server)) as (read, write), ClientSession(read, write) as session:
        result = await session.initialize()
        yield session, result.protocolVersion
