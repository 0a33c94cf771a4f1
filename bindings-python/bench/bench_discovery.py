"""mcplens' bounded traversal vs the `mcp` SDK's own typed list loop (`make bench-python`).

Same server, same session, same process, contestants interleaved every round; in memory and over
stdio. Workloads (`reference/baseline-discovery.md`):

- S: 10,000 templates in 100 pages of 100 (opaque cursors), 200-character descriptions, ~4.2 MB of
  JSON; mcplens' limits raised to fit (10,000 items is the default cap, the bytes cap is raised);
- M: a ~1 MB in-bounds workload: 440 templates in 5 pages, 2,000-character descriptions, default limits.

Both contestants read every field of every template before the clock stops (mcplens' items make
their Python strings when read). Prints the median milliseconds per full traversal and the ratio
mcplens / SDK (< 1: mcplens faster); and, in the same rounds, the floor: the raw request of every
page as mcplens' traversal sends it (the session's own I/O, the result as the SDK parsed it, no
validation, no core), reading every field of each template's dict: what any traversal over this
session pays before its first rule.
Under `make bench` (MCPLENS_BENCH_RESULTS set) the worst in-memory ratio of this SDK major is written
as a `python_discovery` row for the summary, which keeps the worst of both majors.
`python bench_discovery.py --serve WORKLOAD` is the stdio server.
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import mcplens
from mcplens import _mcp

V2 = hasattr(mcp, "MCPError")
WORKLOADS = {"S": (100, 100, 200), "M": (5, 88, 2000)}  # pages, per page, description chars
LIMITS = {"S": mcplens.Limits(max_bytes=10_000_000), "M": mcplens.Limits()}
# This run's in-memory ratio of mcplens to its JSON-text path, per workload (the convert row).
CONVERT: dict[str, float] = {}
WARMUP, ROUNDS = 3, {"S": 12, "M": 30}


def template(i: int, chars: int) -> dict[str, Any]:
    head = f"Template {i} resolves files under {{path}}; "
    lorem = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * (chars // 40 + 1)
    return {
        "uriTemplate": f"file:///{{path}}/x{i}",
        "name": f"template-{i}",
        "title": f"Template {i}",
        "description": (head + lorem)[:chars],
        "mimeType": "text/plain",
        "annotations": {"audience": ["user", "assistant"], "priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"},
    }


def cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def server(workload: str) -> Any:
    """The installed SDK's low-level server, paginating the workload with opaque cursors."""
    pages, per_page, chars = WORKLOADS[workload]
    results: dict[str | None, Any] = {}
    for p in range(pages):
        page: dict[str, Any] = {"resourceTemplates": [template(p * per_page + i, chars) for i in range(per_page)]}
        if p + 1 < pages:
            page["nextCursor"] = cursor((p + 1) * per_page)
        results[None if p == 0 else cursor(p * per_page)] = types.ListResourceTemplatesResult.model_validate(page)
    if V2:
        from mcp.server.lowlevel import Server

        async def on_templates(_ctx: Any, params: Any) -> Any:
            return results[params.cursor if params else None]

        async def on_resources(_ctx: Any, _params: Any) -> Any:
            return types.ListResourcesResult(resources=[])

        return Server("bench", on_list_resource_templates=on_templates, on_list_resources=on_resources)
    from mcp.server.lowlevel import Server as V1Server

    low = V1Server("bench")

    async def on_templates_v1(req: Any) -> Any:
        return types.ServerResult(results[req.params.cursor if req.params else None])

    async def on_resources_v1(_req: Any) -> Any:
        return types.ServerResult(types.ListResourcesResult(resources=[]))

    low.request_handlers[types.ListResourceTemplatesRequest] = on_templates_v1
    low.request_handlers[types.ListResourcesRequest] = on_resources_v1
    return low


