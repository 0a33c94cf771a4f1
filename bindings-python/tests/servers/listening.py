"""Serving a test server's ASGI app under uvicorn on 127.0.0.1, for `support.http_server`: the
first line on stderr is "listening", written once the socket accepts (not before, as a log line
from the app's startup would be)."""

from __future__ import annotations

import sys
from typing import Any


def serve(app: Any, port: int) -> None:
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    original = web.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        print("listening", file=sys.stderr, flush=True)

    web.startup = startup  # type: ignore[method-assign]
    web.run()
