#!/usr/bin/env python3
"""Writes tests/vectors/read_tool/*.json: ReadMcpResourceTool (op `read`) in the catalog format of
tests/vectors/README.md ("read_tool").

A `read` op validates the model's `input` against the catalog (with `config`, the read settings, when
given); `expectRequest` is what the host must send (`{"server", "uri", "params"}`). `outcome` is what
became of that request — `{"result": <object>}`, `{"resultText": "<raw JSON>"}`, `{"rpcError": code}`,
`{"transport": true}`, `{"timedOut": true}` or `{"malformed": true}` — and `expect` the output, or
`expectError`/`expectMessage` the tool error. A refused input has no `outcome`.

Expected outputs are written by hand from docs/tools.md and serialized here with Python's json module
(compact, non-ASCII kept); the truncation figures are computed here from the documented rule,
independently of mcplens.

Run: python3 tests/vectors/gen_read_tool.py
"""
from __future__ import annotations

import pathlib

from gen_catalog import OK, TL, compact, lists, rpc_msg, tw
from vector_files import write_all

OUT = pathlib.Path(__file__).parent / "read_tool"
CASES: list[dict] = []
CAP = 100_000


def case(name, description, ops):
    CASES.append({"name": name, "description": description, "ops": ops})


def refresh(server, resources=(), templates=()):
    return {"op": "refresh", "server": server, **lists(resources=list(resources), templates=list(templates)),
            "expect": OK}


def read(inp, *, outcome=None, expect=None, error=None, message=None, config=None):
    op: dict = {"op": "read", "input": inp}
    if config is not None:
        op["config"] = config
    if outcome is not None:
        op["expectRequest"] = {"server": inp["server"], "uri": inp["uri"], "params": compact({"uri": inp["uri"]})}
    if outcome is not None:
        op["outcome"] = outcome
    if expect is not None:
        op["expect"] = expect
    if error is not None:
        op["expectError"] = error
    if message is not None:
        op["expectMessage"] = message
    return op


def text(uri, t, mime=None, **extra):
    d = {"uri": uri}
    if mime is not None:
        d["mimeType"] = mime
    d["text"] = t
    d.update(extra)
    return d


def summary(c):
    """A content's summary in the header: uri, mimeType?, then textChars or blobBytes."""
    d = {"uri": c["uri"]}
    if "mimeType" in c:
        d["mimeType"] = c["mimeType"]
    if "text" in c:
        d["textChars"] = len(c["text"])
    else:
        d["blobBytes"] = c["blobBytes"]
    return d


def header(server, uri, summaries, removed=0, truncated=None, more=None):
    d: dict = {}
    if truncated is not None:
        d["truncated"] = truncated
    if removed:
        d["removedChars"] = removed
    d.update(server=server, uri=uri, contents=summaries)
    if more is not None:
        d["moreContents"] = more
    return compact(d)


def separator(i, shown, chars):
    return f"\n--- content {i + 1} text ({shown} of {chars} characters) ---\n"


def output(server, uri, contents, removed=0):
    """The whole output: the header line, then each text under its separator, as written."""
    out = header(server, uri, [summary(c) for c in contents], removed)
    for i, c in enumerate(contents):
        if "text" in c:
            out += separator(i, len(c["text"]), len(c["text"])) + c["text"]
    return out


def result(*contents, **extra):
    return {"result": {"contents": list(contents), **extra}}


README = {"uri": "file:///README.md", "name": "readme"}
FILES = tw("file:///{path}", "files")
ROWS = tw("db://{table}/{id}", "rows")


def unlisted(server):
    return (f'The URI is not a resource server "{server}" listed, nor does it fit one of its resource templates. '
            "Read a URI from ListMcpResourcesTool, or fill in a template from ListMcpResourceTemplatesTool, of the "
            "same server.")


