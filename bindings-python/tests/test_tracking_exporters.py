"""The OTLP and MCPcat exporters against loopback receivers: OTLP decoded with `opentelemetry-proto`,
MCPcat bodies validated with the `agentcat-api` models."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mcp import types

import mcplens
from servers import tracked_server
from support import V2, in_memory

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"


class Receiver:
    """A loopback HTTP server that keeps every POST (path, headers, body)."""

    def __init__(self, status: int = 200, body: bytes = b"") -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                posts.append((self.path, {k.lower(): v for k, v in self.headers.items()}, data))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @contextmanager
    def running(self) -> Iterator[Receiver]:
        t = threading.Thread(target=self.server.serve_forever, daemon=True)
        t.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            t.join()


async def scenario(tracker: mcplens.Tracker) -> None:
    server = tracked_server.build("lowlevel")
    mcplens.track(server, tracker)
    async with in_memory(server) as session:
        await session.list_tools()
        meta = {"_meta": {"traceparent": f"00-{TRACE_ID}-{PARENT_SPAN}-01"}}
        params = types.CallToolRequestParams(name="echo", arguments={"text": "hi"}, **meta)
        request = types.CallToolRequest(params=params)
        await session.send_request(request if V2 else types.ClientRequest(request), types.CallToolResult)
        await session.read_resource("note://7")
        with pytest.raises(Exception, match="not found"):
            await session.read_resource("nope://missing")
    tracker.flush(10)
    tracker.shutdown(5)


def attrs(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in kvs:
        v = kv.value
        out[kv.key] = getattr(v, v.WhichOneof("value")) if v.WhichOneof("value") else None
    return out


async def test_otlp_spans_and_metrics_to_a_loopback_receiver() -> None:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    with Receiver().running() as rx:
        tracker = mcplens.Tracker(exporters=[mcplens.OtlpExporter(rx.url, headers={"x-api-key": "k-1"})])
        await scenario(tracker)
    assert {p for p, _, _ in rx.posts} == {"/v1/traces", "/v1/metrics"}
    assert all(h["content-type"] == "application/x-protobuf" and h["x-api-key"] == "k-1" for _, h, _ in rx.posts)
    spans = []
    for path, _, body in rx.posts:
        if path == "/v1/traces":
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            for rs in req.resource_spans:
                assert attrs(rs.resource.attributes)["service.name"] == "tracked-lowlevel"
                spans += [s for ss in rs.scope_spans for s in ss.spans]
    by_name: dict[str, list[Any]] = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s)
        assert s.kind == Span.SPAN_KIND_SERVER
    expected = (["initialize"] if V2 else []) + ["tools/list", "tools/call echo", "resources/read", "resources/read"]
    assert sorted(s.name for s in spans) == sorted(expected)
    (call,) = by_name["tools/call echo"]
    assert call.trace_id.hex() == TRACE_ID
    assert call.parent_span_id.hex() == PARENT_SPAN
    a = attrs(call.attributes)
    assert a["mcp.method.name"] == "tools/call"
    assert a["gen_ai.tool.name"] == "echo"
    assert a["mcp.session.id"].startswith("ses_")
    ok, missing = sorted(by_name["resources/read"], key=lambda s: s.status.code)
    assert attrs(ok.attributes)["mcp.resource.uri"] == "note://7"
    assert missing.status.code == Status.STATUS_CODE_ERROR
    assert attrs(missing.attributes)["error.type"] == "-32002"
    names = set()
    for path, _, body in rx.posts:
        if path == "/v1/metrics":
            req = ExportMetricsServiceRequest()
            req.ParseFromString(body)
            names |= {m.name for rm in req.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert names == {"mcp.server.operation.duration"}


async def test_mcpcat_bodies_validate_against_the_agentcat_api_models() -> None:
    from agentcat_api.models.publish_event_request import PublishEventRequest

    with Receiver(202, b'{"status":"accepted"}').running() as rx:
        exporter = mcplens.McpcatExporter("proj_test", base_url=rx.url)
        await scenario(mcplens.Tracker(exporters=[exporter]))
    assert {p for p, _, _ in rx.posts} == {"/v1/public/events/"}
    bodies = [json.loads(b) for _, _, b in rx.posts]
    models = [PublishEventRequest.from_dict(b) for b in bodies]
    assert all(m is not None for m in models)
    for body, model in zip(bodies, models, strict=True):
        assert model is not None
        # `agentcat-api` names the version field `agentcat_version`; the core's exporter writes the
        # MCPcat-era `mcpcat_version` (kept as an additional property). Nothing else is unknown.
        assert set(model.additional_properties) <= {"mcpcat_version"}
        assert model.project_id == "proj_test"
        assert model.sdk_language == "python"
        assert model.session_id is not None
        assert model.session_id.startswith("ses_")
        assert model.server_name == "tracked-lowlevel"
        assert model.client_name == "mcp"
        assert isinstance(model.duration, int)
        assert model.timestamp is not None
        assert body["event_type"] == model.event_type
    types_ = [m.event_type for m in models if m is not None]
    assert types_ == (["mcp:initialize"] if V2 else []) + [
        "mcp:tools/list",
        "mcp:tools/call",
        "mcp:resources/read",
        "mcp:resources/read",
    ]
    read_ok, read_missing = [m for m in models if m is not None and m.event_type == "mcp:resources/read"]
    assert read_ok.resource_name == "note://7"
    assert read_ok.is_error is False
    assert read_missing.is_error is True
    assert read_missing.error is not None
    assert read_missing.error["code"] == -32002
