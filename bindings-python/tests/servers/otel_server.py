"""An mcp 2.x `MCPServer` over stdio with the SDK's own OpenTelemetry spans on (an OpenTelemetry
SDK `TracerProvider`; each finished span appended to the file `OTEL_SPANS` as a JSON line), tracked
by mcplens with an OTLP exporter to `argv[1]`: `python otel_server.py OTLP_URL`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

import mcplens


class FileExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a", encoding="utf-8") as f:
            for s in spans:
                ctx: Any = s.context
                ids = {"traceId": f"{ctx.trace_id:032x}", "spanId": f"{ctx.span_id:016x}"}
                f.write(json.dumps({"name": s.name, "kind": s.kind.name, **ids}) + "\n")
        return SpanExportResult.SUCCESS


def main() -> None:
    from mcp.server.mcpserver import MCPServer

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileExporter(os.environ["OTEL_SPANS"])))
    trace.set_tracer_provider(provider)
    server = MCPServer("otel")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.resource("note://{id}", name="note")
    def note(id: str) -> str:
        return f"note {id}"

    tracker = mcplens.Tracker(exporters=[mcplens.OtlpExporter(sys.argv[1])])
    mcplens.track(server, tracker, transport="stdio")
    server.run("stdio")


if __name__ == "__main__":
    main()
