"""Client-mode smoke test (Python, mcp 1.x): `conformance client --command "python client_v1.py"`.

The suite runs this with the mock server's URL as the last argument and the scenario in
MCP_CONFORMANCE_SCENARIO. It connects with the SDK, runs `mcplens.list_resource_templates` and
`mcplens.list_resources`, calls `add_numbers` in `tools_call`, and prints one JSON report line (the
suite saves stdout; the driver reads it). A discovery failure is reported, never fatal.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

import mcplens


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    report: dict[str, Any] = {"client": "python", "scenario": scenario, "discovery": {}}
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        for kind, list_ in (
            ("resourceTemplates", mcplens.list_resource_templates),
            ("resources", mcplens.list_resources),
        ):
            try:
                listing = await list_(session, server="conformance-mock")
                report["discovery"][kind] = {
                    "support": listing.support,
                    "items": len(listing),
                    "requests": listing.diagnostics["requests"],
                }
            except mcplens.DiscoveryError as e:
                report["discovery"][kind] = {"error": e.code}
        if scenario == "tools_call":
            result = await session.call_tool("add_numbers", {"a": 2, "b": 3})
            first = result.content[0] if result.content else None
            report["toolsCall"] = first.text if isinstance(first, TextContent) else None
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
