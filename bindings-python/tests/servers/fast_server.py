"""The installed SDK's high-level server with resource templates: 1.x `FastMCP`, 2.x `MCPServer`.

In process: `build()` returns `(server, log)`; `log` records each request's method. Over stdio:
`python fast_server.py`; over streamable HTTP (2.x): `python fast_server.py http PORT`. With
`FAST_SERVER_LOG=FILE` (2.x) each request's method is also appended
to FILE, a line each, as it comes.

Tool `add_template(name)` registers the template `note://<name>/{id}` and says the list changed:
1.x FastMCP through `send_resource_list_changed()` although it advertises no `listChanged`; 2.x
through `notify_resources_changed()` (2026-07-28 listen streams) and `send_resource_list_changed()`
(legacy connections).
"""

from __future__ import annotations

import os
from typing import Any

import mcp

V2 = hasattr(mcp, "MCPError")
if V2:
    from mcp.server.mcpserver import Context, MCPServer
else:
    from mcp.server.fastmcp import Context, FastMCP  # type: ignore[no-redef]


def build() -> tuple[Any, list[str]]:
    log: list[str] = []
    if V2:
        log_file = os.environ.get("FAST_SERVER_LOG")

        async def track(ctx: Any, call_next: Any) -> Any:
            if ctx.request_id is not None:
                log.append(ctx.method)
                if log_file:
                    with open(log_file, "a") as f:  # noqa: ASYNC230 (a line per request, in a test)
                        f.write(ctx.method + "\n")
            return await call_next(ctx)

        server: Any = MCPServer("fast", middleware=[track])
    else:
        server = FastMCP("fast")
        low = server._mcp_server

        def tracked(method: str, handler: Any) -> Any:
            async def wrapper(request: Any) -> Any:
                log.append(method)
                return await handler(request)

            return wrapper

        for request_type, handler in list(low.request_handlers.items()):
            low.request_handlers[request_type] = tracked(request_type.model_fields["method"].default, handler)

    @server.resource("file:///{path}", name="files", description="A file by its path", mime_type="text/plain")
    def read_file(path: str) -> str:
        return path

    @server.resource("docs://guide", name="guide")
    def guide() -> str:
        return "guide"

    @server.tool()
    async def add_template(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
        def read(id: str) -> str:
            return id

        server.resource(f"note://{name}/{{id}}", name=name)(read)
        if V2:
            await ctx.notify_resources_changed()
        await ctx.session.send_resource_list_changed()
        return "added"

    return server, log


def serve_http(port: int) -> None:
    """Streamable HTTP on 127.0.0.1:`port` (`/mcp`); says "listening" on stderr once it does."""
    import logging

    from listening import serve

    logging.disable(logging.INFO)  # the SDK's startup log would come before "listening"
    serve(build()[0].streamable_http_app(), port)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]))
    else:
        build()[0].run("stdio")
