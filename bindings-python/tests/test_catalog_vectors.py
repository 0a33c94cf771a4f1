"""Replays every shared vector in `tests/vectors/catalog/` and `tests/vectors/catalog_tools/` through
a `mcplens._core.Catalog` and its `mcplens.Refresher` (the machine that owns the catalog's state).

The same runner as Rust's `run_catalog_case` (`core/tests/rules/vectors.rs`; format in
`tests/vectors/README.md`): the tool output must be byte-identical, because every rule is the core's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcplens
from test_vectors import accept

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "catalog"
FILES = sorted(VECTORS.glob("*.json"))
TOOL_FILES = sorted((VECTORS.parent / "catalog_tools").glob("*.json"))
READ_FILES = sorted((VECTORS.parent / "read_tool").glob("*.json"))
COMPLETE_FILES = sorted((VECTORS.parent / "complete_tool").glob("*.json"))
# A vector's outcome as the SDK's facts the core classifies (`ToolCall.finish`).
OUTCOMES = {"rpcError": "error_answer", "transport": "lost", "timedOut": "timeout", "malformed": "schema_refused"}


def call_op(catalog: mcplens._core.Catalog, op: dict[str, Any], now: float) -> str:
    """A `read` or `complete` op: the model's call through `ToolCall` (the request checked), finished
    with the vector's outcome."""
    c = op.get("config", {})
    if op["op"] == "read":
        name, timeout = mcplens.READ_RESOURCE_TOOL.name, c.get("timeoutMs", 30_000) / 1000
        config: Any = mcplens.ReadConfig(
            any_uri=c.get("anyUri", False), max_output_chars=c.get("maxOutputChars", 100_000), timeout=timeout
        )
    else:
        name, timeout = mcplens.COMPLETE_TEMPLATE_TOOL.name, c.get("timeoutMs", 10_000) / 1000
        config = mcplens.CompleteConfig(max_output_chars=c.get("maxOutputChars", 10_000), timeout=timeout)
    call = mcplens.ToolCall(catalog, name, json.dumps(op["input"]), config=config, now=now)
    if op["op"] == "read":
        request = {"server": call.server, "uri": call.params["uri"], "params": call.params_json()}
        assert call.method == "resources/read"
    else:
        request = {"server": call.server, "method": call.method, "params": call.params_json()}
    assert request == op["expectRequest"]
    assert call.remaining(now) == timeout
    outcome = op["outcome"]
    if "result" in outcome or "resultText" in outcome:
        text = outcome.get("resultText") or json.dumps(outcome["result"], ensure_ascii=False)
        return call.finish("page", text.encode())
    [(key, value)] = outcome.items()
    return call.finish(OUTCOMES[key], value if key == "rpcError" else None)


def perform_pair(traversal: int, server: str, step: dict[str, Any], now_ms: float) -> mcplens.Pager:
    """The core's pair over a step's `{"resources", "templates"}` answers (each `{"capabilities"?,
    "answers"}`; `core/tests/rules/vectors.rs` `perform_pair`): each request is answered from the list
    of its kind, and every answer must be used."""
    caps = step.get("resources", {}).get("capabilities", {"resources": {}})
    pair = mcplens.Pager.pair(traversal, server, capabilities=json.dumps(caps), now=now_ms / 1000)
    lists = {kind: step.get(key, {}).get("answers", []) for kind, key in KEYS}
    used = dict.fromkeys(lists, 0)
    while pair.next_request() is not None:
        kind = pair.kind
        assert kind is not None
        assert used[kind] < len(lists[kind]), f"{server}: out of {kind} answers"
        answer = lists[kind][used[kind]]
        used[kind] += 1
        now_ms = answer.get("atMs", now_ms)
        accept(pair, kind, answer, now_ms / 1000)
    assert used == {k: len(v) for k, v in lists.items()}, f"{server}: answers do not match the requests"
    return pair


KEYS = (("resources", "resources"), ("resource_templates", "templates"))


def complete(
    machine: mcplens.Refresher, catalog: Any, server: str, traversal: int, op: dict[str, Any], now_ms: float
) -> dict[str, Any]:
    """The pair performed and handed back; a failure's code as the catalog recorded it."""
    got = machine.traversed(perform_pair(traversal, server, op, now_ms), now_ms / 1000)
    if got != "failed":
        return {"disposition": got}
    return {"disposition": got, "failure": catalog.status(server, now_ms / 1000).last_error.code}


def capabilities(op: dict[str, Any]) -> str:
    """The server's capabilities (JSON text) the runner attaches it with."""
    return json.dumps(op.get("resources", {}).get("capabilities", {"resources": {}}))


def status_value(s: mcplens.ServerStatus) -> dict[str, Any]:
    value = s.to_dict()
    del value["server"]
    value["lastError"] = s.last_error.code if s.last_error is not None else None
    # The typed attributes say the same as the dict.
    assert (s.status, s.generation, s.resources, s.templates, s.refreshing) == tuple(
        value[k] for k in ("status", "generation", "resources", "templates", "refreshing")
    )
    return value


