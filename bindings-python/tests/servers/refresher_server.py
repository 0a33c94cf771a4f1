"""A low-level server of the installed `mcp` SDK (1.x or 2.x) for the refresher's end-to-end tests.

`python refresher_server.py LOG`: serves over stdio and appends the method of every request it
receives to the file LOG, one per line. It lists `templates` templates and `resources` resources,
two per page. The test steers it with its own `tools/call` of `control` (arguments: `templates`,
`resources`, `fail` — a list of what the next `resources/list` requests answer: `"error"` is
JSON-RPC -32603, `"hang"` no answer —, `notify` — send `notifications/resources/list_changed`). It also answers
`resources/read`, `completion/complete` and `prompts/get`, so that any of them sent by mistake is
logged.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import Any

import anyio
import mcp
from mcp import types

V2 = hasattr(mcp, "MCPError")
PAGE = 2


class State:
    def __init__(self, log: str) -> None:
        self.log = log
        self.templates = 0
        self.resources = 0
        self.fail: deque[str] = deque()

    def record(self, method: str) -> None:
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(method + "\n")

    async def resources_page(self, cursor: str | None) -> dict[str, Any]:
        if cursor is None and self.fail and self.fail[0] == "hang":
            self.fail.popleft()
            await anyio.sleep_forever()
        return self.page("resources", cursor)

    def page(self, key: str, cursor: str | None) -> dict[str, Any]:
        if key == "resources" and cursor is None and self.fail and self.fail.popleft() == "error":
            raise (mcp.MCPError(code=-32603, message="scripted") if V2 else _v1_error())
        count = self.resources if key == "resources" else self.templates
        start = int(cursor or 0)
        end = min(start + PAGE, count)
        if key == "resources":
            items: list[dict[str, Any]] = [{"uri": f"mem://r{i}", "name": f"r{i}"} for i in range(start, end)]
        else:
            items = [{"uriTemplate": f"mem://t{i}/{{id}}", "name": f"t{i}"} for i in range(start, end)]
        page: dict[str, Any] = {key: items}
        if end < count:
            page["nextCursor"] = str(end)
        return page

    def control(self, arguments: dict[str, Any]) -> None:
        self.templates = arguments.get("templates", self.templates)
        self.resources = arguments.get("resources", self.resources)
        self.fail.extend(arguments.get("fail", []))


def _v1_error() -> Exception:
    from mcp.shared.exceptions import McpError

    return McpError(types.ErrorData(code=-32603, message="scripted"))


def build_v1(state: State) -> Any:
    from mcp.server.lowlevel import Server

    server = Server("refresher")

    def logged(method: str, handler: Any) -> Any:
        async def wrapper(req: Any) -> Any:
            state.record(method)
            return await handler(req)

        return wrapper

    async def templates(req: types.ListResourceTemplatesRequest) -> types.ServerResult:
        page = state.page("resourceTemplates", req.params.cursor if req.params else None)
        return types.ServerResult(types.ListResourceTemplatesResult.model_validate(page))

    async def resources(req: types.ListResourcesRequest) -> types.ServerResult:
        page = await state.resources_page(req.params.cursor if req.params else None)
        return types.ServerResult(types.ListResourcesResult.model_validate(page))

    async def call_tool(req: types.CallToolRequest) -> types.ServerResult:
        state.control(req.params.arguments or {})
        if (req.params.arguments or {}).get("notify"):
            await server.request_context.session.send_resource_list_changed()
        return types.ServerResult(types.CallToolResult(content=[types.TextContent(type="text", text="ok")]))

    async def list_tools(req: types.ListToolsRequest) -> types.ServerResult:
        return types.ServerResult(
            types.ListToolsResult(tools=[types.Tool(name="control", inputSchema={"type": "object"})])
        )

    async def refuse(req: Any) -> types.ServerResult:
        raise _v1_error()

    handlers: dict[Any, Any] = {
        types.ListResourceTemplatesRequest: templates,
        types.ListResourcesRequest: resources,
        types.CallToolRequest: call_tool,
        types.ListToolsRequest: list_tools,
        types.ReadResourceRequest: refuse,
        types.CompleteRequest: refuse,
        types.GetPromptRequest: refuse,
    }
    for request_type, handler in handlers.items():
        server.request_handlers[request_type] = logged(request_type.model_fields["method"].default, handler)
    return server


def build_v2(state: State) -> Any:
    from mcp.server.lowlevel import Server

    async def track(ctx: Any, call_next: Any) -> Any:
        if ctx.request_id is not None:
            state.record(ctx.method)
        return await call_next(ctx)

    async def templates(ctx: Any, params: Any) -> Any:
        return types.ListResourceTemplatesResult.model_validate(
            state.page("resourceTemplates", params.cursor if params else None)
        )

    async def resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult.model_validate(await state.resources_page(params.cursor if params else None))

    async def call_tool(ctx: Any, params: Any) -> Any:
        state.control(params.arguments or {})
        if (params.arguments or {}).get("notify"):
            await ctx.session.send_resource_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool(name="control", input_schema={"type": "object"})])

    server = Server(
        "refresher",
        on_list_resource_templates=templates,
        on_list_resources=resources,
        on_call_tool=call_tool,
        on_list_tools=list_tools,
    )
    server.middleware.insert(0, track)  # outermost: sees every request, unknown methods included
    return server


async def main(log: str) -> None:
    from mcp.server.stdio import stdio_server

    state = State(log)
    server = build_v2(state) if V2 else build_v1(state)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
