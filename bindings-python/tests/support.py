"""Connections to real `mcp` servers, for whichever SDK major this environment has installed."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

V2 = hasattr(mcp, "MCPError")
try:  # community fastmcp, in its own test environments only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(ImportError):  # authlib turns its own deprecation warnings on at import
            import authlib.deprecate  # noqa: F401
        warnings.simplefilter("ignore")  # fastmcp 2.x imports authlib's deprecated modules
        import fastmcp as FASTMCP
        import fastmcp.client.transports  # noqa: F401 (imports the auth modules too)
except ImportError:
    FASTMCP = None
SERVERS = Path(__file__).parent / "servers"


@asynccontextmanager
async def in_memory(server: Any, **client_options: Any) -> AsyncIterator[Any]:
    """An initialized `ClientSession` connected to `server` (low-level, or 1.x `FastMCP` / 2.x
    `MCPServer`) over in-memory JSON-RPC streams; `client_options` go to the `ClientSession`."""
    if not V2:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server, **client_options) as session:
            yield session
        return
    from mcp.shared.memory import create_client_server_memory_streams

    low = getattr(server, "_lowlevel_server", server)
    async with create_client_server_memory_streams() as ((cr, cw), (sr, sw)), anyio.create_task_group() as tg:
        tg.start_soon(lambda: low.run(sr, sw, low.create_initialization_options()))
        async with ClientSession(cr, cw, **client_options) as session:
            await session.initialize()
            yield session
        tg.cancel_scope.cancel()


@asynccontextmanager
async def http_server(*args: str) -> AsyncIterator[str]:
    """`python ARGS PORT`, a server on a free loopback port that writes one line to stderr once it
    listens; yields its streamable-HTTP URL (`/mcp`) and kills it at the end."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = await anyio.open_process([sys.executable, *args, str(port)], stdout=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        await process.stderr.receive()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        await process.wait()


def stdio_params(script: str, *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SERVERS / script), *args])


@asynccontextmanager
async def over_stdio(script: str, *args: str, **client_options: Any) -> AsyncIterator[Any]:
    """An initialized `ClientSession` talking to `python servers/<script> <args>` over stdio."""
    async with (
        stdio_client(stdio_params(script, *args)) as (read, write),
        ClientSession(read, write, **client_options) as session,
    ):
        await session.initialize()
        yield session
