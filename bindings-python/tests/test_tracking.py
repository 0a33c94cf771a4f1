"""Server tracking in process: a real `ClientSession` against a tracked server over in-memory
JSON-RPC streams, on whichever SDK major is installed (1.x `Server`/`FastMCP`, 2.x `Server`/`MCPServer`)."""

from __future__ import annotations

import asyncio
import copy
import json
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import pytest
from mcp import types

import mcplens
from servers import tracked_server
from support import V2, in_memory

pytestmark = pytest.mark.anyio

KINDS = ["lowlevel", "fast"]


class Events:
    """A tracker whose events land in a list (through `CallbackExporter`)."""

    def __init__(self, **options: Any) -> None:
        self.items: list[dict[str, Any]] = []
        self.tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(self.items.extend)], **options)

    def flushed(self) -> list[dict[str, Any]]:
        self.tracker.flush(10)
        return self.items

    def types(self) -> list[str]:
        return [e["type"] for e in self.flushed()]


@pytest.fixture
def events() -> Iterator[Events]:
    e = Events()
    yield e
    e.tracker.shutdown(5)


@asynccontextmanager
async def tracked(kind: str, ev: Events, **build: Any) -> AsyncIterator[Any]:
    server = tracked_server.build(kind, **build)
    assert mcplens.track(server, ev.tracker) is server
    async with in_memory(server) as session:
        yield session


