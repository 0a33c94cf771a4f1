"""OTLP proven against a real OpenTelemetry backend: Arize Phoenix (pinned in requirements.txt, its
own venv, embedded SQLite storage under a temporary directory, loopback only, telemetry and
external resources off).

A tracked Python server (server.py: the `mcp` 1.x FastMCP test server over streamable HTTP, so
every request belongs to a legacy-handshake session with an `Mcp-Session-Id`) exports to Phoenix's
OTLP/HTTP endpoint and to a JSONL file. A real `mcp` client runs tools, resources and templates
operations (one with a W3C traceparent, two that fail). Then Phoenix's REST API is asked for the
spans, and each event of the JSONL file must be there as a span with the same ids, name,
`mcp.method.name`, `mcp.resource.uri`, `mcp.session.id`, `error.type`, status, duration and parent.

Run by `make test-phoenix` (PHOENIX_PYTHON names the Phoenix venv's interpreter).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

HERE = Path(__file__).resolve().parent
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
# Phoenix imports a great deal before it listens: allow for a busy machine.
STARTUP_SECONDS = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def wait_for(url: str, proc: subprocess.Popen[bytes], what: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"{what} exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer within {STARTUP_SECONDS} s:\n{log.read_text()[-4000:]}")
            time.sleep(0.25)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = os.environ.get("PHOENIX_PYTHON")
    if not python:
        pytest.fail("PHOENIX_PYTHON must name the Phoenix venv's python (make test-phoenix sets it)")
    work = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        "PHOENIX_ALLOWED_SANDBOX_PROVIDERS": "NONE",
        "PHOENIX_ENABLE_MCP_SERVER": "false",
    }
    log = work / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([python, "-m", "phoenix.server.main", "serve"], env=env, stdout=out, stderr=out)
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", proc, "Phoenix", log)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def operations(url: str) -> None:
    async with streamable_http_client(url) as streams:
        info = types.Implementation(name="phoenix-test-client", version="0.1.0")
        async with ClientSession(streams[0], streams[1], client_info=info) as session:
            await session.initialize()
            await session.list_tools()
            meta = {"_meta": {"traceparent": f"00-{TRACE_ID}-{PARENT_SPAN}-01"}}
            params = types.CallToolRequestParams(name="echo", arguments={"text": "hi"}, **meta)
            await session.send_request(types.ClientRequest(types.CallToolRequest(params=params)), types.CallToolResult)
            failed = await session.call_tool("fail", {})
            assert failed.isError
            await session.list_resources()
            await session.list_resource_templates()
            await session.read_resource("note://7")  # type: ignore[arg-type]
            with pytest.raises(McpError, match="Unknown resource"):
                await session.read_resource("nope://missing")  # type: ignore[arg-type]
            await session.get_prompt("greet", {"who": "Phoenix"})


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes as {key: value}: Phoenix writes each OTLP AnyValue with every field,
    all null but the one set."""
    out = {}
    for kv in span.get("attributes") or []:
        out[kv["key"]] = next((v for v in kv["value"].values() if v is not None), None)
    return out


