"""mcplens `track()` against the Python trackers people use today (`make bench-python-tracking`).

The SDK's high-level server — 1.x `FastMCP`, 2.x `MCPServer`, whichever major this environment has —
with a tool `echo(text)` and a template `note://{id}`, built once per variant: untracked, mcplens
(its JSONL exporter, into a temporary file), agentcat 2.1.x (`agentcat.track`) and posthog's MCP
integration (`posthog.mcp.instrument` with a `Posthog` client). The incumbents post to a loopback
sink, an HTTP server in a process of its own that accepts every post; network off. Each variant has
its `ClientSession` over in-memory JSON-RPC streams in this process. Interleaved rounds: each round
takes every variant once (the order rotates), 100 calls each, tools/call then resources/read;
20 rounds after 200 warm-up calls per variant and operation. A variant's added p50 is the median
over rounds of (its round p50 - the untracked round p50): each difference shares its moment.

The `python_incumbents` row: mcplens' added p50 ÷ the lower added p50 of the incumbents that record
that operation (agentcat records tools/call only), worst over both operations (and both SDK majors,
one file each): below 1 in every run is the goal.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from time import perf_counter_ns
from typing import Any

import anyio
import mcp
from bench_tracking import connect  # the same in-memory session as the tracking bench

import mcplens

V2 = hasattr(mcp, "MCPError")
VARIANTS = ["untracked", "mcplens", "agentcat", "posthog"]
# What each incumbent records: agentcat 2.1 wraps tools/call only (its package has no resources/read
# handler: what it adds there is noise, not tracking); posthog.mcp records both. The row compares
# mcplens, on each operation, with the incumbents that record it.
RECORDS = {"agentcat": {"tools/call"}, "posthog": {"tools/call", "resources/read"}}
OPS = ["tools/call", "resources/read"]
WARMUP, ROUNDS, PER_ROUND = 200, 20, 100
TMP = tempfile.mkdtemp(prefix="mcplens-bench-incumbents-")
SINK = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body = b'{"status": 1}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_PUT = do_POST
    def log_message(self, *args):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def build_server(name: str) -> Any:
    if V2:
        from mcp.server.mcpserver import MCPServer

        server: Any = MCPServer(name)
    else:
        from mcp.server.fastmcp import FastMCP

        server = FastMCP(name)

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.resource("note://{id}", name="note", mime_type="text/plain")
    def note(id: str) -> str:
        return f"note {id}"

    # FastMCP 1.x logs every request at INFO to stderr: the same for every variant, and not measured.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    return server


def track(variant: str, server: Any, sink: str) -> Any:
    """Tracks `server` as `variant`; returns what must be shut down at the end (or None)."""
    if variant == "mcplens":
        tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter(os.path.join(TMP, "events.jsonl"))])
        mcplens.track(server, tracker)
        return tracker
    if variant == "agentcat":
        os.environ["DISABLE_DIAGNOSTICS"] = "true"
        import agentcat

        agentcat.track(server, "proj_bench", agentcat.AgentCatOptions(disable_diagnostics=True, api_base_url=sink))
        return None
    if variant == "posthog":
        from posthog import Posthog
        from posthog.mcp import MCPAnalyticsOptions, instrument

        client = Posthog("phc_bench", host=sink)
        instrument(server, client, MCPAnalyticsOptions(report_missing=False, context=False))
        return client
    return None


async def main() -> dict[str, dict[str, float]]:
    sink_process = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)  # noqa: ASYNC220
    assert sink_process.stdout is not None
    sink = f"http://127.0.0.1:{sink_process.stdout.readline().strip()}"
    owned = []
    try:
        servers = {v: build_server(f"bench-{v}") for v in VARIANTS}
        for v in VARIANTS:
            owned.append(track(v, servers[v], sink))
        async with AsyncExitStack() as stack:
            sessions = {v: await stack.enter_async_context(connect(servers[v])) for v in VARIANTS}
            extra: dict[str, dict[str, str]] = {v: {} for v in VARIANTS}
            for v, s in sessions.items():
                await s.list_tools()
                if v == "agentcat":  # as an agent would: its injected `context`, and the session handle it mints
                    first = await s.call_tool("echo", {"text": "x", "context": "bench", "session_id": "start"})
                    sid = re.search(r"ses_[0-9A-Za-z]{27}", str(first.content[0].text))  # type: ignore[union-attr]
                    extra[v] = {"context": "bench", "session_id": sid.group(0) if sid else "start"}

            async def call(v: str, op: str, i: int) -> None:
                if op == "tools/call":
                    result = await sessions[v].call_tool("echo", {"text": f"hello {i}", **extra[v]})
                    assert not getattr(result, "is_error" if V2 else "isError"), (v, result)
                else:
                    await sessions[v].read_resource(f"note://{i}")  # type: ignore[arg-type]

            rounds: dict[tuple[str, str], list[float]] = {(op, v): [] for op in OPS for v in VARIANTS}
            n = 0
            for v in VARIANTS:
                for op in OPS:
                    for _ in range(WARMUP):
                        n += 1
                        await call(v, op, n)
            for r in range(ROUNDS):
                order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]
                for v in order:
                    for op in OPS:
                        times = []
                        for _ in range(PER_ROUND):
                            n += 1
                            t = perf_counter_ns()
                            await call(v, op, n)
                            times.append((perf_counter_ns() - t) / 1000)
                        rounds[op, v].append(statistics.median(times))
    finally:
        for o in owned:
            if o is not None:
                o.shutdown(10) if isinstance(o, mcplens.Tracker) else o.shutdown()
        sink_process.kill()
    added = {
        op: {
            v: statistics.median(a - b for a, b in zip(rounds[op, v], rounds[op, "untracked"], strict=True))
            for v in VARIANTS
            if v != "untracked"
        }
        for op in OPS
    }
    for op in OPS:
        base = statistics.median(rounds[op, "untracked"])
        print(f"    {op:<15} untracked  p50 {base:7.1f} µs (median of the round p50s)")
        for v in VARIANTS[1:]:
            print(f"    {op:<15} {v:<10} added p50 {added[op][v]:+7.1f} µs ({100 * added[op][v] / base:+5.1f} %)")
    return added


def write_row(added: dict[str, dict[str, float]]) -> None:
    results = os.environ.get("MCPLENS_BENCH_RESULTS")
    ratios = {op: a["mcplens"] / max(min(a[v] for v in RECORDS if op in RECORDS[v]), 1e-9) for op, a in added.items()}
    worst = max(ratios, key=ratios.__getitem__)
    print(f"    mcplens ÷ the lower incumbent recording it, worst operation ({worst}): {ratios[worst]:.3f}")
    if not results:
        return
    sdk = f"mcp {importlib.metadata.version('mcp')}"
    detail = (
        f"{sdk}: "
        + "; ".join(
            f"{op} mcplens +{a['mcplens']:.1f}, agentcat +{a['agentcat']:.1f}, posthog +{a['posthog']:.1f} µs"
            for op, a in added.items()
        )
        + " (agentcat records tools/call only)"
    )
    row = {"row": "python_incumbents", "figure": round(ratios[worst], 3), "detail": detail}
    Path(results).mkdir(parents=True, exist_ok=True)
    (Path(results) / f"python_incumbents.mcp{'2' if V2 else '1'}.json").write_text(json.dumps(row))


if __name__ == "__main__":
    versions = " · ".join(f"{p} {importlib.metadata.version(p)}" for p in ("mcp", "agentcat", "posthog"))
    print(f"== trackers side by side, end to end in memory: mcplens {mcplens.__version__} · {versions}")
    print(f"   ({ROUNDS} interleaved rounds x {PER_ROUND} calls per variant and operation; incumbents post to a sink)")
    write_row(anyio.run(main))