def run_catalog_case(case: dict[str, Any]) -> list[str]:
    """As Rust's: `refresh` completes the server's traversal in flight, else attaches the server if
    it has no connection and asks for one, then completes it."""
    bad: list[str] = []
    catalog = mcplens._core.Catalog()
    machine = mcplens.Refresher(catalog, seed=0)
    pending: dict[str, int] = {}  # the traversal in flight per server, from the Traverse actions
    now_ms: float = 0

    def take_traversals() -> None:
        for action in machine.poll_actions():
            if "traverse" in action:
                pending[action["traverse"]["server"]] = action["traverse"]["traversal"]

    for i, op in enumerate(case["ops"]):
        now_ms = op.get("atMs", now_ms)
        now = now_ms / 1000
        server = op.get("server", "")

        def check(what: str, got: Any, i: int = i, op: dict[str, Any] = op) -> None:
            if op.get("expect") != got:
                bad.append(f"op {i} ({what}): got {got!r}, want {op.get('expect')!r}")

        def check_error(e: mcplens.McplensError, i: int = i, op: dict[str, Any] = op) -> None:
            if op.get("expectError") != e.code:
                bad.append(f"op {i}: error {e.code} ({e}), want {op.get('expectError')}")
            if "expectMessage" in op and str(e) != op["expectMessage"]:
                bad.append(f"op {i}: message {str(e)!r}, want {op['expectMessage']!r}")

        name = op["op"]
        if name == "add":
            machine.add_server(server)
        elif name in ("begin", "refresh") and not (name == "refresh" and server in pending):
            if machine.epoch(server) is None:
                machine.attach_capabilities(server, capabilities(op))
            machine.request(server, "refresh", now)
            if name == "refresh":
                take_traversals()
        if name == "refresh":
            check(name, complete(machine, catalog, server, pending.pop(server), op, now_ms))
        elif name == "abandon":
            check(name, {"disposition": machine.traversal_abandoned(pending.pop(server), now)})
        elif name == "listChanged":
            check(name, machine.on_list_changed(server, machine.epoch(server) or 0, now))
        elif name == "invalidate":
            machine.invalidate(server, op["reason"], now)
        elif name == "remove":
            check(name, machine.remove(server))
        elif name == "clear":
            machine.clear()
        elif name == "needsRefresh":
            check(name, catalog.needs_refresh(server, now))
        elif name == "status":
            try:
                check(name, status_value(catalog.status(server, now)))
            except mcplens.CatalogError as e:
                check_error(e)
        elif name in ("tool", "resourcesTool"):
            call = catalog.call_list_templates_tool if name == "tool" else catalog.call_list_resources_tool
            # As the model's JSON text (what Rust's `Input::from_value` sees), and, for anything
            # but a string, as the Python value itself: both must give the same answer.
            attempts: list[Any] = [json.dumps(op.get("input"), ensure_ascii=False)]
            if not isinstance(op.get("input"), str):
                attempts.append(op.get("input"))
            for arguments in attempts:
                try:
                    check(name, call(arguments))
                except mcplens.ToolError as e:
                    check_error(e)
        elif name in ("read", "complete"):
            try:
                check(name, call_op(catalog, op, now))
            except mcplens.McplensError as e:
                check_error(e)
        elif name == "visible":
            check(name, catalog.visible_tools())
        elif name == "matchUri":
            try:
                found = catalog.match_uri(op["uri"])
            except mcplens.TemplateError as e:
                check_error(e)
            else:
                # The wire shape of the vector, from the Python (snake_case) one.
                wire = [
                    {"server": m["server"], "uriTemplate": m["uri_template"], "name": m["name"], "values": m["values"]}
                    for m in found["matches"]
                ]
                check(name, {"matches": wire, "skipped": found["skipped"]})
        elif name not in ("add", "begin"):
            raise AssertionError(f"unknown op {name}")
        take_traversals()
    return bad


def test_vectors_present() -> None:
    assert len(FILES) >= 30, f"only {len(FILES)} catalog vectors under {VECTORS}"
    assert len(TOOL_FILES) >= 15, f"only {len(TOOL_FILES)} catalog tool vectors"
    assert len(READ_FILES) >= 18, f"only {len(READ_FILES)} read tool vectors"
    assert len(COMPLETE_FILES) >= 10, f"only {len(COMPLETE_FILES)} completion tool vectors"


ALL_FILES = FILES + TOOL_FILES + READ_FILES + COMPLETE_FILES


@pytest.mark.parametrize("path", ALL_FILES, ids=[p.stem for p in ALL_FILES])
def test_catalog_vector(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["name"] == path.stem, "name must match the file"
    assert run_catalog_case(case) == []
