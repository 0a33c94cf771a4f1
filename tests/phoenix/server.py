"""The tracked server of the Phoenix test: `tracked_server.build("fast")` (bindings-python's test
server: FastMCP on mcp 1.x, MCPServer on 2.x) over streamable HTTP on 127.0.0.1, tracked with
an `OtlpExporter` pointed at Phoenix and a `JsonlExporter` (the events the test compares the
spans with).

    python server.py PORT EVENTS.jsonl OTLP_ENDPOINT [--sdk-spans]

With `--sdk-spans` (mcp 2.x, .build/venv-phoenix-mcp2) the process also installs an OpenTelemetry
SDK exporting to the same endpoint, so the SDK's own SERVER span for each request reaches Phoenix
beside mcplens' span for it.

Runs until its standard input closes, then stops uvicorn, flushes and shuts the tracker down
(uvicorn re-raises SIGTERM, so a signal would skip that), and prints the tracker's stats as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings-python" / "tests" / "servers"))

import tracked_server

import mcplens


async def serve(server: uvicorn.Server) -> None:
    async with anyio.create_task_group() as tg:

        async def stop_at_eof() -> None:
            await anyio.to_thread.run_sync(sys.stdin.read)
            server.should_exit = True

        tg.start_soon(stop_at_eof)
        await server.serve()
        tg.cancel_scope.cancel()


def sdk_spans(endpoint: str) -> None:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)


def main(port: int, events: str, endpoint: str, *flags: str) -> None:
    if "--sdk-spans" in flags:
        sdk_spans(endpoint)
    server = tracked_server.build("fast")
    tracker = mcplens.Tracker(exporters=[mcplens.OtlpExporter(endpoint), mcplens.JsonlExporter(events)])
    mcplens.track(server, tracker)
    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
    anyio.run(serve, uvicorn.Server(config))
    tracker.flush(30)
    tracker.shutdown(10)
    print(json.dumps(tracker.stats()), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], *sys.argv[4:])
