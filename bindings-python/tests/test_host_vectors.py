"""Replays every shared vector in `tests/vectors/host/` through the public Python API, with real
`mcp` SDK objects: the host contract (format: `tests/vectors/README.md`, "host"; the same vectors run
through the Node package in `bindings-node/__test__/host-vectors.test.mjs`).

Each vector names one call and the error it must raise: its code, its server (`None` when the error
concerns no server) and its message, byte for byte — every one the core's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession

import mcplens
from mcplens import _core

pytestmark = pytest.mark.anyio

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "host"
FILES = sorted(VECTORS.glob("*.json"))
CASES = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in FILES}


@asynccontextmanager
async def uninitialized_session() -> AsyncIterator[ClientSession]:
    """A real `mcp.ClientSession`, entered, whose `initialize` was never called (no server needed:
    nothing may be sent)."""
    to_server, from_client = anyio.create_memory_object_stream[Any](8)
    to_client, from_server = anyio.create_memory_object_stream[Any](8)
    async with to_server, from_client, to_client, from_server, ClientSession(from_server, to_server) as session:
        yield session


async def perform(call: dict[str, Any], catalog: mcplens.Catalog) -> None:
    """The vector's call through the public API (it must raise)."""
    op, server = call["op"], call.get("server", "")
    if op == "tool":
        catalog.call_list_templates_tool(call["input"])
    elif op == "second_refresher":
        mcplens.Refresher(catalog)
    elif op == "catalog_invalidate":
        catalog.invalidate(server, call["reason"])
    elif op == "refresher_request":
        # `mcplens.Catalog` drives its own refresher: hosts on other SDKs drive one over the core's catalog.
        mcplens.Refresher(_core.Catalog()).request(server, call["want"])
    elif op == "pager":
        mcplens.Pager(call["kind"], server)
    elif op == "sdk_failure":
        pager = mcplens.Pager("resources", server, now=0)
        assert pager.next_request() is not None
        pager.accept_failure(call["kind"], call.get("code"), call.get("connectionHeld"), now=0)
    else:
        assert call["client"] == "uninitialized"
        raised: mcplens.McplensError | None = None
        async with uninitialized_session() as session:
            try:
                if op == "list_resource_templates":
                    await mcplens.list_resource_templates(session, server=server)
                elif op == "list_resources":
                    await mcplens.list_resources(session, server=server)
                elif op == "catalog_refresh":
                    await catalog.refresh(server, session)
                elif op == "catalog_watch":
                    catalog.watch(server, session)
                else:
                    raise AssertionError(f"unknown call {op}")
            except mcplens.McplensError as e:
                raised = e  # raised outside the session, whose task group would wrap it
        if raised is not None:
            raise raised


def test_vectors_present() -> None:
    assert len(FILES) >= 9, f"only {len(FILES)} host vectors under {VECTORS}"


@pytest.mark.parametrize("name", sorted(CASES))
async def test_host_vector(name: str) -> None:
    case = CASES[name]
    assert case["name"] == name, "name must match the file"
    catalog = mcplens.Catalog()
    with pytest.raises(mcplens.McplensError) as info:
        await perform(case["call"], catalog)
    e, want = info.value, case["expectError"]
    assert (e.code, e.server, str(e)) == (want["code"], want["server"], want["message"])
    if "expectServers" in case:
        assert catalog.servers() == case["expectServers"]


async def test_a_session_not_entered_is_the_cores_misuse_error() -> None:
    """Python only (Node clients have no `async with`): the message is the core's all the same."""
    to_server, from_client = anyio.create_memory_object_stream[Any](8)
    to_client, from_server = anyio.create_memory_object_stream[Any](8)
    async with to_server, from_client, to_client, from_server:
        session = ClientSession(from_server, to_server)  # never entered
        catalog = mcplens.Catalog()
        with pytest.raises(mcplens.CatalogError) as info:
            catalog.watch("docs", session)
        e = info.value
        assert (e.code, e.server, str(e)) == (
            "invalid_argument",
            "docs",
            'server "docs": invalid argument: the session must be entered',
        )
        assert catalog.servers() == []


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("sdk_failure_")))
def test_sdk_failure_rpc_code(name: str) -> None:
    """The listen stream's refusal takes the same table (`sdk_rpc_code`): the server's code exactly
    when the pager's error is `server_error`."""
    call, want = CASES[name]["call"], CASES[name]["expectError"]
    if want["code"] == "invalid_argument":
        with pytest.raises(mcplens.DiscoveryError) as e:
            _core.sdk_rpc_code(call["kind"], call["code"], call["connectionHeld"])
        assert e.value.code == "invalid_argument"
        return
    expected = call["code"] if want["code"] == "server_error" else None
    assert _core.sdk_rpc_code(call["kind"], call["code"], call["connectionHeld"]) == expected
