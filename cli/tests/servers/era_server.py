"""An MCP server on the installed `mcp` SDK (2.x, or 1.x) whose one resource template tells which
protocol revision the request came with, and which revision the client's `initialize` offered:

    python era_server.py stdio
    python era_server.py http     # prints the URL, then serves streamable HTTP on 127.0.0.1

The template is `{"uriTemplate": "era://{x}", "name": "protocol <revision>", "title": "initialize
offered <revision>"}` (title `no initialize` when the session began with `server/discover`).
mcp 2.x serves both eras (the client's first request decides); mcp 1.x only `initialize`.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

import anyio
import mcp
from mcp import types
from mcp.server.lowlevel import Server

V2 = hasattr(mcp, "MCPError")


PROTOCOL_META_KEY = "io.modelcontextprotocol/protocolVersion"  # 2026-07-28 requests carry it


def page(negotiated: str, params: Any, meta: Any = None) -> dict[str, Any]:
    if hasattr(meta, "model_dump"):
        meta = meta.model_dump(by_alias=True)
    if isinstance(meta, dict) and PROTOCOL_META_KEY in meta:
        title = "no initialize"
    else:
        offered = getattr(params, "protocol_version", None) or getattr(params, "protocolVersion", None)
        title = f"initialize offered {offered}"
    return {"resourceTemplates": [{"uriTemplate": "era://{x}", "name": f"protocol {negotiated}", "title": title}]}


if V2:

    async def on_templates(ctx: Any, params: Any) -> Any:
        result = page(ctx.protocol_version, ctx.session.client_params, ctx.meta)
        return types.ListResourceTemplatesResult.model_validate(result)

    async def on_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(resources=[])

    server: Any = Server("era", on_list_resource_templates=on_templates, on_list_resources=on_resources)
else:
    server = Server("era")

    async def on_templates_v1(req: types.ListResourceTemplatesRequest) -> types.ServerResult:
        params = server.request_context.session.client_params
        result = page(params.protocolVersion if params else "?", params)
        return types.ServerResult(types.ListResourceTemplatesResult.model_validate(result))

    async def on_resources_v1(req: types.ListResourcesRequest) -> types.ServerResult:
        return types.ServerResult(types.ListResourcesResult(resources=[]))

    server.request_handlers[types.ListResourceTemplatesRequest] = on_templates_v1
    server.request_handlers[types.ListResourcesRequest] = on_resources_v1


async def stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app() -> Any:
    if V2:
        return server.streamable_http_app()
    import contextlib

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Mount

    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    return Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)


def http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(http_app(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1] == "http":
        http()
    else:
        anyio.run(stdio)
