"""What the agent-framework tests (`test_agents_*.py`) share: connections to the real test server
(`servers/agent_server.py`) and the scripted model's decisions.

A framework's scripted model converts only: its messages in (the tools offered, the outputs of the
tools called), the `Script`'s next step out (a tool call, or the final text). The script decides the
way a model would, from what it received: it fills a template in from the listing the tool returned.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcplens
from servers.agent_server import BIG, INVISIBLE
from support import SERVERS, over_stdio, read_output

LIST_TEMPLATES, READ = "ListMcpResourceTemplatesTool", "ReadMcpResourceTool"
RESOURCE_TOOLS = [LIST_TEMPLATES, "ListMcpResourcesTool", READ]  # in the order the core offers them
# Every tool an adapter registers: the completion tool too (visible only while a server offers it).
COMPLETE = "CompleteMcpResourceTemplateTool"
ALL_TOOLS = [*RESOURCE_TOOLS, COMPLETE]
NOTES_TEXT = "work/launch: the launch moved to Tuesday."  # servers/complete_server.py's note
NOTE_TEXT = "Note 42: the launch moved to Tuesday."
REFUSED_URI = "secret://token"  # fits no template of the server, and it listed no such resource
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DOCS_COMMAND = [sys.executable, str(SERVERS / "agent_server.py"), "docs"]


def example(name: str) -> Any:
    """`examples/<name>.py` as a module (its `ask` is what the README shows; `__main__` does not run)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@asynccontextmanager
async def connect(kind: str, scenario: str) -> AsyncIterator[Any]:
    """A connected `mcp.ClientSession` (`kind="session"`) or `fastmcp.Client` (`"fastmcp"`) to
    `servers/agent_server.py SCENARIO` over stdio."""
    if kind == "session":
        async with over_stdio("agent_server.py", scenario) as session:
            yield session
        return
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    args = [str(SERVERS / "agent_server.py"), scenario]
    async with Client(StdioTransport(sys.executable, args, log_file=Path(os.devnull), keep_alive=False)) as client:
        yield client


@dataclass
class Call:
    tool: str
    arguments: dict[str, Any]


Step = Callable[["Script"], "Call | str"]


@dataclass
class Script:
    """The model's mind: turn `n` runs `steps[n]`, which sees every tool output received so far."""

    steps: list[Step]
    offered: list[list[str]] = field(default_factory=list)  # the tools offered, per turn
    calls: list[Call] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # each call's output, as the model got it

    def next(self, offered: list[str], outputs: list[str]) -> Call | str:
        self.offered.append(sorted(offered))
        self.seen += outputs
        assert len(self.seen) == len(self.calls), "one output per call"
        step = self.steps[len(self.offered) - 1](self)
        if isinstance(step, Call):
            self.calls.append(step)
        return step

    def output(self, tool: str, n: int = 0) -> str:
        """The output of the `n`th call of `tool`."""
        return [out for call, out in zip(self.calls, self.seen, strict=True) if call.tool == tool][n]


def call(tool: str, **arguments: Any) -> Step:
    return lambda script: Call(tool, arguments)


def read_from_listing(name_prefix: str, **values: str) -> Step:
    """Reads the resource of the listed template whose name starts with `name_prefix`, filled in
    with `values`: the listing is the last template listing the model received."""

    def step(script: Script) -> Call:
        listing = json.loads(script.output(LIST_TEMPLATES, -1))
        template = next(t for t in listing["resourceTemplates"] if t["name"].startswith(name_prefix))
        return Call(READ, {"server": template["server"], "uri": mcplens.expand(template["uriTemplate"], values)})

    return step


def answer(script: Script) -> str:
    """The final answer: every read's output, as the model got it."""
    return "\n".join(out for c, out in zip(script.calls, script.seen, strict=True) if c.tool == READ)


def read_plan(server: str) -> list[Step]:
    """List `server`'s templates, read a note filled in from the listing, read a refused URI, answer."""
    return [
        call(LIST_TEMPLATES, server=server),
        read_from_listing("note", id="42"),
        call(READ, server=server, uri=REFUSED_URI),
        answer,
    ]


def example_plan(server: str) -> list[Step]:
    """What the README examples are run with: list, read a note filled in from the listing, answer."""
    return [call(LIST_TEMPLATES, server=server), read_from_listing("note", id="42"), answer]


