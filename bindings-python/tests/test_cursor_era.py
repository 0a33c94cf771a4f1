"""What a repeated cursor does depends on the protocol era the session negotiated, through the real
`mcp` SDK over stdio: `servers/sdk_server.py repeat` answers every later templates page with the
cursor the client just sent, forever.

- On 2025-11-25 (either SDK major) the traversal fails at the first repeat: `repeated_cursor`.
- On 2026-07-28 (a 2.x `mcp.Client`, whose spec forbids any determination from a cursor's value)
  the repeat is followed and the page bound ends it: `page_limit` after exactly `max_pages`
  requests — and with `repeated_cursors="fail"` the host gets the legacy rule back.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import mcplens
from support import SERVERS, V2, Outgoing, over_stdio

pytestmark = pytest.mark.anyio

T = "resources/templates/list"


@asynccontextmanager
async def modern(outgoing: Outgoing) -> AsyncIterator[Any]:
    """A 2.x `mcp.Client` negotiating 2026-07-28 with the `repeat` server."""
    from mcp import Client

    async with Client(outgoing.stdio(sys.executable, str(SERVERS / "sdk_server.py"), "repeat"), mode="auto") as c:
        assert c.protocol_version == "2026-07-28"
        yield c


async def test_a_repeated_cursor_fails_on_the_legacy_handshake() -> None:
    async with over_stdio("sdk_server.py", "repeat") as session:
        with pytest.raises(mcplens.DiscoveryError) as e:
            await mcplens.list_resource_templates(session, server="rep")
    assert (e.value.code, e.value.server) == ("repeated_cursor", "rep")
    assert "again" not in str(e.value)  # the cursor never shows


async def test_a_repeated_cursor_is_followed_on_2026_07_28_until_the_page_bound() -> None:
    if not V2:
        # reason: mcp 1.x has no 2026-07-28 era; this test runs in the mcp 2.3.0 pass of make test-python
        pytest.skip("protocol 2026-07-28 is served by mcp 2.x")
    outgoing = Outgoing()
    async with modern(outgoing) as client:
        with pytest.raises(mcplens.DiscoveryError) as e:
            await mcplens.list_resource_templates(client, server="rep", limits=mcplens.Limits(max_pages=5))
        assert e.value.code == "page_limit"
        assert outgoing.methods.count(T) == 5
        # The host may ask for the legacy rule: the first repeat fails.
        with pytest.raises(mcplens.DiscoveryError) as e:
            await mcplens.list_resource_templates(
                client, server="rep", limits=mcplens.Limits(max_pages=5, repeated_cursors="fail")
            )
        assert e.value.code == "repeated_cursor"
        assert outgoing.methods.count(T) == 5 + 2
