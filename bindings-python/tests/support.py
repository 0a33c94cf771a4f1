"""Connections to real `mcp` servers, for whichever SDK major this environment has installed."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

if TYPE_CHECKING:
    from typing_extensions import Self

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


async def eventually(predicate: Callable[[], bool]) -> None:
    """Polls state that SDK tasks, other processes or the clock change (no event to wait on), for
    at most 10 s."""
    with anyio.fail_after(10):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.01)


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


class Outgoing:
    """The methods of the JSON-RPC requests and notifications a client writes, in order (`methods`):
    a wrapper of the client's write stream, put under a session as its stdio transport (`stdio`, for
    a 2.x `mcp.Client` or a `ClientSession`) or into a connected 2.x session's dispatcher (`tap`,
    for a `fastmcp.Client`, which builds its streams itself)."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    def wrap(self, stream: Any) -> Any:
        return _Recording(stream, self.methods)

    @asynccontextmanager
    async def stdio(self, command: str, *args: str) -> AsyncIterator[tuple[Any, Any]]:
        """`command args` over stdio: the read stream and the recorded write stream."""
        async with stdio_client(StdioServerParameters(command=command, args=list(args))) as (read, write):
            yield read, self.wrap(write)

    def tap(self, session: Any) -> None:
        """Records what the entered 2.x `session` writes from now on."""
        dispatcher = session._dispatcher
        dispatcher._write_stream = self.wrap(dispatcher._write_stream)


class _Recording:
    def __init__(self, inner: Any, methods: list[str]) -> None:
        self._inner, self._methods = inner, methods

    async def send(self, item: Any, /) -> None:
        message = getattr(item.message, "root", item.message)  # 1.x wraps the message in a root model
        if isinstance(method := getattr(message, "method", None), str):
            self._methods.append(method)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> bool | None:
        return await self._inner.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def watch_not_offered_then_refresh(catalog: Any, connected: Any, templates: int, resources: int) -> Any:
    """On a 2026-07-28 connection to a server without `resources.listChanged`: `catalog.watch` stands
    without a listen stream (`ready()` returns, `not_offered`), and a refresh commits `ok` with these
    counts. Returns the watch."""
    import anyio

    caps = connected.server_capabilities
    assert connected.protocol_version == "2026-07-28"
    assert caps.resources is not None
    assert not caps.resources.list_changed
    watch = catalog.watch("docs", connected)
    assert watch.notifications is None  # the watch's task has not run yet
    with anyio.fail_after(10):
        await watch.ready()
    assert (watch.notifications, watch.active) == ("not_offered", True)
    assert catalog._machine.notifications("docs") == "not_offered"
    status = await catalog.refresh("docs", connected)
    assert (status.status, status.templates, status.resources, status.last_error) == ("ok", templates, resources, None)
    assert catalog.status("docs").status == "ok"  # ttlMs 0: current for min_ttl (10 s)
    assert len(catalog.templates("docs")) == templates
    return watch


def read_output(output: str) -> dict[str, Any]:
    """`ReadMcpResourceTool`'s output (docs/tools.md) as one dict: the header line's JSON, each
    shown text put in its content's summary as `"text"`. Each separator names the characters
    after it, so a text that holds a separator line is still read whole."""
    head, _, rest = output.partition("\n")
    header: dict[str, Any] = json.loads(head)
    pos = 0
    while pos < len(rest):
        line_end = rest.index("\n", pos)
        sep = rest[pos:line_end]
        match = re.fullmatch(r"--- content (\d+) text \((\d+) of (\d+) characters\) ---", sep)
        assert match, f"a separator line: {sep!r}"
        index, shown = int(match[1]) - 1, int(match[2])
        header["contents"][index]["text"] = rest[line_end + 1 : line_end + 1 + shown]
        pos = line_end + 1 + shown
        if pos < len(rest):
            assert rest[pos] == "\n", "each section begins on a new line"
            pos += 1
    return header
