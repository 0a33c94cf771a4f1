"""The Python half of the cross-language tracking scenario (`tests/vectors/tracking/scenario/`).

`scenario.json` describes a server, a client and the requests it sends; Node runs it
(`run-scenario.mjs`) and commits its normalized events as `expected.jsonl`. Here the same scenario
runs against a tracked Python server on the installed SDK major, over in-memory streams, with
default tracking options (redaction on, parameters and responses captured, resource text not). The
events, normalized as the scenario's README says (ids, times and SDK names out), must equal
`expected.jsonl` and Node's live output line for line. mcp 1.x never shows `initialize` to the
handlers, so its comparison starts at the second line.

The server is the low-level `Server` on both majors, because only it lets every handler answer
exactly as the scenario says:
- 1.x: the handlers go straight into `Server.request_handlers` (the table the decorators fill, and
  the one `track()` wraps) and return typed results. The `call_tool` decorator would turn the unknown
  tool's -32602 into an `isError` result (it catches every exception) and add `isError: false` to
  `echo`'s; `FastMCP` answers an unknown tool with an `isError` result too, a missing resource with
  code 0, and adds `structuredContent`. 1.x result models fill defaults the scenario's results do not
  have (`CallToolResult.isError = False`), which the SDK would send; those are unset (see `exact`).
- 2.x: the handlers return the result JSON as a dict (the low-level `Server` accepts dicts); the
  `MCPServer` decorators would add `structuredContent`, answer an unknown tool with an `isError`
  result and a missing resource with -32602.
The test checks that the client receives exactly the scenario's results, so that any difference left
in the events is the trackers'.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import types
from test_cross_language import NODE, ROOT, node_missing, node_side_absent

import mcplens
from support import V2, in_memory

pytestmark = pytest.mark.anyio

SCENARIO_DIR = ROOT / "tests" / "vectors" / "tracking" / "scenario"
SCENARIO: dict[str, Any] = json.loads((SCENARIO_DIR / "scenario.json").read_text(encoding="utf-8"))
RUN_SCENARIO = SCENARIO_DIR / "run-scenario.mjs"
EXPECTED = SCENARIO_DIR / "expected.jsonl"

# What `normalize` removes (see the README): ids and times, SDK names.
IDS_AND_TIMES = ("id", "timestamp", "durationMs", "sessionId", "requestId", "traceId", "spanId", "parentSpanId")
DROPPED = frozenset([*IDS_AND_TIMES, "client", "server"])

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002

# ---------------------------------------------------------------------------------------------
# The scenario's server: `handlers` in scenario.json, as result JSON (shared by both majors).


class RpcError(Exception):
    """A JSON-RPC error a handler answers with (raised as the SDK's own error type)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def list_tools(params: dict[str, Any]) -> dict[str, Any]:
    echo_schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return {
        "tools": [{"name": "echo", "inputSchema": echo_schema}, {"name": "fail", "inputSchema": {"type": "object"}}]
    }


def call_tool(params: dict[str, Any]) -> dict[str, Any]:
    name, arguments = params["name"], params.get("arguments") or {}
    if name == "echo":
        return {"content": [{"type": "text", "text": arguments["text"]}]}
    if name == "fail":
        return {"content": [{"type": "text", "text": "the tool failed"}], "isError": True}
    raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")


def list_resources(params: dict[str, Any]) -> dict[str, Any]:
    return {"resources": [{"uri": "note://1", "name": "one", "mimeType": "text/plain"}]}


def list_resource_templates(params: dict[str, Any]) -> dict[str, Any]:
    return {"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "note"}]}


def read_resource(params: dict[str, Any]) -> dict[str, Any]:
    uri = params["uri"]
    if uri == "note://missing":
        raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
    return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": f"note {uri[len('note://') :]}"}]}


def empty(params: dict[str, Any]) -> dict[str, Any]:
    return {}


def list_prompts(params: dict[str, Any]) -> dict[str, Any]:
    return {"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}]}


def get_prompt(params: dict[str, Any]) -> dict[str, Any]:
    who = (params.get("arguments") or {})["who"]
    return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hello {who}"}}]}


# method -> (answer, request type, result type, the 2.x `Server` keyword of its handler)
METHODS: dict[str, tuple[Any, Any, Any, str]] = {
    "tools/list": (list_tools, types.ListToolsRequest, types.ListToolsResult, "on_list_tools"),
    "tools/call": (call_tool, types.CallToolRequest, types.CallToolResult, "on_call_tool"),
    "resources/list": (list_resources, types.ListResourcesRequest, types.ListResourcesResult, "on_list_resources"),
    "resources/templates/list": (
        list_resource_templates,
        types.ListResourceTemplatesRequest,
        types.ListResourceTemplatesResult,
        "on_list_resource_templates",
    ),
    "resources/read": (read_resource, types.ReadResourceRequest, types.ReadResourceResult, "on_read_resource"),
    "resources/subscribe": (empty, types.SubscribeRequest, types.EmptyResult, "on_subscribe_resource"),
    "resources/unsubscribe": (empty, types.UnsubscribeRequest, types.EmptyResult, "on_unsubscribe_resource"),
    "prompts/list": (list_prompts, types.ListPromptsRequest, types.ListPromptsResult, "on_list_prompts"),
    "prompts/get": (get_prompt, types.GetPromptRequest, types.GetPromptResult, "on_get_prompt"),
}


def params_json(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    dumped: dict[str, Any] = json.loads(params.model_dump_json(by_alias=True, exclude_none=True))
    return dumped


def exact(model: Any) -> Any:
    """A 1.x result model without the defaults the JSON it came from did not set (`isError = False`):
    left `None`, `model_dump(exclude_none=True)` does not send them, and the result on the wire is the
    scenario's."""
    for name, field in type(model).model_fields.items():
        if name not in model.model_fields_set and field.default is not None:
            setattr(model, name, None)
    return model


def build_server() -> Any:
    """The scenario's server on the installed SDK major (untracked)."""
    from mcp.server.lowlevel import Server

    name, version = SCENARIO["server"]["name"], SCENARIO["server"]["version"]
    if V2:
        import mcp

        def v2(answer: Any) -> Any:
            async def handler(ctx: Any, params: Any) -> dict[str, Any]:
                try:
                    return dict(answer(params_json(params)))
                except RpcError as e:
                    raise mcp.MCPError(code=e.code, message=e.message) from None  # type: ignore[attr-defined,unused-ignore]

            return handler

        return Server(name, version=version, **{kw: v2(answer) for answer, _, _, kw in METHODS.values()})

    from mcp.shared.exceptions import McpError  # type: ignore[attr-defined,unused-ignore]

    sdk: Any = types  # 1.x names (`ServerResult` is a union in 2.x)

    def v1(answer: Any, result_type: Any) -> Any:
        async def handler(request: Any) -> Any:
            try:
                result = answer(params_json(request.params))
            except RpcError as e:
                raise McpError(types.ErrorData(code=e.code, message=e.message)) from None
            return sdk.ServerResult(exact(result_type.model_validate(result)))

        return handler

    server: Any = Server(name, version=version)
    for answer, request_type, result_type, _ in METHODS.values():
        server.request_handlers[request_type] = v1(answer, result_type)
    return server


# ---------------------------------------------------------------------------------------------
# Running and normalizing.


def normalize(event: dict[str, Any]) -> str:
    """One event as the README normalizes it: one compact JSON line, keys sorted."""
    e = {k: v for k, v in event.items() if k not in DROPPED}
    if e["type"] == "mcp:initialize":
        e.pop("parameters", None)
        e.pop("response", None)
    return json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


async def run_scenario(tracker: mcplens.Tracker) -> list[Any]:
    """Sends the scenario's steps in order from a real `ClientSession` to the tracked server (in
    memory); returns what the client got for each: the result as sent, or `{"error": code}`."""
    # The Python SDKs give a server the same memory streams for stdio and in-memory connections,
    # so `track` is told which it is (Node's tracker reads it from the transport class).
    server = mcplens.track(build_server(), tracker, transport="memory")
    sdk: Any = types  # 1.x `ClientRequest` (a union in 2.x)
    outcomes: list[Any] = []
    async with in_memory(server, client_info=types.Implementation(**SCENARIO["client"])) as session:
        for step in SCENARIO["steps"]:
            method = step["method"]
            _, request_type, result_type, _ = METHODS[method]
            request = request_type.model_validate(
                {"method": method, **({"params": step["params"]} if "params" in step else {})}
            )
            try:
                result = await session.send_request(request if V2 else sdk.ClientRequest(request), result_type)
            except Exception as e:
                outcomes.append({"error": int(e.error.code)})  # type: ignore[attr-defined]
            else:
                # `exclude_unset`: client models fill defaults (`isError`, 2.x `ttlMs`) not on the wire.
                outcomes.append(
                    json.loads(result.model_dump_json(by_alias=True, exclude_none=True, exclude_unset=True))
                )
    return outcomes


def answer(step: dict[str, Any]) -> dict[str, Any]:
    """What the scenario's server answers to a step: the result, or `{"error": code}`."""
    try:
        result: dict[str, Any] = METHODS[step["method"]][0](step.get("params", {}))
    except RpcError as e:
        return {"error": e.code}
    return result


@pytest.fixture
async def events() -> list[dict[str, Any]]:
    """The events of one run of the scenario, in request order (the README's first rule)."""
    got: list[dict[str, Any]] = []
    tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(got.extend)])
    outcomes = await run_scenario(tracker)
    tracker.shutdown(10)
    # The server answered every step exactly as the scenario says, so differences are the trackers'.
    for step, outcome in zip(SCENARIO["steps"], outcomes, strict=True):
        assert outcome == answer(step), step
        assert outcome.get("error") == step["expect"].get("error", {}).get("code"), step
    return sorted(got, key=lambda e: e["requestId"])


def comparable(lines: list[str]) -> list[str]:
    """Node's lines to compare with Python's: from the second on mcp 1.x, whose handlers never see
    `initialize` (the README)."""
    assert json.loads(lines[0])["type"] == "mcp:initialize"
    return lines if V2 else lines[1:]


def assert_same_events(python: list[str], node: list[str]) -> None:
    """Line for line: nothing may differ."""
    assert python == node


# ---------------------------------------------------------------------------------------------
# Tests.


def test_every_step_has_a_handler() -> None:
    assert [s["method"] for s in SCENARIO["steps"]]
    assert {s["method"] for s in SCENARIO["steps"]} <= set(METHODS)


async def test_events_meet_each_steps_expectations(events: list[dict[str, Any]]) -> None:
    """Each step's own `expect` (resource name, error code or type), on the raw events."""
    steps = SCENARIO["steps"]
    assert [e["type"] for e in events] == (["mcp:initialize"] if V2 else []) + [f"mcp:{s['method']}" for s in steps]
    for step, e in zip(steps, events[1:] if V2 else events, strict=True):
        want = step["expect"]
        assert e.get("resourceName") == want.get("resourceName"), e
        assert e["isError"] is ("error" in want), e
        if "code" in want.get("error", {}):
            assert (e["error"]["code"], e["error"]["type"]) == (want["error"]["code"], str(want["error"]["code"])), e
        if "type" in want.get("error", {}):
            assert e["error"]["type"] == want["error"]["type"], e
    # What the normalization drops is there: SDK names, one session, distinct request ids.
    assert {e["client"]["name"] for e in events} == {SCENARIO["client"]["name"]}
    assert all(e["server"] == SCENARIO["server"] for e in events)
    assert len({e["sessionId"] for e in events}) == 1
    assert len({e["requestId"] for e in events}) == len(events)


async def test_normalized_events_equal_expected_jsonl(events: list[dict[str, Any]]) -> None:
    expected = comparable(EXPECTED.read_text(encoding="utf-8").splitlines())
    assert_same_events([normalize(e) for e in events], expected)


async def test_normalized_events_equal_nodes_live_output(events: list[dict[str, Any]]) -> None:
    """Against `node run-scenario.mjs` (Node's tracker, as built now), when node and the addon are there."""
    missing = node_missing()
    if missing is not None:
        node_side_absent(missing)
    assert NODE is not None
    with anyio.fail_after(60):
        done = await anyio.run_process([NODE, str(RUN_SCENARIO)], check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert_same_events([normalize(e) for e in events], comparable(done.stdout.decode().splitlines()))