def raw_call_tool(name: str) -> Any:
    """A tools/call request to send with `send_request` (no client-side tools/list first)."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name))
    return request if V2 else types.ClientRequest(request)


def exporter_stats(tracker: mcplens.Tracker, name: str) -> Any:
    (found,) = [e for e in tracker.stats()["exporters"] if e["name"] == name]
    return found


def rpc_code(exc: BaseException) -> int:
    return int(exc.error.code)  # type: ignore[attr-defined]


def dump(model: Any) -> Any:
    # `exclude_unset`: 2.x client models add defaults (`ttlMs`, ...) that were not on the wire.
    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True, exclude_unset=True))


async def exercise(session: Any, kind: str) -> list[str]:
    """Every tracked operation the server kind implements; returns the methods sent, in order."""
    sent = ["tools/list", "tools/call", "tools/call", "resources/list", "resources/read", "resources/read"]
    await session.list_tools()
    await session.call_tool("echo", {"text": "hi"})
    if V2 and kind == "lowlevel":  # the 2.x low-level handler's exception is a JSON-RPC error
        with pytest.raises(Exception, match="the tool failed"):
            await session.call_tool("fail", {})
    else:
        await session.call_tool("fail", {})
    await session.list_resources()
    await session.read_resource("mem://static")
    await session.read_resource("note://7")
    await session.list_resource_templates()
    sent.append("resources/templates/list")
    if kind == "lowlevel":
        with warnings.catch_warnings():  # 2.x: deprecated as of 2026-07-28, still served on legacy connections
            warnings.simplefilter("ignore")
            await session.subscribe_resource("note://7")
            await session.unsubscribe_resource("note://7")
        sent += ["resources/subscribe", "resources/unsubscribe"]
    await session.list_prompts()
    await session.get_prompt("greet", {"who": "Ada"})
    sent += ["prompts/list", "prompts/get"]
    return sent


@pytest.mark.parametrize("kind", KINDS)
async def test_one_event_per_request(kind: str, events: Events) -> None:
    async with tracked(kind, events) as session:
        sent = await exercise(session, kind)
    got = events.flushed()
    # mcp 2.x shows `initialize` to the middleware; mcp 1.x answers it inside `ServerSession`.
    expected = (["initialize"] if V2 else []) + sent
    assert [e["type"] for e in got] == [f"mcp:{m}" for m in expected]
    names = [e.get("resourceName") for e in got if e["type"] != "mcp:initialize"]
    uris = ["note://7", "note://7"] if kind == "lowlevel" else []
    assert names == [None, "echo", "fail", None, "mem://static", "note://7", None, *uris, None, "greet"]
    assert len({e["sessionId"] for e in got}) == 1
    assert all(e["sessionId"].startswith("ses_") and e["durationMs"] > 0 for e in got)
    assert all(e["client"]["name"] == "mcp" for e in got)
    server_name = "tracked-lowlevel" if kind == "lowlevel" else "tracked-fast"
    assert all(e["server"]["name"] == server_name for e in got)
    ids = [e["requestId"] for e in got]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(e["protocolVersion"] for e in got)
    assert exporter_stats(events.tracker, "callback")["exported"] == len(got)


@pytest.mark.parametrize("kind", KINDS)
async def test_missing_resource_is_an_error_event_with_the_sdks_code(kind: str, events: Events) -> None:
    async with tracked(kind, events) as session:
        with pytest.raises(Exception, match=r"(?i)not found|unknown resource") as caught:
            await session.read_resource("nope://missing")
    code = rpc_code(caught.value)
    # The SDK's own code: our low-level server raises -32002; FastMCP 1.x answers 0, MCPServer -32602.
    assert code == (-32002 if kind == "lowlevel" else -32602 if V2 else 0)
    (event,) = [e for e in events.flushed() if e["type"] == "mcp:resources/read"]
    assert event["isError"] is True
    assert event["error"]["code"] == code
    assert event["resourceName"] == "nope://missing"
    assert "response" not in event


@pytest.mark.parametrize("kind", KINDS)
async def test_a_raising_tool_is_an_error_event_and_the_result_is_unchanged(kind: str) -> None:
    async def call(ev: Events | None) -> Any:
        server = tracked_server.build(kind)
        if ev is not None:
            mcplens.track(server, ev.tracker)
        async with in_memory(server) as session:
            await session.list_tools()
            try:
                return ("result", dump(await session.call_tool("fail", {})))
            except Exception as e:
                return ("error", rpc_code(e), str(e))

    ev = Events()
    untracked, with_tracking = await call(None), await call(ev)
    assert with_tracking == untracked
    (event,) = [e for e in ev.flushed() if e["type"] == "mcp:tools/call"]
    assert event["isError"] is True
    assert event["resourceName"] == "fail"
    if untracked[0] == "result":  # FastMCP/MCPServer and the 1.x low-level decorator: an isError result
        assert untracked[1]["isError"] is True
        assert event["error"]["type"] == "tool_error"
    else:  # 2.x low-level handler raising: a JSON-RPC error, code 0
        assert event["error"]["code"] == untracked[1] == 0
    ev.tracker.shutdown(5)


async def test_sdk_internal_tools_list_calls_are_not_recorded(events: Events) -> None:
    server = tracked_server.build("lowlevel")
    mcplens.track(server, events.tracker)
    async with in_memory(server) as session:
        # Sent raw: the client sends no tools/list of its own first.
        await session.send_request(raw_call_tool("echo"), types.CallToolResult)
    assert events.types() == (["mcp:initialize"] if V2 else []) + ["mcp:tools/call"]
    if not V2:
        # mcp 1.x did call its own tools/list handler (with no request) to fill its tool cache.
        assert set(server._tool_cache) == {"echo", "fail", "secret"}


async def test_handlers_registered_after_track_are_tracked(events: Events) -> None:
    server = tracked_server.build("lowlevel", late=True)
    mcplens.track(server, events.tracker)
    tracked_server.add_prompts(server)
    async with in_memory(server) as session:
        await session.list_prompts()
        await session.get_prompt("greet", {"who": "Ada"})
    got = [e for e in events.flushed() if e["type"] != "mcp:initialize"]
    assert [(e["type"], e.get("resourceName")) for e in got] == [
        ("mcp:prompts/list", None),
        ("mcp:prompts/get", "greet"),
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_tracking_twice_is_a_no_op(kind: str, events: Events) -> None:
    server = tracked_server.build(kind)
    mcplens.track(server, events.tracker)
    other = Events()
    assert mcplens.track(server, other.tracker) is server
    assert mcplens.track(server, events.tracker) is server
    async with in_memory(server) as session:
        await session.list_tools()
    assert events.types()[-1:] == ["mcp:tools/list"]
    assert len(events.items) == (2 if V2 else 1)
    assert other.flushed() == []


def test_unsupported_objects_raise_type_error() -> None:
    with pytest.raises(TypeError, match=r"1\.x .*Server.*FastMCP.*2\.x .*Server.*MCPServer.*got builtins\.object"):
        mcplens.track(object())
    with pytest.raises(TypeError, match="not both"):
        mcplens.track(tracked_server.build("lowlevel"), mcplens.Tracker(enable_tracing=False), capture_responses=False)
    server = tracked_server.build("lowlevel")
    with pytest.raises(ValueError, match="transport must be 'stdio', 'memory' or None, not 'http'"):
        mcplens.track(server, mcplens.Tracker(enable_tracing=False), transport="http")  # type: ignore[arg-type]
    assert mcplens.track(server, mcplens.Tracker(enable_tracing=False), transport="memory") is server


async def test_enable_tracing_false_installs_nothing() -> None:
    ev = Events(enable_tracing=False)
    server = tracked_server.build("lowlevel")
    low = server
    before = dict(low.request_handlers) if not V2 else list(low.middleware)
    mcplens.track(server, ev.tracker)
    after = dict(low.request_handlers) if not V2 else list(low.middleware)
    assert after == before
    async with in_memory(server) as session:
        await session.list_tools()
    assert ev.flushed() == []
    assert ev.tracker.stats()["recorded"] == 0

    @ev.tracker.traced("resources/read")
    async def handler(uri: str) -> str:
        return uri

    assert handler.__name__ == "handler"
    assert not hasattr(handler, "__wrapped__")


async def test_the_sdk_gets_the_handlers_own_object_unmutated_and_exceptions_unchanged(events: Events) -> None:
    result = types.CallToolResult(content=[types.TextContent(type="text", text="mine")], structuredContent={"k": [1]})
    boom = RuntimeError("boom")
    returned: list[Any] = []

    if V2:
        server = tracked_server.build("lowlevel")
        mcplens.track(server, events.tracker)
        (middleware,) = [m for m in server.middleware if getattr(m, "_mcplens_tracker", None) is events.tracker]
        assert server.middleware.index(middleware) == 1, "just inside the SDK's OpenTelemetry middleware"
        wire = {"content": [{"type": "text", "text": "mine"}], "structuredContent": {"k": [1]}}
        snapshot = copy.deepcopy(wire)

        async def answer(ctx: Any) -> Any:
            return wire

        async def fail(ctx: Any) -> Any:
            raise boom

        assert await middleware(_v2_context({"name": "echo"}), answer) is wire
        assert wire == snapshot
        with pytest.raises(RuntimeError) as caught:
            await middleware(_v2_context({"name": "boom"}), fail)
        assert caught.value is boom
    else:
        from mcp.server.lowlevel import Server

        server = Server("identity")

        async def handler(req: types.CallToolRequest) -> types.ServerResult:
            if req.params.name == "boom":
                raise boom
            wrapped = types.ServerResult(result)
            returned.append(wrapped)
            return wrapped

        server.request_handlers[types.CallToolRequest] = handler
        mcplens.track(server, events.tracker)
        snapshot = result.model_dump()
        async with in_memory(server) as session:
            await session.send_request(raw_call_tool("echo"), types.CallToolResult)
        # The object the SDK got back from the (wrapped) handler is the one the handler returned.
        wrapped_handler = server.request_handlers[types.CallToolRequest]
        assert wrapped_handler is not handler
        assert wrapped_handler.__wrapped__ is handler
        assert result.model_dump() == snapshot
        token = _v1_request_ctx()
        try:
            req = types.CallToolRequest(params=types.CallToolRequestParams(name="echo"))
            assert await wrapped_handler(req) is returned[-1]
            with pytest.raises(RuntimeError) as caught:
                await wrapped_handler(types.CallToolRequest(params=types.CallToolRequestParams(name="boom")))
            assert caught.value is boom
        finally:
            from mcp.server.lowlevel.server import request_ctx

            request_ctx.reset(token)
        assert result.model_dump() == snapshot
    errors = [e for e in events.flushed() if e["isError"]]
    assert [(e["error"]["code"], e["error"]["message"]) for e in errors] == [(0, "boom")]


def _v1_request_ctx() -> Any:
    from mcp.server.lowlevel.server import request_ctx
    from mcp.shared.context import RequestContext

    class Session:
        client_params = None

    return request_ctx.set(RequestContext(request_id=99, meta=None, session=Session(), lifespan_context={}))


def _v2_context(params: dict[str, Any]) -> Any:
    from contextlib import AsyncExitStack

    class Connection:
        state: ClassVar[dict[str, Any]] = {}
        exit_stack = AsyncExitStack()
        session_id = None
        client_params = None
        protocol_version = "2025-11-25"

    class Session:
        _connection = Connection()

    class Ctx:
        method = "tools/call"
        request_id = 5
        session = Session()
        request = None

    ctx = Ctx()
    ctx.params = params  # type: ignore[attr-defined]
    return ctx


async def test_redaction_of_a_token_in_a_uri_and_in_headers(events: Events) -> None:
    secret = "s3cr3t-VALUE-123"
    async with tracked("lowlevel", events) as session:
        await session.read_resource(f"note://7?token={secret}")
        await session.call_tool("secret", {"headers": {"Authorization": f"Bearer {secret}", "Accept": "*/*"}})
    read, call = [e for e in events.flushed() if e["type"] in ("mcp:resources/read", "mcp:tools/call")]
    assert read["resourceName"] == "note://7?token=[REDACTED]"
    assert read["parameters"]["uri"] == "note://7?token=[REDACTED]"
    assert call["parameters"]["arguments"]["headers"] == {"Authorization": "[REDACTED]", "Accept": "*/*"}
    assert secret not in json.dumps(events.items)


async def test_user_redact_hook_runs_on_every_string() -> None:
    ev = Events(redact=lambda s: s.replace("Ada", "<name>"))
    async with tracked("fast", ev) as session:
        await session.get_prompt("greet", {"who": "Ada"})
    (event,) = [e for e in ev.flushed() if e["type"] == "mcp:prompts/get"]
    assert event["parameters"]["arguments"] == {"who": "<name>"}
    assert "Ada" not in json.dumps(event)

    def broken(s: str) -> str:
        raise ValueError("no")

    failing = Events(redact=broken)
    async with tracked("fast", failing) as session:
        await session.list_tools()
    assert failing.flushed() == []
    assert failing.tracker.stats()["redactionFailed"] >= 1
    ev.tracker.shutdown(5)
    failing.tracker.shutdown(5)


async def test_capture_flags() -> None:
    quiet = Events(capture_parameters=False, capture_responses=False)
    async with tracked("fast", quiet) as session:
        await session.list_tools()
        await session.call_tool("fail", {})
        await session.read_resource("note://7")
    tools_call = next(e for e in quiet.flushed() if e["type"] == "mcp:tools/call")
    read = next(e for e in quiet.items if e["type"] == "mcp:resources/read")
    assert "parameters" not in tools_call
    assert "response" not in tools_call
    assert tools_call["resourceName"] == "fail"
    assert tools_call["error"]["type"] == "tool_error"
    assert read["resourceName"] == "note://7"
    assert "response" not in read
    quiet.tracker.shutdown(5)

    text = Events(capture_resource_text=True)
    async with tracked("fast", text) as session:
        await session.read_resource("note://7")
    read = next(e for e in text.flushed() if e["type"] == "mcp:resources/read")
    assert read["response"]["contents"][0]["text"] == "note 7"
    assert read["response"]["contents"][0]["textBytes"] == 6
    text.tracker.shutdown(5)


async def test_event_payloads_are_what_went_over_the_wire(events: Events) -> None:
    async with tracked("lowlevel", events) as session:
        listed = await session.list_tools()
        called = await session.call_tool("echo", {"text": "hi", "n": [1, 2.5, None, True], "big": 2**70})
        read = await session.read_resource("note://7")
        prompt = await session.get_prompt("greet", {"who": "Ada"})
    by_type = {e["type"]: e for e in events.flushed()}
    assert by_type["mcp:tools/list"]["response"] == dump(listed)
    assert by_type["mcp:tools/call"]["response"] == dump(called)
    assert by_type["mcp:tools/call"]["parameters"] == {
        "name": "echo",
        "arguments": {"text": "hi", "n": [1, 2.5, None, True], "big": 2**70},
    }
    assert by_type["mcp:prompts/get"]["response"] == dump(prompt)
    summary = by_type["mcp:resources/read"]["response"]["contents"][0]
    assert summary["uri"] == str(read.contents[0].uri)
    assert summary["textBytes"] == 6
    assert len(summary["sha256"]) == 64


async def test_identify_runs_once_per_session_and_never_fails_a_request() -> None:
    seen: list[Any] = []

    def identify(ctx: Any) -> dict[str, Any]:
        seen.append(ctx.request_id)
        return {"id": "user-7", "name": "Ada", "data": {"plan": "pro", "apiKey": "k-123456789"}}

    ev = Events(identify=identify)
    async with tracked("fast", ev) as session:
        await session.list_tools()
        await session.list_prompts()
    got = [e for e in ev.flushed() if e["type"] != "mcp:initialize"]
    assert len(seen) == 1
    identity = {"id": "user-7", "name": "Ada", "data": {"plan": "pro", "apiKey": "[REDACTED]"}}
    assert all(e["identity"] == identity for e in got)
    ev.tracker.shutdown(5)

    def broken(ctx: Any) -> dict[str, Any]:
        raise RuntimeError("identify is broken")

    async def later(ctx: Any) -> dict[str, Any]:
        await anyio.lowlevel.checkpoint()
        return {"id": "async-user"}

    for fn in (broken, later):
        ev = Events(identify=fn)
        async with tracked("fast", ev) as session:
            assert len((await session.list_tools()).tools) == 2
            await anyio.sleep(0.05)
            await session.list_prompts()
        last = ev.flushed()[-1]
        assert last.get("identity") == (None if fn is broken else {"id": "async-user"})
        ev.tracker.shutdown(5)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_an_async_identify_runs_under_asyncio_and_trio(anyio_backend: str) -> None:

    async def identify(ctx: Any) -> dict[str, Any]:
        await anyio.sleep(0.01)
        return {"id": f"{anyio_backend}-user"}

    ev = Events(identify=identify)
    async with tracked("fast", ev) as session:
        await session.list_tools()
        await anyio.sleep(0.1)
        await session.list_prompts()
    got = [e for e in ev.flushed() if e["type"] != "mcp:initialize"]
    assert [e.get("identity") for e in got] == [{"id": f"{anyio_backend}-user"}] * 2
    ev.tracker.shutdown(5)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_request_is_recorded_by_the_pass_after_its_response(anyio_backend: str) -> None:
    """The core's `tracking::Answered` rule as Python performs it: the handler returns with the
    request held (its duration measured, its objects referenced, not serialized); the pass runs
    `AFTER_RESPONSE_SECONDS` later on the running loop (asyncio's `call_later`, a trio system task)
    and records what is held in the order held, a failure in its place; `ANSWERED_MAX` held run the
    pass at once (a loop that never yields)."""
    from mcplens._core import AFTER_RESPONSE_SECONDS, ANSWERED_MAX

    batches: list[list[dict[str, Any]]] = []
    tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(batches.append)], capture_responses=True)

    @tracker.traced("tools/call")
    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "fail":
            raise ValueError("the tool failed")
        return {"content": [{"type": "text", "text": "as returned"}]}

    first = await call("echo", {"text": "1"})
    with pytest.raises(ValueError, match="the tool failed"):
        await call("fail", {})
    first["content"][0]["text"] = "at the pass"  # held, not serialized: the pass reads it now
    await anyio.sleep(AFTER_RESPONSE_SECONDS * 20)  # the loop runs the pass (its deadline is earlier)
    first["content"][0]["text"] = "after the pass"  # the pass ran during the sleep: not seen
    many = [await call("echo", {"text": str(i)}) for i in range(ANSWERED_MAX + 1)]  # never yields
    many[0]["content"][0]["text"] = "after the 64th"  # the 64th held ran the pass at once: not seen
    many[-1]["content"][0]["text"] = "held"  # the 65th is held, recorded by flush's pass
    tracker.flush(5)
    got = [e for batch in batches for e in batch]
    assert [e["resourceName"] for e in got[:3]] == ["echo", "fail", "echo"]
    assert [bool(e.get("isError")) for e in got[:3]] == [False, True, False]
    texts = [e["response"]["content"][0]["text"] for e in got if not e.get("isError")]
    assert texts == ["at the pass", *["as returned"] * ANSWERED_MAX, "held"]
    tracker.shutdown(5)


async def test_traced_decorator(events: Events) -> None:
    if V2:
        from mcp.server.lowlevel import Server

        @events.tracker.traced("resources/read")
        async def on_read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text="x")])

        server: Any = Server("traced", on_read_resource=on_read)
    else:
        from mcp.server.lowlevel import Server
        from mcp.server.lowlevel.helper_types import ReadResourceContents

        server = Server("traced")

        @server.read_resource()
        @events.tracker.traced("resources/read")
        async def on_read(uri: Any) -> list[ReadResourceContents]:
            return [ReadResourceContents(content="x", mime_type="text/plain")]

    async with in_memory(server) as session:
        await session.read_resource("note://1")
    (event,) = events.flushed()
    assert event["type"] == "mcp:resources/read"
    assert event["resourceName"] == "note://1"
    assert isinstance(event["requestId"], int)
    assert event["client"]["name"] == "mcp"
    with pytest.raises(ValueError, match="method must be a request method's name"):
        events.tracker.traced("")


def test_options_are_checked(tmp_path: Any) -> None:
    """Every option is the core's to check (the vectors in tests/vectors/tracking-config pin the
    rules); the error names the option as the core's configuration calls it."""
    with pytest.raises(TypeError, match="exporters must be"):
        mcplens.Tracker(exporters=["events.jsonl"])  # type: ignore[list-item]
    with pytest.raises(mcplens.TrackingError) as caught:
        mcplens.Tracker(queue_capacity=0)
    assert (caught.value.code, caught.value.option) == ("invalid_argument", "queueCapacity")
    with pytest.raises(mcplens.TrackingError) as caught:
        mcplens.Tracker(exporters=[mcplens.OtlpExporter("not a url")])
    assert (caught.value.code, caught.value.option) == ("invalid_argument", "exporters[0].endpoint")
    with pytest.raises(TypeError):
        mcplens.CallbackExporter(42)  # type: ignore[arg-type]
    assert mcplens.JsonlExporter().path == "mcplens-events.jsonl"
    assert mcplens.McpcatExporter("proj").base_url == "https://api.agentcat.com"
    assert "secret" not in repr(mcplens.OtlpExporter("http://127.0.0.1:4318", headers={"x-key": "secret"}))
    assert "k-1" not in repr(mcplens.McpcatExporter("proj", api_key="k-1"))
    tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter(tmp_path / "e.jsonl")])
    zero = {"exported": 0, "dropped": 0, "failed": 0, "skipped": 0, "pending": 0}
    assert tracker.stats() == {
        "recorded": 0,
        "dropped": 0,
        "filtered": 0,
        "redactionFailed": 0,
        "unidentified": 0,
        "queued": 0,
        "exporters": [{"name": "jsonl", **zero}],
    }
    tracker.flush(1)
    tracker.shutdown(1)


