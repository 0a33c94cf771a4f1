"""The hostile-server matrix from Python: `mcplens.Catalog` over the installed `mcp` SDK's stdio
client against `tests/servers/hostile/server.py`, one test per row of `tests/servers/hostile/cases.json`
(the same table the Rust and Node runners read). Where community `fastmcp` is installed (its own
environments), every row runs through a `fastmcp.Client` instead, with the same expectations.

Each case: refresh once against the well-formed server, then again against the misbehaving one;
the outcome must be the table's code (or `ok`) within the deadline plus slack, the process's peak
RSS must grow by at most the table's bound, and after a failure the previous good templates must
survive. Rows marked `http` run again over the server's streamable-HTTP endpoint. Rows are written
to `.build/hostile/python-mcp<major>[-http].json` (`python-fastmcp<major>[-http].json`) for
`tests/servers/hostile/summary.py` (the closing table)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client import streamable_http
from mcp.client.stdio import stdio_client

import mcplens
from support import FASTMCP, V2, http_server

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "servers" / "hostile"
TABLE = json.loads((HOSTILE / "cases.json").read_text())
LANGUAGE = "python"
COLUMN = f"python-fastmcp{FASTMCP.__version__.split('.')[0]}" if FASTMCP else f"python-mcp{2 if V2 else 1}"
RESULTS: dict[str, list[dict[str, Any]]] = {"stdio": [], "http": []}
# The same server over streamable HTTP, for the rows marked `http` (1.x and 2.x name the client apart).
HTTP_CLIENT: Any = getattr(streamable_http, "streamable_http_client", None) or streamable_http.streamablehttp_client
RUNS = [(c, "stdio") for c in TABLE["cases"]] + [(c, "http") for c in TABLE["cases"] if c.get("http")]


def expectations(case: dict[str, Any]) -> list[str]:
    """`expect`, or this language's override: one outcome, or any of several."""
    e = case.get(f"expect_{LANGUAGE}", case["expect"])
    expect = [str(x) for x in e] if isinstance(e, list) else [str(e)]
    if FASTMCP and any(x.startswith("sdk_closed:") for x in expect):
        # fastmcp runs the SDK's transport in a task of its own, which the SDK's teardown ends
        # without reaching the caller (fastmcp logs it at exit): the refresh is abandoned when the
        # session's task group goes (mcp 1.x) or its request runs out of time (mcp 2.x).
        expect = [str(case["expect"]), "abandoned"]
    return expect


def rss_kb(field: str) -> int:
    """`VmRSS` or `VmHWM` (peak) of this process, in KiB (0 where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak_rss() -> int:
    """Resets the peak-RSS mark to the current RSS (Linux `clear_refs` 5); returns the RSS in KiB."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
    return rss_kb("VmRSS")


def traversals(log: Path, method: str) -> int:
    """How many traversals of `method` the server saw (requests without a cursor)."""
    if not log.exists():
        return 0
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return sum(1 for e in entries if e["method"] == method and not e["cursor"])