case("read_listed_resource", "a URI the server listed is read; the text comes back as the server sent it", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"},
         outcome=result(text("file:///README.md", "# Hello\n\tworld", "text/markdown")),
         expect=output("docs", "file:///README.md", [text("file:///README.md", "# Hello\n\tworld", "text/markdown")])),
])
case("read_template_fill", "a URI that fits one of the server's templates is read", [
    refresh("docs", [], [FILES, ROWS]),
    read({"server": "docs", "uri": "db://users/42"},
         outcome=result(text("db://users/42", '{"id":42}', "application/json")),
         expect=output("docs", "db://users/42", [text("db://users/42", '{"id":42}', "application/json")])),
])
case("read_unlisted_uri", "a URI neither listed nor fitting a template of that server is refused, naming the "
     "rule and the server, never the URI", [
    refresh("docs", [README], [ROWS]),
    refresh("other", [], [FILES]),
    read({"server": "docs", "uri": "https://example.com/?token=s3cret"}, error="unlisted_uri", message=unlisted("docs")),
    read({"server": "docs", "uri": "file:///etc/passwd"}, error="unlisted_uri", message=unlisted("docs")),
    read({"server": "other", "uri": "file:///notes.txt"},
         outcome=result(text("file:///notes.txt", "notes")),
         expect=output("other", "file:///notes.txt", [text("file:///notes.txt", "notes")])),
    read({"server": "other", "uri": "file:///etc/passwd"}, error="unlisted_uri", message=unlisted("other")),
])
case("read_no_listing", "a server with no listing to check against (never listed, or its listing failed with "
     "nothing kept) is refused saying so, not as an unlisted URI: the code stays unlisted_uri", [
    {"op": "add", "server": "fresh"},
    read({"server": "fresh", "uri": "file:///README.md"}, error="unlisted_uri",
         message='Server "fresh" has no listing of its resources yet, so the URI cannot be checked against them. '
                 "Try again once ListMcpResourcesTool lists the server."),
    {"op": "refresh", "server": "broken",
     **lists(resources=[README], tpl_answers=[{"rpcError": {"code": -32603, "message": "boom"}}]),
     "expect": {"disposition": "failed", "failure": "server_error"}},
    read({"server": "broken", "uri": "file:///README.md"}, error="unlisted_uri",
         message='Server "broken"\'s resources could not be listed, so the URI cannot be checked against them. '
                 f"The listing failed: {rpc_msg('broken', TL, -32603)}"),
])
case("read_any_uri", "with anyUri any well-formed URI is read on a server of the catalog", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "mem://anything"}, config={"anyUri": True},
         outcome=result(text("mem://anything", "x")),
         expect=output("docs", "mem://anything", [text("mem://anything", "x")])),
    read({"server": "nope", "uri": "mem://anything"}, config={"anyUri": True}, error="unknown_server",
         message='Server "nope" not found. Available servers: docs'),
])
case("read_unknown_server", "an unknown server is refused, naming the available servers", [
    {"op": "add", "server": "zeta"},
    refresh("alpha", [README]),
    read({"server": "nope", "uri": "file:///README.md"}, error="unknown_server",
         message='Server "nope" not found. Available servers: alpha, zeta'),
])
case("read_invalid_input", "the input must be {server: string, uri: string} and nothing else", [
    refresh("docs", [README]),
    read({"server": "docs"}, error="invalid_argument", message='invalid input: "uri" is required'),
    read({"uri": "file:///README.md"}, error="invalid_argument", message='invalid input: "server" is required'),
    read({"server": "docs", "uri": 7}, error="invalid_argument", message='invalid input: "uri" must be a string'),
    read({"server": "docs", "uri": "file:///README.md", "offset": 1}, error="invalid_argument",
         message='invalid input: unknown input field "offset"'),
    read(["docs", "file:///README.md"], error="invalid_argument", message="invalid input: the input is not an object"),
    read(None, error="invalid_argument", message="invalid input: the input is not an object"),
])
case("read_bad_uri", "an empty or over-long URI, or one with a character no catalog URI may hold, is refused before anything else", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": ""}, error="invalid_argument",
         message='invalid input: "uri" must be from 1 to 8192 bytes'),
    read({"server": "docs", "uri": "file:///" + "a" * 8185}, error="invalid_argument",
         message='invalid input: "uri" must be from 1 to 8192 bytes'),
    read({"server": "docs", "uri": "file:///README.md\u202e"}, config={"anyUri": True}, error="invalid_argument",
         message='invalid input: "uri" holds a control, whitespace, invisible or U+FFFD character'),
    read({"server": "docs", "uri": "file:///a b"}, config={"anyUri": True}, error="invalid_argument",
         message='invalid input: "uri" holds a control, whitespace, invisible or U+FFFD character'),
    read({"server": "docs", "uri": "file:///\ufffd.md"}, config={"anyUri": True}, error="invalid_argument",
         message='invalid input: "uri" holds a control, whitespace, invisible or U+FFFD character'),
])
SLOW = tw("{+v0}{+v1}{+v2}{+v3}{+v4}{+v5}{+v6}{+v7}{+v8}{+v9}{+v10}{+v11}{+v12}{+v13}{+v14}{+v15}{+v16}{+v17}{+v18}"
          "{+v19}~~", "slow")
