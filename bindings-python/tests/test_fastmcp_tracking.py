"""`mcplens.track()` on a community `fastmcp.FastMCP` server (2.x or 3.x on mcp 1.30.0, 4.x on mcp
2.3.0), with a real `fastmcp.Client`.

track() hooks the SDK `Server` fastmcp answers through (`FastMCP._mcp_server`), under fastmcp's own
middleware: the events record what goes on the wire (the page sent, a `ToolError` as its `isError`
result, a `ResourceError` or not-found as the JSON-RPC error with its code) and are the SDK servers'
for the same exchange, which the cross-language scenario (`tests/vectors/tracking/scenario/`) run
against a fastmcp server proves. `initialize` is recorded on mcp 2.x only, as for the SDK servers."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.streams.buffered
import pytest
import test_tracking
from fastmcp import Client
from fastmcp.server.middleware import Middleware
from mcp import types
from test_tracking_cross_language import EXPECTED, SCENARIO, normalize

import mcplens
from mcplens._mcp import _sdk
from servers import fastmcp_server  # collected only where fastmcp is installed (conftest.py)
from servers.tracked_server import error
from support import SERVERS, V2, http_server

pytestmark = pytest.mark.anyio

PAGE = 2 if fastmcp_server.PAGINATES else None
MAJOR = fastmcp_server.MAJOR
LEGACY: dict[str, Any] = {"mode": "legacy"} if MAJOR >= 4 else {}  # fastmcp 4 negotiates 2026-07-28 by default


class Events(test_tracking.Events):
    def flushed(self) -> list[dict[str, Any]]:
        """By session, then in time order (sessionless 2026-07-28 events first)."""
        return sorted(super().flushed(), key=lambda e: (e.get("sessionId", ""), e["timestamp"]))


@pytest.fixture
def events() -> Iterator[Events]:
    e = Events()
    yield e
    e.tracker.shutdown(5)


async def raw(client: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One request through the client's SDK session, the result as sent (or `{"error": {code, message}}`)."""
    data: dict[str, Any] = {"method": method, **({} if params is None else {"params": params})}
    sdk = _sdk()
    try:
        result: dict[str, Any] = await sdk._send(client.session, data)
    except sdk.rpc_error as e:
        return {"error": {"code": e.error.code, "message": e.error.message}}  # type: ignore[attr-defined]
    return result


