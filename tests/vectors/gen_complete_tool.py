#!/usr/bin/env python3
"""Writes tests/vectors/complete_tool/*.json: CompleteMcpResourceTemplateTool (op `complete`) in the
catalog format of tests/vectors/README.md ("complete_tool").

A `complete` op validates the model's `input` against the catalog (with `config`, the completion
settings, when given); `expectRequest` is what the host must send (`{"server", "method", "params"}`,
`params` as compact JSON text) and `timeoutMs` its timeout. `outcome` is what became of that
request — `{"result": <object>}`, `{"resultText": "<raw JSON>"}`, `{"rpcError": code}`,
`{"transport": true}`, `{"timedOut": true}` or `{"malformed": true}` — and `expect` the output, or
`expectError`/`expectMessage` the tool error. A refused input has no `outcome`: nothing is sent.

A server declares `completions` through the capabilities of its `refresh` op (the runner attaches it
with them). Expected outputs are written by hand from docs/tools.md and serialized here with
Python's json module (compact, non-ASCII kept), independently of mcplens.

Run: python3 tests/vectors/gen_complete_tool.py
"""
from __future__ import annotations

import pathlib

from gen_catalog import OK, compact, lists, tw
from vector_files import write_all

OUT = pathlib.Path(__file__).parent / "complete_tool"
CASES: list[dict] = []
COMPLETES = {"resources": {}, "completions": {}}
DOCS = tw("docs://{project}/{page}", "pages")
MEM = tw("memory://{permalink}", "notes")
METHOD = "completion/complete"


def case(name, description, ops):
    CASES.append({"name": name, "description": description, "ops": ops})


def refresh(server, templates=(DOCS, MEM), caps=None):
    op = {"op": "refresh", "server": server, **lists(templates=list(templates)), "expect": OK}
    op["resources"]["capabilities"] = COMPLETES if caps is None else caps
    return op


def params(inp):
    p = {"ref": {"type": "ref/resource", "uri": inp["uriTemplate"]},
         "argument": {"name": inp["variable"], "value": inp.get("value") or ""}}
    if inp.get("arguments"):
        p["context"] = {"arguments": dict(sorted(inp["arguments"].items()))}
    return compact(p)


def complete(inp, *, outcome=None, expect=None, error=None, message=None, config=None):
    op: dict = {"op": "complete", "input": inp}
    if config is not None:
        op["config"] = config
    if outcome is not None:
        op["expectRequest"] = {"server": inp["server"], "method": METHOD, "params": params(inp)}
        op["timeoutMs"] = (config or {}).get("timeoutMs", 10_000)
        op["outcome"] = outcome
    if expect is not None:
        op["expect"] = expect
    if error is not None:
        op["expectError"] = error
    if message is not None:
        op["expectMessage"] = message
    return op


def answer(values, **extra):
    return {"result": {"completion": {"values": values, **extra}}}


def output(server, inp, values, total=None, has_more=None, omitted=None, ignored=None):
    d = {"server": server, "uriTemplate": inp["uriTemplate"], "variable": inp["variable"], "values": values}
    if total is not None:
        d["total"] = total
    if has_more is not None:
        d["hasMore"] = has_more
    omitted = {k: (omitted or {})[k] for k in ("cut", "notString", "tooLong", "unsafe") if (omitted or {}).get(k)}
    if omitted:
        d["omitted"] = omitted
    if ignored:
        d["ignored"] = ignored
    return compact(d)


PAGE = {"server": "docs", "uriTemplate": "docs://{project}/{page}", "variable": "page", "value": "in"}
NOT_OFFERED = ('Server "{s}" does not offer completion of its resource templates. Fill the template from a resource '
               'it lists (ListMcpResourcesTool) instead.')
UNLISTED = ('The URI template is not one server "{s}" listed. Give a template exactly as '
            'ListMcpResourceTemplatesTool lists it for that server.')


def invalid(reason):
    return f"invalid input: {reason}"


case("complete_values", "a listed template's variable is completed: the values, total and hasMore as sent", [
    refresh("docs"),
    complete(PAGE, outcome=answer(["intro", "install"], total=2, hasMore=False),
             expect=output("docs", PAGE, ["intro", "install"], total=2, has_more=False)),
])

