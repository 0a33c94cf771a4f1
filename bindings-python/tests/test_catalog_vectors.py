"""Replays every shared vector in `tests/vectors/catalog/` and `tests/vectors/catalog_tools/` through
`mcplens.Catalog`.

The same runner as Rust's `run_catalog_case` (`core/tests/vectors.rs`; format in
`tests/vectors/README.md`): the tool output must be byte-identical, because every rule is the core's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcplens
from test_vectors import drive

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "catalog"
FILES = sorted(VECTORS.glob("*.json"))
TOOL_FILES = sorted((VECTORS.parent / "catalog_tools").glob("*.json"))


def traverse(kind: str, server: str, spec: dict[str, Any], now_ms: float) -> mcplens.Listing:
    """One list of a refresh: `{"capabilities"?, "answers": [...]}`, default limits."""
    answers = spec.get("answers", [])
    run = drive(kind, server, spec.get("capabilities", {"resources": {}}), mcplens.Limits(), now_ms, answers)
    assert not run.out_of_answers, f"{server}: ran out of answers"
    assert run.used == len(answers), f"{server}: answers left over"
    if run.error is not None:
        raise run.error
    assert run.listing is not None
    return run.listing


def complete(catalog: mcplens.Catalog, ticket: mcplens.Ticket, op: dict[str, Any], now_ms: float) -> dict[str, Any]:
    """Both traversals (resources first), then commit, or fail with the first error."""
    server = ticket.server
    results: list[mcplens.Listing | mcplens.DiscoveryError] = []
    for kind, key in (("resources", "resources"), ("resource_templates", "templates")):
        try:
            results.append(traverse(kind, server, op[key], now_ms))
        except mcplens.DiscoveryError as e:
            results.append(e)
    resources, templates = results
    failure = next((r for r in results if isinstance(r, mcplens.DiscoveryError)), None)
    if failure is None:
        assert isinstance(resources, mcplens.Listing)
        assert isinstance(templates, mcplens.Listing)
        c = catalog.commit(ticket, resources, templates, now_ms / 1000)
    else:
        c = catalog.fail(ticket, failure.code, str(failure))
    out: dict[str, Any] = {"applied": c.applied, "refreshAgain": c.refresh_again}
    if failure is not None and c.applied:
        out["failure"] = failure.code
    return out


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
    bad: list[str] = []
    catalog = mcplens.Catalog()
    tickets: dict[str, mcplens.Ticket] = {}
    now_ms: float = 0
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
            catalog.add_server(server)
        elif name == "begin":
            tickets[op["ticket"]] = catalog.begin_refresh(server)
        elif name == "complete":
            check(name, complete(catalog, tickets[op["ticket"]], op, now_ms))
        elif name == "refresh":
            check(name, complete(catalog, catalog.begin_refresh(server), op, now_ms))
        elif name == "listChanged":
            check(name, catalog.on_list_changed(server))
        elif name == "abandon":
            c = catalog.abandon(tickets[op["ticket"]])
            check(name, {"applied": c.applied, "refreshAgain": c.refresh_again})
        elif name == "invalidate":
            catalog.invalidate(server, op["reason"])
        elif name == "remove":
            check(name, catalog.remove(server))
        elif name == "clear":
            catalog.clear()
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
        else:
            raise AssertionError(f"unknown op {name}")
    return bad


def test_vectors_present() -> None:
    assert len(FILES) >= 30, f"only {len(FILES)} catalog vectors under {VECTORS}"
    assert len(TOOL_FILES) >= 15, f"only {len(TOOL_FILES)} catalog tool vectors"


@pytest.mark.parametrize("path", FILES + TOOL_FILES, ids=[p.stem for p in FILES + TOOL_FILES])
def test_catalog_vector(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["name"] == path.stem, "name must match the file"
    assert run_catalog_case(case) == []
