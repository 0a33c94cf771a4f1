"""The demo's MCP server: resources, resource templates and tools, tracked by mcplens.

It runs on the official Python `mcp` SDK (2.x `MCPServer`, or 1.x `FastMCP`) over stdio. One line,
`mcplens.track(server)`, records every operation to ./mcplens-events.jsonl (the default exporter).
The tool `add_topic` registers a new resource template and sends notifications/resources/list_changed.
"""

from __future__ import annotations

from typing import Any

import mcp

import mcplens

if hasattr(mcp, "MCPError"):  # mcp 2.x
    from mcp.server.mcpserver import Context, MCPServer as Server
else:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP as Server  # type: ignore[no-redef]

server: Any = Server("notes-demo")

NOTES = {
    ("rust", "1"): "Ownership makes memory safety a compile-time property.",
    ("python", "7"): "asyncio and anyio both drive the mcp SDK.",
}


@server.resource("notes://{topic}/{id}", name="note", description="A note, by topic and number.", mime_type="text/plain")
def note(topic: str, id: str) -> str:
    text = NOTES.get((topic, id))
    if text is None:
        raise ValueError(f"no note {topic}/{id}")
    return text


@server.resource("docs://readme", name="readme", description="What this server offers.", mime_type="text/markdown")
def readme() -> str:
    return "# notes-demo\nNotes by topic: read notes://{topic}/{id}."


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
async def add_topic(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Offer a new template for notes of one topic, and tell clients the list changed."""

    def topic_note(id: str) -> str:
        return f"{name} note {id}"

    server.resource(f"topics://{name}/{{id}}", name=f"{name}-note", description=f"Notes about {name}.")(topic_note)
    if hasattr(ctx, "notify_resources_changed"):
        await ctx.notify_resources_changed()
    await ctx.session.send_resource_list_changed()
    return f"added topics://{name}/{{id}}"


if __name__ == "__main__":
    mcplens.track(server)
    server.run("stdio")
