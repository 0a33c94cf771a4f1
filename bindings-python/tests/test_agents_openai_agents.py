"""`mcplens.integrations.openai_agents` in the OpenAI Agents SDK's own run loop (`Runner.run`,
tracing off): a `Model` returning the `Script`'s steps (agents_support.py), against the real
`servers/agent_server.py` over stdio, through an `mcp.ClientSession` and through an `MCPServerStdio`."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool, set_tracing_disabled
from agents.mcp import MCPServerStdio
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import mcplens
from agents_support import (
    ALL_TOOLS,
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
from mcplens.integrations.openai_agents import tools
from support import SERVERS, over_stdio

pytestmark = pytest.mark.anyio
set_tracing_disabled(True)


class ScriptedModel(Model):
    """Answers each model call with the script's next step; a tool call fills every property of
    the tool's strict schema, as a strict model must (`null` for what the step leaves out)."""

    def __init__(self, script: Script) -> None:
        self.script = script

    async def get_response(
        self, system_instructions: Any, input: Any, model_settings: Any, tools: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = input if isinstance(input, list) else []
        last_call = max((i for i, item in enumerate(items) if item.get("type") == "function_call"), default=-1)
        outputs = [str(item["output"]) for item in items[last_call + 1 :] if item.get("type") == "function_call_output"]
        step = self.script.next([t.name for t in tools], outputs)
        if isinstance(step, str):
            text = ResponseOutputText(type="output_text", text=step, annotations=[])
            output: Any = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            schema = next(t for t in tools if t.name == step.tool).params_json_schema
            arguments = {name: step.arguments.get(name) for name in schema["properties"]}
            n = len(self.script.calls)
            output = ResponseFunctionToolCall(
                type="function_call", id=f"fc_{n}", call_id=f"call_{n}", name=step.tool, arguments=json.dumps(arguments)
            )
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


async def run(script: Script, agent_tools: list[Any]) -> str:
    agent = Agent(name="reader", model=ScriptedModel(script), tools=agent_tools)
    result = await Runner.run(agent, "What does note 42 say?", run_config=RunConfig(tracing_disabled=True))
    return str(result.final_output)


async def test_reads_a_template_filled_in_from_the_listing() -> None:
    catalog = mcplens.Catalog()
    async with connect("session", "docs") as session:

        @function_tool
        async def connect_docs() -> str:
            """Connects the docs server."""
            catalog.watch("docs", session)
            return "connected"

        script = Script([call("connect_docs"), *read_plan("docs")])
        final = await run(script, [connect_docs, *tools(catalog)])
        refused = await refusal(catalog, "docs")
    # `is_enabled` asks the catalog before each model call: no resource tool until a server offers resources.
    assert script.offered[0] == ["connect_docs"]
    assert script.offered[1] == sorted(["connect_docs", *RESOURCE_TOOLS])
    check_read(script, final, "docs", refused)


async def test_strict_schema_is_the_cores() -> None:
    for function_tool_, name in zip(tools(), ALL_TOOLS, strict=True):
        assert (function_tool_.name, function_tool_.strict_json_schema) == (name, True)
        assert function_tool_.params_json_schema == mcplens.tool_spec(name).strict_input_schema


async def test_fills_a_template_from_the_servers_completions() -> None:
    """The strict schema gives the context as `{name, value}` pairs; the core reads them as the map."""
    async with over_stdio("complete_server.py") as session:
        script = Script(complete_plan("notes", pairs=True))
        final = await run(script, tools(sessions={"notes": session}))
    check_complete(script, final)


async def test_hostile_server_through_an_mcp_server() -> None:
    params = {"command": sys.executable, "args": [str(SERVERS / "agent_server.py"), "hostile"]}
    async with MCPServerStdio(params) as server:
        script = Script(hostile_plan("evil"))
        await run(script, tools(sessions={"evil": server}))
    check_hostile(script)


async def test_no_tools_while_no_server_offers_resources() -> None:
    async with over_stdio("sdk_server.py", "no_capability") as session:
        script = Script([lambda script: "nothing to read"])
        assert await run(script, tools(sessions={"plain": session})) == "nothing to read"
    assert script.offered == [[]]


async def test_readme_example() -> None:
    script = Script(example_plan("docs"))
    answer = await example("openai_agents_agent").ask("What does note 42 say?", ScriptedModel(script), DOCS_COMMAND)
    assert NOTE_TEXT in answer
    assert script.offered[0] == sorted(RESOURCE_TOOLS)


async def test_a_uri_the_model_knows_reads_on_its_first_call() -> None:
    """The read is the model's first call: the catalog is made current before it authorizes."""
    script = Script(read_first_plan("docs"))
    answer = await example("openai_agents_agent").ask("What does note 42 say?", ScriptedModel(script), DOCS_COMMAND)
    assert [c.tool for c in script.calls] == [READ]
    assert NOTE_TEXT in answer