case("read_match_limit", "a URI whose template match gave up is refused with match_limit, not as unlisted", [
    refresh("evil", [], [SLOW]),
    read({"server": "evil", "uri": "a" * 400}, error="match_limit",
         message='Matching the URI against server "evil"\'s resource templates gave up (too many ways to split it). '
                 "Read a URI from ListMcpResourcesTool, or a simpler filling of a template."),
])
dirty = "\u202eevil\u200b \x1b[31mred\x1b[0m\n\tok\x07"
clean = "evil red\n\tok"
case("read_sanitizes", "text loses invisible, control and bidi characters (counted), keeps newlines and tabs; "
     "content URIs and MIME types are labels; _meta and unknown fields are dropped", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"},
         outcome=result(text("file:///README.md", dirty, "text/\u200bplain", _meta={"secret": "x"}, annotations={}),
                        _meta={"k": 1}),
         expect=output("docs", "file:///README.md", [text("file:///README.md", clean, "text/plain")],
                       removed=len(dirty) - len(clean))),
])
case("read_text_has_no_field_cap", "a text longer than the catalog's 2,048-character field cap comes back whole", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, outcome=result(text("file:///README.md", "é" * 5000)),
         expect=output("docs", "file:///README.md", [text("file:///README.md", "é" * 5000)])),
])
case("read_blob_summarized", "a blob is its URI, MIME type and decoded size, never the base64", [
    refresh("docs", [{"uri": "file:///logo.png", "name": "logo"}]),
    read({"server": "docs", "uri": "file:///logo.png"},
         outcome=result({"uri": "file:///logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
                        {"uri": "file:///logo.png#2", "blob": "QUJDRA"}),
         expect=output("docs", "file:///logo.png", [{"uri": "file:///logo.png", "mimeType": "image/png", "blobBytes": 8},
                                                     {"uri": "file:///logo.png#2", "blobBytes": 4}])),
])


def truncated_output(server, uri, contents, cap, removed=0):
    """The documented rule, computed independently: the summaries take at most half the cap; the
    header is sized with its largest figures (every text shown, every content omitted); text then
    fills the rest in content order, each under its separator (sized for the whole text); the first
    text cut ends the output."""
    n = len(contents)
    total = sum(len(c.get("text", "")) for c in contents)

    def note(shown, omitted):
        return {"textChars": total, "shownChars": shown, "omittedContents": omitted, "maxOutputChars": cap}

    base = len(header(server, uri, [], removed, note(total, n), n))
    listed, used = 0, base
    for c in contents:
        size = len(compact(summary(c))) + 1
        if used + size > cap // 2:
            break
        used += size
        listed += 1
    more = n - listed if listed < n else None
    sums = [summary(c) for c in contents[:listed]]
    budget = cap - len(header(server, uri, sums, removed, note(total, n), more))
    shown: dict[int, int] = {}
    for i, c in enumerate(contents[:listed]):
        if "text" not in c:
            continue
        chars = len(c["text"])
        sep = len(separator(i, chars, chars))
        if sep > budget:
            break
        budget -= sep
        take = min(chars, budget)
        budget -= take
        shown[i] = take
        if take < chars:
            break
    omitted = sum(1 for i, c in enumerate(contents) if "text" in c and i not in shown)
    out = header(server, uri, sums, removed, note(sum(shown.values()), omitted), more)
    for i, take in shown.items():
        out += separator(i, take, len(contents[i]["text"])) + contents[i]["text"][:take]
    assert len(out) <= cap
    return out


big = ("line \"quoted\" ünïcode\n" * 12_000)[:250_000]
case("read_capped_default", "a 250,000-character text is cut to the 100,000-character output cap, and the output says so", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, outcome=result(text("file:///README.md", big, "text/plain")),
         expect=truncated_output("docs", "file:///README.md", [text("file:///README.md", big, "text/plain")], CAP)),
])
parts = [text("file:///README.md", "a" * 600), {"uri": "file:///b", "blob": "QUJD"}, text("file:///c", "c" * 600),
         text("file:///d", "d" * 10)]
