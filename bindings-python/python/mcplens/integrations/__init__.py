"""Agent-framework adapters: the resource tools as a framework's own tools, one optional subpath each.

- `mcplens.integrations.pydantic_ai`: `McplensToolset`, a Pydantic AI toolset (extra `pydantic-ai`);
- `mcplens.integrations.langchain`: `McplensMiddleware` for `create_agent`, and `tools()` for
  LangGraph (extra `langchain`);
- `mcplens.integrations.openai_agents`: `tools()`, OpenAI Agents SDK function tools (extra
  `openai-agents`).

Each converts and nothing else: names, descriptions, schemas, which tools are visible, validation,
caps and sanitizing all come from the core (the tools' `ToolSpec`s, `Catalog.visible_tools`,
`Catalog.call_tool`); a refusal (`mcplens.ToolError`) reaches the model as the framework's tool error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcplens._catalog import Catalog
from mcplens._core import ToolSpec, tool_specs

# Every resource tool, in the order `Catalog.visible_tools()` names them.
_SPECS: tuple[ToolSpec, ...] = tuple(tool_specs())  # the core's list, in its order


def _attach(
    catalog: Catalog | None, sessions: Mapping[str, Any] | None, unwrap: Callable[[Any], Any] | None = None
) -> Catalog:
    """`catalog` (a new one if None) with each of `sessions` watched under its name; `unwrap` turns a
    framework's MCP object into the SDK session or client it holds."""
    catalog = Catalog() if catalog is None else catalog
    for name, session in (sessions or {}).items():
        catalog.watch(name, session if unwrap is None else unwrap(session))
    return catalog
