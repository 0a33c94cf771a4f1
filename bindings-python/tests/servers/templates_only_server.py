"""A server that offers resource templates and nothing else (no resource listed, no tool): the kind a
host that never sends `resources/templates/list` cannot see. The installed SDK's high-level server
(1.x `FastMCP`, 2.x `MCPServer`), over stdio: `python templates_only_server.py`."""

from __future__ import annotations

from typing import Any

import mcp

if hasattr(mcp, "MCPError"):
    from mcp.server.mcpserver import MCPServer as Server
else:
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[assignment]

server: Any = Server("files")


@server.resource("file:///{path}", name="files", description="A file by its path", mime_type="text/plain")
def read_file(path: str) -> str:
    return f"contents of {path}"


if __name__ == "__main__":
    server.run("stdio")
