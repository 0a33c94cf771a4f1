"""The resource tools as a Pydantic AI toolset (`pip install "mcplens[pydantic-ai]"`).

```python
toolset = McplensToolset(sessions={"docs": session})   # or catalog=..., or a connected MCPToolset
agent = Agent(model, toolsets=[toolset])
```

Sessions: connected `mcp.ClientSession`s (1.x, 2.x), 2.x `mcp.Client`s, `fastmcp.Client`s, or
entered `pydantic_ai.mcp.MCPToolset`s (their `fastmcp.Client`), by server name. The tools offered
are asked of the catalog before every model request (`get_tools`); a `mcplens.ToolError` is a
`ToolFailed` the model reads.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from pydantic_ai import RunContext, ToolDefinition, ToolFailed
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

import mcplens
from mcplens.integrations import _SPECS, _attach

__all__ = ["McplensToolset"]

# The arguments reach the core as the model sent them: it validates them.
_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


def _unwrap(session: Any) -> Any:
    mcp = sys.modules.get("pydantic_ai.mcp")  # an MCPToolset's fastmcp.Client
    return session.client if mcp is not None and isinstance(session, mcp.MCPToolset) else session


class McplensToolset(AbstractToolset[Any]):
    """The resource tools of `catalog` (a new `mcplens.Catalog` if None) over `sessions`."""

    def __init__(
        self,
        catalog: mcplens.Catalog | None = None,
        *,
        sessions: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> None:
        self.catalog = _attach(catalog, sessions, _unwrap)
        self._id = id

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        visible = self.catalog.visible_tools()
        return {s.name: self._tool(s) for s in _SPECS if s.name in visible}

    def _tool(self, s: mcplens.ToolSpec) -> ToolsetTool[Any]:
        definition = ToolDefinition(name=s.name, description=s.description, parameters_json_schema=s.input_schema)
        return ToolsetTool(toolset=self, tool_def=definition, max_retries=1, args_validator=_ARGS)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        try:
            return await self.catalog.call_tool(name, tool_args)
        except mcplens.ToolError as e:
            raise ToolFailed(str(e)) from e
