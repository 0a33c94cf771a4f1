"""Tracking a community fastmcp server (`make bench-python-tracking`, part of `make bench`).

One fastmcp server (tool `echo(text)`, template `note://{id}`), three copies: untracked, tracked by
mcplens (`mcplens.track`, JSONL to a temporary file) and by agentcat 2.1.0 (`agentcat.track`, its
fastmcp middleware; API base URL a closed local port, diagnostics off). agentcat tracks tools only:
its `resources/read` rows show what its middleware costs a request it does not record.

(a) Handler side, in process: the server's own time per request, from the SDK middleware seam in
    (an outermost probe) to the answer, with the tracker's hook and fastmcp's whole chain inside;
    and (mcp 2.x) mcplens' hook alone: its middleware around a `call_next` that returns the result
    fastmcp gave, with that request's own context, vs that `call_next` alone (the calling thread's CPU time, median
    of 7 runs of 20,000 calls, interleaved). agentcat's middleware needs a live request: not measured alone.
(b) End to end in memory (`fastmcp.Client(server)`) and (c) over stdio (`StdioTransport`, one
    server process per variant): tools/call and resources/read as the client sees them.
Every round sends one request to each variant in rotating order (interleaved); 200 warm-up rounds,
then N measured. p50/p99 in µs; the deltas are against the untracked server of the same run.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import statistics
import sys
import tempfile
import warnings
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from time import perf_counter_ns, thread_time_ns
from typing import Any

import anyio

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import fastmcp
    from fastmcp import Client, FastMCP
    from fastmcp.client.transports import StdioTransport

import mcplens

HAS_AGENTCAT = importlib.util.find_spec("agentcat") is not None
VARIANTS = ["untracked", "mcplens"] + (["agentcat"] if HAS_AGENTCAT else [])
DEAD = "http://127.0.0.1:9"
TMP = tempfile.mkdtemp(prefix="mcplens-bench-fastmcp-")
OPS = ("tools/call", "resources/read")
LEGACY: dict[str, Any] = {"mode": "legacy"} if int(fastmcp.__version__.split(".")[0]) >= 4 else {}


def build(variant: str) -> Any:
    server = FastMCP(f"bench-{variant}")

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.resource("note://{id}", mime_type="text/plain")
    def note(id: str) -> str:
        return f"note {id}"

    if variant == "mcplens":
        path = os.path.join(TMP, f"events-{os.getpid()}.jsonl")
        mcplens.track(server, exporters=[mcplens.JsonlExporter(path)])
    elif variant == "agentcat":
        os.environ["DISABLE_DIAGNOSTICS"] = "true"
        import agentcat

        agentcat.track(server, "proj_bench", agentcat.AgentCatOptions(disable_diagnostics=True, api_base_url=DEAD))
    return server


def probe(server: Any, times: dict[str, list[float]]) -> None:
    """Outermost at the SDK seam (installed after tracking): the server's time per request."""
    low = server._mcp_server
    if hasattr(low, "middleware"):  # mcp 2.x

        async def timed(ctx: Any, call_next: Any) -> Any:
            t = perf_counter_ns()
            try:
                return await call_next(ctx)
            finally:
                if ctx.method in times:
                    times[ctx.method].append((perf_counter_ns() - t) / 1000)

        low.middleware.insert(0, timed)
        return
    from mcp import types

    for key, method in ((types.CallToolRequest, "tools/call"), (types.ReadResourceRequest, "resources/read")):
        handler = dict.__getitem__(low.request_handlers, key)

        async def timed1(req: Any, handler: Any = handler, method: str = method) -> Any:
            t = perf_counter_ns()
            try:
                return await handler(req)
            finally:
                times[method].append((perf_counter_ns() - t) / 1000)

        dict.__setitem__(low.request_handlers, key, timed1)


@asynccontextmanager
async def connect(variant: str, transport: str, server: Any = None) -> AsyncIterator[Any]:
    if transport == "memory":
        async with Client(server, **LEGACY) as client:
            yield client
        return
    stdio = StdioTransport(sys.executable, [__file__, "--serve", variant], log_file=Path(os.devnull), keep_alive=False)
    async with Client(stdio, **LEGACY) as client:
        yield client