case("read_capped_config", "maxOutputChars sets the cap: text is cut in content order, later contents omitted", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, config={"maxOutputChars": 1000},
         outcome=result(*parts),
         expect=truncated_output("docs", "file:///README.md", [{"uri": "file:///README.md", "text": "a" * 600},
                                                                {"uri": "file:///b", "blobBytes": 3},
                                                                {"uri": "file:///c", "text": "c" * 600},
                                                                {"uri": "file:///d", "text": "d" * 10}], 1000)),
])
many = [text(f"file:///part/{i}", "x" * 20) for i in range(200)]
case("read_capped_many_parts", "the summaries of a read's contents take at most half the cap: past it "
     "\"moreContents\" counts the parts not summarized, and the text still fills the rest", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, config={"maxOutputChars": 2000},
         outcome=result(*many),
         expect=truncated_output("docs", "file:///README.md", many, 2000)),
])
case("read_server_error", "a JSON-RPC error keeps only its code; -32002 is named", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, outcome={"rpcError": -32002}, error="server_error",
         message='Server "docs" could not read the resource: JSON-RPC error -32002 (resource not found).'),
    read({"server": "docs", "uri": "file:///README.md"}, outcome={"rpcError": -32603}, error="server_error",
         message='Server "docs" could not read the resource: JSON-RPC error -32603.'),
])
case("read_transport_and_deadline", "a failed transport and a timeout are tool errors naming the server "
     "(the timeout from the settings)", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, outcome={"transport": True}, error="transport_error",
         message='Server "docs" could not be reached to read the resource (the transport failed).'),
    read({"server": "docs", "uri": "file:///README.md"}, outcome={"timedOut": True}, error="deadline",
         message='Server "docs" did not answer the read within 30000 ms.'),
    read({"server": "docs", "uri": "file:///README.md"}, config={"timeoutMs": 1500}, outcome={"timedOut": True},
         error="deadline", message='Server "docs" did not answer the read within 1500 ms.'),
])
case("read_malformed", "a result that breaks the schema is malformed_result", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, outcome={"result": {"content": []}},
         error="malformed_result",
         message='Server "docs" answered the read with a malformed result (expected {contents: [{uri, text | blob}]}).'),
    read({"server": "docs", "uri": "file:///README.md"},
         outcome=result({"uri": "file:///README.md", "text": "a", "blob": "QUJD"}), error="malformed_result",
         message='Server "docs" answered the read with a malformed result (a content has neither text nor blob, or '
                 'both).'),
    read({"server": "docs", "uri": "file:///README.md"}, outcome=result({"uri": "file:///README.md", "blob": "Q!=="}),
         error="malformed_result", message='Server "docs" answered the read with a malformed result (a blob is not '
                                           'base64).'),
    read({"server": "docs", "uri": "file:///README.md"}, outcome={"malformed": True}, error="malformed_result",
         message='Server "docs" answered the read with a malformed result (the host\'s client refused the result).'),
])
case("read_lone_surrogate", "a lone UTF-16 surrogate escape in the text becomes U+FFFD", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"},
         outcome={"resultText": '{"contents":[{"uri":"file:///README.md","text":"a\\ud800b"}]}'},
         expect=output("docs", "file:///README.md", [text("file:///README.md", "a\ufffdb")])),
])
case("read_config_invalid", "read settings out of bounds are invalid_argument", [
    refresh("docs", [README]),
    read({"server": "docs", "uri": "file:///README.md"}, config={"maxOutputChars": 10}, error="invalid_argument",
         message="invalid input: read settings: maxOutputChars must be from 1000 to 10000000"),
    read({"server": "docs", "uri": "file:///README.md"}, config={"timeoutMs": 0}, error="invalid_argument",
         message="invalid input: read settings: timeoutMs must be from 1 to 600000"),
])

if __name__ == "__main__":
    write_all(OUT, CASES, "read tool")
