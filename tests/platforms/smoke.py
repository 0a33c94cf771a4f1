"""`make test-platforms`, the Python half of the smoke suite, run by each CPython line's fresh venv.

    VENV/bin/python smoke.py COMMAND [ARGS...]      (a stdio MCP server: server-everything)

Over one stdio connection (the `mcp` SDK's client): both bounded traversals, then the catalog's
refresh and the model-facing tool answered from it. Prints one JSON object; tests/platforms/run.py
holds it to what the pinned server offers. Nothing is asserted here, so a wrong answer is reported
with everything it said.
"""

import json
import sys
from importlib import metadata

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens


async def main(command: str, *args: str) -> None:
    server = StdioServerParameters(command=command, args=list(args))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        limits = mcplens.Limits(deadline_seconds=30)
        templates = await mcplens.list_resource_templates(session, server="everything", limits=limits)
        resources = await mcplens.list_resources(session, server="everything", limits=limits)
        catalog = mcplens.Catalog()
        status = await catalog.refresh("everything", session)
        tool = json.loads(catalog.call_list_templates_tool({"server": "everything"}))
    wheel = metadata.distribution("mcplens").read_text("WHEEL") or ""
    print(
        json.dumps(
            {
                "python": ".".join(map(str, sys.version_info[:2])),
                "module": mcplens._core.__file__,
                "tags": sorted(line.split(": ", 1)[1] for line in wheel.splitlines() if line.startswith("Tag: ")),
                "templates": [t.uri_template for t in templates.items],
                "resources": len(resources.items),
                "status": {"status": status.status, "templates": status.templates, "resources": status.resources},
                "tool": {"total": tool["total"], "templates": [t["uriTemplate"] for t in tool["resourceTemplates"]]},
            }
        )
    )


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
