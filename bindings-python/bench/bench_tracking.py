"""Server tracking cost (`make bench-python-tracking`, part of `make bench`).

(a) Hot path at the handler: the wrapped vs the bare handler awaited directly in a loop (1.x: the
    wrapped `request_handlers` entry; 2.x: the middleware around `call_next`), a `tools/call` result
    (20-character text) and a `resources/read` result (1 KB text), with and without response
    capture, and the floor (the same glue with a Python no-op instead of the core). Median of 7 runs
    of 20,000 calls, interleaved; wall clock and the calling thread's CPU time. The calls come in
    bursts of 32 (under the core's ANSWERED_MAX); after each burst, outside the handler's timing,
    the pass the event loop would run after the responses records what was held (`record_answered`):
    the "mean" columns add it back, the deferred work per call.
(b) End to end in process (in-memory JSON-RPC streams, one `ClientSession` per variant): tools/call
    and resources/read p50/p99, untracked vs mcplens vs agentcat (when installed: 2.x bench
    environment; network off: its API base URL is a closed local port and diagnostics are off),
    same process, interleaved every round, 200 warm-up rounds then 2,000 calls each.
(c) RSS with the exporter down (OTLP and MCPcat exporters pointed at a closed local port), in a fresh
    process per variant: growth over 4,000 requests, then (mcplens) every 40,000 more operations
    recorded straight into the core, up to 160,000 (the queues are bounded: it levels off).

mcplens exports to a JSONL file in a temporary directory in (a) and (b).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from time import perf_counter_ns, thread_time_ns
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import mcp
from mcp import ClientSession, types
from pydantic_core import to_json

import mcplens

V2 = hasattr(mcp, "MCPError")
HAS_AGENTCAT = V2 and importlib.util.find_spec("agentcat") is not None
DEAD = "http://127.0.0.1:9"
TMP = tempfile.mkdtemp(prefix="mcplens-bench-")
TEXT_1K = "x" * 1024


def jsonl() -> list[Any]:
    return [mcplens.JsonlExporter(os.path.join(TMP, f"events-{os.getpid()}.jsonl"))]


# ---------------------------------------------------------------------------------------------
# The server (the reference workload): tool `echo(text)`, resources `note://{id}`.


def build_server(name: str = "bench") -> Any:
    if V2:
        from mcp.server.lowlevel import Server

        async def on_list_tools(ctx: Any, params: Any) -> Any:
            schema = {"type": "object", "properties": {"text": {"type": "string"}}}
            return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            text = str((params.arguments or {}).get("text", ""))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

        async def on_read(ctx: Any, params: Any) -> Any:
            uri = str(params.uri)
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=f"note {uri}")])

        return Server(name, on_list_tools=on_list_tools, on_call_tool=on_call_tool, on_read_resource=on_read)

    from mcp.server.lowlevel import Server as Server1
    from mcp.server.lowlevel.helper_types import ReadResourceContents

    server = Server1(name)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(name="echo", inputSchema={"type": "object", "properties": {"text": {"type": "string"}}})]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        return [types.TextContent(type="text", text=str(arguments.get("text", "")))]

    @server.read_resource()
    async def read(uri: Any) -> list[ReadResourceContents]:
        return [ReadResourceContents(content=f"note {uri}", mime_type="text/plain")]

    return server


@asynccontextmanager
async def connect(server: Any) -> AsyncIterator[Any]:
    """An initialized `ClientSession` to `server` (low-level, or 1.x `FastMCP` / 2.x `MCPServer`)
    over in-memory JSON-RPC streams."""
    if not V2:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server) as session:
            yield session
        return
    from mcp.shared.memory import create_client_server_memory_streams

    low = getattr(server, "_lowlevel_server", server)
    async with create_client_server_memory_streams() as ((cr, cw), (sr, sw)), anyio.create_task_group() as tg:
        tg.start_soon(lambda: low.run(sr, sw, low.create_initialization_options()))
        async with ClientSession(cr, cw) as session:
            await session.initialize()
            yield session
        tg.cancel_scope.cancel()


def agentcat_track(server: Any) -> None:
    os.environ["DISABLE_DIAGNOSTICS"] = "true"
    import agentcat

    agentcat.track(server, "proj_bench", agentcat.AgentCatOptions(disable_diagnostics=True, api_base_url=DEAD))


# ---------------------------------------------------------------------------------------------
# (a) The hot path at the handler.


def v1_context() -> Any:
    from mcp.server.lowlevel.server import request_ctx
    from mcp.shared.context import RequestContext

    class Session:
        client_params = types.InitializeRequestParams(
            protocolVersion="2025-11-25",
            capabilities=types.ClientCapabilities(),
            clientInfo=types.Implementation(name="bench", version="1"),
        )

    return request_ctx.set(RequestContext(request_id=7, meta=None, session=Session(), lifespan_context={}))


def v2_context(method: str, params: dict[str, Any]) -> Any:
    class Connection:
        state: ClassVar[dict[str, Any]] = {}
        exit_stack = AsyncExitStack()
        session_id = None
        protocol_version = "2025-11-25"
        client_params = types.InitializeRequestParams(
            protocol_version="2025-11-25",
            capabilities=types.ClientCapabilities(),
            client_info=types.Implementation(name="bench", version="1"),
        )

    class Session:
        _connection = Connection()

    class Ctx:
        session = Session()
        request_id = 7
        request = None

    ctx = Ctx()
    ctx.method = method  # type: ignore[attr-defined]
    ctx.params = params  # type: ignore[attr-defined]
    return ctx


BURST = 32


async def per_call(fn: Callable[[], Awaitable[Any]], n: int, tracker: Any) -> tuple[float, float, float]:
    """(wall ns, this thread's CPU ns, CPU ns with the pass after the responses) per call, in bursts
    of BURST: the CPU time leaves out the time the core's threads (building and exporting events on
    the other core) take from this one on a busy machine."""
    wall = cpu = passes = 0
    record_answered = getattr(tracker and tracker._core, "record_answered", None)
    for _ in range(n // BURST):
        t, c = perf_counter_ns(), thread_time_ns()
        for _ in range(BURST):
            await fn()
        wall, cpu = wall + perf_counter_ns() - t, cpu + thread_time_ns() - c
        if record_answered is not None:
            c = thread_time_ns()
            record_answered()
            passes += thread_time_ns() - c
    calls = n // BURST * BURST
    return wall / calls, cpu / calls, (cpu + passes) / calls


class NoopCore:
    """The floor: the same glue with a core whose `hold` is a Python no-op."""

    def hold(self, *args: Any) -> bool:
        return False

    def record_answered(self) -> None:
        pass


class PydanticCore(NoopCore):
    """The same glue with pydantic's serializer instead of the core's (what the request-path
    serializer in src/convert/json.rs saves): params and result to JSON with `pydantic_core.to_json`."""

    def hold(self, code: Any, session: Any, t0: Any, rid: Any, params: Any, result: Any, *rest: Any) -> bool:
        to_json(params, by_alias=True, exclude_none=True)
        to_json(result, by_alias=True, exclude_none=True)
        return False


def install(server: Any, tracker: mcplens.Tracker, mode: str) -> None:
    if mode not in ("floor", "pydantic"):
        mcplens.track(server, tracker)
        return
    from mcplens import _tracking

    install_glue = _tracking._install_v2 if V2 else _tracking._install_v1
    install_glue(server, tracker, NoopCore() if mode == "floor" else PydanticCore(), None)  # type: ignore[arg-type]


def pair_v1(op: str, mode: str) -> tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]], Any]:
    from mcp.server.lowlevel import Server

    if op == "tools/call":
        key = types.CallToolRequest
        req: Any = types.CallToolRequest(params=types.CallToolRequestParams(name="echo", arguments={"text": "hi"}))
        result = types.ServerResult(types.CallToolResult(content=[types.TextContent(type="text", text="a" * 20)]))
    else:
        key = types.ReadResourceRequest
        req = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri="note://1"))
        contents = [types.TextResourceContents(uri="note://1", text=TEXT_1K, mimeType="text/plain")]
        result = types.ServerResult(types.ReadResourceResult(contents=contents))

    async def bare(r: Any) -> Any:
        return result

    server = Server("bench-a")
    server.request_handlers[key] = bare
    tracker = mcplens.Tracker(exporters=jsonl(), capture_responses=mode == "responses")
    install(server, tracker, mode)
    wrapped = server.request_handlers[key]
    return (lambda: bare(req)), (lambda: wrapped(req)), tracker


def pair_v2(op: str, mode: str) -> tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]], Any]:
    from mcp.server.lowlevel import Server

    if op == "tools/call":
        ctx = v2_context(op, {"name": "echo", "arguments": {"text": "hi"}})
        wire: dict[str, Any] = {"content": [{"type": "text", "text": "a" * 20}], "isError": False}
    else:
        ctx = v2_context(op, {"uri": "note://1"})
        wire = {"contents": [{"uri": "note://1", "mimeType": "text/plain", "text": TEXT_1K}]}

    async def call_next(c: Any) -> Any:
        return wire

    server = Server("bench-a")
    tracker = mcplens.Tracker(exporters=jsonl(), capture_responses=mode == "responses")
    install(server, tracker, mode)
    # mcplens' own entry (it sits inside the SDK's OpenTelemetry middleware, not first).
    middleware = next(m for m in server.middleware if getattr(m, "_mcplens_tracker", None) is tracker)
    return (lambda: call_next(ctx)), (lambda: middleware(ctx, call_next)), tracker


async def hot_path() -> None:
    n, runs = 20_000, 7
    print("(a) hot path at the handler: ns per call (median of 7 runs x 20,000 calls); wall clock, and")
    print("    the CPU time of the calling thread (without the core's threads competing for the cores).")
    print("    capture: (floor) = the same glue with a Python no-op record; (pydantic) = the same glue")
    print("    serializing params and result with pydantic_core.to_json instead; no / responses = mcplens")
    print("    mean cpu = the added CPU per call with the pass after the responses (the deferred work)")
    print(
        f"    {'operation':<16} {'capture':<10} {'bare':>6} {'wrapped':>8} {'added':>7}   "
        f"{'bare cpu':>8} {'wrapped cpu':>11} {'added cpu':>9} {'mean cpu':>9}"
    )
    token = None if V2 else v1_context()
    added: dict[tuple[str, str], float] = {}
    mean: dict[tuple[str, str], float] = {}
    try:
        for op in ("tools/call", "resources/read"):
            for mode in ("floor", "pydantic", "no", "responses"):
                bare, wrapped, tracker = (pair_v2 if V2 else pair_v1)(op, mode)
                b, w = [], []
                for _ in range(runs):
                    b.append(await per_call(bare, n, None))
                    w.append(await per_call(wrapped, n, tracker))
                tracker.shutdown(10)
                mb, mw = statistics.median(x[0] for x in b), statistics.median(x[0] for x in w)
                cb, cw = statistics.median(x[1] for x in b), statistics.median(x[1] for x in w)
                added[op, mode] = cw - cb
                mean[op, mode] = statistics.median(x[2] for x in w) - cb
                label = {"floor": "(floor)", "pydantic": "(pydantic)"}.get(mode, mode)
                print(
                    f"    {op:<16} {label:<10} {mb:>6.0f} {mw:>8.0f} {mw - mb:>7.0f}   "
                    f"{cb:>8.0f} {cw:>11.0f} {cw - cb:>9.0f} {mean[op, mode]:>9.0f}"
                )
    finally:
        if token is not None:
            from mcp.server.lowlevel.server import request_ctx

            request_ctx.reset(token)
    summary_row(added, mean)
    convert_row(mean)


def convert_row(added: dict[tuple[str, str], float]) -> None:
    """The `python_convert_tracking` row (the glue budget's `convert` role, src/convert/json.rs): over
    the glue floor, mcplens' whole record with responses captured, the pass after the responses
    included (the writer and the core's queue)
    ÷ pydantic's serializer alone on the same params and result, worst over both operations and
    every SDK major run. Under 1: the converter saves what it costs in code."""
    results = os.environ.get("MCPLENS_BENCH_RESULTS")
    if not results or not added:
        return
    ops = sorted({op for op, _ in added})
    over = {op: (added[op, "responses"] - added[op, "floor"], added[op, "pydantic"] - added[op, "floor"]) for op in ops}
    figure = max(ours / max(plain, 1.0) for ours, plain in over.values())
    print(f"    convert row: mcplens with responses ÷ pydantic's serializer alone, over the floor: {figure:.2f}")
    detail = f"mcp {importlib.metadata.version('mcp')}: " + ", ".join(
        f"{op} {ours / 1000:.2f} µs vs {plain / 1000:.2f} µs" for op, (ours, plain) in over.items()
    )
    path = os.path.join(results, "python_convert_tracking.json")
    if os.path.exists(path):
        with open(path) as f:
            previous = json.load(f)
        detail = f"{previous['detail']}; {detail}"
        figure = max(figure, float(previous["figure"]))
    with open(path, "w") as f:
        json.dump({"row": "python_convert_tracking", "figure": round(figure, 2), "detail": detail}, f)


def summary_row(added: dict[tuple[str, str], float], mean: dict[tuple[str, str], float]) -> None:
    """The `python_tracking` row of `make bench`'s summary (tests/bench_summary.py): the added CPU time
    per call without response capture ÷ the glue floor's, in this run, worst over both operations and
    every SDK major run."""
    results = os.environ.get("MCPLENS_BENCH_RESULTS")
    if not results or not added:
        return
    path = os.path.join(results, "python_tracking.json")
    ops = sorted({op for op, _ in added})
    figure = max(added[op, "no"] / added[op, "floor"] for op in ops)
    us = ", ".join(
        f"{op} {added[op, 'no'] / 1000:.2f} µs ({added[op, 'responses'] / 1000:.2f} with responses) "
        f"on a floor of {added[op, 'floor'] / 1000:.2f}, mean with the pass {mean[op, 'no'] / 1000:.2f}"
        for op in ops
    )
    detail = f"mcp {importlib.metadata.version('mcp')}: {us}"
    if os.path.exists(path):
        with open(path) as f:
            previous = json.load(f)
        detail = f"{previous['detail']}; {detail}"
        figure = max(figure, float(previous["figure"]))
    os.makedirs(results, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"row": "python_tracking", "figure": round(figure, 2), "detail": detail}, f)


# ---------------------------------------------------------------------------------------------
# (b) End to end.


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


async def end_to_end() -> None:
    variants = ["untracked", "mcplens"] + (["agentcat"] if HAS_AGENTCAT else [])
    servers = {v: build_server(f"bench-{v}") for v in variants}
    trackers = []
    tracker = mcplens.Tracker(exporters=jsonl())
    trackers.append(tracker)
    mcplens.track(servers["mcplens"], tracker)
    if HAS_AGENTCAT:
        agentcat_track(servers["agentcat"])
    warmup, n = 200, 2_000
    async with AsyncExitStack() as stack:
        sessions = {v: await stack.enter_async_context(connect(servers[v])) for v in variants}
        args: dict[str, dict[str, Any]] = {}
        for v, s in sessions.items():
            await s.list_tools()
            args[v] = {}
            if v == "agentcat":  # as an agent would: the injected `context`, and the minted session handle
                first = await s.call_tool("echo", {"text": "x", "context": "bench", "session_id": "start"})
                sid = re.search(r"ses_[0-9A-Za-z]{27}", first.content[0].text)
                args[v] = {"context": "bench", "session_id": sid.group(0) if sid else "start"}
        for op in ("tools/call", "resources/read"):
            times: dict[str, list[float]] = {v: [] for v in variants}
            for i in range(warmup + n):
                order = variants[i % len(variants) :] + variants[: i % len(variants)]
                for v in order:
                    s = sessions[v]
                    t = perf_counter_ns()
                    if op == "tools/call":
                        await s.call_tool("echo", {"text": f"hello {i}", **args[v]})
                    else:
                        await s.read_resource(f"note://{i}")
                    if i >= warmup:
                        times[v].append((perf_counter_ns() - t) / 1000)
            base = statistics.median(times["untracked"])
            for v in variants:
                xs = times[v]
                p50 = statistics.median(xs)
                added = "" if v == "untracked" else f"{p50 - base:>+8.1f} µs {100 * (p50 - base) / base:>+6.1f} %"
                print(
                    f"    {op:<15} {v:<10} mean {statistics.fmean(xs):>7.1f}  p50 {p50:>7.1f}  "
                    f"p99 {pct(xs, 99):>8.1f} µs   {added}"
                )
    for t in trackers:
        t.shutdown(10)
    print(f"    mcplens: {tracker.stats()['recorded']} recorded, {tracker.stats()['exporters'][0]}")


# ---------------------------------------------------------------------------------------------
# (c) RSS with the exporter down (a fresh process per variant).


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def rss_child(variant: str) -> None:
    server = build_server(f"bench-{variant}")
    tracker = None
    if variant == "mcplens":
        exporters = [mcplens.OtlpExporter(DEAD), mcplens.McpcatExporter("proj_bench", base_url=DEAD)]
        tracker = mcplens.Tracker(exporters=exporters)
        mcplens.track(server, tracker)
    elif variant == "agentcat":
        agentcat_track(server)
    async with connect(server) as s:
        await s.list_tools()
        for _ in range(200):
            await s.call_tool("echo", {"text": "warm"})
        before = rss_kib()
        for i in range(2_000):
            await s.call_tool("echo", {"text": f"hello {i}"})
            await s.read_resource(f"note://{i}")
        after_4k = rss_kib()
    extra = ""
    if tracker is not None:
        # 160,000 more operations straight into the core (bounded queues: the RSS levels off).
        core = tracker._core
        assert core is not None
        session = core.open_session(None, None)
        params = {"name": "echo", "arguments": {"text": "hello"}}
        result = {"content": [{"type": "text", "text": "hello"}]}
        marks = []
        for i in range(1, 160_001):
            if core.hold(2, session, perf_counter_ns(), i, params, result):  # 2: tools/call
                core.record_answered()
            if i % 1000 == 0:
                await anyio.lowlevel.checkpoint()
            if i % 40_000 == 0:
                marks.append(f"+{(rss_kib() - before) / 1024:.1f}")
        st = tracker.stats()
        ex = {v["name"]: (v["exported"], v["dropped"], v["failed"], v["pending"]) for v in st["exporters"]}
        extra = (
            f"; {' / '.join(marks)} MiB after 44,000 / 84,000 / 124,000 / 164,000 (recorded {st['recorded']}, "
            f"queue drops {st['dropped']}, per exporter (exported, dropped, failed, pending) {ex})"
        )
    print(f"    {variant:<10} +{(after_4k - before) / 1024:.1f} MiB over 4,000 requests{extra}")
    os._exit(0)  # do not wait for the dead exporters at exit


def rss() -> None:
    print("(c) RSS growth with the exporter down (closed local port), one process per variant")
    for variant in ["untracked", "mcplens"] + (["agentcat"] if HAS_AGENTCAT else []):
        out = subprocess.run(
            [sys.executable, __file__, "--rss", variant], capture_output=True, text=True, timeout=600, check=False
        )
        sys.stdout.write(out.stdout or f"    {variant}: failed: {out.stderr[-500:]}\n")


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--rss":
        anyio.run(rss_child, sys.argv[2])
        return
    versions = f"mcp {importlib.metadata.version('mcp')} · mcplens {mcplens.__version__}"
    if HAS_AGENTCAT:
        versions += f" · agentcat {importlib.metadata.version('agentcat')}"
    print(f"== server tracking: {versions} · Python {sys.version.split()[0]}")
    anyio.run(hot_path)
    print("(b) end to end in process, µs per request (2,000 each, interleaved)")
    anyio.run(end_to_end)
    rss()


if __name__ == "__main__":
    main()
