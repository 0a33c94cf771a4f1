"""Give a model the resource-template listing tool, kept current: python agent_tool.py COMMAND [ARGS...]"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens

SPEC = mcplens.LIST_RESOURCE_TEMPLATES_TOOL
# The tool as the model API expects it (here the Anthropic Messages shape; OpenAI: "parameters").
TOOLS = [{"name": SPEC.name, "description": SPEC.description, "input_schema": SPEC.input_schema}]


def model(messages: list[dict], tools: list[dict]) -> dict | None:
    """Stands in for the LLM: pages through the listing five templates at a time, then answers."""
    offset = 0
    if (last := messages[-1])["role"] == "tool":
        if last["is_error"] or "nextOffset" not in (result := json.loads(last["content"])):
            return None
        offset = result["nextOffset"]
    return {"name": tools[0]["name"], "input": {"offset": offset, "limit": 5}}


async def main(command: str, *args: str) -> None:
    catalog = mcplens.Catalog(limits=mcplens.Limits(deadline_seconds=10))
    server = StdioServerParameters(command=command, args=list(args))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await catalog.refresh("docs", session)  # resources + templates, committed together
        catalog.watch("docs", session)  # list_changed → refreshed; connection closed → invalidated
        messages = [{"role": "user", "content": "Which documents can you read?"}]
        while (call := model(messages, TOOLS)) is not None:
            try:
                content, is_error = catalog.call_list_templates_tool(call["input"]), False
            except mcplens.McplensError as e:  # unknown_server, invalid_argument, output_too_large
                content, is_error = f"{e.code}: {e}", True
            messages.append({"role": "tool", "name": call["name"], "content": content, "is_error": is_error})
            print(content)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