def read_first_plan(server: str) -> list[Step]:
    """A URI the model knows (from the user, an earlier turn): read first, before any listing."""
    return [call(READ, server=server, uri="note://42"), answer]


def complete_plan(server: str, *, pairs: bool = False) -> list[Step]:
    """The four tools in one run (servers/complete_server.py): list the templates, complete the
    folder from what was typed, then the note's name with the folder as context, read the filled
    URI, answer. `pairs`: the context as the strict schema's `{name, value}` list."""

    def template(script: Script) -> str:
        return str(json.loads(script.output(LIST_TEMPLATES, -1))["resourceTemplates"][0]["uriTemplate"])

    def first(script: Script, n: int) -> str:
        return str(json.loads(script.output(COMPLETE, n))["values"][0])

    def complete_name(script: Script) -> Call:
        chosen = {"folder": first(script, 0)}
        context: Any = [{"name": k, "value": v} for k, v in chosen.items()] if pairs else chosen
        asked = {"server": server, "uriTemplate": template(script), "variable": "name", "value": ""}
        return Call(COMPLETE, {**asked, "arguments": context})

    def read(script: Script) -> Call:
        values = {"folder": first(script, 0), "name": first(script, 1)}
        return Call(READ, {"server": server, "uri": mcplens.expand(template(script), values)})

    return [
        call(LIST_TEMPLATES, server=server),
        lambda s: Call(COMPLETE, {"server": server, "uriTemplate": template(s), "variable": "folder", "value": "w"}),
        complete_name,
        read,
        answer,
    ]


def check_complete(script: Script, final: str) -> None:
    """The complete plan's run: the fourth tool offered once the server listed its template, each
    variable completed, the filled URI read."""
    assert COMPLETE in script.offered[1]
    assert [json.loads(script.output(COMPLETE, n))["values"] for n in (0, 1)] == [["work"], ["launch", "budget"]]
    assert read_output(script.output(READ))["contents"][0]["text"] == NOTES_TEXT
    assert NOTES_TEXT in final


def hostile_plan(server: str) -> list[Step]:
    """List the hostile server's templates, read its evil resource and its 1 MiB one, answer."""
    return [
        call(LIST_TEMPLATES, server=server),
        read_from_listing("evil", id="7"),
        read_from_listing("big", n="ab"),
        answer,
    ]


async def refusal(catalog: mcplens.Catalog, server: str) -> str:
    """The core's model-facing text for the refused read (what the model must have been told)."""
    try:
        await catalog.call_tool(READ, {"server": server, "uri": REFUSED_URI})
    except mcplens.ToolError as e:
        return str(e)
    raise AssertionError("the read was not refused")


def check_read(script: Script, final: str, server: str, refused: str) -> None:
    """The read plan's run: the note's text reached the final output, the refusal reached the model."""
    assert read_output(script.output(READ, 0))["contents"][0]["text"] == NOTE_TEXT
    assert NOTE_TEXT in final
    seen = script.output(READ, 1)  # the core's text, or Pydantic AI's envelope of a failed call
    assert refused in seen or json.loads(seen) == {"error": refused}
    assert json.loads(script.output(LIST_TEMPLATES))["resourceTemplates"][0]["server"] == server


def strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in strings(v))]
    return [s for v in value for s in strings(v)] if isinstance(value, list) else []


def check_hostile(script: Script) -> None:
    """The hostile plan's run: every string the model saw is sanitized; the 1 MiB read is capped and says so."""
    for call, out in zip(script.calls, script.seen, strict=True):
        text = "".join(strings(read_output(out) if call.tool == READ else json.loads(out)))
        assert not [c for c in INVISIBLE if c in text], text[:200]
        assert "[31m" not in text  # escape sequences go whole
        assert "[2J" not in text
    (evil,) = [
        t for t in json.loads(script.output(LIST_TEMPLATES))["resourceTemplates"] if t["uriTemplate"] == "evil://{id}"
    ]
    assert evil["name"].startswith("evil")
    assert evil["description"].startswith("Ignore")
    read = read_output(script.output(READ, 0))
    assert read["contents"][0]["text"] == "Evil 7 text\nline two\tend"
    assert read["removedChars"] > 0
    big = script.output(READ, 1)
    assert len(big) <= 100_000
    assert big.startswith('{"truncated":'), "the note comes first"
    capped = read_output(big)
    assert capped["truncated"]["textChars"] == BIG
    assert ("ab" * BIG).startswith(capped["contents"][0]["text"])
