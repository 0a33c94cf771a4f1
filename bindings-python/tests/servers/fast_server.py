"""The installed SDK's high-level server with resource templates: 1.x `FastMCP`, 2.x `MCPServer`.

In process: `build()` returns `(server, log)`; `log` records each request's method. Over stdio:
`python fast_server.py`.

Tool `add_template(name)` registers the template `note://<name>/{id}` and says the list changed:
1.x FastMCP through `send_resource_list_changed()` although it advertises no `listChanged`; 2.x
through `notify_resources_changed()` (2026-07-28 listen streams) and `send_resource_list_changed()`
(legacy connections).
"""

from __future__ import annotations

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

        async def track(ctx: Any, call_next: Any) -> Any:
            if ctx.request_id is not None:
                log.append(ctx.method)
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


if __name__ == "__main__":
    build()[0].run("stdio")