def touch(t: Any, uri_template: str, mime_type: str, last_modified: str) -> int:
    """Reads every field of one template (a lazy listing is timed as used): its string lengths."""
    n = len(t.name) + len(getattr(t, uri_template)) + len(t.title or "") + len(t.description or "")
    n += len(getattr(t, mime_type) or "")
    if (a := t.annotations) is not None:
        n += len(a.audience or ()) + (a.priority is not None) + len(getattr(a, last_modified) or "")
    return n


SDK_NAMES = ("uri_template", "mime_type", "last_modified") if V2 else ("uriTemplate", "mimeType", "lastModified")
OUR_NAMES = ("uri_template", "mime_type", "last_modified")


async def sdk_loop(session: Any) -> int:
    """The SDK's own typed loop: one `list_resource_templates` per page until no cursor."""
    count, next_cursor = 0, None
    while True:
        page = await session.list_resource_templates(params=types.PaginatedRequestParams(cursor=next_cursor))
        for t in page.resource_templates if V2 else page.resourceTemplates:
            count += touch(t, *SDK_NAMES) > 0
        next_cursor = page.next_cursor if V2 else page.nextCursor
        if next_cursor is None:
            return count


def touch_raw(t: dict[str, Any]) -> int:
    """`touch` for a template as the server sent it."""
    n = len(t["name"]) + len(t["uriTemplate"]) + len(t.get("title") or "") + len(t.get("description") or "")
    n += len(t.get("mimeType") or "")
    if (a := t.get("annotations")) is not None:
        n += len(a.get("audience") or ()) + (a.get("priority") is not None) + len(a.get("lastModified") or "")
    return n


class RawRequest:
    """A page's request as the core's `Request` gives it to the SDK layer."""

    method = "resources/templates/list"

    def __init__(self, cursor: str | None) -> None:
        self.params = None if cursor is None else {"cursor": cursor}


async def raw_floor(session: Any) -> int:
    """The floor: mcplens' own request path (`_mcp`'s fetch, as the traversal calls it), no core."""
    sdk = _mcp._sdk()
    count, next_cursor = 0, None
    while True:
        outcome, page = await sdk.fetch(session, RawRequest(next_cursor), parsed=True)  # type: ignore[arg-type]
        assert outcome == "page", outcome
        for t in page["resourceTemplates"]:
            count += touch_raw(t) > 0
        if (next_cursor := page.get("nextCursor")) is None:
            return count


def contestants(workload: str) -> dict[str, Callable[[Any], Awaitable[int]]]:
    async def with_mcplens(session: Any) -> int:
        listing = await mcplens.list_resource_templates(session, server="bench", limits=LIMITS[workload])
        return sum(touch(t, *OUR_NAMES) + len(t.server) > 0 for t in listing)

    async def as_text(session: Any) -> int:
        """mcplens' traversal with each page handed over as JSON text (the plain path that
        src/convert/values.rs replaces: the SDK's dict serialized, then parsed by the core)."""
        sdk = _mcp._sdk()
        pager = mcplens.Pager(
            "resource_templates",
            "bench",
            limits=LIMITS[workload],
            now=time.monotonic(),
            protocol_version=sdk.protocol_version(session),
        )
        while (request := pager.next_request()) is not None:
            outcome, page = await sdk.fetch(session, request, parsed=True)
            assert outcome == "page", outcome
            pager.accept_page(sdk.json(page), time.monotonic())
        return sum(touch(t, *OUR_NAMES) + len(t.server) > 0 for t in pager.finish())

    return {"sdk": sdk_loop, "mcplens": with_mcplens, "floor": raw_floor, "text": as_text}


async def measure(session: Any, workload: str) -> dict[str, float]:
    pages, per_page, _ = WORKLOADS[workload]
    runs = contestants(workload)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(WARMUP + ROUNDS[workload]):
        order = list(runs)[r % len(runs) :] + list(runs)[: r % len(runs)]
        if r % 2 == 1:
            order.reverse()
        for name in order:
            started = time.perf_counter()
            count = await runs[name](session)
            elapsed = time.perf_counter() - started
            assert count == pages * per_page, (name, count)
            if r >= WARMUP:
                times[name].append(elapsed * 1000)
    return {name: statistics.median(t) for name, t in times.items()}