async def tool_args(client: Any, variant: str) -> dict[str, Any]:
    """agentcat adds `context` and a minted `session_id` to every tool; an agent sends them."""
    await client.list_tools()
    if variant != "agentcat":
        return {}
    first = await client.call_tool("echo", {"text": "x", "context": "bench", "session_id": "start"})
    sid = re.search(r"ses_[0-9A-Za-z]{27}", str(first.content))
    return {"context": "bench", "session_id": sid.group(0) if sid else "start"}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def row(label: str, op: str, variant: str, xs: list[float], base: list[float]) -> None:
    p50, p99 = statistics.median(xs), pct(xs, 99)
    b50, b99 = statistics.median(base), pct(base, 99)
    added = (
        ""
        if variant == "untracked"
        else f"{p50 - b50:>+7.1f} µs {100 * (p50 - b50) / b50:>+6.1f} %  p99 {p99 - b99:>+7.1f} µs"
    )
    note = "  (not recorded by agentcat)" if variant == "agentcat" and op == "resources/read" else ""
    print(f"    {label:<8} {op:<15} {variant:<10} p50 {p50:>7.1f}  p99 {p99:>8.1f} µs   {added}{note}")


async def run(transport: str, n: int, warmup: int = 200) -> None:
    servers = {v: build(v) for v in VARIANTS} if transport == "memory" else {}
    inside: dict[str, dict[str, list[float]]] = {v: {op: [] for op in OPS} for v in VARIANTS}
    for v, s in servers.items():
        probe(s, inside[v])
    async with AsyncExitStack() as stack:
        clients = {v: await stack.enter_async_context(connect(v, transport, servers.get(v))) for v in VARIANTS}
        args = {v: await tool_args(c, v) for v, c in clients.items()}
        for op in OPS:
            for d in inside.values():
                d[op].clear()
            seen: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for i in range(warmup + n):
                order = VARIANTS[i % len(VARIANTS) :] + VARIANTS[: i % len(VARIANTS)]
                for v in order:
                    c = clients[v]
                    t = perf_counter_ns()
                    if op == "tools/call":
                        await c.call_tool("echo", {"text": f"hello {i}", **args[v]})
                    else:
                        await c.read_resource(f"note://{i}")
                    if i >= warmup:
                        seen[v].append((perf_counter_ns() - t) / 1000)
                    elif transport == "memory":
                        inside[v][op].clear()
            label = "client" if transport == "memory" else "stdio"
            for v in VARIANTS:
                row(label, op, v, seen[v], seen["untracked"])
            if transport == "memory":
                for v in VARIANTS:
                    row("server", op, v, inside[v][op], inside["untracked"][op])


async def hook_cost() -> None:
    """mcplens' SDK middleware on a fastmcp server around a recorded `call_next`: ns per call."""
    server = build("mcplens")
    low = server._mcp_server
    if not hasattr(low, "middleware"):
        return
    captured: dict[str, tuple[Any, Any]] = {}

    async def capture(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        captured[ctx.method] = (ctx, result)
        return result

    low.middleware.insert(1, capture)  # just inside mcplens' hook
    async with Client(server, **LEGACY) as client:
        await client.call_tool("echo", {"text": "hello"})
        await client.read_resource("note://1")
    hook = low.middleware[0]
    n, runs = 20_000, 7
    print("    mcplens' hook alone, CPU ns per call on the calling thread (median of 7 x 20,000; wall time")
    print("    on this shared machine counts other processes' time slices): bare call_next, wrapped, added")
    for op in OPS:
        ctx, result = captured[op]

        async def bare(c: Any, result: Any = result) -> Any:
            return result

        b, w = [], []
        for _ in range(runs):
            b.append(await per_call(lambda ctx=ctx: bare(ctx), n))
            w.append(await per_call(lambda ctx=ctx: hook(ctx, bare), n))
        mb, mw = statistics.median(b), statistics.median(w)
        print(f"    hook     {op:<15} mcplens    bare {mb:>6.0f}  wrapped {mw:>7.0f}  added {mw - mb:>6.0f} ns")


async def per_call(fn: Any, n: int) -> float:
    t = thread_time_ns()
    for _ in range(n):
        await fn()
    return (thread_time_ns() - t) / n


async def serve(variant: str) -> None:
    await build(variant).run_async("stdio", show_banner=False)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        anyio.run(serve, sys.argv[2])
        return
    versions = (
        f"fastmcp {fastmcp.__version__} · mcp {importlib.metadata.version('mcp')} · mcplens {mcplens.__version__}"
    )
    if HAS_AGENTCAT:
        versions += f" · agentcat {importlib.metadata.version('agentcat')}"
    print(f"== tracking a fastmcp server: {versions} · Python {sys.version.split()[0]}")
    print("(a)+(b) in memory, 2,000 each, interleaved: client = round trip, server = the server's own time")
    anyio.run(run, "memory", 2_000)
    anyio.run(hook_cost)
    print("(c) over stdio, 1,000 each, interleaved (one server process per variant)")
    anyio.run(run, "stdio", 1_000)


if __name__ == "__main__":
    main()
