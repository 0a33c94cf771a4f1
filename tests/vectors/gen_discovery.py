#!/usr/bin/env python3
"""Writes tests/vectors/discovery/*.json.

Every expectation below is written by hand from DESIGN.md's rules; nothing is computed by mcplens.
The only derived figure is `diagnostics.bytes`, computed here independently with Python's json module
(compact, non-ASCII kept) from the hand-written expected items.

Run: python3 tests/vectors/gen_discovery.py   (rewrites the directory)
"""
from __future__ import annotations

import json
import pathlib
import shutil

OUT = pathlib.Path(__file__).parent / "discovery"
T = "resource_templates"
R = "resources"
TL = "resources/templates/list"
RL = "resources/list"
CASES: list[dict] = []


def compact(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def nbytes(items) -> int:
    return sum(len(compact(i).encode()) for i in items)


def page(items, key="resourceTemplates", **extra) -> str:
    d = {key: items}
    d.update(extra)
    return compact(d)


def rpage(items, **extra) -> str:
    return page(items, key="resources", **extra)


def req(method=TL, cursor=None):
    return {"method": method} if cursor is None else {"method": method, "params": {"cursor": cursor}}


def diag(requests, pages, items, dropped_fields=None, dropped_items=None, sanitized=0, ignored=0, repeated=0):
    return {
        "requests": requests,
        "pages": pages,
        "items": len(items),
        "bytes": nbytes(items),
        "droppedFields": dropped_fields or {},
        "droppedItems": dropped_items or {},
        "sanitizedStrings": sanitized,
        "ignoredKeys": ignored,
        "repeatedCursors": repeated,
    }


def case(name, description, answers, expect, kind=T, **kw):
    c = {"name": name, "description": description, "kind": kind}
    c.update(kw)
    c["answers"] = answers
    c["expect"] = expect
    CASES.append(c)


def ok(name, description, answers, requests, items, kind=T, diagnostics=None, **kw):
    """A successful traversal whose items are fully listed; diagnostics default to a clean run."""
    pages = sum(1 for a in answers if "page" in a or "synth" in a)
    expect = {"requests": requests, "support": "listed", "items": items}
    expect["diagnostics"] = diagnostics or diag(len(requests), pages, items)
    expect.update(kw.pop("extra_expect", {}))
    case(name, description, answers, expect, kind=kind, **kw)


def fail(name, description, answers, requests, error, kind=T, **kw):
    expect = {"requests": requests, "error": error}
    expect.update(kw.pop("extra_expect", {}))
    case(name, description, answers, expect, kind=kind, **kw)


def t(uri, name, server="srv", **kw):
    d = {"uriTemplate": uri, "name": name}
    d.update(kw)
    d["server"] = server
    return d


def wire(uri, name, **kw):
    d = {"uriTemplate": uri, "name": name}
    d.update(kw)
    return d


def r(uri, name, server="srv", **kw):
    d = {"uri": uri, "name": name}
    d.update(kw)
    d["server"] = server
    return d


def rwire(uri, name, **kw):
    d = {"uri": uri, "name": name}
    d.update(kw)
    return d


A, B, C = wire("file:///{path}", "files"), wire("db://{table}/{id}", "rows"), wire("mem://{key}", "keys")
EA, EB, EC = t("file:///{path}", "files"), t("db://{table}/{id}", "rows"), t("mem://{key}", "keys")

# ---------------------------------------------------------------- shapes and order
ok("templates_single_page", "template-only server, one page, page 1 has no params",
   [{"page": page([A, B])}], [req()], [EA, EB])
ok("templates_multi_page_order", "pages followed in order with exact cursors; server order kept",
   [{"page": page([C], nextCursor="c-2")}, {"page": page([A], nextCursor="c-3")}, {"page": page([B])}],
   [req(), req(cursor="c-2"), req(cursor="c-3")], [EC, EA, EB])
ok("templates_empty", "an empty list is a complete, empty listing",
   [{"page": page([])}], [req()], [])
ok("templates_empty_middle_page", "an empty page in the middle still moves on to its nextCursor",
   [{"page": page([A], nextCursor="p2")}, {"page": page([], nextCursor="p3")}, {"page": page([B])}],
   [req(), req(cursor="p2"), req(cursor="p3")], [EA, EB])
ok("templates_full_projection", "every kept field projected, in wire camelCase, with server",
   [{"page": page([wire("file:///{path}", "files", title="Files", description="All files.\nOne per line.",
                        mimeType="text/plain",
                        annotations={"audience": ["user", "assistant"], "priority": 0.5,
                                     "lastModified": "2025-01-01T00:00:00Z"})])}],
   [req()], [t("file:///{path}", "files", title="Files", description="All files.\nOne per line.",
               mimeType="text/plain",
               annotations={"audience": ["user", "assistant"], "priority": 0.5,
                            "lastModified": "2025-01-01T00:00:00Z"})])
ok("resources_single_page", "resources/list: uri, size and the other fields projected",
   [{"page": rpage([rwire("file:///a.txt", "a", size=12, mimeType="text/plain"), rwire("file:///b", "b")])}],
   [req(RL)], [r("file:///a.txt", "a", mimeType="text/plain", size=12), r("file:///b", "b")], kind=R)
ok("resources_multi_page", "resources/list pages followed with exact cursors",
   [{"page": rpage([rwire("x:1", "one")], nextCursor="MTA=")}, {"page": rpage([rwire("x:2", "two")])}],
   [req(RL), req(RL, "MTA=")], [r("x:1", "one"), r("x:2", "two")], kind=R)
ok("mixed_server_templates", "a server with both lists: the templates traversal reads only templates",
   [{"page": compact({"resourceTemplates": [A], "resources": [rwire("x:1", "one")]})}], [req()], [EA])
ok("mixed_server_resources", "a server with both lists: the resources traversal reads only resources",
   [{"page": compact({"resources": [rwire("x:1", "one")], "resourceTemplates": [A]})}], [req(RL)],
   [r("x:1", "one")], kind=R)
ok("server_name_on_items", "items carry the host's server name",
   [{"page": page([A])}], [req()], [t("file:///{path}", "files", server="docs-server")], server="docs-server")

# ---------------------------------------------------------------- eligibility
for name, caps in [("no_capability_empty_caps", {}), ("no_capability_tools_only", {"tools": {}}),
                   ("no_capability_null", {"resources": None}), ("no_capability_not_object", {"resources": True})]:
    case(name, "servers without a resources capability object are never asked",
         [], {"requests": [], "support": "no_capability", "items": [],
              "diagnostics": diag(0, 0, [])}, capabilities=caps)
ok("capability_with_flags", "resources capability with flags is eligible",
   [{"page": page([A])}], [req()], [EA], capabilities={"resources": {"listChanged": True, "subscribe": True}})

# ---------------------------------------------------------------- errors
case("legacy_method_not_found", "-32601 on resources/templates/list means no templates (legacy server)",
     [{"rpcError": {"code": -32601, "message": "Method not found"}}],
     {"requests": [req()], "support": "method_not_found", "items": [], "diagnostics": diag(1, 0, [])})
fail("method_not_found_on_resources", "-32601 on resources/list is a server error",
     [{"rpcError": {"code": -32601, "message": "Method not found"}}], [req(RL)], "server_error", kind=R)
fail("method_not_found_on_page_2", "-32601 after a page was listed is a server error, never a prefix",
     [{"page": page([A], nextCursor="p2")}, {"rpcError": {"code": -32601, "message": "Method not found"}}],
     [req(), req(cursor="p2")], "server_error")
fail("internal_error", "any other JSON-RPC error fails the traversal",
     [{"rpcError": {"code": -32603, "message": "Internal error SECRET-MSG"}}], [req()], "server_error",
     extra_expect={"secrets": ["SECRET-MSG"]})
fail("invalid_params_page_2", "an error on page 2 fails the whole traversal: no prefix",
     [{"page": page([A], nextCursor="p2")}, {"rpcError": {"code": -32602, "message": "bad cursor"}}],
     [req(), req(cursor="p2")], "server_error")
fail("nonstandard_error_code", "non-standard codes are server errors too",
     [{"rpcError": {"code": 5, "message": "Invalid character"}}], [req(RL)], "server_error", kind=R)
fail("transport_failure", "transport failure", [{"transport": True}], [req()], "transport_error")
fail("transport_failure_page_2", "transport failure on page 2 fails the whole traversal",
     [{"page": page([A], nextCursor="p2")}, {"transport": True}], [req(), req(cursor="p2")], "transport_error")
fail("host_refused_page", "the host's typed client refused the page", [{"malformed": True}], [req()],
     "malformed_result")

# ---------------------------------------------------------------- cursors
ok("empty_string_cursor", "\"\" is a real cursor and is requested",
   [{"page": page([A], nextCursor="")}, {"page": page([B])}], [req(), req(cursor="")], [EA, EB])
fail("repeated_empty_cursor", "a repeated \"\" cursor fails",
     [{"page": page([A], nextCursor="")}, {"page": page([B], nextCursor="")}], [req(), req(cursor="")],
     "repeated_cursor")
fail("repeated_opaque_cursor", "a repeated opaque cursor fails; the error never shows it",
     [{"page": page([A], nextCursor="opaque-secret-123")}, {"page": page([B], nextCursor="opaque-secret-123")}],
     [req(), req(cursor="opaque-secret-123")], "repeated_cursor")
fail("cycling_cursor", "a cursor equal to any earlier cursor fails, not only the last",
     [{"page": page([A], nextCursor="cur-a")}, {"page": page([B], nextCursor="cur-b")},
      {"page": page([C], nextCursor="cur-a")}],
     [req(), req(cursor="cur-a"), req(cursor="cur-b")], "repeated_cursor")
# 2026-07-28: "clients MUST NOT make any determination based on cursor value other than whether a
# non-null value was provided" — a repeat is followed; the bounds end the traversal.
MODERN = "2026-07-28"
ok("modern_repeated_cursor_is_followed", "on 2026-07-28 a repeated cursor is sent again (and counted); the server ends the list",
   [{"page": page([A], nextCursor="same")}, {"page": page([B], nextCursor="same")}, {"page": page([C])}],
   [req(), req(cursor="same"), req(cursor="same")], [EA, EB, EC],
   diagnostics=diag(3, 3, [EA, EB, EC], repeated=1), protocolVersion=MODERN)
ok("modern_repeated_empty_cursor_is_followed", "on 2026-07-28 a repeated \"\" cursor is followed too",
   [{"page": page([A], nextCursor="")}, {"page": page([B], nextCursor="")}, {"page": page([C], nextCursor="")},
    {"page": page([])}],
   [req(), req(cursor=""), req(cursor=""), req(cursor="")], [EA, EB, EC],
   diagnostics=diag(4, 4, [EA, EB, EC], repeated=2), protocolVersion=MODERN)
fail("modern_repeating_cursor_ends_at_the_page_bound", "on 2026-07-28 a server that repeats its cursor forever is stopped by the page bound",
     [{"page": page([A], nextCursor="loop")}, {"page": page([B], nextCursor="loop")}, {"page": page([C], nextCursor="loop")}],
     [req(), req(cursor="loop"), req(cursor="loop")], "page_limit", limits={"maxPages": 3}, protocolVersion=MODERN)
fail("modern_repeating_cursor_ends_at_the_item_bound", "on 2026-07-28 a repeating cursor is stopped by the item bound when that comes first",
     [{"page": page([A, B], nextCursor="loop")}, {"page": page([A, B], nextCursor="loop")}],
     [req(), req(cursor="loop")], "item_limit", limits={"maxItems": 3}, protocolVersion=MODERN)
fail("modern_repeat_fails_when_the_host_says_so", "repeatedCursors: fail makes a 2026-07-28 repeat fail as on earlier revisions",
     [{"page": page([A], nextCursor="same")}, {"page": page([B], nextCursor="same")}],
     [req(), req(cursor="same")], "repeated_cursor", limits={"repeatedCursors": "fail"}, protocolVersion=MODERN)
ok("legacy_repeat_followed_when_the_host_says_so", "repeatedCursors: follow makes an earlier revision follow a repeat",
   [{"page": page([A], nextCursor="same")}, {"page": page([B], nextCursor="same")}, {"page": page([C])}],
   [req(), req(cursor="same"), req(cursor="same")], [EA, EB, EC],
   diagnostics=diag(3, 3, [EA, EB, EC], repeated=1), limits={"repeatedCursors": "follow"}, protocolVersion="2025-11-25")
fail("legacy_repeat_fails_by_default", "on 2025-11-25 (and without a protocol version) a repeated cursor fails",
     [{"page": page([A], nextCursor="same")}, {"page": page([B], nextCursor="same")}],
     [req(), req(cursor="same")], "repeated_cursor", protocolVersion="2025-11-25")
fail("cursor_over_the_length_bound", "a cursor longer than maxCursorBytes (64 KiB by default) is malformed: repeat detection keeps cursors",
     [{"page": page([A], nextCursor="x" * 65537)}], [req()], "malformed_result")
ok("cursor_at_the_length_bound", "a cursor of exactly maxCursorBytes UTF-8 bytes is sent",
   [{"page": page([A], nextCursor="\u00e9" * 4)}, {"page": page([B])}], [req(), req(cursor="\u00e9" * 4)], [EA, EB],
   limits={"maxCursorBytes": 8})
fail("cursor_one_byte_over_a_set_bound", "maxCursorBytes counts UTF-8 bytes",
     [{"page": page([A], nextCursor="\u00e9" * 4 + "x")}], [req()], "malformed_result", limits={"maxCursorBytes": 8})
ok("null_cursor_ends", "nextCursor null ends the traversal",
   [{"page": page([A], nextCursor=None)}], [req()], [EA])
ok("cursor_sent_byte_for_byte", "cursors are opaque: spaces, unicode and escapes are sent back exactly",
   [{"page": page([A], nextCursor=" a/b+c=\u00e9\"\\ ")}, {"page": page([B])}],
   [req(), req(cursor=" a/b+c=\u00e9\"\\ ")], [EA, EB])
fail("numeric_cursor", "a non-string cursor is malformed", [{"page": page([A], nextCursor=42)}], [req()],
     "malformed_result")
fail("object_cursor", "an object cursor is malformed", [{"page": page([A], nextCursor={"o": 1})}], [req()],
     "malformed_result")
fail("boolean_cursor", "a boolean cursor is malformed", [{"page": page([A], nextCursor=False)}], [req()],
     "malformed_result")
fail("lone_surrogate_cursor", "a cursor that cannot be sent back exactly is malformed",
     [{"page": '{"resourceTemplates":[],"nextCursor":"ab\\ud800"}'}], [req()], "malformed_result")

# ---------------------------------------------------------------- item bound
case("exactly_10000_items", "exactly 10,000 items are allowed",
     [{"synth": {"count": 5000, "start": 0, "nextCursor": "half"}}, {"synth": {"count": 5000, "start": 5000}}],
     {"requests": [req(), req(cursor="half")], "support": "listed", "itemCount": 10000})
fail("items_10001", "10,001 items fail", [{"synth": {"count": 5000, "start": 0, "nextCursor": "half"}},
                                           {"synth": {"count": 5001, "start": 5000}}],
     [req(), req(cursor="half")], "item_limit")
fail("item_limit_before_cursor", "the item bound is checked before the cursor (a repeat after too many items)",
     [{"page": page([A, B], nextCursor="k1")}, {"page": page([C], nextCursor="k1")}], [req(), req(cursor="k1")],
     "item_limit", limits={"maxItems": 2})
fail("item_limit_counts_dropped_items", "the item bound counts the server's array, dropped items included",
     [{"page": page([A, wire("bad {", "x"), B])}], [req()], "item_limit", limits={"maxItems": 2})
ok("item_limit_exact_small", "exactly maxItems is allowed", [{"page": page([A, B])}], [req()], [EA, EB],
   limits={"maxItems": 2})

# ---------------------------------------------------------------- page bound
case("page_100_without_cursor", "page 100 may end the traversal",
     [{"synth": {"count": 1, "start": i, **({"nextCursor": f"page-{i + 2}"} if i < 99 else {})}} for i in range(100)],
     {"requests": [req()] + [req(cursor=f"page-{i}") for i in range(2, 101)], "support": "listed", "itemCount": 100})
fail("page_100_with_cursor", "page 100 must end it: a nextCursor on page 100 fails",
     [{"synth": {"count": 1, "start": i, "nextCursor": f"page-{i + 2}"}} for i in range(100)],
     [req()] + [req(cursor=f"page-{i}") for i in range(2, 101)], "page_limit")
fail("page_limit_small", "a configured page limit of 2",
     [{"page": page([A], nextCursor="pp2")}, {"page": page([B], nextCursor="pp3")}], [req(), req(cursor="pp2")],
     "page_limit", limits={"maxPages": 2})
ok("page_limit_one_page", "maxPages 1 with a single final page", [{"page": page([A])}], [req()], [EA],
   limits={"maxPages": 1})

# ---------------------------------------------------------------- byte budget
ok("byte_budget_exact", "exactly maxBytes of projected metadata is allowed",
   [{"page": page([A, B])}], [req()], [EA, EB], limits={"maxBytes": nbytes([EA, EB])})
fail("byte_budget_over_by_one", "one byte over maxBytes fails",
     [{"page": page([A, B])}], [req()], "byte_limit", limits={"maxBytes": nbytes([EA, EB]) - 1})
fail("byte_budget_across_pages", "the budget is per traversal, summed over pages",
     [{"page": page([A], nextCursor="b2")}, {"page": page([B])}], [req(), req(cursor="b2")], "byte_limit",
     limits={"maxBytes": nbytes([EA]) + 5})
ok("byte_budget_counts_projection_not_wire", "_meta and icons are not counted: only projected bytes",
   [{"page": page([wire("file:///{path}", "files", _meta={"big": "x" * 5000},
                        icons=[{"src": "data:image/png;base64," + "A" * 5000}])])}],
   [req()], [EA], limits={"maxBytes": nbytes([EA])}, diagnostics=diag(1, 1, [EA], ignored=2))
esc = t("x://{a}", "q\"b\\s", description="tab\there \"quoted\" back\\slash\nnewline")
ok("byte_budget_escapes", "escaped characters count as serialized (quotes, backslashes, \\n, \\t)",
   [{"page": page([wire("x://{a}", "q\"b\\s", description="tab\there \"quoted\" back\\slash\nnewline")])}],
   [req()], [esc], limits={"maxBytes": nbytes([esc])})
fail("byte_budget_escapes_over", "one byte under the escaped size fails",
     [{"page": page([wire("x://{a}", "q\"b\\s", description="tab\there \"quoted\" back\\slash\nnewline")])}],
     [req()], "byte_limit", limits={"maxBytes": nbytes([esc]) - 1})

# ---------------------------------------------------------------- deadline
ok("deadline_exact", "a page at exactly the deadline is accepted",
   [{"atMs": 60000, "page": page([A])}], [req()], [EA])
fail("deadline_exceeded", "a page after the 60 s deadline fails", [{"atMs": 60001, "page": page([A])}], [req()],
     "deadline")
fail("deadline_whole_traversal", "the deadline covers the whole traversal, not each page",
     [{"atMs": 600, "page": page([A], nextCursor="d2")}, {"atMs": 1200, "page": page([B])}],
     [req(), req(cursor="d2")], "deadline", limits={"deadlineMs": 1000})
fail("deadline_host_timeout", "the host's timeout on the in-flight request is a deadline failure",
     [{"atMs": 1000, "timedOut": True}], [req()], "deadline", limits={"deadlineMs": 1000})
ok("deadline_from_start", "time counts from startMs", [{"atMs": 1900, "page": page([A])}], [req()], [EA],
   startMs=1000, limits={"deadlineMs": 1000})

# ---------------------------------------------------------------- strict structure
for name, text, why in [
    # Each page plants SECRET-DESC (server text) where it can; no error may repeat it.
    ("result_array", '["SECRET-DESC"]', "the result is an array"),
    ("result_null", "null", "the result is null"),
    ("result_string", '"SECRET-DESC resourceTemplates"', "the result is a string"),
    ("list_missing", '{"note":"SECRET-DESC"}', "no resourceTemplates key"),
    ("list_not_array", '{"resourceTemplates":"SECRET-DESC"}', "resourceTemplates is a string"),
    ("list_null", '{"resourceTemplates":null,"note":"SECRET-DESC"}', "resourceTemplates is null"),
    ("list_object", '{"resourceTemplates":{"0":{"uriTemplate":"a://{b}","name":"SECRET-DESC"}}}', "resourceTemplates is an object"),
    ("item_not_object", '{"resourceTemplates":["SECRET-DESC file:///{path}"]}', "an item is a string"),
    ("item_null", '{"resourceTemplates":[null,{"uriTemplate":"a://{b}","name":"SECRET-DESC"}]}', "an item is null"),
    ("item_missing_name", '{"resourceTemplates":[{"uriTemplate":"a://{b}","description":"SECRET-DESC"}]}', "name missing"),
    ("item_name_not_string", '{"resourceTemplates":[{"uriTemplate":"a://{b}","name":7,"description":"SECRET-DESC"}]}', "name is a number"),
    ("item_name_null", '{"resourceTemplates":[{"uriTemplate":"a://{b}","name":null,"description":"SECRET-DESC"}]}', "name is null"),
    ("item_missing_uri_template", '{"resourceTemplates":[{"name":"SECRET-DESC"}]}', "uriTemplate missing"),
    ("item_uri_template_not_string", '{"resourceTemplates":[{"uriTemplate":["SECRET-DESC"],"name":"n"}]}', "uriTemplate is an array"),
    ("invalid_json", '{"resourceTemplates":[{"name":"SECRET-DESC"', "not JSON"),
    ("trailing_garbage", '{"resourceTemplates":[]} SECRET-DESC', "text after the JSON value"),
    ("duplicate_item_key", '{"resourceTemplates":[{"uriTemplate":"a://{b}","name":"n","name":"SECRET-DESC"}]}', "duplicate key"),
    ("duplicate_annotation_key", '{"resourceTemplates":[{"uriTemplate":"a://{b}","name":"SECRET-DESC","annotations":{"priority":0.1,"priority":0.9}}]}',
     "duplicate annotation key"),
    ("duplicate_list_key", '{"resourceTemplates":[],"resourceTemplates":[{"uriTemplate":"a://{b}","name":"SECRET-DESC"}]}', "duplicate list key"),
    ("result_type_incomplete", '{"resourceTemplates":[{"uriTemplate":"a://{b}","name":"SECRET-DESC"}],"resultType":"incomplete"}', "resultType other than complete"),
    ("resources_key_for_templates", '{"resources":[{"uri":"x:1","name":"SECRET-DESC"}]}', "the other list's key"),
]:
    fail(name, f"malformed result: {why}", [{"page": text}], [req()], "malformed_result",
         extra_expect={"secrets": ["SECRET-DESC"]})
fail("resources_item_missing_uri", "resources/list item without uri is malformed",
     [{"page": '{"resources":[{"name":"n"}]}'}], [req(RL)], "malformed_result", kind=R)
fail("malformed_page_2_no_prefix", "a malformed page 2 fails the whole traversal",
     [{"page": page([A], nextCursor="m2")}, {"page": '{"resourceTemplates":[{"name":"n"}]}'}],
     [req(), req(cursor="m2")], "malformed_result")
ok("result_type_complete", "resultType complete is complete", [{"page": page([A], resultType="complete")}], [req()], [EA])

# ---------------------------------------------------------------- 2026-07-28 cache hints
ok("ttl_and_cache_scope", "ttlMs and cacheScope are read",
   [{"page": page([A], ttlMs=30000, cacheScope="private")}], [req()], [EA],
   extra_expect={"ttlMs": 30000, "cacheScope": "private"})
ok("ttl_min_across_pages", "the smallest ttlMs of the traversal wins; the first cacheScope is kept",
   [{"page": page([A], nextCursor="t2", ttlMs=20000, cacheScope="public")},
    {"page": page([B], nextCursor="t3", ttlMs=50000, cacheScope="private")}, {"page": page([C])}],
   [req(), req(cursor="t2"), req(cursor="t3")], [EA, EB, EC], extra_expect={"ttlMs": 20000, "cacheScope": "public"})
ok("ttl_negative_is_zero", "a negative ttlMs counts as 0", [{"page": page([A], ttlMs=-5)}], [req()], [EA],
   extra_expect={"ttlMs": 0})
ok("ttl_invalid_dropped", "a non-integer ttlMs or odd cacheScope is dropped and counted",
   [{"page": page([A], ttlMs="soon", cacheScope="Not A Scope\u202e")}], [req()], [EA],
   diagnostics=diag(1, 1, [EA], dropped_fields={"ttlMs": 1, "cacheScope": 1}),
   extra_expect={"ttlMs": None, "cacheScope": None})

# ---------------------------------------------------------------- lenient optional fields
for name, field, value, key in [
    ("lenient_title_number", "title", 5, "title"),
    ("lenient_title_null", "title", None, "title"),
    ("lenient_description_null", "description", None, "description"),
    ("lenient_description_object", "description", {"text": "x"}, "description"),
    ("lenient_mime_type_array", "mimeType", ["text/plain"], "mimeType"),
    ("lenient_annotations_string", "annotations", "high", "annotations"),
    ("lenient_annotations_array", "annotations", [1], "annotations"),
]:
    ok(name, f"an invalid {field} is dropped from the item, the item kept, the drop counted",
       [{"page": page([wire("file:///{path}", "files", **{field: value}), B])}], [req()], [EA, EB],
       diagnostics=diag(1, 1, [EA, EB], dropped_fields={key: 1}))
for name, ann, key, kept in [
    ("lenient_last_modified_date_only", {"lastModified": "2025-01-12", "priority": 0.3}, "annotations.lastModified",
     {"priority": 0.3}),
    ("lenient_last_modified_no_offset", {"lastModified": "2025-01-12T10:00:00", "audience": ["user"]},
     "annotations.lastModified", {"audience": ["user"]}),
    ("lenient_priority_out_of_range", {"priority": 2, "lastModified": "2025-01-12T10:00:00+02:00"},
     "annotations.priority", {"lastModified": "2025-01-12T10:00:00+02:00"}),
    ("lenient_priority_string", {"priority": "high", "audience": ["assistant"]}, "annotations.priority",
     {"audience": ["assistant"]}),
    ("lenient_audience_system", {"audience": ["system"], "priority": 1}, "annotations.audience", {"priority": 1.0}),
    ("lenient_audience_not_array", {"audience": "user", "priority": 0}, "annotations.audience", {"priority": 0.0}),
    ("lenient_annotations_all_invalid", {"audience": ["root"]}, "annotations.audience", None),
]:
    kept_item = t("file:///{path}", "files", **({"annotations": kept} if kept else {}))
    ok(name, f"an invalid {key} is dropped, the rest of the item kept",
       [{"page": page([wire("file:///{path}", "files", annotations=ann)])}], [req()], [kept_item],
       diagnostics=diag(1, 1, [kept_item], dropped_fields={key: 1}))
ok("lenient_many_fields_counted", "several drops on several items are all counted",
   [{"page": page([wire("a://{x}", "a", title=1, annotations={"priority": -1}),
                   wire("b://{x}", "b", title=None, mimeType=3, annotations={"lastModified": "2025-01-01"})])}],
   [req()], [t("a://{x}", "a"), t("b://{x}", "b")],
   diagnostics=diag(1, 1, [t("a://{x}", "a"), t("b://{x}", "b")],
                    dropped_fields={"title": 2, "mimeType": 1, "annotations.priority": 1,
                                    "annotations.lastModified": 1}))
ok("lenient_resource_size", "a negative or non-integer size is dropped and counted",
   [{"page": rpage([rwire("x:1", "one", size=-1), rwire("x:2", "two", size="12"), rwire("x:3", "three", size=1.5)])}],
   [req(RL)], [r("x:1", "one"), r("x:2", "two"), r("x:3", "three")], kind=R,
   diagnostics=diag(1, 1, [r("x:1", "one"), r("x:2", "two"), r("x:3", "three")], dropped_fields={"size": 3}))

ok("size_and_ttl_whole_number_floats", "whole-number floats are integers (3.0 is 3) for size and ttlMs",
   [{"page": rpage([rwire("x:1", "one", size=3.0)], ttlMs=1500.0)}], [req(RL)], [r("x:1", "one", size=3)], kind=R,
   extra_expect={"ttlMs": 1500})

# ---------------------------------------------------------------- projection
ok("projection_drops_meta_icons_unknown", "_meta, icons and unknown keys never reach the listing (counted)",
   [{"page": page([wire("file:///{path}", "files", _meta={"secret": "x"}, icons=[{"src": "data:x"}],
                        foo="bar", size=3, text="body", annotations={"audience": ["user"], "extra": 1}
                        )], _meta={"page": 1}, foo=1)}],
   [req()], [t("file:///{path}", "files", annotations={"audience": ["user"]})],
   diagnostics=diag(1, 1, [t("file:///{path}", "files", annotations={"audience": ["user"]})], ignored=5))

deep = "[" * 5000 + "]" * 5000
ok("deeply_nested_meta_ignored", "deeply nested _meta is skipped without recursion and never reaches the listing",
   [{"page": '{"_meta":' + deep + ',"resourceTemplates":[{"uriTemplate":"a://{b}","name":"n","_meta":' + deep + "}]}"}],
   [req()], [t("a://{b}", "n")], diagnostics=diag(1, 1, [t("a://{b}", "n")], ignored=1))
ok("deeply_nested_optional_field_dropped", "a deeply nested optional field is dropped like any invalid one",
   [{"page": '{"resourceTemplates":[{"uriTemplate":"a://{b}","name":"n","title":' + deep
             + ',"annotations":{"audience":' + deep + "}}]}"}],
   [req()], [t("a://{b}", "n")],
   diagnostics=diag(1, 1, [t("a://{b}", "n")], dropped_fields={"title": 1, "annotations.audience": 1}))

# ---------------------------------------------------------------- sanitizer
for name, field, raw, clean in [
    ("sanitize_c0_in_name", "name", "a\u0000b\u0007\r\n\tc", "a b c"),
    ("sanitize_c0_in_description", "description", "line1\r\nline2\tcol\u0000\u0008end", "line1\nline2\tcolend"),
    ("sanitize_c1_in_title", "title", "a\u0085\u0086b", "a b"),
    ("sanitize_ansi_csi", "description", "\u001b[31;1mred\u001b[0m plain \u009b2Jx", "red plain x"),
    ("sanitize_ansi_osc", "description", "see \u001b]8;;https://evil.example/\u0007here\u001b]8;;\u001b\\ now",
     "see here now"),
    ("sanitize_bidi", "name", "abc\u202egnp.exe\u2066x\u2069\u200e\u200f\u061c", "abcgnp.exex"),
    ("sanitize_zero_width", "description", "zero\u200bwidth\u200c\u200d\u2060\ufeffjoin", "zerowidthjoin"),
    ("sanitize_tag_characters", "description", "hi\U000e0049\U000e0067\U000e006e\U000e007f!", "hi!"),
    ("sanitize_variation_selector_supplement", "title", "x\U000e0100\U000e01efy", "xy"),
    ("sanitize_noncharacters", "description", "a\ufdd0b\uffffc\U0001fffed", "abcd"),
    ("sanitize_keeps_ordinary_unicode", "description", "caf\u00e9 \u2713 \U0001f600\ufe0f \u4e2d\u6587", None),
    ("sanitize_mime_type", "mimeType", "text/plain\u001b[2K\u200b", "text/plain"),
]:
    expected = t("file:///{path}", "n" if field != "name" else clean, **({field: clean or raw} if field != "name" else {}))
    sanitized = 0 if clean is None else 1
    ok(name, f"sanitizer on {field}", [{"page": page([wire("file:///{path}", raw if field == "name" else "n",
                                                          **({field: raw} if field != "name" else {}))])}],
       [req()], [expected], diagnostics=diag(1, 1, [expected], sanitized=sanitized))
ls = t("file:///{path}", "n", description="bad \ufffd here")
ok("sanitize_lone_surrogate", "a lone surrogate escape becomes U+FFFD",
   [{"page": '{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"n","description":"bad \\ud800 here"}]}'}],
   [req()], [ls])
ok("sanitize_surrogate_pair_kept", "a valid surrogate pair escape is an ordinary character",
   [{"page": '{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"\\ud83d\\ude00"}]}'}],
   [req()], [t("file:///{path}", "\U0001f600")])
cap_ascii = "a" * 2047 + "\u2026"
ok("sanitize_cap_ascii", "names over 2,048 characters are cut to 2,047 plus an ellipsis",
   [{"page": page([wire("file:///{path}", "a" * 3000)])}], [req()], [t("file:///{path}", cap_ascii)],
   diagnostics=diag(1, 1, [t("file:///{path}", cap_ascii)], sanitized=1))
cap_multi = "\u00e9" * 2047 + "\u2026"
ok("sanitize_cap_multibyte", "the cap counts characters, not bytes, and cuts on a char boundary",
   [{"page": page([wire("file:///{path}", "n", description="\u00e9" * 2049)])}], [req()],
   [t("file:///{path}", "n", description=cap_multi)],
   diagnostics=diag(1, 1, [t("file:///{path}", "n", description=cap_multi)], sanitized=1))
ok("sanitize_cap_exact", "exactly 2,048 characters are kept unchanged",
   [{"page": page([wire("file:///{path}", "\U0001f600" * 2048)])}], [req()], [t("file:///{path}", "\U0001f600" * 2048)])
ok("sanitize_cap_after_removal", "removed characters do not count toward the cap",
   [{"page": page([wire("file:///{path}", "\u200b" * 100 + "b" * 2048)])}], [req()], [t("file:///{path}", "b" * 2048)],
   diagnostics=diag(1, 1, [t("file:///{path}", "b" * 2048)], sanitized=1))

# ---------------------------------------------------------------- URI templates and URIs
bad_templates = ["file:///{path", "a b/{x}", "x://{=reserved}", "x://{a\u200eb}", "x://\u202e{a}", "x://{x:0}",
                 "x://{x:10000}", "x://%zz/{a}", "x://{a}}", "x://{}", "x://" + "a" * 2042 + "{x}",
                 "x://\u0007{a}", "x://<{a}>", "x://{a,}", 'x://"{a}"', "x://{a}`"]
ok("invalid_uri_templates_dropped", "invalid RFC 6570 templates are dropped whole and counted, never altered",
   [{"page": page([wire(u, "bad") for u in bad_templates] + [A])}], [req()], [EA],
   diagnostics=diag(1, 1, [EA], dropped_items={"invalid_uri_template": len(bad_templates)}))
good = ["http://e.com/{+path}/here{?q,lang}{&x*}{#frag:3}", "{/list*}{;keys}{.dom}", "x://{var.sub}/{a%20b}",
        "caf\u00e9://{x}", "x://" + "a" * 2041 + "{x}", "%41{x:9999}", "x://{a}/it's", "'{var}'"]
ok("valid_uri_templates_kept_exactly", "valid level 1-4 templates are kept byte for byte; ' is a literal "
   "(docs/templates.md)",
   [{"page": page([wire(u, "ok") for u in good])}], [req()], [t(u, "ok") for u in good])
ok("lone_surrogate_uri_template_dropped", "a template holding a lone surrogate is dropped, not repaired",
   [{"page": '{"resourceTemplates":[{"uriTemplate":"x://\\udc00{a}","name":"n"},' + compact(A) + "]}"}],
   [req()], [EA], diagnostics=diag(1, 1, [EA], dropped_items={"invalid_uri_template": 1}))
ok("invalid_uris_dropped", "resource URIs with controls, whitespace or bidi characters are dropped and counted",
   [{"page": rpage([rwire("x:1 2", "a"), rwire("x:\u202e1", "b"), rwire("", "c"), rwire("x:\n", "d"),
                    rwire("x:ok", "e")])}],
   [req(RL)], [r("x:ok", "e")], kind=R,
   diagnostics=diag(1, 1, [r("x:ok", "e")], dropped_items={"invalid_uri": 4}))
ok("dropped_items_not_in_bytes", "dropped items do not count toward the byte budget",
   [{"page": page([wire("bad {", "x" * 500), A])}], [req()], [EA], limits={"maxBytes": nbytes([EA])},
   diagnostics=diag(1, 1, [EA], dropped_items={"invalid_uri_template": 1}))


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    names = set()
    for c in CASES:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        (OUT / f"{c['name']}.json").write_text(json.dumps(c, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(CASES)} discovery vectors written to {OUT}")


if __name__ == "__main__":
    main()