async def in_memory(workload: str) -> dict[str, float]:
    low = server(workload)
    if not V2:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(low) as session:
            return await measure(session, workload)
    from mcp.shared.memory import create_client_server_memory_streams

    async with create_client_server_memory_streams() as ((cr, cw), (sr, sw)), anyio.create_task_group() as tg:
        tg.start_soon(lambda: low.run(sr, sw, low.create_initialization_options()))
        async with ClientSession(cr, cw) as session:
            await session.initialize()
            result = await measure(session, workload)
        tg.cancel_scope.cancel()
    return result


async def over_stdio(workload: str) -> dict[str, float]:
    params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve", workload])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await measure(session, workload)


async def serve(workload: str) -> None:
    from mcp.server.stdio import stdio_server

    low = server(workload)
    async with stdio_server() as (read, write):
        await low.run(read, write, low.create_initialization_options())


async def main() -> tuple[dict[str, float], dict[str, float]]:
    print(f"mcp {importlib.metadata.version('mcp')} · mcplens {mcplens.__version__}")
    print(
        f"{'workload':<34} {'transport':<9} {'SDK loop ms':>11} {'mcplens ms':>10} {'ratio':>6} {'floor':>6} "
        f"{'vs text':>8}"
    )
    in_memory_ratios, floors = {}, {}
    for workload, label in (("S", "S 100x100 tpl, 200-char desc"), ("M", "M ~1 MB in bounds (5x88, 2000ch)")):
        for transport, run in (("memory", in_memory), ("stdio", over_stdio)):
            t = await run(workload)
            ratio = t["mcplens"] / t["sdk"]
            floor = t["floor"] / t["sdk"]
            text = t["mcplens"] / t["text"]
            print(
                f"{label:<34} {transport:<9} {t['sdk']:>11.1f} {t['mcplens']:>10.1f} {ratio:>6.2f} {floor:>6.2f} "
                f"{text:>8.2f}"
            )
            if transport == "memory":
                in_memory_ratios[workload], floors[workload] = ratio, floor
                CONVERT[workload] = text
    print("ratio = mcplens / SDK loop; floor = the raw requests alone (no validation, no core) / SDK loop;")
    print("vs text = mcplens / the same traversal with each page handed over as JSON text (the convert row)")
    return in_memory_ratios, floors


def write_row(in_memory_ratios: dict[str, float], floors: dict[str, float]) -> None:
    """The summary row of `make bench`: this major's worst in-memory ratio (and that workload's floor)."""
    if results := os.environ.get("MCPLENS_BENCH_RESULTS"):
        major = "2" if V2 else "1"
        worst = max(in_memory_ratios, key=in_memory_ratios.__getitem__)
        detail = (
            f"mcp {importlib.metadata.version('mcp')}: worst in memory is {worst}; "
            f"its floor (the raw requests alone) is {floors[worst]:.2f} of the SDK loop"
        )
        row = {
            "row": "python_discovery",
            "figure": round(in_memory_ratios[worst], 3),
            "detail": detail,
            "floor": f"raw requests {floors[worst]:.2f}",
        }
        out = Path(results)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"python_discovery.mcp{major}.json").write_text(json.dumps(row))
        # The glue budget's `convert` row for src/convert/values.rs: the page read in place ÷ handed
        # over as JSON text, worst in memory.
        worst_text = max(CONVERT, key=CONVERT.__getitem__)
        convert = {
            "row": "python_convert_values",
            "figure": round(CONVERT[worst_text], 3),
            "detail": f"mcp {importlib.metadata.version('mcp')}: worst in memory is {worst_text}",
        }
        (out / f"python_convert_values.mcp{major}.json").write_text(json.dumps(convert))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        anyio.run(serve, sys.argv[2])
    else:
        write_row(*anyio.run(main))
