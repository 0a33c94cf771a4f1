#!/usr/bin/env python3
"""Writes tests/vectors/catalog_tools/*.json: catalog operation sequences (the `catalog` format of
tests/vectors/README.md) for ListMcpResourcesTool (op `resourcesTool`) and Catalog.match_uri (op
`matchUri`). Kept apart from gen_catalog.py so each can change alone; it reuses its page helpers.

Expected outputs are written by hand from DESIGN.md and docs/templates.md and serialized here with
Python's json module (compact, non-ASCII kept), independently of mcplens.

Run: python3 tests/vectors/gen_catalog_tools.py
"""
from __future__ import annotations

import pathlib

from gen_catalog import FAILED, OK, compact, e, lists, res_page, rpc_msg, tpl_page, tw
from vector_files import write_all

OUT = pathlib.Path(__file__).parent / "catalog_tools"
CASES: list[dict] = []
RL = "resources/list"


def case(name, description, ops):
    CASES.append({"name": name, "description": description, "ops": ops})


def r(uri, name, **kw):
    d = {"uri": uri, "name": name}
    d.update(kw)
    return d


def out(resources, failures=(), total=None, next_offset=None):
    d = {"resources": resources, "failures": list(failures), "total": len(resources) if total is None else total}
    if next_offset is not None:
        d["nextOffset"] = next_offset
    return compact(d)


def tool(inp, expect):
    return {"op": "resourcesTool", "input": inp, "expect": expect}


def found(*matches, skipped=0):
    return {"matches": [{"server": s, "uriTemplate": t, "name": n, "values": v} for s, t, n, v in matches],
            "skipped": skipped}


R1 = r("file:///README.md", "readme", title="Read me", description="The readme.", mimeType="text/markdown", size=12,
       annotations={"audience": ["user"], "priority": 0.5})
R2 = r("file:///LICENSE", "license")
R3 = r("db://users/1", "alice", mimeType="application/json")