async def exercise(client: Any) -> list[tuple[str, dict[str, Any] | None, dict[str, Any]]]:
    """Every operation the fastmcp server serves, each list walked page by page as a client would:
    (method, params, what the client received)."""
    sent: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = []

    async def send(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        got = await raw(client, method, params)
        sent.append((method, params, got))
        return got

    for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        page = await send(method)
        while "nextCursor" in page:
            page = await send(method, {"cursor": page["nextCursor"]})
    await send("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    await send("tools/call", {"name": "fail", "arguments": {}})
    for uri in ("mem://static", "note://7", "mem://broken", "mem://missing"):
        await send("resources/read", {"uri": uri})
    await send("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
    await send("ping")
    return sent


def read_summary(result: dict[str, Any]) -> dict[str, Any]:
    """How an event records a `resources/read` result (docs/events.md): each text content as its
    URI, MIME type, UTF-8 length and SHA-256, never the text (by default)."""
    contents = []
    for c in result["contents"]:
        text = c["text"].encode()
        entry = {"uri": c["uri"], "textBytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}
        contents.append({**({"mimeType": c["mimeType"]} if "mimeType" in c else {}), **entry})
    return {"contents": contents}


def answer_fields(method: str, got: dict[str, Any]) -> dict[str, Any]:
    """The fields of an event that follow from what the server answered (docs/events.md): a
    JSON-RPC error → its code and message, no response; an `isError` tool result → a `tool_error`
    with its text; otherwise the result, cursors redacted."""
    if "error" in got:
        code, message = got["error"]["code"], got["error"]["message"]
        return {"isError": True, "error": {"code": code, "message": message, "type": str(code)}}
    response = read_summary(got) if method == "resources/read" else dict(got)
    if "nextCursor" in response:
        response["nextCursor"] = "[REDACTED]"
    fields: dict[str, Any] = {"isError": got.get("isError") is True, "response": response}
    if fields["isError"]:
        fields["error"] = {"type": "tool_error", "message": got["content"][0]["text"]}
    return fields


@asynccontextmanager
async def tracked(ev: Events, page_size: int | None = PAGE, **client_options: Any) -> AsyncIterator[Any]:
    server = fastmcp_server.build(page_size)
    assert mcplens.track(server, ev.tracker, transport="memory") is server
    async with Client(server, **client_options) as client:
        yield client


async def test_one_event_per_request_recording_what_went_on_the_wire(events: Events) -> None:
    async with tracked(events, **LEGACY) as client:
        sent = await exercise(client)
    got = events.flushed()
    if V2:  # mcp 2.x shows `initialize` to the SDK middleware; mcp 1.x answers it inside `ServerSession`
        assert got[0]["type"] == "mcp:initialize"
        assert got[0]["parameters"]["clientInfo"]["name"] == "fastmcp"
        got = got[1:]
    assert [e["type"] for e in got] == [f"mcp:{m}" for m, _, _ in sent]
    pages = [e for e in got if e["type"] == "mcp:resources/templates/list"]
    assert len(pages) == (3 if PAGE else 1)  # one event per page, as sent
    for e, (method, params, answer) in zip(got, sent, strict=True):
        want = answer_fields(method, answer)
        assert {k: e.get(k) for k in ("isError", "error", "response")} == {
            "isError": want["isError"],
            "error": want.get("error"),
            "response": want.get("response"),
        }, method
        if params and "cursor" in params:
            assert e["parameters"] == {"cursor": "[REDACTED]"}
    by_name = {(e["type"], e.get("resourceName")): e for e in got}
    # A ToolError is a tool result with isError (recorded as such, no JSON-RPC code).
    fail = by_name[("mcp:tools/call", "fail")]
    assert fail["error"] == {"type": "tool_error", "message": "the tool failed"}
    # ResourceError and not-found are JSON-RPC errors, recorded with the code the client received:
    # mcp 1.x answers any exception with code 0 (fastmcp 3 raises -32002 for not-found itself),
    # fastmcp 4 on mcp 2.x sends -32603 and -32602 (SEP-2164).
    codes = {u: e["error"]["code"] for (t, u), e in by_name.items() if t == "mcp:resources/read" and e["isError"]}
    assert codes == {2: {"mem://broken": 0, "mem://missing": 0}, 3: {"mem://broken": 0, "mem://missing": -32002}}.get(
        MAJOR, {"mem://broken": -32603, "mem://missing": -32602}
    )
    assert len({e["sessionId"] for e in events.items}) == 1
    assert all(e["server"] == {"name": "fastmcp-docs", "version": "1.2.3"} for e in events.items)
    assert len({json.dumps(e["client"]) for e in events.items}) == 1
    assert all(e["transport"] == "memory" for e in events.items)


async def test_sessions_per_connection(events: Events) -> None:
    server = mcplens.track(fastmcp_server.build(PAGE), events.tracker)
    async with Client(server, **LEGACY) as a, Client(server, **LEGACY) as b:
        await a.call_tool("echo", {"text": "a"})
        await b.call_tool("echo", {"text": "b"})
        await a.call_tool("echo", {"text": "a"})
    calls = [e for e in events.flushed() if e["type"] == "mcp:tools/call"]
    by_text: dict[str, set[str]] = {}
    for e in calls:
        by_text.setdefault(e["parameters"]["arguments"]["text"], set()).add(e["sessionId"])
    assert len(by_text["a"]) == len(by_text["b"]) == 1
    assert by_text["a"] != by_text["b"]


async def test_the_same_answers_tracked_or_not(events: Events) -> None:
    answers = []
    for track in (False, True):
        server = fastmcp_server.build(PAGE)
        if track:
            mcplens.track(server, events.tracker)
        async with Client(server, **LEGACY) as client:
            answers.append([got for _, _, got in await exercise(client)])
    assert answers[0] == answers[1]
    assert len(events.flushed()) == len(answers[1]) + (1 if V2 else 0)


async def test_results_and_errors_pass_through_as_the_same_objects(
    events: Events, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the handler under the tracker returns is the object the SDK sends, and what it raises
    is the exception the SDK answers with: no copy, no change."""
    inner: list[Any] = []  # what the handler under the tracker returned or raised
    outer: list[Any] = []  # what the SDK then answered with

    async def probe(call: Any) -> Any:
        try:
            result = await call()
        except Exception as e:
            inner.append(e)
            raise
        inner.append(result)
        return result

    server = fastmcp_server.build(PAGE)
    low = server._mcp_server
    if V2:
        mcplens.track(server, events.tracker)

        async def under(ctx: Any, call_next: Any) -> Any:
            return await probe(lambda: call_next(ctx))

        async def over(ctx: Any, call_next: Any) -> Any:
            try:
                result = await call_next(ctx)
            except Exception as e:
                outer.append(e)
                raise
            outer.append(result)
            return result

        low.middleware.insert(1, under)  # just inside the tracker (outermost at 0)
        low.middleware.insert(0, over)
    else:
        from mcp.shared.session import RequestResponder

        for key in (types.GetPromptRequest, types.ReadResourceRequest):
            handler = low.request_handlers[key]

            async def wrapped(req: Any, handler: Any = handler) -> Any:
                return await probe(lambda: handler(req))

            low.request_handlers[key] = wrapped
        mcplens.track(server, events.tracker)
        respond = RequestResponder.respond

        async def responding(self: Any, response: Any) -> None:
            outer.append(response)
            await respond(self, response)

        monkeypatch.setattr(RequestResponder, "respond", responding)
    async with Client(server, **LEGACY) as client:
        outer.clear()
        await raw(client, "prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
        await raw(client, "resources/read", {"uri": "mem://broken"})
    result, exc = inner[-2:]
    assert isinstance(exc, Exception)
    if V2:
        assert outer[-2] is result
        assert outer[-1] is exc
    else:  # 1.x answers an exception with `ErrorData(code 0, str(exc))` built in `_handle_request`
        sent_result, sent_error = outer[-2:]
        assert sent_result is result
        assert (sent_error.code, sent_error.message) == (0, str(exc))
    recorded = [e for e in events.flushed() if e["type"] in ("mcp:prompts/get", "mcp:resources/read")]
    assert [e["isError"] for e in recorded] == [False, True]


async def test_the_same_bytes_on_the_wire_over_stdio(tmp_path: Path) -> None:
    """Over stdio, the tracked server's responses are byte for byte the untracked server's."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    requests: list[dict[str, Any]] = [
        {"method": "initialize", "params": init},
        {"method": "resources/templates/list"},
        {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
        {"method": "tools/call", "params": {"name": "fail", "arguments": {}}},
        {"method": "resources/read", "params": {"uri": "mem://static"}},
        {"method": "resources/read", "params": {"uri": "mem://missing"}},
        {"method": "prompts/get", "params": {"name": "greet", "arguments": {"who": "Ada"}}},
    ]
    outputs: list[list[bytes]] = []
    events = tmp_path / "events.jsonl"
    for extra in ([], ["--events", str(events)]):
        args = [str(SERVERS / "fastmcp_server.py"), "stdio", *(["--page-size", "2"] if PAGE else []), *extra]
        async with await anyio.open_process([sys.executable, *args], stderr=subprocess.DEVNULL) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            stream = anyio.streams.buffered.BufferedByteReceiveStream(process.stdout)
            out: list[bytes] = []
            for i, request in enumerate(requests):
                await process.stdin.send(json.dumps({"jsonrpc": "2.0", "id": i, **request}).encode() + b"\n")
                if i == 0:
                    await process.stdin.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
                out.append(await stream.receive_until(b"\n", 1 << 20))
            await process.stdin.aclose()
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert all(b'"id":' in line for line in outputs[1])
    recorded = [json.loads(line) for line in events.read_text().splitlines()]
    assert len(recorded) == len(requests) - (0 if V2 else 1)  # mcp 1.x: no initialize event


# ---------------------------------------------------------------------------------------------
# The cross-language scenario (`tests/vectors/tracking/scenario/`) against a fastmcp server.


def scenario_server() -> Any:
    """The scenario's server written with fastmcp, as close to its `handlers` as fastmcp allows:
    fastmcp adds keys of its own to results (`_meta`, `structuredContent`, generated schemas), and
    does not serve `resources/subscribe`/`unsubscribe` (the SDK answers -32601)."""
    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError

    server = FastMCP(SCENARIO["server"]["name"], version=SCENARIO["server"]["version"])

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def fail() -> str:
        raise ToolError("the tool failed")

    class UnknownTool(Middleware):  # type: ignore[misc]
        async def on_call_tool(self, context: Any, call_next: Any) -> Any:
            if context.message.name not in ("echo", "fail"):
                raise error(-32602, f"Unknown tool: {context.message.name}")
            return await call_next(context)

    server.add_middleware(UnknownTool())
    server.resource("note://1", name="one", mime_type="text/plain")(lambda: "note 1")

    @server.resource("note://{id}", name="note", mime_type="text/plain")
    def note(id: str) -> str:
        if id == "missing":
            raise error(-32002, "Resource not found: note://missing")
        return f"note {id}"

    @server.prompt
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


async def test_the_cross_language_scenario_gives_the_sdk_servers_events(events: Events) -> None:
    """Each step's event equals the scenario's expected line (the SDK servers' event in Python and
    Node) in every field; the fields that follow from the answer (`response`, `isError`, `error`)
    follow from what this fastmcp server sent, by the same rules; where fastmcp answered exactly as
    the scenario's server, the whole line is equal."""
    from test_tracking_cross_language import answer

    server = mcplens.track(scenario_server(), events.tracker, transport="memory")
    client_info = types.Implementation(**SCENARIO["client"])
    got: list[dict[str, Any]] = []
    async with Client(server, client_info=client_info, **LEGACY) as client:
        for step in SCENARIO["steps"]:
            got.append(await raw(client, step["method"], step.get("params")))
    recorded = [json.loads(normalize(e)) for e in sorted(events.flushed(), key=lambda e: e["timestamp"])]
    expected = [json.loads(line) for line in EXPECTED.read_text(encoding="utf-8").splitlines()]
    if V2:
        assert recorded.pop(0) == expected[0]  # initialize (without parameters and response)
    exact: list[str] = []
    for step, answered, line in zip(SCENARIO["steps"], got, expected[1:], strict=True):
        method = step["method"]
        if method in ("resources/subscribe", "resources/unsubscribe"):  # not served by fastmcp
            assert answered["error"]["code"] == -32601
            if not V2:  # mcp 1.x answers a method without a handler before any hook: no event
                continue
        event = recorded.pop(0)
        scenario_answer = answer(step)
        same_error = "error" in answered and answered["error"]["code"] == scenario_answer.get("error")
        if answered == scenario_answer or same_error:
            if "error" in answered:
                assert answered["error"]["message"] == line["error"]["message"]
            assert event == line, method
            exact.append(f"{method} {line.get('resourceName')}")
        want = {k: v for k, v in line.items() if k not in ("response", "error", "isError")}
        fields = answer_fields(method, answered)
        for c in fields.get("response", {}).get("contents", []):  # the URI as redacted in `parameters`
            c["uri"] = want["parameters"]["uri"] if c["uri"] == step["params"]["uri"] else c["uri"]
        assert event == {**want, **fields}, method
    assert recorded == []
    # Where fastmcp answers exactly as the scenario's server does (mcp 1.x turns the unknown tool's
    # -32602 into an `isError` result, fastmcp 2 a missing resource's -32002 into code 0):
    same = ["tools/call fail", "resources/read note://1", "resources/read note://missing", "prompts/get greet"]
    if MAJOR == 2:
        same.remove("resources/read note://missing")
    if V2:
        same.insert(1, "tools/call nope")
    assert exact == same


@pytest.mark.skipif(MAJOR < 4, reason="fastmcp 4.x has built-in OpenTelemetry spans")
async def test_fastmcp_4s_own_opentelemetry_spans_keep_working_beside_mcplens() -> None:
    """fastmcp 4 opens a SERVER span per request (its `telemetry_mode="native"`, the default) with
    whatever OpenTelemetry SDK the application installed; mcplens exports its own over OTLP. Both
    are there, for the same requests, in the same trace (fastmcp's client puts `traceparent` in
    `_meta`, which both servers' spans continue)."""
    from opentelemetry import trace
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from test_tracking_exporters import Receiver

    own = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(own))
    trace.set_tracer_provider(provider)
    with Receiver().running() as rx:
        tracker = mcplens.Tracker(exporters=[mcplens.OtlpExporter(rx.url)])
        server = mcplens.track(fastmcp_server.build(PAGE), tracker)
        async with Client(server, **LEGACY) as client:
            await client.call_tool("echo", {"text": "hi"})
            await client.read_resource("mem://static")
        tracker.shutdown(10)
    theirs = {s.name: s for s in own.get_finished_spans() if s.kind == trace.SpanKind.SERVER}
    ours: dict[str, Any] = {}
    for path, _, body in rx.posts:
        if path == "/v1/traces":
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            ours |= {s.name: s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans}
    names = {"tools/call echo", "resources/read"}  # neither puts the URI into the span name
    assert names <= set(theirs)
    assert names <= set(ours)
    for name in names:
        assert ours[name].trace_id == theirs[name].context.trace_id.to_bytes(16, "big")


@pytest.mark.skipif(MAJOR < 4, reason="fastmcp 4.x negotiates 2026-07-28 (mode='auto', its default)")
async def test_the_2026_07_28_era_is_tracked_sessionless(events: Events) -> None:
    """fastmcp 4's client probes `server/discover` and runs 2026-07-28: that probe is an event, and
    the era's events carry no session id (the revision is sessionless)."""
    async with tracked(events) as client:
        assert client.protocol_version == "2026-07-28"
        await client.list_resource_templates()
        await client.call_tool("echo", {"text": "hi"})
    got = events.flushed()
    assert [e["type"] for e in got][:1] == ["mcp:server/discover"]
    assert {"mcp:resources/templates/list", "mcp:tools/call"} <= {e["type"] for e in got}
    assert all("sessionId" not in e and e["protocolVersion"] == "2026-07-28" for e in got[1:])


def test_the_readme_quickstart_runs(tmp_path: Path) -> None:
    """README.md's fastmcp quickstart is `examples/fastmcp_quickstart.py` (tests/readme_check.py):
    it lists its own templates through fastmcp.Client, and its server recorded the request."""
    example = Path(__file__).resolve().parents[1] / "examples" / "fastmcp_quickstart.py"
    done = subprocess.run(
        [sys.executable, str(example), "--list"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.splitlines() == ["note://{id} - note"]
    recorded = [json.loads(line) for line in (tmp_path / "mcplens-events.jsonl").read_text().splitlines()]
    assert "mcp:resources/templates/list" in [e["type"] for e in recorded]
    assert all(e["server"]["name"] == "notes" and e["transport"] == "stdio" for e in recorded)


async def test_streamable_http_one_session_per_client(tmp_path: Path) -> None:
    """A tracked fastmcp server process over streamable HTTP, two clients at once: each client's
    events carry one session id of their own and say `http`."""
    events = tmp_path / "events.jsonl"
    names = ("client-a", "client-b")
    async with http_server(str(SERVERS / "fastmcp_server.py"), "http", "--events", str(events), "--port") as url:

        async def one(name: str) -> None:
            async with Client(url, client_info=types.Implementation(name=name, version="1"), **LEGACY) as client:
                await client.call_tool("echo", {"text": name})
                await client.read_resource("mem://static")

        async with anyio.create_task_group() as tg:
            for name in names:
                tg.start_soon(one, name)
        # The server process writes within its exporter's batch delay (1 s); it is killed after.
        for _ in range(400):  # at most 20 s: another process's file, no event to wait on
            if sum(b'"mcp:resources/read"' in line for line in events.read_bytes().splitlines()) == 2:
                break
            await anyio.sleep(0.05)
    got = [json.loads(line) for line in events.read_text().splitlines()]
    sessions: dict[str, set[str]] = {}
    for e in got:
        sessions.setdefault(e["client"]["name"], set()).add(e["sessionId"])
    assert set(sessions) == set(names)
    assert all(len(ids) == 1 for ids in sessions.values())
    assert sessions["client-a"] != sessions["client-b"]
    assert {e["transport"] for e in got} == {"http"}
