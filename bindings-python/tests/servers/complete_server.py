"""The installed SDK's high-level server (1.x `FastMCP`, 2.x `MCPServer`) whose resource template
completes: `notes://{folder}/{name}` — `folder` from the folders, `name` from the notes of the
folder already chosen (the request's context). Over stdio: `python complete_server.py`."""

from __future__ import annotations

from typing import Any

import mcp
from mcp.types import Completion, ResourceTemplateReference

if hasattr(mcp, "MCPError"):
    from mcp.server.mcpserver import MCPServer as Server
else:
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[assignment]

NOTES = {"work": ["launch", "budget"], "home": ["garden"]}
server: Any = Server("notes")


@server.resource("notes://{folder}/{name}", name="notes", mime_type="text/plain")
def note(folder: str, name: str) -> str:
    return f"{folder}/{name}: the launch moved to Tuesday." if name == "launch" else f"{folder}/{name}"


@server.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
    if not isinstance(ref, ResourceTemplateReference):
        return None
    if argument.name == "folder":
        values = list(NOTES)
    else:
        chosen = (getattr(context, "arguments", None) or {}).get("folder")
        values = NOTES.get(chosen, [n for notes in NOTES.values() for n in notes])
    return Completion(values=[v for v in values if v.startswith(argument.value)])


if __name__ == "__main__":
    server.run()
