"""`mcplens.integrations.langchain` in LangChain's own agent loop (`create_agent`, on LangGraph): a
scripted chat model driven by the `Script` (agents_support.py), against the real
`servers/agent_server.py` over stdio, through a `fastmcp.Client` and through an `mcp.ClientSession`."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

import mcplens
from agents_support import (
    DOCS_COMMAND,
    NOTE_TEXT,
    READ,
    RESOURCE_TOOLS,
    Script,
    call,
    check_complete,
    check_hostile,
    check_read,
    complete_plan,
    connect,
    example,
    example_plan,
    hostile_plan,
    read_first_plan,
    read_plan,
    refusal,
)
from mcplens.integrations.langchain import McplensMiddleware
from support import over_stdio

pytestmark = pytest.mark.anyio


class ScriptedChatModel(BaseChatModel):
    """Answers each model call with the script's next step; sees the tools bound for that call."""

    script: Any

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Runnable[Any, Any]:
        return self.bind(tool_names=[convert_to_openai_tool(t)["function"]["name"] for t in tools])

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        last_ai = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
        outputs = [str(m.content) for m in messages[last_ai + 1 :] if isinstance(m, ToolMessage)]
        step = self.script.next(kwargs.get("tool_names", []), outputs)
        if isinstance(step, str):
            message = AIMessage(content=step)
        else:
            tool_call = {
                "name": step.tool,
                "args": step.arguments,
                "id": f"call_{len(self.script.calls)}",
                "type": "tool_call",
            }
            message = AIMessage(content="", tool_calls=[tool_call])
        return ChatResult(generations=[ChatGeneration(message=message)])


async def run(script: Script, middleware: McplensMiddleware, tools: list[Any] | None = None) -> str:
    agent = create_agent(ScriptedChatModel(script=script), tools=tools or [], middleware=[middleware])
    result = await agent.ainvoke({"messages": [HumanMessage("What does note 42 say?")]})
    return str(result["messages"][-1].content)


async def test_reads_a_template_filled_in_from_the_listing() -> None:
    catalog = mcplens.Catalog()
    async with connect("fastmcp", "docs") as client:

        @tool
        async def connect_docs() -> str:
            """Connects the docs server."""
            catalog.watch("docs", client)
            return "connected"

        script = Script([call("connect_docs"), *read_plan("docs")])
        final = await run(script, McplensMiddleware(catalog), [connect_docs])
        refused = await refusal(catalog, "docs")
    # The middleware asks the catalog at each model call: no resource tool until a server offers resources.
    assert script.offered[0] == ["connect_docs"]
    assert script.offered[1] == sorted(["connect_docs", *RESOURCE_TOOLS])
    check_read(script, final, "docs", refused)


async def test_fills_a_template_from_the_servers_completions() -> None:
    async with over_stdio("complete_server.py") as session:
        script = Script(complete_plan("notes"))
        final = await run(script, McplensMiddleware(sessions={"notes": session}))
    check_complete(script, final)


async def test_hostile_server_through_a_client_session() -> None:
    async with connect("session", "hostile") as session:
        script = Script(hostile_plan("evil"))
        await run(script, McplensMiddleware(sessions={"evil": session}))
    check_hostile(script)


async def test_no_tools_while_no_server_offers_resources() -> None:
    async with over_stdio("sdk_server.py", "no_capability") as session:
        script = Script([lambda script: "nothing to read"])
        assert await run(script, McplensMiddleware(sessions={"plain": session})) == "nothing to read"
    assert script.offered == [[]]


async def test_readme_example() -> None:
    script = Script(example_plan("docs"))
    answer = await example("langchain_agent").ask(
        "What does note 42 say?", ScriptedChatModel(script=script), DOCS_COMMAND
    )
    assert NOTE_TEXT in answer
    assert script.offered[0] == sorted(RESOURCE_TOOLS)


async def test_a_uri_the_model_knows_reads_on_its_first_call() -> None:
    """The read is the model's first call: the catalog is made current before it authorizes."""
    script = Script(read_first_plan("docs"))
    answer = await example("langchain_agent").ask(
        "What does note 42 say?", ScriptedChatModel(script=script), DOCS_COMMAND
    )
    assert [c.tool for c in script.calls] == [READ]
    assert NOTE_TEXT in answer
