"""The resource tools as OpenAI Agents SDK function tools (`pip install "mcplens[openai-agents]"`).

```python
agent = Agent(name="docs", model=model, tools=tools(sessions={"docs": server}))
```

Sessions: connected `mcp.ClientSession`s (1.x, 2.x), 2.x `mcp.Client`s, `fastmcp.Client`s, or
connected `agents.mcp.MCPServer`s (their `session`), by server name. The tools take the core's
strict schema (`strict_json_schema`); `is_enabled` asks the catalog before every model call; a
`mcplens.ToolError` is returned to the model as the tool's output text.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from agents import FunctionTool, RunContextWrapper

import mcplens
from mcplens.integrations import _SPECS, _attach

__all__ = ["tools"]


def _unwrap(session: Any) -> Any:
    mcp = sys.modules.get("agents.mcp")  # an MCPServer's ClientSession
    return session.session if mcp is not None and isinstance(session, mcp.MCPServer) else session


def tools(catalog: mcplens.Catalog | None = None, *, sessions: Mapping[str, Any] | None = None) -> list[FunctionTool]:
    """The resource tools of `catalog` (a new `mcplens.Catalog` if None) over `sessions`."""
    catalog = _attach(catalog, sessions, _unwrap)
    return [_tool(catalog, spec) for spec in _SPECS]


def _tool(catalog: mcplens.Catalog, spec: mcplens.ToolSpec) -> FunctionTool:
    async def call(context: RunContextWrapper[Any], arguments: str) -> str:
        try:
            return await catalog.call_tool(spec.name, arguments)
        except mcplens.ToolError as e:
            return str(e)

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=spec.strict_input_schema,
        on_invoke_tool=call,
        strict_json_schema=True,
        is_enabled=lambda context, agent: spec.name in catalog.visible_tools(),
    )