async def test_jsonl_default_exporter(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    tracker = mcplens.Tracker()
    server = tracked_server.build("fast")
    mcplens.track(server, tracker)
    async with in_memory(server) as session:
        await session.call_tool("echo", {"text": "hi"})
    tracker.shutdown(5)
    lines = (tmp_path / "mcplens-events.jsonl").read_text().splitlines()
    assert "mcp:tools/call" in [json.loads(line)["type"] for line in lines]
    assert exporter_stats(tracker, "jsonl")["exported"] == len(lines)


async def test_under_the_sdks_own_span_the_mcplens_span_is_its_child(tmp_path: Any) -> None:
    """The host's OpenTelemetry context: mcp 2.x opens a SERVER span per request with whatever
    OpenTelemetry SDK the application installed (servers/otel_server.py, a process of its own).
    mcplens' OTLP span for the same request is its INTERNAL child in the same trace: one trace per
    request holding both, where it used to start a second trace."""
    if not V2:
        # reason: mcp 1.x emits no OpenTelemetry spans of its own; the test runs in the mcp 2.3.0 pass
        pytest.skip("the SDK's own OpenTelemetry spans are mcp 2.x's")
    import os
    import sys

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import Span
    from test_tracking_exporters import Receiver

    from support import SERVERS

    names = ("tools/call echo", "resources/read")
    spans = tmp_path / "spans.jsonl"
    with Receiver().running() as rx:
        env = {**os.environ, "OTEL_SPANS": str(spans)}
        params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / "otel_server.py"), rx.url], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("echo", {"text": "hi"})
            await session.read_resource("note://1")
        ours: dict[str, Any] = {}
        for _ in range(400):  # the server's exit flush, at most 20 s: another process, no event to wait on
            for path, _, body in rx.posts:
                if path == "/v1/traces":
                    req = ExportTraceServiceRequest()
                    req.ParseFromString(body)
                    ours |= {s.name: s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans}
            if set(names) <= set(ours):
                break
            await anyio.sleep(0.05)
    theirs = {s["name"]: s for s in map(json.loads, spans.read_text().splitlines()) if s["kind"] == "SERVER"}
    for name in names:
        assert (ours[name].trace_id.hex(), ours[name].parent_span_id.hex()) == (
            theirs[name]["traceId"],
            theirs[name]["spanId"],
        ), name
        assert ours[name].kind == Span.SpanKind.SPAN_KIND_INTERNAL, name
    assert len({theirs[n]["traceId"] for n in names}) == len(names), "one trace per request"