WITH_CONTEXT = {**PAGE, "value": "", "arguments": {"project": "mcplens"}}
PAIRS = {**WITH_CONTEXT, "arguments": [{"name": "project", "value": "mcplens"}]}
case("complete_with_context", "values already chosen for the template's other variables go as context.arguments "
     "(given as a map, or as the strict schema's list of {name, value} pairs); an empty value is asked as \"\"", [
    refresh("docs"),
    complete(WITH_CONTEXT, outcome=answer(["a"]), expect=output("docs", WITH_CONTEXT, ["a"])),
    {**complete(WITH_CONTEXT, outcome=answer(["a"]), expect=output("docs", WITH_CONTEXT, ["a"])), "input": PAIRS},
    complete({**PAGE, "value": None, "arguments": None}, outcome=answer([]),
             expect=output("docs", PAGE, [])),
])

case("complete_listing_names_the_servers_that_offer_it", "the template listing names, under \"completion\", the "
     "servers that declare completions and list a template; the completion tool is then visible", [
    refresh("docs"),
    refresh("plain", templates=(MEM,), caps={"resources": {}}),
    {"op": "tool", "input": {},
     "expect": compact({"resourceTemplates": [{**DOCS, "server": "docs"}, {**MEM, "server": "docs"},
                                              {**MEM, "server": "plain"}],
                        "failures": [], "completion": ["docs"], "total": 3})},
    {"op": "tool", "input": {"server": "plain"},
     "expect": compact({"resourceTemplates": [{**MEM, "server": "plain"}], "failures": [], "total": 1})},
    {"op": "visible", "expect": ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool",
                                 "CompleteMcpResourceTemplateTool"]},
])

