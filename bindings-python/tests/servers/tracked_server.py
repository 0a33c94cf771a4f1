"""MCP servers for the tracking tests, written with the installed `mcp` SDK (1.x or 2.x).

In process: `build(kind)` returns the server, untracked. Kinds:
- `lowlevel`: the low-level `Server` with every tracked operation: tools/list, tools/call (`echo`,
  `fail` raising, `secret` echoing its arguments), resources/list, resources/read (`mem://static`,
  `note://{id}`, anything else -32002), resources/templates/list, resources/subscribe and
  unsubscribe, prompts/list, prompts/get. `late=True` leaves out the prompt handlers, for
  `add_prompts(server)` after `track()`.
- `fast`: 1.x `FastMCP` / 2.x `MCPServer` with a tool `echo`, a tool `fail` (raises), the static
  resource `mem://static`, the template `note://{id}` and a prompt `greet`.

As a process: `python tracked_server.py KIND stdio EVENTS [untracked]` or
`python tracked_server.py KIND http EVENTS PORT` (streamable HTTP on 127.0.0.1). EVENTS is the JSONL
file of `mcplens.JsonlExporter`; with `http`, `identify` returns the request's headers as identity
data, so that the tests can check their redaction.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp
from mcp import types

V2 = hasattr(mcp, "MCPError")
RESOURCE_NOT_FOUND = -32002


def error(code: int, message: str) -> Exception:
    if V2:
        return mcp.MCPError(code=code, message=message)
    from mcp.shared.exceptions import McpError

    return McpError(types.ErrorData(code=code, message=message))


TOOLS = [
    {
        "name": "echo",
        "description": "Echo",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {"name": "fail", "description": "Raises", "inputSchema": {"type": "object"}},
    {"name": "secret", "description": "Echoes its arguments", "inputSchema": {"type": "object"}},
]
RESOURCES = [{"uri": "mem://static", "name": "static", "mimeType": "text/plain"}]
TEMPLATES = [{"uriTemplate": "note://{id}", "name": "note"}]
PROMPTS = [{"name": "greet", "description": "Greets", "arguments": [{"name": "who", "required": True}]}]


def read_text(uri: str) -> str:
    if uri == "mem://static":
        return "static text"
    if uri.startswith("note://"):
        return f"note {uri[len('note://') :]}"
    raise error(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")


def call_tool(name: str, arguments: dict[str, Any]) -> str:
    if name == "fail":
        raise ValueError("the tool failed")
    if name == "secret":
        return repr(sorted(arguments))
    return str(arguments.get("text", ""))


def build(kind: str, *, late: bool = False) -> Any:
    if kind == "fast":
        return _fast()
    return _lowlevel_v2(late) if V2 else _lowlevel_v1(late)


def _lowlevel_v1(late: bool) -> Any:
    from mcp.server.lowlevel import Server
    from mcp.server.lowlevel.helper_types import ReadResourceContents

    server = Server("tracked-lowlevel", version="1.2.3")
    subscribed: set[str] = set()

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [types.Tool.model_validate(t) for t in TOOLS]

    @server.call_tool(validate_input=False)
    async def on_call(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        return [types.TextContent(type="text", text=call_tool(name, arguments))]

    @server.list_resources()
    async def list_resources() -> list[types.Resource]:
        return [types.Resource.model_validate(r) for r in RESOURCES]

    @server.list_resource_templates()
    async def list_templates() -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate.model_validate(t) for t in TEMPLATES]

    @server.read_resource()
    async def read(uri: Any) -> list[ReadResourceContents]:
        return [ReadResourceContents(content=read_text(str(uri)), mime_type="text/plain")]

    @server.subscribe_resource()
    async def subscribe(uri: Any) -> None:
        subscribed.add(str(uri))

    @server.unsubscribe_resource()
    async def unsubscribe(uri: Any) -> None:
        subscribed.discard(str(uri))

    if not late:
        add_prompts(server)
    return server


def add_prompts(server: Any) -> None:
    """Registers prompts/list and prompts/get (after `track()` in the late-registration test)."""
    if V2:

        async def on_list_prompts(ctx: Any, params: Any) -> Any:
            return types.ListPromptsResult.model_validate({"prompts": PROMPTS})

        async def on_get_prompt(ctx: Any, params: Any) -> Any:
            who = (params.arguments or {}).get("who", "you")
            return types.GetPromptResult.model_validate(
                {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hello {who}"}}]}
            )

        server.add_request_handler("prompts/list", types.PaginatedRequestParams, on_list_prompts)
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, on_get_prompt)
        return

    @server.list_prompts()
    async def list_prompts() -> list[types.Prompt]:
        return [types.Prompt.model_validate(p) for p in PROMPTS]

    @server.get_prompt()
    async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        who = (arguments or {}).get("who", "you")
        return types.GetPromptResult.model_validate(
            {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hello {who}"}}]}
        )


def _lowlevel_v2(late: bool) -> Any:
    from mcp.server.lowlevel import Server

    subscribed: set[str] = set()

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult.model_validate({"tools": TOOLS})

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        text = call_tool(params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def on_list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult.model_validate({"resources": RESOURCES})

    async def on_list_templates(ctx: Any, params: Any) -> Any:
        return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": TEMPLATES})

    async def on_read(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        return types.ReadResourceResult.model_validate(
            {"contents": [{"uri": uri, "mimeType": "text/plain", "text": read_text(uri)}]}
        )

    async def on_subscribe(ctx: Any, params: Any) -> Any:
        subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(ctx: Any, params: Any) -> Any:
        subscribed.discard(str(params.uri))
        return types.EmptyResult()

    server = Server(
        "tracked-lowlevel",
        version="1.2.3",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_templates,
        on_read_resource=on_read,
        on_subscribe_resource=on_subscribe,
        on_unsubscribe_resource=on_unsubscribe,
    )
    if not late:
        add_prompts(server)
    return server


def _fast() -> Any:
    if V2:
        from mcp.server.mcpserver import MCPServer

        server: Any = MCPServer("tracked-fast")
    else:
        from mcp.server.fastmcp import FastMCP

        server = FastMCP("tracked-fast")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def fail() -> str:
        raise ValueError("the tool failed")

    @server.resource("mem://static", name="static", mime_type="text/plain")
    def static() -> str:
        return "static text"

    @server.resource("note://{id}", name="note")
    def note(id: str) -> str:
        return f"note {id}"

    @server.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


def identify_headers(ctx: Any) -> dict[str, Any] | None:
    request = getattr(ctx, "request", None)
    if request is None:
        return None
    return {"id": "user-1", "name": "Test User", "data": {"headers": dict(request.headers)}}


async def _stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    low = getattr(server, "_lowlevel_server", None) or getattr(server, "_mcp_server", server)
    async with stdio_server() as (read, write):
        await low.run(read, write, low.create_initialization_options())


def main(argv: list[str]) -> None:
    import mcplens

    kind, transport, events = argv[:3]
    server = build(kind)
    if "untracked" not in argv[3:]:
        identify = identify_headers if transport == "http" else None
        tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter(events)], identify=identify)
        mcplens.track(server, tracker)
    if transport == "stdio":
        anyio.run(_stdio, server)
        return
    import uvicorn

    app = server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(argv[3]), log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
