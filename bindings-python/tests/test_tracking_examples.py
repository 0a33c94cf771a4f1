"""The README's Python server quickstart is the example file, and the example file runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLE = PACKAGE / "examples" / "server_quickstart.py"


def test_readme_quotes_the_server_quickstart() -> None:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    assert f"```python\n{EXAMPLE.read_text(encoding='utf-8')}```" in readme


def test_server_quickstart_records_every_request(tmp_path: Path) -> None:
    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=[str(EXAMPLE)], cwd=str(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            result = await session.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].text == "5"  # type: ignore[union-attr]
            await session.read_resource("note://42")

    anyio.run(main)
    lines = (tmp_path / "mcplens-events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    tracked = [(e["type"], e.get("resourceName")) for e in events if e["type"] != "mcp:initialize"]
    assert tracked == [("mcp:tools/list", None), ("mcp:tools/call", "add"), ("mcp:resources/read", "note://42")]
    assert all(e["server"]["name"] == "notes" and not e["isError"] for e in events)
    assert {e.get("transport") for e in events} == {"stdio"}
