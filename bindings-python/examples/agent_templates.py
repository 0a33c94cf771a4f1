"""Let a model fill in a listed template, then route the read back.

    python agent_templates.py [--fill NAME=VALUE]... COMMAND [ARGS...]

The template is filled with values that exist: the server's completions when it offers them (the
model asks CompleteMcpResourceTemplateTool, variable by variable, with the --fill value as what it
has typed so far), else those of a resource the server lists that fits it, else the --fill values.
It ends with a message, never a traceback, when there is nothing to fill or the read fails."""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens


async def complete(catalog: mcplens.Catalog, t: dict[str, str], given: dict[str, str]) -> dict[str, str] | None:
    """Each variable of template `t` filled with the server's first suggestion, the values chosen
    so far as context; None when it suggests nothing for one."""
    values: dict[str, str] = {}
    for variable in mcplens.variables(t["uriTemplate"]):
        name = variable["name"]
        asked = {"server": t["server"], "uriTemplate": t["uriTemplate"], "variable": name}
        asked |= {"value": given.get(name, ""), "arguments": values}
        suggested = json.loads(await catalog.call_tool(mcplens.COMPLETE_TEMPLATE_TOOL.name, asked))["values"]
        if not suggested:
            return None
        values[name] = suggested[0]
    return values


async def pick(catalog: mcplens.Catalog, given: dict[str, str]) -> tuple[str, dict[str, str]] | str:
    """A template and values for each of its variables, or why there are none."""
    listing = json.loads(catalog.call_list_templates_tool({}))
    templates = listing["resourceTemplates"]
    if not templates:
        return "the server lists no resource templates"
    for t in templates:  # the server says which values exist, when it offers completion
        if t["server"] in listing.get("completion", []) and (values := await complete(catalog, t, given)):
            return t["uriTemplate"], values
    resources = json.loads(catalog.call_list_resources_tool({"limit": 1000}))["resources"]
    for t in templates:  # a listed resource that fits a template gives values that exist
        for r in resources:
            if (values := mcplens.matches(t["uriTemplate"], r["uri"])) is not None:
                return t["uriTemplate"], values
    template = templates[0]["uriTemplate"]
    names = [v["name"] for v in mcplens.variables(template)]
    if missing := [n for n in names if n not in given]:
        return f"no listed resource fits {template}: give {', '.join(f'--fill {n}=VALUE' for n in missing)}"
    return template, {n: given[n] for n in names}


async def main(given: dict[str, str], command: str, *args: str) -> int:
    catalog = mcplens.Catalog()
    server = StdioServerParameters(command=command, args=list(args))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        sessions = {"files": session}  # the host's connections, by server name
        await catalog.refresh("files", session)
        # The model lists concrete resources and templates (both tools answer from the catalog) ...
        print(catalog.call_list_resources_tool({"limit": 1}))
        picked = await pick(catalog, given)
        if isinstance(picked, str):
            print(f"cannot fill a template: {picked}", file=sys.stderr)
            return 1
        # ... and fills in the template it picked: one value per variable, then the URI.
        template, values = picked
        uri = mcplens.expand(template, values)
        # The host routes the read to the server whose template the URI fits (most specific first).
        route = catalog.match_uri(uri)["matches"][0]
        print(uri, "->", route["server"], route["values"])
        try:
            result = await sessions[route["server"]].read_resource(uri)  # type: ignore[arg-type]
        except Exception as e:  # the SDK's McpError (1.x) or MCPError (2.x): the server's refusal
            print(f"the server could not read {uri}: {e}", file=sys.stderr)
            return 1
        print(getattr(result.contents[0], "text", "(binary content)"))
        return 0


if __name__ == "__main__":
    argv, fills = sys.argv[1:], {}
    while argv[:1] == ["--fill"] and len(argv) > 1:
        name, _, value = argv[1].partition("=")
        fills[name], argv = value, argv[2:]
    if not argv:
        sys.exit(__doc__)
    sys.exit(anyio.run(main, fills, *argv))
