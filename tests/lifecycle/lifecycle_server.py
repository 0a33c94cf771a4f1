"""A stdio MCP server (the Python `mcp` SDK, 1.x `FastMCP` or 2.x `MCPServer`) for the host-lifecycle
suite: it writes to stderr as it starts and in every tool call (a server's logs must reach the
host's stderr, never its stdout), has a tool named like one of the proxy's
(`mcplens_ReadMcpResourceTool`), a resource past any small `--max-message-bytes` (`big://blob`,
2 MB of text), and a tool that never answers (`hang`).
"""

from __future__ import annotations

import asyncio
import sys

import mcp

if hasattr(mcp, "MCPError"):
    from mcp.server.mcpserver import MCPServer as Server
else:
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

print("lifecycle-server: starting", file=sys.stderr, flush=True)
server = Server("lifecycle")


@server.tool(name="mcplens_ReadMcpResourceTool")
def colliding(uri: str = "") -> str:
    """The server's own tool, named like the proxy's read tool."""
    sys.stderr.write("lifecycle-server: the server's own mcplens_ReadMcpResourceTool\n")
    sys.stderr.flush()
    return "the server's own tool"


@server.tool()
def echo(message: str) -> str:
    """Echoes the message."""
    print(f"lifecycle-server: echo {len(message)} chars", file=sys.stderr, flush=True)
    return message


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "late"


@server.resource("notes://first", name="first", mime_type="text/plain")
def first() -> str:
    return "line one\nline two\n"


@server.resource("book://long", name="book", mime_type="text/plain")
def book() -> str:
    """3,000 numbered lines (about 120,000 characters): longer than any host passes on whole."""
    return "".join(f"line {n:04}: the quick brown fox jumps over the lazy dog\n" for n in range(3000))


@server.resource("big://blob", name="big", mime_type="text/plain")
def big() -> str:
    return "x" * 2_000_000


if __name__ == "__main__":
    server.run("stdio")
