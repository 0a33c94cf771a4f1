"""`mcplens.integrations.pydantic_ai` in Pydantic AI's own agent loop: a `FunctionModel` driven by
the `Script` (agents_support.py), against the real `servers/agent_server.py` over stdio, through an
`mcp.ClientSession` and through an `MCPToolset`'s `fastmcp.Client`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic_ai import Agent, RunContext
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import mcplens
from agents_support import (
    COMPLETE,
    DOCS_COMMAND,
    LIST_TEMPLATES,
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
from mcplens.integrations.pydantic_ai import McplensToolset
from support import over_stdio

pytestmark = pytest.mark.anyio
HOSTILE = Path(__file__).resolve().parents[2] / "tests" / "servers" / "hostile" / "server.py"


def model(script: Script) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        outputs = [
            p.model_response_str() if isinstance(p, ToolReturnPart) else p.model_response()
            for p in messages[-1].parts
            if isinstance(p, (ToolReturnPart, RetryPromptPart))
        ]
        step = script.next([t.name for t in info.function_tools], outputs)
        return ModelResponse(
            parts=[TextPart(step) if isinstance(step, str) else ToolCallPart(step.tool, step.arguments)]
        )

    return FunctionModel(respond)


async def test_reads_a_template_filled_in_from_the_listing() -> None:
    catalog = mcplens.Catalog()
    async with connect("session", "docs") as session:
        script = Script([call("connect_docs"), *read_plan("docs")])
        agent = Agent(model(script), toolsets=[McplensToolset(catalog)])

        @agent.tool
        async def connect_docs(ctx: RunContext[Any]) -> str:
            catalog.watch("docs", session)
            return "connected"

        final = (await agent.run("What does note 42 say?")).output
        refused = await refusal(catalog, "docs")
    # The tools are asked of the catalog before each model request: none until a server with resources.
    assert script.offered[0] == ["connect_docs"]
    assert script.offered[1] == sorted(["connect_docs", *RESOURCE_TOOLS])
    check_read(script, final, "docs", refused)


async def test_fills_a_template_from_the_servers_completions() -> None:
    async with over_stdio("complete_server.py") as session:
        script = Script(complete_plan("notes"))
        agent = Agent(model(script), toolsets=[McplensToolset(sessions={"notes": session})])
        final = (await agent.run("What does the launch note say?")).output
    check_complete(script, final)


async def test_hostile_server_through_an_mcp_toolset() -> None:
    async with connect("fastmcp", "hostile") as client, MCPToolset(client) as server:
        script = Script(hostile_plan("evil"))
        agent = Agent(model(script), toolsets=[server, McplensToolset(sessions={"evil": server})])
        await agent.run("Read the evil note and the big file.")
    check_hostile(script)


async def test_no_tools_while_no_server_offers_resources() -> None:
    async with over_stdio("sdk_server.py", "no_capability") as session:
        script = Script([lambda script: "nothing to read"])
        agent = Agent(model(script), toolsets=[McplensToolset(sessions={"plain": session})])
        assert (await agent.run("Anything?")).output == "nothing to read"
    assert script.offered == [[]]


async def test_readme_example() -> None:
    script = Script(example_plan("docs"))
    answer = await example("pydantic_ai_agent").ask("What does note 42 say?", model(script), DOCS_COMMAND)
    assert NOTE_TEXT in answer
    assert script.offered[0] == sorted(RESOURCE_TOOLS)


async def test_a_uri_the_model_knows_reads_on_its_first_call() -> None:
    """The read is the model's first call: the catalog is made current before it authorizes."""
    script = Script(read_first_plan("docs"))
    answer = await example("pydantic_ai_agent").ask("What does note 42 say?", model(script), DOCS_COMMAND)
    assert [c.tool for c in script.calls] == [READ]
    assert NOTE_TEXT in answer


async def test_a_hostile_completion_server_reaches_the_model_bounded() -> None:
    """tests/servers/hostile/server.py --completions in Pydantic AI's loop: 10,000 values and unsafe
    values reach the model as 100 values and counts, never as sent; a -32603 is a tool failure the
    run goes on from."""
    params = StdioServerParameters(command=sys.executable, args=[str(HOSTILE), "--case", "good", "--completions"])
    asked = {"server": "srv", "uriTemplate": "file:///{path}", "variable": "path"}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        script = Script(
            [
                call(LIST_TEMPLATES, server="srv"),
                call(COMPLETE, **asked, value="many"),
                call(COMPLETE, **asked, value="evil"),
                call(COMPLETE, **asked, value="boom"),
                lambda s: "done",
            ]
        )
        agent = Agent(model(script), toolsets=[McplensToolset(sessions={"srv": session})])
        assert (await agent.run("Complete the path.")).output == "done"
    many, evil, boom = (script.output(COMPLETE, n) for n in range(3))
    assert len(json.loads(many)["values"]) == 100
    assert json.loads(many)["omitted"] == {"cut": 9_900}
    assert json.loads(evil)["values"] == ["fine"]
    assert all("\x1b" not in s and "\u202e" not in s for s in script.seen)
    assert "server_error" in boom or "JSON-RPC error -32603" in boom
