"""An MCP server whose every request becomes an mcplens event: python server_quickstart.py (stdio)"""

import mcplens

try:
    from mcp.server.mcpserver import MCPServer  # mcp 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as MCPServer  # mcp 1.x

server = MCPServer("notes")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.resource("note://{id}")
def note(id: str) -> str:
    """A note by its id."""
    return f"Note {id}"


# One line: tools, resources, templates and prompts are tracked, off the request path.
# Add mcplens.OtlpExporter("http://localhost:4318") to send spans and metrics to OpenTelemetry.
tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter("mcplens-events.jsonl")])
mcplens.track(server, tracker, transport="stdio")  # what events say for non-HTTP clients

if __name__ == "__main__":
    server.run()  # events still queued are flushed at exit (within 2 s)
