"""List an MCP server's resource templates, bounded and sanitized: python quickstart.py COMMAND [ARGS...]"""

import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens


async def main(command: str, *args: str) -> None:
    server = StdioServerParameters(command=command, args=list(args))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        limits = mcplens.Limits(deadline_seconds=10)
        try:
            listing = await mcplens.list_resource_templates(session, server="docs", limits=limits)
        except mcplens.DiscoveryError as e:
            sys.exit(f"discovery failed: {e.code}")
    for template in listing.items:
        print(template.uri_template, "-", template.name)
    print(f"{len(listing)} templates in {listing.diagnostics['pages']} pages")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
