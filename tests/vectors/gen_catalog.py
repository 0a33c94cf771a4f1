#!/usr/bin/env python3
"""Writes tests/vectors/catalog/*.json (format: tests/vectors/README.md, "catalog").

Each vector drives the core's refresh machine (`Refresher`, which owns the catalog) and reads its
catalog. Expected statuses and tool outputs are written by hand from DESIGN.md; the byte-exact tool outputs are
serialized here with Python's json module (compact, non-ASCII kept) from hand-written structures in the
documented key order, independently of mcplens.

Run: python3 tests/vectors/gen_catalog.py
"""
from __future__ import annotations

import json
import pathlib
import shutil

OUT = pathlib.Path(__file__).parent / "catalog"
CASES: list[dict] = []


def compact(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def tw(uri, name, **kw):
    d = {"uriTemplate": uri, "name": name}
    d.update(kw)
    return d


def tpl_page(items, **extra):
    return {"page": compact({"resourceTemplates": items, **extra})}


def res_page(items, **extra):
    return {"page": compact({"resources": items, **extra})}


def lists(resources=None, templates=None, caps=None, res_answers=None, tpl_answers=None):
    """The answers of one refresh's pair: templates are asked only after resources were listed."""
    r = {"answers": res_answers if res_answers is not None else [res_page(resources or [])]}
    failed = any("page" not in a for a in r["answers"])
    t = {"answers": tpl_answers if tpl_answers is not None else [] if failed else [tpl_page(templates or [])]}
    if caps is not None:
        r["capabilities"] = caps
        t["capabilities"] = caps
    return {"resources": r, "templates": t}


def out(templates, failures=(), total=None, next_offset=None):
    d = {"resourceTemplates": templates, "failures": list(failures), "total": len(templates) if total is None else total}
    if next_offset is not None:
        d["nextOffset"] = next_offset
    return compact(d)


def status(st, generation, resources=0, templates=0, last_error=None, refreshing=False):
    return {"status": st, "generation": generation, "lastError": last_error, "resources": resources,
            "templates": templates, "refreshing": refreshing}


def rpc_msg(server, method, code):
    return f'server "{server}": {method} failed with JSON-RPC error {code}'


def case(name, description, ops):
    CASES.append({"name": name, "description": description, "ops": ops})


TL, RL = "resources/templates/list", "resources/list"
FA, FB, FC = tw("file:///{path}", "files"), tw("db://{table}/{id}", "rows"), tw("mem://{key}", "keys", description="Keys.")
RES = {"uri": "file:///README.md", "name": "readme"}


def e(item, server):
    d = dict(item)
    d["server"] = server
    return d


OK = {"disposition": "committed"}
FAILED = {"disposition": "failed"}
DISCARDED = {"disposition": "discarded"}
IGNORED = {"disposition": "ignored"}
ERR_T = lists(resources=[RES], tpl_answers=[{"rpcError": {"code": -32603, "message": "boom"}}])
ERR_R = lists(templates=[FA], res_answers=[{"rpcError": {"code": -32603, "message": "boom"}}])
FAIL_T = {"server": "a", "code": "server_error", "message": rpc_msg("a", TL, -32603)}

case("refresh_ok_two_servers", "two servers refreshed; the tool lists both in registration order", [
    {"op": "add", "server": "b"},
    {"op": "add", "server": "a"},
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA, FB]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(templates=[FC]), "expect": OK},
    {"op": "status", "server": "a", "expect": status("ok", 1, resources=1, templates=2)},
    {"op": "status", "server": "b", "expect": status("ok", 1, templates=1)},
    {"op": "tool", "input": {}, "expect": out([e(FC, "b"), e(FA, "a"), e(FB, "a")])},
    {"op": "tool", "input": None, "expect": out([e(FC, "b"), e(FA, "a"), e(FB, "a")])},
])
case("cache_hit_no_second_traversal", "a refreshed catalog answers the tool from the cache: no traversal is needed", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "needsRefresh", "server": "a", "atMs": 5000, "expect": False},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")])},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")])},
])
case("failed_refresh_no_previous", "a failed first refresh: status failed, failure listed, no templates", [
    {"op": "refresh", "server": "a", **ERR_T, "expect": {**FAILED, "failure": "server_error"}},
    {"op": "status", "server": "a", "expect": status("failed", 0, last_error="server_error")},
    {"op": "needsRefresh", "server": "a", "expect": False},
    {"op": "tool", "input": {}, "expect": out([], [FAIL_T])},
])
case("failure_not_sticky", "a failure is not cached: the next refresh replaces it", [
    {"op": "refresh", "server": "a", **ERR_T, "expect": {**FAILED, "failure": "server_error"}},
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "status", "server": "a", "expect": status("ok", 1, templates=1)},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")])},
])
case("failed_refresh_keeps_previous", "a failed refresh never wipes a good listing (status stale)", [
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA, FB]), "expect": OK},
    {"op": "refresh", "server": "a", **ERR_T, "expect": {**FAILED, "failure": "server_error"}},
    {"op": "status", "server": "a", "expect": status("stale", 1, resources=1, templates=2, last_error="server_error")},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a"), e(FB, "a")], [FAIL_T])},
])
case("templates_failed_resources_kept", "resources ok + templates failed: nothing half-applied, the old pair stays", [
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA]), "expect": OK},
    {"op": "refresh", "server": "a", **lists(resources=[RES, {"uri": "x:2", "name": "two"}],
                                             tpl_answers=[{"transport": True}]),
     "expect": {**FAILED, "failure": "transport_error"}},
    {"op": "status", "server": "a", "expect": status("stale", 1, resources=1, templates=1, last_error="transport_error")},
])
case("resources_failed_templates_kept", "resources failed: templates are not asked, the old pair stays", [
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA]), "expect": OK},
    {"op": "refresh", "server": "a", **ERR_R, "expect": {**FAILED, "failure": "server_error"}},
    {"op": "status", "server": "a", "expect": status("stale", 1, resources=1, templates=1, last_error="server_error")},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")], [
        {"server": "a", "code": "server_error", "message": rpc_msg("a", RL, -32603)}])},
])
case("list_changed_idle", "list_changed with no refresh running: the pair is kept (outdated), refresh now", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "listChanged", "server": "a", "expect": "refresh_now"},
    {"op": "status", "server": "a", "expect": status("outdated", 1, templates=1, refreshing=True)},
    {"op": "needsRefresh", "server": "a", "expect": True},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")])},
])
case("list_changed_then_failure_keeps_previous", "list_changed, then the refresh fails: the previous pair stays, stale, failure listed", [
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA]), "expect": OK},
    {"op": "listChanged", "server": "a", "expect": "refresh_now"},
    {"op": "refresh", "server": "a", **ERR_T, "expect": {**FAILED, "failure": "server_error"}},
    {"op": "status", "server": "a", "expect": status("stale", 1, resources=1, templates=1, last_error="server_error")},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")], [FAIL_T])},
])
case("invalidate_list_changed_reason_keeps_pair", "invalidate(list_changed) marks outdated and keeps listing; other reasons clear", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "invalidate", "server": "a", "reason": "list_changed"},
    {"op": "status", "server": "a", "expect": status("outdated", 1, templates=1, refreshing=True)},
    {"op": "invalidate", "server": "a", "reason": "other"},
    {"op": "status", "server": "a", "expect": status("unknown", 1, refreshing=True)},
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": DISCARDED},
    {"op": "status", "server": "a", "expect": status("unknown", 1)},
])
case("list_changed_during_refresh", "a burst during a running refresh yields exactly one more refresh", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "begin", "server": "a"},
    {"op": "listChanged", "server": "a", "expect": "queued"},
    {"op": "listChanged", "server": "a", "expect": "already_queued"},
    {"op": "listChanged", "server": "a", "expect": "already_queued"},
    {"op": "status", "server": "a", "expect": status("outdated", 1, templates=1, refreshing=True)},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")])},
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": DISCARDED},
    {"op": "status", "server": "a", "expect": status("outdated", 1, templates=1, refreshing=True)},
    {"op": "refresh", "server": "a", **lists(templates=[FA, FB]), "expect": OK},
    {"op": "status", "server": "a", "expect": status("ok", 2, templates=2)},
    {"op": "listChanged", "server": "a", "expect": "refresh_now"},
])
case("list_changed_storm_then_failure", "a queued refresh is handed out even when the running one fails", [
    {"op": "begin", "server": "a"},
    {"op": "listChanged", "server": "a", "expect": "queued"},
    {"op": "refresh", "server": "a", **ERR_T, "expect": DISCARDED},
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "status", "server": "a", "expect": status("ok", 1, templates=1)},
])
case("invalidate_during_refresh", "a refresh started before its connection closed is ignored", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "begin", "server": "a"},
    {"op": "invalidate", "server": "a", "reason": "connection_closed"},
    {"op": "refresh", "server": "a", **lists(templates=[FA, FB]), "expect": IGNORED},
    {"op": "status", "server": "a", "expect": status("unknown", 1)},
    {"op": "needsRefresh", "server": "a", "expect": True},
])
case("invalidate_clears_both_lists", "invalidation clears resources and templates together", [
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA]), "expect": OK},
    {"op": "invalidate", "server": "a", "reason": "configuration_changed"},
    {"op": "status", "server": "a", "expect": status("unknown", 1)},
    {"op": "refresh", "server": "a", **lists(resources=[RES], templates=[FA]), "expect": OK},
    {"op": "invalidate", "server": "a", "reason": "disabled"},
    {"op": "status", "server": "a", "expect": status("unknown", 2)},
])
case("remove_during_refresh", "a refresh of a removed server is ignored; the server is gone", [
    {"op": "add", "server": "b"},
    {"op": "begin", "server": "a"},
    {"op": "remove", "server": "a", "expect": True},
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": IGNORED},
    {"op": "status", "server": "a", "expectError": "unknown_server",
     "expectMessage": 'Server "a" not found. Available servers: b'},
    {"op": "remove", "server": "a", "expect": False},
])
case("remove_then_readd_appends", "a removed and re-added server comes last; its old traversal stays ignored", [
    {"op": "add", "server": "a"},
    {"op": "add", "server": "b"},
    {"op": "begin", "server": "a"},
    {"op": "remove", "server": "a", "expect": True},
    {"op": "refresh", "server": "a", **lists(templates=[FC]), "expect": IGNORED},
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(templates=[FB]), "expect": OK},
    {"op": "tool", "input": {}, "expect": out([e(FB, "b"), e(FA, "a")])},
])
case("two_servers_one_failing", "one failing server never touches another's entries", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(tpl_answers=[{"malformed": True}]),
     "expect": {**FAILED, "failure": "malformed_result"}},
    {"op": "status", "server": "a", "expect": status("ok", 1, templates=1)},
    {"op": "status", "server": "b", "expect": status("failed", 0, last_error="malformed_result")},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")], [
        {"server": "b", "code": "malformed_result",
         "message": f'server "b": {TL} returned a malformed result (the host\'s client refused the result)'}])},
    {"op": "tool", "input": {"server": "a"}, "expect": out([e(FA, "a")])},
])
case("ttl_expiry", "ttlMs starts at the commit; at expiry the pair is outdated (still listed) and wants a refresh", [
    {"op": "refresh", "server": "a", "atMs": 1000, **lists(templates=[FA], tpl_answers=[tpl_page([FA], ttlMs=15000)]),
     "expect": OK},
    {"op": "status", "server": "a", "atMs": 15999, "expect": status("ok", 1, templates=1)},
    {"op": "needsRefresh", "server": "a", "atMs": 15999, "expect": False},
    {"op": "status", "server": "a", "atMs": 16000, "expect": status("outdated", 1, templates=1)},
    {"op": "needsRefresh", "server": "a", "atMs": 16000, "expect": True},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")])},
])
case("ttl_min_of_both_lists", "the smaller ttlMs of the two lists applies", [
    {"op": "refresh", "server": "a", "atMs": 0,
     **lists(res_answers=[res_page([RES], ttlMs=12000)], tpl_answers=[tpl_page([FA], ttlMs=90000)]), "expect": OK},
    {"op": "status", "server": "a", "atMs": 11999, "expect": status("ok", 1, resources=1, templates=1)},
    {"op": "status", "server": "a", "atMs": 12000, "expect": status("outdated", 1, resources=1, templates=1)},
])
case("ttl_below_the_floor_counts_as_ten_seconds", "a ttlMs under the catalog's floor (10 s by default; ttlMs 0 from mcp 2.3 and fastmcp 4) keeps the pair ok for 10 s after the commit, never stale", [
    {"op": "refresh", "server": "a", "atMs": 1000,
     **lists(res_answers=[res_page([RES], ttlMs=0)], tpl_answers=[tpl_page([FA], ttlMs=500)]), "expect": OK},
    {"op": "status", "server": "a", "atMs": 1000, "expect": status("ok", 1, resources=1, templates=1)},
    {"op": "needsRefresh", "server": "a", "atMs": 10999, "expect": False},
    {"op": "status", "server": "a", "atMs": 11000, "expect": status("outdated", 1, resources=1, templates=1)},
    {"op": "needsRefresh", "server": "a", "atMs": 11000, "expect": True},
])
case("ttl_clamped_to_24h", "ttlMs is clamped to 24 hours", [
    {"op": "refresh", "server": "a", "atMs": 0,
     **lists(tpl_answers=[tpl_page([FA], ttlMs=864000000)]), "expect": OK},
    {"op": "status", "server": "a", "atMs": 86399999, "expect": status("ok", 1, templates=1)},
    {"op": "status", "server": "a", "atMs": 86400000, "expect": status("outdated", 1, templates=1)},
])
case("no_ttl_until_invalidated", "without ttlMs an entry stays fresh until invalidated", [
    {"op": "refresh", "server": "a", "atMs": 0, **lists(templates=[FA]), "expect": OK},
    {"op": "status", "server": "a", "atMs": 864000000000, "expect": status("ok", 1, templates=1)},
])
case("unsupported_server", "a server without the resources capability is unsupported, not failed", [
    {"op": "refresh", "server": "a", **lists(caps={"tools": {}}, res_answers=[], tpl_answers=[]), "expect": OK},
    {"op": "status", "server": "a", "expect": status("unsupported", 1)},
    {"op": "needsRefresh", "server": "a", "expect": False},
    {"op": "tool", "input": {}, "expect": out([])},
])
case("legacy_templates_method_not_found", "-32601 on templates: resources kept, no templates, status ok", [
    {"op": "refresh", "server": "a", **lists(resources=[RES], tpl_answers=[{"rpcError": {"code": -32601, "message": "x"}}]),
     "expect": OK},
    {"op": "status", "server": "a", "expect": status("ok", 1, resources=1)},
])
case("tool_server_filter", "the server filter lists one server's templates and failures", [
    {"op": "refresh", "server": "a", **lists(templates=[FA, FB]), "expect": OK},
    {"op": "refresh", "server": "b", **lists(templates=[FC]), "expect": OK},
    {"op": "tool", "input": {"server": "b"}, "expect": out([e(FC, "b")])},
    {"op": "tool", "input": {"server": "a", "limit": 1}, "expect": out([e(FA, "a")], total=2, next_offset=1)},
])
case("tool_unknown_server", "an unknown server is an error naming the available servers, sorted", [
    {"op": "add", "server": "zeta"},
    {"op": "add", "server": "alpha"},
    {"op": "tool", "input": {"server": "nope"}, "expectError": "unknown_server",
     "expectMessage": 'Server "nope" not found. Available servers: alpha, zeta'},
])
case("tool_paging", "offset and limit page the listing; nextOffset while more remain", [
    {"op": "refresh", "server": "a", **lists(templates=[FA, FB, FC]), "expect": OK},
    {"op": "tool", "input": {"limit": 2}, "expect": out([e(FA, "a"), e(FB, "a")], total=3, next_offset=2)},
    {"op": "tool", "input": {"offset": 2, "limit": 2}, "expect": out([e(FC, "a")], total=3)},
    {"op": "tool", "input": {"offset": 1, "limit": 1}, "expect": out([e(FB, "a")], total=3, next_offset=2)},
    {"op": "tool", "input": {"offset": 7}, "expect": out([], total=3)},
    {"op": "tool", "input": {"offset": 0, "limit": 1000}, "expect": out([e(FA, "a"), e(FB, "a"), e(FC, "a")])},
])
case("tool_default_limit", "without a limit the tool returns 100 templates", [
    {"op": "refresh", "server": "a", **lists(tpl_answers=[tpl_page([tw(f"t://{i}/{{x}}", f"t{i}") for i in range(150)])]),
     "expect": OK},
    {"op": "tool", "input": {"offset": 100},
     "expect": out([e(tw(f"t://{i}/{{x}}", f"t{i}"), "a") for i in range(100, 150)], total=150)},
    {"op": "tool", "input": {"offset": 49, "limit": 2},
     "expect": out([e(tw(f"t://{i}/{{x}}", f"t{i}"), "a") for i in (49, 50)], total=150, next_offset=51)},
])
for name, inp in [("tool_limit_zero", {"limit": 0}), ("tool_limit_over_max", {"limit": 1001}),
                  ("tool_offset_negative", {"offset": -1}), ("tool_offset_string", {"offset": "2"}),
                  ("tool_limit_fraction", {"limit": 1.5}), ("tool_server_number", {"server": 3}),
                  ("tool_unknown_field", {"cursor": "x"}), ("tool_input_array", [1])]:
    case(name, "input outside the schema is invalid_argument", [
        {"op": "add", "server": "a"},
        {"op": "tool", "input": inp, "expectError": "invalid_argument"},
    ])
