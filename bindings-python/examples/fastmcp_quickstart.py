"""A community fastmcp server tracked by mcplens, and its templates listed through fastmcp.Client:
python fastmcp_quickstart.py (serves stdio) · python fastmcp_quickstart.py --list (runs itself)"""

import sys

import anyio
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StdioTransport

import mcplens

server = FastMCP("notes")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.resource("note://{id}")
def note(id: str) -> str:
    """A note by its id."""
    return f"Note {id}"


# One line: every request fastmcp answers becomes an event, as sent on the wire.
mcplens.track(server, exporters=[mcplens.JsonlExporter("mcplens-events.jsonl")], transport="stdio")


async def list_templates() -> None:
    this_file_as_server = StdioTransport(sys.executable, [__file__], keep_alive=False)
    async with Client(this_file_as_server) as client:
        listing = await mcplens.list_resource_templates(client, server="notes")
    for template in listing:
        print(template.uri_template, "-", template.name)


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        anyio.run(list_templates)
    else:
        server.run(show_banner=False)