async def test_protocol_2026_07_28_requests_carry_no_session_id() -> None:
    """mcp 2.x serves the sessionless 2026-07-28 revision: each request says its version (and
    client) in `_meta`; its events take the version from the request and carry no session id."""
    if not V2:
        # reason: mcp 1.x has no 2026-07-28 era; this test runs in the mcp 2.3.0 pass of make test-python
        pytest.skip("protocol 2026-07-28 is served by mcp 2.x")
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    got: list[dict[str, Any]] = []
    server: Any = MCPServer("modern-server")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.resource("note://{id}")
    def note(id: str) -> str:
        return f"note {id}"

    tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(got.extend)])
    mcplens.track(server, tracker)
    async with Client(server, mode="2026-07-28") as client:  # type: ignore[attr-defined,unused-ignore]
        await client.call_tool("echo", {"text": "hi"})
        await client.read_resource("note://1")
    tracker.flush(10)
    assert {e["type"] for e in got} >= {"mcp:tools/call", "mcp:resources/read"}
    assert all("sessionId" not in e and e["protocolVersion"] == "2026-07-28" for e in got), got
    (read,) = [e for e in got if e["type"] == "mcp:resources/read"]
    assert read["resourceName"] == "note://1"
    assert read["client"]["name"] == "mcp"
    tracker.shutdown(5)


@pytest.mark.parametrize("outcome", ["raises", "never_answers", "not_a_mapping"])
async def test_identify_held_in_the_core_fails_open(outcome: str) -> None:
    """The session's events wait for identify in the core; a hook that fails, never answers
    (past `identify_timeout_seconds`) or answers something else lets them go on without an
    identity, counted as `unidentified`. The request never waits for it."""
    got: list[dict[str, Any]] = []

    async def identify(ctx: Any) -> Any:
        if outcome == "raises":
            raise RuntimeError("directory down")
        if outcome == "never_answers":
            await asyncio.Event().wait()
        return 42

    tracker = mcplens.Tracker(
        exporters=[mcplens.CallbackExporter(got.extend)], identify=identify, identify_timeout_seconds=0.05
    )
    server = tracked_server.build("lowlevel")
    mcplens.track(server, tracker)
    async with in_memory(server) as session:
        await session.list_tools()
        for _ in range(20):  # let an async hook run (and fail) before the flush blocks this loop
            await asyncio.sleep(0)
        tracker.flush(10)
    assert got
    assert all("identity" not in e for e in got)
    assert tracker.stats()["unidentified"] == len(got)
    tracker.shutdown(5)