def run_server(python: str, phoenix: str, tmp_path: Path, ops: Any, *flags: str) -> tuple[Path, Path]:
    """server.py under `python`, `ops(url)` run against it, then stopped: (its events, its log)."""
    events_file = tmp_path / "events.jsonl"
    port = free_port()
    server_log = tmp_path / "server.log"
    with server_log.open("wb") as log:
        server = subprocess.Popen(
            [python, str(HERE / "server.py"), str(port), str(events_file), phoenix, *flags],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server_log.read_text()
                assert time.monotonic() < deadline, "the tracked server did not start"
                time.sleep(0.1)
        anyio.run(ops, f"http://127.0.0.1:{port}/mcp")
    finally:
        assert server.stdin is not None
        server.stdin.close()  # the server stops, flushes and shuts its tracker down
        server.wait(60)
    assert server.returncode == 0, server_log.read_text()
    return events_file, server_log


def test_spans_reach_phoenix_as_sent(phoenix: str, tmp_path: Path) -> None:
    events_file, server_log = run_server(sys.executable, phoenix, tmp_path, operations)
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    names = [e["type"] for e in events]
    assert names == [
        "mcp:tools/list",
        "mcp:tools/call",
        "mcp:tools/call",
        "mcp:resources/list",
        "mcp:resources/templates/list",
        "mcp:resources/read",
        "mcp:resources/read",
        "mcp:prompts/get",
    ], names

    # Phoenix writes spans in batches: ask until every one is there (or give up).
    spans: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + 60
    while len(spans) < len(events) and time.monotonic() < deadline:
        page = get_json(f"{phoenix}/v1/projects/default/spans/otlpv1?limit=1000")
        spans = {s["span_id"]: s for s in page["data"]}
        time.sleep(0.5)
    (tmp_path / "spans.json").write_text(json.dumps(list(spans.values()), indent=1))  # for a look on failure
    assert sorted(spans) == sorted(e["spanId"] for e in events), f"spans in Phoenix: {sorted(spans)}"

    for e in events:
        s = spans[e["spanId"]]
        a = attrs(s)
        method = e["type"].removeprefix("mcp:")
        target = f" {e['resourceName']}" if method in ("tools/call", "prompts/get") else ""
        assert s["name"] == method + target
        assert s["trace_id"] == e["traceId"]
        assert a["mcp.method.name"] == method
        assert a["mcp.session.id"] == e["sessionId"]
        assert e["sessionId"].startswith("ses_")
        assert a.get("mcp.resource.uri") == (e["resourceName"] if method == "resources/read" else None)
        assert a.get("error.type") == (e["error"]["type"] if e["isError"] else None)
        assert (s["status"].get("code") == 2) == e["isError"], s["status"]  # STATUS_CODE_ERROR
        # The event has microseconds; Phoenix keeps times as floating-point seconds (≈ 0.24 µs
        # apart at today's epoch) and microseconds: allow 5 µs.
        duration_ms = (int(s["end_time_unix_nano"]) - int(s["start_time_unix_nano"])) / 1e6
        assert abs(duration_ms - e["durationMs"]) <= 0.005, (duration_ms, e["durationMs"])
        assert s.get("parent_span_id") == e.get("parentSpanId"), (s.get("parent_span_id"), e.get("parentSpanId"))

    by_type = {e["type"]: e for e in events}
    (echo,) = [s for s in spans.values() if s["name"] == "tools/call echo"]
    assert (echo["trace_id"], echo["parent_span_id"]) == (TRACE_ID, PARENT_SPAN), "the traceparent as sent"
    assert attrs(spans[by_type["mcp:prompts/get"]["spanId"]])["gen_ai.prompt.name"] == "greet"
    (fail,) = [s for s in spans.values() if s["name"] == "tools/call fail"]
    assert attrs(fail)["error.type"] == "tool_error"
    reads = sorted(
        (attrs(spans[e["spanId"]])["mcp.resource.uri"], e["isError"])
        for e in events
        if e["type"] == "mcp:resources/read"
    )
    assert reads == [("nope://missing", True), ("note://7", False)]
    assert len({e["sessionId"] for e in events}) == 1, "one legacy-handshake session"

    # The server's last line: its tracker's counters after shutdown. Phoenix took every span.
    stats = json.loads(server_log.read_text().strip().splitlines()[-1])
    exporters = {x["name"]: x for x in stats["exporters"]}
    assert exporters["otlp"] == {
        "name": "otlp",
        "exported": len(events),
        "dropped": 0,
        "failed": 0,
        "skipped": 0,
        "pending": 0,
    }, stats
    # Phoenix keeps traces only: the histogram's batches are refused and counted, never lost silently.
    assert exporters["otlp-metrics"]["failed"] == len(events), stats


async def two_requests(url: str) -> None:
    async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        await session.call_tool("echo", {"text": "hi"})
        await session.read_resource("note://7")  # type: ignore[arg-type]


def test_the_sdks_own_spans_and_mcplens_spans_are_one_trace_per_request(phoenix: str, tmp_path: Path) -> None:
    """The host's OpenTelemetry context, against Phoenix: an mcp 2.x server (its own venv,
    requirements-mcp2.txt) whose SDK opens a SERVER span per request and exports it with the
    OpenTelemetry SDK; mcplens exports its own span for the request. In Phoenix each request is one
    trace holding both, mcplens' the child of the SDK's."""
    python = os.environ.get("PHOENIX_MCP2_PYTHON")
    if not python:
        pytest.fail("PHOENIX_MCP2_PYTHON must name the mcp 2.x server's venv python (make test-phoenix sets it)")
    events_file, _ = run_server(python, phoenix, tmp_path, two_requests, "--sdk-spans")
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    events = [e for e in events if e["type"] in ("mcp:tools/call", "mcp:resources/read")]
    assert len(events) == 2, events
    traces = {e["traceId"] for e in events}
    assert len(traces) == 2, "one trace per request"
    spans: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page = get_json(f"{phoenix}/v1/projects/default/spans/otlpv1?limit=1000")
        spans = {s["span_id"]: s for s in page["data"] if s["trace_id"] in traces}
        if len(spans) >= 2 * len(events):
            break
        time.sleep(0.5)
    (tmp_path / "spans.json").write_text(json.dumps(list(spans.values()), indent=1))  # for a look on failure
    for e in events:
        ours = spans[e["spanId"]]
        assert "mcplens.event.id" in attrs(ours)
        theirs = spans.get(ours.get("parent_span_id") or "")
        assert theirs is not None, f"{e['type']}: its parent, the SDK's span, is in Phoenix"
        assert (theirs["trace_id"], theirs["name"]) == (e["traceId"], ours["name"])
        assert "mcplens.event.id" not in attrs(theirs), "the SDK's own span"
        assert e["parentSpanId"] == theirs["span_id"]
    assert len(spans) == 2 * len(events), "each trace holds the two spans and no other"