big = [tw(f"big://{i}/{{x}}", f"big-{i}", description="d" * 2048) for i in range(60)]
case("tool_output_too_large", "output over 100,000 characters is an error with a hint, never truncated", [
    {"op": "refresh", "server": "a", **lists(tpl_answers=[tpl_page(big)]), "expect": OK},
    {"op": "tool", "input": {}, "expectError": "output_too_large"},
    {"op": "tool", "input": {"limit": 2}, "expect": out([e(x, "a") for x in big[:2]], total=60, next_offset=2)},
])
case("tool_sanitized_and_projected", "the tool shows only projected, sanitized fields", [
    {"op": "refresh", "server": "a", **lists(tpl_answers=[tpl_page([tw("x://{a}", "n\u202eame", title="T\u0007",
                                                                       _meta={"k": 1}, icons=[{"src": "data:x"}],
                                                                       annotations={"priority": 0.25, "x": 1})])]),
     "expect": OK},
    {"op": "tool", "input": {}, "expect": out([{"uriTemplate": "x://{a}", "name": "name", "title": "T ",
                                                "annotations": {"priority": 0.25}, "server": "a"}])},
])
case("clear_forgets_everything", "clear forgets every server", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "clear"},
    {"op": "tool", "input": {}, "expect": out([])},
    {"op": "status", "server": "a", "expectError": "unknown_server",
     "expectMessage": 'Server "a" not found. Available servers: (none)'},
])
case("registration_order_not_alphabetical", "servers are listed in registration order", [
    {"op": "refresh", "server": "zeta", **lists(templates=[FA]), "expect": OK},
    {"op": "refresh", "server": "alpha", **lists(templates=[FB]), "expect": OK},
    {"op": "tool", "input": {}, "expect": out([e(FA, "zeta"), e(FB, "alpha")])},
])
case("list_changed_unknown_server_ignored", "a notification for a server not in the catalog is ignored, never re-adds it", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "remove", "server": "a", "expect": True},
    {"op": "listChanged", "server": "a", "expect": "ignored"},
    {"op": "tool", "input": {}, "expect": out([])},
])
case("abandon_hands_out_queued_refresh", "an abandoned refresh changes nothing but still hands out the queued one", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "begin", "server": "a"},
    {"op": "abandon", "server": "a", "expect": DISCARDED},
    {"op": "status", "server": "a", "expect": status("ok", 1, templates=1)},
    {"op": "begin", "server": "a"},
    {"op": "listChanged", "server": "a", "expect": "queued"},
    {"op": "abandon", "server": "a", "expect": DISCARDED},
    {"op": "status", "server": "a", "expect": status("outdated", 1, templates=1, refreshing=True)},
    {"op": "needsRefresh", "server": "a", "expect": True},
])
case("needs_refresh_while_outdated_refresh_runs", "a running but invalidated refresh does not hide the need to refresh", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "begin", "server": "a"},
    {"op": "needsRefresh", "server": "a", "expect": False},
    {"op": "invalidate", "server": "a", "reason": "configuration_changed"},
    {"op": "needsRefresh", "server": "a", "expect": True},
])
case("stale_then_list_changed_keeps_pair", "list_changed keeps a stale pair too (outdated), and its last failure stays listed", [
    {"op": "refresh", "server": "a", **lists(templates=[FA]), "expect": OK},
    {"op": "refresh", "server": "a", **ERR_T, "expect": {**FAILED, "failure": "server_error"}},
    {"op": "listChanged", "server": "a", "expect": "refresh_now"},
    {"op": "status", "server": "a", "expect": status("outdated", 1, templates=1, last_error="server_error", refreshing=True)},
    {"op": "tool", "input": {}, "expect": out([e(FA, "a")], [FAIL_T])},
    {"op": "refresh", "server": "a", **lists(templates=[FA, FB]), "expect": OK},
    {"op": "status", "server": "a", "expect": status("ok", 2, templates=2)},
])


def write(out: pathlib.Path, cases: list[dict], what: str) -> None:
    """Replaces `out` with one `<name>.json` per case (names unique)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = set()
    for c in cases:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        (out / f"{c['name']}.json").write_text(json.dumps(c, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} {what} vectors written to {out}")


def main() -> None:
    write(OUT, CASES, "catalog")


if __name__ == "__main__":
    main()