def _leaves(group: BaseException) -> Iterator[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        for e in group.exceptions:
            yield from _leaves(e)
    else:
        yield group


@pytest.fixture(scope="module", autouse=True)
def write_results() -> Iterator[None]:
    yield
    out = Path(os.environ.get("MCPLENS_HOSTILE_RESULTS", ROOT / ".build" / "hostile"))
    out.mkdir(parents=True, exist_ok=True)
    for transport, rows in RESULTS.items():
        column = COLUMN if transport == "stdio" else f"{COLUMN}-{transport}"
        if rows:
            (out / f"{column}.json").write_text(json.dumps({"column": column, "rows": rows}, indent=1) + "\n")


@contextlib.asynccontextmanager
async def connect(case: str, transport: str, log: Path) -> AsyncIterator[Any]:
    """An initialized session (a connected `fastmcp.Client` where fastmcp is installed) to
    `server.py --case case`, over stdio or streamable HTTP."""
    args = [str(HOSTILE / "server.py"), "--case", case, "--log", str(log)]
    if FASTMCP and transport == "stdio":
        from fastmcp.client.transports import StdioTransport

        client = FASTMCP.Client(StdioTransport(sys.executable, args, log_file=Path(os.devnull)))
        async with client:
            yield client
        # fastmcp 2.x gives its disconnect 5 s, then leaves the session task running (a hostile
        # server slow to exit on a loaded machine): wait for it, so that no session, and none of the
        # catalog's tasks in it, outlives its test into the event loop's teardown.
        if (leftover := getattr(client._session_state, "session_task", None)) is not None:
            await leftover
        return
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=args)
        async with (
            stdio_client(params, errlog=subprocess.DEVNULL) as (read, write),  # type: ignore[arg-type]
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
        return
    async with http_server(*args, "--http") as url:  # "listening on …"
        if FASTMCP:
            async with FASTMCP.Client(url) as client:
                yield client
            return
        async with HTTP_CLIENT(url) as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            yield session


@pytest.mark.parametrize(("case", "transport"), RUNS, ids=[f"{c['case']}-{t}" for c, t in RUNS])
async def test_hostile_server(case: dict[str, Any], transport: str) -> None:
    settings = {**TABLE["defaults"], **case}
    expect = expectations(case)
    deadline = settings["deadlineMs"] / 1000
    given = case.get("limits", {})
    limits = mcplens.Limits(
        deadline_seconds=deadline,
        **{k: given[j] for k, j in [("max_pages", "maxPages"), ("max_bytes", "maxBytes")] if j in given},
    )
    row: dict[str, Any] = {"case": case["case"], "expect": "|".join(expect), "got": None, "passed": False}
    RESULTS[transport].append(row)
    catalog = mcplens.Catalog(limits=limits)
    started = elapsed = time.monotonic()
    rss_before = 0
    error: mcplens.DiscoveryError | None = None
    first: Any = None
    sdk_failure: list[BaseException] = []
    storm_traversals = 0
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "requests.jsonl"
        try:
            async with connect(case["case"], transport, log) as session:
                first = await catalog.refresh("hostile", session)
                assert (first.status, first.templates) == ("ok", 2)
                if case.get("storm"):
                    await catalog.watch("hostile", session).ready()
                rss_before = reset_peak_rss()
                started = time.monotonic()
                with anyio.fail_after(deadline + settings["slackMs"] / 1000 + 10):
                    try:
                        await catalog.refresh("hostile", session)
                    except mcplens.DiscoveryError as e:
                        error = e
                    if case.get("storm"):
                        await catalog.settled("hostile")
                # Read before the session closes (a watched session's close invalidates the server).
                elapsed = time.monotonic() - started
                status, templates = catalog.status("hostile"), catalog.templates("hostile")
        except BaseExceptionGroup as group:
            # The SDK itself tore the session down (e.g. its stdio reader cannot decode the bytes):
            # the refresh was cancelled, so the catalog abandoned it and kept the previous pair.
            sdk_failure = list(_leaves(group))
            elapsed = time.monotonic() - started
            status, templates = catalog.status("hostile"), catalog.templates("hostile")
        growth_mb = max(0, rss_kb("VmHWM") - rss_before) / 1024
        storm_traversals = traversals(log, "resources/templates/list")
    # Our own assertions and mcplens errors are never the SDK's doing.
    assert not any(isinstance(x, AssertionError | mcplens.McplensError) for x in sdk_failure), sdk_failure
    if sdk_failure:
        got = f"sdk_closed:{type(sdk_failure[0]).__name__}"
    elif error is not None:
        got = error.code
    else:  # returned: committed, or abandoned (nothing changed) when the connection went under it
        got = "ok" if status.generation > first.generation else "abandoned"
    row.update(got=got, elapsedMs=round(elapsed * 1000), rssGrowthMb=round(growth_mb, 1))

    assert got in expect, f"{case['case']}: got {got}, expected {' or '.join(expect)}"
    assert elapsed <= deadline + settings["slackMs"] / 1000, f"{case['case']}: took {elapsed:.2f} s"
    assert growth_mb <= settings["maxRssGrowthMb"], f"{case['case']}: peak RSS grew {growth_mb:.0f} MB"
    if sdk_failure or got == "abandoned":
        # Cancelled, not failed: the catalog abandoned the refresh; the good pair is still served.
        assert [t.uri_template for t in templates] == TABLE["goodTemplates"]
    elif error is not None:
        assert error.server == "hostile"
        if "rpcCode" in case:
            assert error.rpc_code == case["rpcCode"]
        # Fail closed: the previous good pair survives (or the closed connection invalidated it);
        # never a prefix of the failed traversal.
        if status.status == "stale" or not case.get("closes"):
            assert status.status == "stale"
            assert status.last_error is not None
            assert status.last_error.code == got
            assert [t.uri_template for t in templates] == TABLE["goodTemplates"]
        else:
            assert status.status in ("unknown", "failed")
            assert templates == []
    else:
        assert status.status == "ok"
        assert len(templates) == case["templates"]
        for t in templates:
            assert len(t.name) <= 2048
            assert len(t.description or "") <= 2048
    if case.get("storm"):
        # A burst of list_changed during one refresh causes exactly one more: three traversals in all.
        assert storm_traversals == 3, storm_traversals
        row["traversals"] = storm_traversals
    row["passed"] = True