case("complete_not_visible_without_a_template", "a server that declares completions but lists no template does not "
     "make the completion tool visible, nor is it named under \"completion\"", [
    refresh("docs", templates=()),
    {"op": "visible", "expect": ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"]},
    {"op": "tool", "input": {}, "expect": compact({"resourceTemplates": [], "failures": [], "total": 0})},
])

case("complete_refused_inputs", "input the tool refuses is refused before anything is sent, naming the rule and the "
     "server, never a value", [
    refresh("docs"),
    refresh("plain", caps={"resources": {}}),
    complete({**PAGE, "server": "nope"}, error="unknown_server",
             message='Server "nope" not found. Available servers: docs, plain'),
    complete({**PAGE, "server": "plain"}, error="not_offered", message=NOT_OFFERED.format(s="plain")),
    complete({**PAGE, "uriTemplate": "docs://{project}/{page}/{x}"}, error="unlisted_uri",
             message=UNLISTED.format(s="docs")),
    complete({**PAGE, "uriTemplate": "memory://{permalink}", "variable": "page"}, error="invalid_argument",
             message=invalid('"variable" is not a variable of the template')),
    complete({**PAGE, "arguments": {"page": "x"}}, error="invalid_argument",
             message=invalid('"arguments" must name the template\'s other variables')),
    complete({**PAGE, "arguments": {"secret-name": "x"}}, error="invalid_argument",
             message=invalid('"arguments" must name the template\'s other variables')),
    complete({**PAGE, "arguments": {"project": 7}}, error="invalid_argument",
             message=invalid('"arguments" must map variable names to strings')),
    complete({**PAGE, "arguments": ["project"]}, error="invalid_argument",
             message=invalid('"arguments" as a list must hold {name, value} pairs of strings')),
    complete({**PAGE, "arguments": [{"name": "project", "value": 1}]}, error="invalid_argument",
             message=invalid('"arguments" as a list must hold {name, value} pairs of strings')),
    complete({**PAGE, "arguments": [{"name": "project", "value": "a"}, {"name": "project", "value": "b"}]},
             error="invalid_argument", message=invalid('"arguments" must name each variable once')),
    complete({**PAGE, "arguments": 7}, error="invalid_argument", message=invalid('"arguments" must be an object')),
    complete({**PAGE, "value": "x" * 1025}, error="invalid_argument",
             message=invalid('"value" and each argument must be at most 1024 characters')),
    complete({**PAGE, "value": 3}, error="invalid_argument", message=invalid('"value" must be a string')),
    complete({"server": "docs", "uriTemplate": DOCS["uriTemplate"]}, error="invalid_argument",
             message=invalid('"variable" is required')),
    complete({**PAGE, "token": "s3cret"}, error="invalid_argument", message=invalid('unknown input field "token"')),
    complete([], error="invalid_argument", message=invalid("the input is not an object")),
])

MANY = [f"v{i:03}" for i in range(150)]
case("complete_at_most_100_values", "at most 100 values are kept; the rest are cut and counted", [
    refresh("docs"),
    complete(PAGE, outcome=answer(MANY, total=150, hasMore=False),
             expect=output("docs", PAGE, MANY[:100], total=150, has_more=False, omitted={"cut": 50})),
])

HOSTILE = ["ok", 7, None, {"v": 1}, ["x"], True, "x" * 1025, "\x1b[31mred", "a\u202eb", "zero\u200bwidth",
           "tag\U000E0041", "two\nlines", "tab\there", "y" * 1024, "fine value"]
case("complete_values_dropped_not_altered", "a value that is not a string, is over 1024 characters, or that "
     "sanitizing would change is dropped and counted, never altered", [
    refresh("docs"),
    complete(PAGE, outcome=answer(HOSTILE),
             expect=output("docs", PAGE, ["ok", "y" * 1024, "fine value"],
                           omitted={"notString": 5, "tooLong": 1, "unsafe": 6})),
])

TYPES = [("total", 5, True), ("total", 0, True), ("total", -1, False), ("total", 1.5, False), ("total", "lots", False),
         ("total", True, False), ("total", [], False), ("total", {}, False), ("total", None, None),
         ("hasMore", True, True), ("hasMore", False, True), ("hasMore", "yes", False), ("hasMore", 1, False),
         ("hasMore", [], False), ("hasMore", None, None)]
ops = [refresh("docs")]
for key, value, kept in TYPES:
    kw = {"total": value if key == "total" and kept else None, "has_more": value if key == "hasMore" and kept else None}
    ops.append(complete(PAGE, outcome=answer(["a"], **{key: value}),
                        expect=output("docs", PAGE, ["a"], ignored=[key] if kept is False else None, **kw)))
case("complete_total_and_has_more_of_every_type", "total is kept only as a non-negative integer and hasMore only as a "
     "boolean; any other value is ignored and named under \"ignored\" (null: absent)", ops)

case("complete_errors", "-32601 is not_offered; another JSON-RPC error keeps only its code; transport, deadline and "
     "malformed answers are typed errors", [
    refresh("docs"),
    complete(PAGE, outcome={"rpcError": -32601}, error="not_offered", message=NOT_OFFERED.format(s="docs")),
    complete(PAGE, outcome={"rpcError": -32603}, error="server_error",
             message='Server "docs" could not complete the template\'s variable: JSON-RPC error -32603.'),
    complete(PAGE, outcome={"transport": True}, error="transport_error",
             message='Server "docs" could not be reached to complete the template\'s variable (the transport failed).'),
    complete(PAGE, config={"timeoutMs": 2500}, outcome={"timedOut": True}, error="deadline",
             message='Server "docs" did not answer the completion within 2500 ms.'),
    complete(PAGE, outcome={"malformed": True}, error="malformed_result",
             message='Server "docs" answered the completion with a malformed result (the host\'s client refused the '
                     'result).'),
    *[complete(PAGE, outcome=o, error="malformed_result",
               message='Server "docs" answered the completion with a malformed result (expected {completion: '
                       '{values: [...]}}).')
      for o in ({"result": {}}, {"result": {"completion": {"values": "a"}}}, {"result": {"completion": []}},
                {"resultText": "[1]"}, {"resultText": "{not json"})],
])

CAPPED = [f"{i:02}-" + "z" * 30 for i in range(60)]


def fits(cap):
    """How many of CAPPED fit under `cap` characters, by the documented rule (cut from the end)."""
    for n in range(len(CAPPED), -1, -1):
        text = output("docs", PAGE, CAPPED[:n], has_more=True, omitted={"cut": 60 - n})
        if len(text) <= cap:
            return n
    return 0


case("complete_output_within_its_cap", "past maxOutputChars the last values are cut and counted until the output fits",
     [refresh("docs")] + [
         complete(PAGE, config={"maxOutputChars": cap}, outcome=answer(CAPPED, hasMore=True),
                  expect=output("docs", PAGE, CAPPED[:fits(cap)], has_more=True, omitted={"cut": 60 - fits(cap)}))
         for cap in (1000, 1500, 3000)
     ])

case("complete_bad_settings", "completion settings out of bounds are refused", [
    refresh("docs"),
    complete(PAGE, config={"maxOutputChars": 999}, error="invalid_argument",
             message=invalid("completion settings: maxOutputChars must be from 1000 to 100000")),
    complete(PAGE, config={"timeoutMs": 0}, error="invalid_argument",
             message=invalid("completion settings: timeoutMs must be from 1 to 600000")),
])

if __name__ == "__main__":
    write_all(OUT, CASES, "completion tool")
