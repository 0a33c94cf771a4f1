"""Let a model fill in a listed template, then route the read back: python agent_templates.py COMMAND [ARGS...]"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens


async def main(command: str, *args: str) -> None:
    catalog = mcplens.Catalog()
    server = StdioServerParameters(command=command, args=list(args))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        sessions = {"files": session}  # the host's connections, by server name
        await catalog.refresh("files", session)
        # The model lists concrete resources and templates (both tools answer from the catalog) ...
        print(catalog.call_list_resources_tool({"limit": 1}))
        template = json.loads(catalog.call_list_templates_tool({}))["resourceTemplates"][0]["uriTemplate"]
        # ... and fills in the template it picked: one value per variable, then the URI.
        values = {v["name"]: "notes.txt" for v in mcplens.variables(template)}
        uri = mcplens.expand(template, values)
        # The host routes the read to the server whose template the URI fits (most specific first).
        route = catalog.match_uri(uri)["matches"][0]
        print(uri, "->", route["server"], route["values"])
        result = await sessions[route["server"]].read_resource(uri)  # type: ignore[arg-type]
        print(result.contents[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
