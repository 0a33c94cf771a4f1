"""The tracked server of the Phoenix test: `tracked_server.build("fast")` (bindings-python's test
server: FastMCP on mcp 1.x, MCPServer on 2.x) over streamable HTTP on 127.0.0.1, tracked with
an `OtlpExporter` pointed at Phoenix and a `JsonlExporter` (the events the test compares the
spans with).

    python server.py PORT EVENTS.jsonl OTLP_ENDPOINT

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


def main(port: int, events: str, endpoint: str) -> None:
    server = tracked_server.build("fast")
    tracker = mcplens.Tracker(exporters=[mcplens.OtlpExporter(endpoint), mcplens.JsonlExporter(events)])
    mcplens.track(server, tracker)
    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
    anyio.run(serve, uvicorn.Server(config))
    tracker.flush(30)
    tracker.shutdown(10)
    print(json.dumps(tracker.stats()), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