case("resources_tool_lists_all_servers", "every server's resources in registration order, projected, with server", [
    {"op": "add", "server": "b"},
    {"op": "refresh", "server": "a", **lists(resources=[R1, R2]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(resources=[R3]), "expect": OK},
    tool({}, out([e(R3, "b"), e(R1, "a"), e(R2, "a")])),
    tool(None, out([e(R3, "b"), e(R1, "a"), e(R2, "a")])),
    tool({"server": "a"}, out([e(R1, "a"), e(R2, "a")])),
])
case("resources_tool_paging", "offset and limit page the listing; nextOffset while more remain", [
    {"op": "refresh", "server": "a", **lists(resources=[R1, R2, R3]), "expect": OK},
    tool({"limit": 2}, out([e(R1, "a"), e(R2, "a")], total=3, next_offset=2)),
    tool({"offset": 2, "limit": 2}, out([e(R3, "a")], total=3)),
    tool({"offset": 9}, out([], total=3)),
])
many = [r(f"mem://r/{i}", f"r{i}") for i in range(150)]
case("resources_tool_default_limit", "without a limit the tool returns 100 resources", [
    {"op": "refresh", "server": "a", **lists(res_answers=[res_page(many)]), "expect": OK},
    tool({}, out([e(x, "a") for x in many[:100]], total=150, next_offset=100)),
    tool({"offset": 100}, out([e(x, "a") for x in many[100:]], total=150)),
])
case("resources_tool_unknown_server", "an unknown server is an error naming the available servers, sorted", [
    {"op": "add", "server": "zeta"},
    {"op": "add", "server": "alpha"},
    {"op": "resourcesTool", "input": {"server": "nope"}, "expectError": "unknown_server",
     "expectMessage": 'Server "nope" not found. Available servers: alpha, zeta'},
])
case("resources_tool_failures", "a failed refresh is listed in failures; the last good resources stay", [
    {"op": "refresh", "server": "a", **lists(resources=[R1]), "expect": OK},
    {"op": "refresh", "server": "a", **lists(res_answers=[{"rpcError": {"code": -32603, "message": "boom"}}]),
     "expect": {**FAILED, "failure": "server_error"}},
    {"op": "refresh", "server": "b", **lists(res_answers=[{"transport": True}]),
     "expect": {**FAILED, "failure": "transport_error"}},
    tool({}, out([e(R1, "a")], [{"server": "a", "code": "server_error", "message": rpc_msg("a", RL, -32603)},
                                {"server": "b", "code": "transport_error",
                                 "message": f'server "b": {RL} failed: the transport failed'}])),
    tool({"server": "b"}, out([], [{"server": "b", "code": "transport_error",
                                    "message": f'server "b": {RL} failed: the transport failed'}])),
])
case("resources_tool_sanitized_and_projected", "only projected, sanitized fields; _meta, icons, unknown keys never shown", [
    {"op": "refresh", "server": "a", **lists(res_answers=[res_page([r("x:1", "n\u202eame", title="T\u0007", size=3,
                                                                     _meta={"k": 1}, icons=[{"src": "data:x"}],
                                                                     annotations={"priority": 2, "audience": ["user"]},
                                                                     extra=True)])]),
     "expect": OK},
    tool({}, out([{"uri": "x:1", "name": "name", "title": "T ", "size": 3, "annotations": {"audience": ["user"]},
                  "server": "a"}])),
])
big = [r(f"big://{i}", f"big-{i}", description="d" * 2048) for i in range(60)]
case("resources_tool_output_too_large", "output over 100,000 characters is an error with a hint, never truncated", [
    {"op": "refresh", "server": "a", **lists(res_answers=[res_page(big)]), "expect": OK},
    {"op": "resourcesTool", "input": {}, "expectError": "output_too_large"},
    tool({"limit": 2}, out([e(x, "a") for x in big[:2]], total=60, next_offset=2)),
])
case("resources_tool_empty", "servers that offer no resources give an empty listing, not an error", [
    {"op": "refresh", "server": "a", **lists(caps={"tools": {}}, res_answers=[], tpl_answers=[]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(templates=[tw("x://{a}", "x")]), "expect": OK},
    tool({}, out([])),
])
for name, inp in [("resources_tool_limit_zero", {"limit": 0}), ("resources_tool_offset_string", {"offset": "2"}),
                  ("resources_tool_unknown_field", {"cursor": "x"}), ("resources_tool_input_array", [1])]:
    case(name, "input outside the schema is invalid_argument", [
        {"op": "add", "server": "a"},
        {"op": "resourcesTool", "input": inp, "expectError": "invalid_argument"},
    ])

FILES, DOCS, ANY = tw("file:///{+path}", "files"), tw("file:///docs/{name}", "docs"), tw("{+uri}", "anything")
ROWS = tw("db://{table}/{id}", "rows")
case("match_uri_routes_to_the_server", "every (server, template, values) match, most specific first", [
    {"op": "refresh", "server": "fs", **lists(templates=[FILES, ROWS]), "expect": OK},
    {"op": "refresh", "server": "wiki", **lists(templates=[DOCS]), "expect": OK},
    {"op": "matchUri", "uri": "db://users/42", "expect": found(("fs", ROWS["uriTemplate"], "rows",
                                                                 {"table": "users", "id": "42"}))},
    {"op": "matchUri", "uri": "file:///docs/intro",
     "expect": found(("wiki", DOCS["uriTemplate"], "docs", {"name": "intro"}),
                     ("fs", FILES["uriTemplate"], "files", {"path": "docs/intro"}))},
    {"op": "matchUri", "uri": "file:///src/main.rs",
     "expect": found(("fs", FILES["uriTemplate"], "files", {"path": "src/main.rs"}))},
    {"op": "matchUri", "uri": "mem://nothing", "expect": found()},
])
case("match_uri_ties_in_catalog_order", "equally specific templates keep the catalog's order", [
    {"op": "refresh", "server": "b", **lists(templates=[ANY]), "expect": OK},
    {"op": "refresh", "server": "a", **lists(templates=[ANY, tw("{+x}", "x")]), "expect": OK},
    {"op": "matchUri", "uri": "z:1", "expect": found(("b", "{+uri}", "anything", {"uri": "z:1"}),
                                                      ("a", "{+uri}", "anything", {"uri": "z:1"}),
                                                      ("a", "{+x}", "x", {"x": "z:1"}))},
])
case("match_uri_sees_only_current_templates", "an invalidated or removed server's templates are not matched", [
    {"op": "refresh", "server": "a", **lists(templates=[ROWS]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(templates=[ROWS]), "expect": OK},
    {"op": "invalidate", "server": "a", "reason": "connection_closed"},
    {"op": "matchUri", "uri": "db://t/1", "expect": found(("b", ROWS["uriTemplate"], "rows", {"table": "t", "id": "1"}))},
    {"op": "remove", "server": "b", "expect": True},
    {"op": "matchUri", "uri": "db://t/1", "expect": found()},
])
slow = tw("".join("{+v%d}" % i for i in range(20)) + "~~", "slow")
case("match_uri_counts_skipped_templates", "a template whose search gives up is counted in skipped, never silently dropped", [
    {"op": "refresh", "server": "evil", **lists(templates=[slow]), "expect": OK},
    {"op": "refresh", "server": "good", **lists(templates=[ANY]), "expect": OK},
    {"op": "matchUri", "uri": "a" * 2000, "expect": found(("good", "{+uri}", "anything", {"uri": "a" * 2000}), skipped=1)},
])
case("match_uri_too_long", "a URI over 8,192 bytes is invalid_argument", [
    {"op": "refresh", "server": "a", **lists(templates=[ANY]), "expect": OK},
    {"op": "matchUri", "uri": "a" * 8193, "expectError": "invalid_argument",
     "expectMessage": "invalid argument: the URI is 8193 bytes, over the 8192-byte limit"},
])


def main() -> None:
    write_all(OUT, CASES, "catalog tool")


if __name__ == "__main__":
    main()
