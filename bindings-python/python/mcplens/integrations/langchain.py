"""The resource tools for LangChain agents and LangGraph (`pip install "mcplens[langchain]"`).

```python
agent = create_agent(model, middleware=[McplensMiddleware(sessions={"docs": session})])
tools = mcplens.integrations.langchain.tools(sessions={"docs": session})   # LangGraph: bind them yourself
```

Sessions: connected `mcp.ClientSession`s (1.x, 2.x), 2.x `mcp.Client`s or `fastmcp.Client`s, by
server name. `McplensMiddleware` registers the tools with `create_agent` and offers the model, at
each model call, only those the catalog makes visible; `tools()` are the `StructuredTool`s alone
(async: `ainvoke`). A `mcplens.ToolError` is a `ToolException`, handed to the model as an error
`ToolMessage`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.tools import StructuredTool, ToolException

import mcplens
from mcplens.integrations import _SPECS, _attach

__all__ = ["McplensMiddleware", "tools"]


def tools(catalog: mcplens.Catalog | None = None, *, sessions: Mapping[str, Any] | None = None) -> list[StructuredTool]:
    """The resource tools of `catalog` (a new `mcplens.Catalog` if None) over `sessions`."""
    catalog = _attach(catalog, sessions)
    return [_tool(catalog, spec) for spec in _SPECS]


def _tool(catalog: mcplens.Catalog, spec: mcplens.ToolSpec) -> StructuredTool:
    async def call(**arguments: Any) -> str:
        try:
            return await catalog.call_tool(spec.name, arguments)
        except mcplens.ToolError as e:
            raise ToolException(str(e)) from e

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=spec.input_schema,
        coroutine=call,
        handle_tool_error=True,
    )


class McplensMiddleware(AgentMiddleware):
    """`create_agent` middleware: registers the resource tools, offers the visible ones per model call."""

    def __init__(self, catalog: mcplens.Catalog | None = None, *, sessions: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.catalog = _attach(catalog, sessions)
        self.tools = tools(self.catalog)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        hidden = {s.name for s in _SPECS} - set(self.catalog.visible_tools())
        return await handler(
            request.override(tools=[t for t in request.tools if getattr(t, "name", None) not in hidden])
        )
