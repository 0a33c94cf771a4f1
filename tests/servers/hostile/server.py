#!/usr/bin/env python3
"""A small real MCP server (standard library only) that misbehaves on purpose.

    python3 server.py --case CASE [--log PATH] [--good N] [--http PORT] [--completions]

Over stdio it speaks NDJSON JSON-RPC (one message per line); with `--http PORT` it serves a minimal
streamable-HTTP endpoint, `POST http://127.0.0.1:PORT/mcp` (a JSON response, or an SSE stream when
notifications go with it; notifications get 202). It answers `initialize` (echoing the client's
protocol version, with the `resources` capability and `listChanged`), `ping`, the two list
methods, and `resources/read` in every case (see `read_result`). The first `--good` traversals (default 1) of each list are well-formed: two templates, one
resource, one page each. After that, the list(s) the case names misbehave as the case says. The
cases and the error code each must produce are in `cases.json` next to this file (read by the Rust,
Python and Node runners); `--log PATH` appends one JSON line per request received, so a runner can
count traversals.

With `--completions` it also declares the `completions` capability and answers
`completion/complete` by the value asked (`argument.value`), in any case:
  many    10,000 values (`v0` …), `total: 10000`
  huge    `ok` and a 1 MiB value
  evil    values with ANSI, bidi, zero-width and tag characters, and `fine`
  types   a number, null, an object, an array, a boolean, and `fine`
  lies    `["a"]` with `total: "lots"` and `hasMore: "yes"`
  hang    no answer at all
  mnf     -32601        boom    -32603
  else    `intro` and `install`, those that start with the value

Cases (the misbehaving list is `resources/templates/list` unless said otherwise):
  good                  never misbehaves
  repeat_cursor         every page has `nextCursor: "same"`
  cycle_cursor          cursors c1 → c2 → c3 → c1
  growing_cursor        every page's cursor is the previous one plus 4 KiB, forever
  huge_string           a 10 MB description and a 100 KB name (kept, sanitized and cut), and a
                        100 KB URI template (dropped)
  huge_page             300 templates with 10,000-character descriptions (3 MB; about 650 KB
                        projected, so over a 500,000-byte budget)
  many_items            100,000 tiny templates in one page
  deep_meta             `_meta` nested 100 deep on the result and on each template
  deeper_meta           `_meta` nested 100,000 deep (beyond most JSON parsers' recursion limits)
  lone_surrogate        names and descriptions holding lone UTF-16 surrogate escapes (`\\ud800`)
  lone_surrogate_cursor a `nextCursor` holding a lone surrogate (cannot be sent back exactly)
  invalid_utf8          raw invalid UTF-8 bytes inside a name, on the wire
  wrong_id              the response carries another request's id
  never_respond         no response at all
  disconnect_mid_page   half a page, then the process exits (stdio) / the connection drops (HTTP)
  list_changed_storm    1,000 `notifications/resources/list_changed` over about one second while
                        the templates request is pending, then a good page
  mnf_templates         -32601 on `resources/templates/list` (a legacy server), resources fine
  mnf_resources         -32601 on `resources/list`, templates fine
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TEMPLATES = "resources/templates/list"
RESOURCES = "resources/list"

GOOD_TEMPLATES = [
    {"uriTemplate": "file:///{path}", "name": "files", "title": "Files", "mimeType": "text/plain"},
    {"uriTemplate": "db://{table}/{id}", "name": "rows", "description": "A row"},
]
GOOD_RESOURCES = [{"uri": "file:///README.md", "name": "readme"}]

CASES = {
    "good",
    "repeat_cursor",
    "cycle_cursor",
    "growing_cursor",
    "huge_string",
    "huge_page",
    "many_items",
    "deep_meta",
    "deeper_meta",
    "lone_surrogate",
    "lone_surrogate_cursor",
    "invalid_utf8",
    "wrong_id",
    "never_respond",
    "disconnect_mid_page",
    "list_changed_storm",
    "mnf_templates",
    "mnf_resources",
}


def read_result(uri: str) -> dict[str, Any]:
    """`resources/read`, in every case: `file:///big.txt` is 1 MiB of text (`BEGIN` first); any other
    `file:///` URI is a text full of invisible, bidi and escape characters; anything else is -32002."""
    if uri == "file:///big.txt":
        text = ("BEGIN " + "0123456789abcdef" * 65_536)[:1_048_576]
    else:
        text = f"\u202econtents\u200b of \x1b[31m{uri}\x1b[0m\U000e0041\n\tend"
    return {"contents": [{"uri": uri, "mimeType": "text/plain\u200b", "text": text}], "_meta": {"secret": "x"}}


def complete(value: Any, result: Any, error: Any) -> list[Action]:
    """`completion/complete`, by the value asked (see the module docs)."""
    answers: dict[str, dict[str, Any]] = {
        "many": {"values": [f"v{i}" for i in range(10_000)], "total": 10_000, "hasMore": False},
        "huge": {"values": ["ok", "x" * 1_048_576]},
        "evil": {"values": ["\x1b[31mred", "a\u202eb", "zero\u200bwidth", "tag\U000e0041", "fine"]},
        "types": {"values": [1, None, {"a": 1}, ["x"], True, "fine"]},
        "lies": {"values": ["a"], "total": "lots", "hasMore": "yes"},
    }
    if value == "hang":
        return [("hang",)]
    if value == "mnf":
        return error(-32601, "Method not found")
    if value == "boom":
        return error(-32603, "Internal error: \x1b[31m secret")
    default = {"values": [v for v in ("intro", "install") if v.startswith(str(value))]}
    return result({"completion": answers.get(str(value), default)})


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# An action list says what to put on the wire for one request:
#   ("send", bytes)   one complete message (a line on stdio; a response or SSE event on HTTP)
#   ("partial", bytes) bytes without a line end, then the connection ends
#   ("sleep", seconds)
#   ("hang",)         never answer
Action = tuple[Any, ...]


class Behaviour:
    """The case's answers; one instance per server process (stdio or HTTP)."""

    def __init__(self, case: str, good: int, log: str | None, completions: bool = False) -> None:
        self.case = case
        self.completions = completions
        self.good = good
        self.log = log
        self.traversals = {TEMPLATES: 0, RESOURCES: 0}
        self.lock = threading.Lock()

    def record(self, message: dict[str, Any]) -> None:
        if self.log is None:
            return
        params = message.get("params")
        entry = {
            "method": message.get("method"),
            "cursor": isinstance(params, dict) and "cursor" in params,
            "t": time.monotonic(),
        }
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def hostile(self, method: str) -> bool:
        count = self.traversals[method]
        if self.case == "good":
            return False
        if self.case == "mnf_resources":
            return method == RESOURCES and count > self.good
        if self.case == "list_changed_storm":
            return method == TEMPLATES and count == self.good + 1  # one storm, not one per refresh
        return method == TEMPLATES and count > self.good

    def handle(self, message: dict[str, Any]) -> list[Action]:
        """The actions answering one incoming message (none for a notification)."""
        self.record(message)
        method = message.get("method")
        if "id" not in message or method is None:
            return []  # a notification, or a response to us: nothing to say
        rid = message["id"]

        def result(r: Any) -> list[Action]:
            return [("send", dumps({"jsonrpc": "2.0", "id": rid, "result": r}))]

        def error(code: int, text: str) -> list[Action]:
            return [("send", dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}}))]

        if method == "initialize":
            version = (message.get("params") or {}).get("protocolVersion", "2025-06-18")
            return result(
                {
                    "protocolVersion": version,
                    "capabilities": {
                        "resources": {"listChanged": True},
                        **({"completions": {}} if self.completions else {}),
                    },
                    "serverInfo": {"name": "hostile", "version": "0.0.1"},
                }
            )
        if method == "ping":
            return result({})
        uri = (message.get("params") or {}).get("uri", "")
        if method == "resources/read" and isinstance(uri, str) and uri.startswith("file:///"):
            return result(read_result(uri))
        if method == "resources/read":
            return error(-32002, f"Resource not found: {uri}")
        if method == "completion/complete" and self.completions:
            return complete((message.get("params") or {}).get("argument", {}).get("value", ""), result, error)
        if method not in (TEMPLATES, RESOURCES):
            return error(-32601, f"Method not found: {method}")
        params = message.get("params") or {}
        cursor = params.get("cursor") if isinstance(params, dict) else None
        with self.lock:
            if cursor is None:
                self.traversals[method] += 1
            hostile = self.hostile(method)
        if not hostile:
            key = "resourceTemplates" if method == TEMPLATES else "resources"
            return result({key: GOOD_TEMPLATES if method == TEMPLATES else GOOD_RESOURCES})
        return self.misbehave(method, rid, cursor)

    def misbehave(self, method: str, rid: Any, cursor: str | None) -> list[Action]:
        case = self.case

        def page(items: list[Any], next_cursor: str | None = None, extra: str = "") -> bytes:
            key = "resourceTemplates" if method == TEMPLATES else "resources"
            r = {key: items}
            if next_cursor is not None:
                r["nextCursor"] = next_cursor
            body = dumps({"jsonrpc": "2.0", "id": rid, "result": r})
            if extra:  # splice raw JSON text into the result object
                body = body[:-2] + b"," + extra.encode() + b"}}"
            return body

        one = [{"uriTemplate": "t://{x}", "name": "t"}]
        if case == "repeat_cursor":
            return [("send", page(one, "same"))]
        if case == "cycle_cursor":
            nxt = {None: "c1", "c1": "c2", "c2": "c3", "c3": "c1"}.get(cursor, "c1")
            return [("send", page(one, nxt))]
        if case == "growing_cursor":
            return [("send", page(one, (cursor or "g") + "x" * 4096))]
        if case == "huge_string":
            description = "desc\u202e\U000e0041 " + "x" * 10_000_000
            items = [
                {"uriTemplate": "big://{id}", "name": "big\u200b" + "n" * 100_000, "description": description},
                {"uriTemplate": "x" * 100_000 + "{id}", "name": "dropped"},
            ]
            return [("send", page(items))]
        if case == "huge_page":
            items = [
                {"uriTemplate": f"t://{n}/{{x}}", "name": f"t{n}", "description": "d" * 10_000} for n in range(300)
            ]
            return [("send", page(items))]
        if case == "many_items":
            item = b'{"uriTemplate":"t://{x}","name":"t"}'
            key = b"resourceTemplates" if method == TEMPLATES else b"resources"
            body = (
                b'{"jsonrpc":"2.0","id":'
                + dumps(rid)
                + b',"result":{"'
                + key
                + b'":['
                + b",".join([item] * 100_000)
                + b"]}}"
            )
            return [("send", body)]
        if case in ("deep_meta", "deeper_meta"):
            depth = 100 if case == "deep_meta" else 100_000
            item = '{"uriTemplate":"meta://{id}","name":"meta","_meta":' + nested(depth) + "}"
            body = '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":{"resourceTemplates":[' + item + "]"
            body += ',"_meta":' + nested(depth) + "}}"
            return [("send", body.encode())]
        if case == "lone_surrogate":
            body = (
                '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":{"resourceTemplates":['
                '{"uriTemplate":"s://{id}","name":"a\\ud800b","description":"\\udc00 lone"},'
                '{"uriTemplate":"s://\\ud800/{id}","name":"dropped"}]}}'
            )
            return [("send", body.encode())]
        if case == "lone_surrogate_cursor":
            body = (
                '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":{"resourceTemplates":'
                '[{"uriTemplate":"s://{id}","name":"s"}],"nextCursor":"c\\udfff"}}'
            )
            return [("send", body.encode())]
        if case == "invalid_utf8":
            body = (
                b'{"jsonrpc":"2.0","id":'
                + dumps(rid)
                + b',"result":{"resourceTemplates":[{"uriTemplate":"u://{id}","name":"bad\xff\xfe\xc3("}]}}'
            )
            return [("send", body)]
        if case == "wrong_id":
            other = rid + 1000 if isinstance(rid, int) else f"{rid}-other"
            return [("send", dumps({"jsonrpc": "2.0", "id": other, "result": {"resourceTemplates": one}}))]
        if case == "never_respond":
            return [("hang",)]
        if case == "disconnect_mid_page":
            full = page(GOOD_TEMPLATES)
            return [("partial", full[: len(full) // 2])]
        if case == "list_changed_storm":
            note = dumps({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
            actions: list[Action] = []
            for i in range(1000):
                actions.append(("send", note))
                if i % 10 == 9:
                    actions.append(("sleep", 0.01))
            actions.append(("send", page(GOOD_TEMPLATES)))
            return actions
        if case in ("mnf_templates", "mnf_resources"):
            return [("send", dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "nope"}}))]
        raise AssertionError(case)


def serve_stdio(behaviour: Behaviour) -> None:
    out = sys.stdout.buffer
    out_lock = threading.Lock()

    def run(actions: list[Action]) -> None:
        for action in actions:
            if action[0] == "send":
                with out_lock:
                    out.write(action[1] + b"\n")
                    out.flush()
            elif action[0] == "partial":
                with out_lock:
                    out.write(action[1])
                    out.flush()
                os._exit(0)
            elif action[0] == "sleep":
                time.sleep(action[1])
            elif action[0] == "hang":
                return

    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        actions = behaviour.handle(message)
        if any(a[0] == "sleep" for a in actions):
            # Long answers (the storm) run on their own thread so pings and cancels still flow.
            threading.Thread(target=run, args=(actions,), daemon=True).start()
        else:
            run(actions)


def serve_http(behaviour: Behaviour, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # no server-initiated stream
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_DELETE = do_GET

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                message = json.loads(raw)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                self.send_response(400)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            actions = behaviour.handle(message)
            if not actions:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            sends = [a for a in actions if a[0] == "send"]
            if any(a[0] == "hang" for a in actions):
                time.sleep(3600)
                return
            if any(a[0] == "partial" for a in actions):
                body = next(a[1] for a in actions if a[0] == "partial")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) * 2))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if len(sends) == 1:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(sends[0][1])))
                self.end_headers()
                self.wfile.write(sends[0][1])
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for action in actions:
                if action[0] == "send":
                    self.wfile.write(b"event: message\ndata: " + action[1] + b"\n\n")
                    self.wfile.flush()
                elif action[0] == "sleep":
                    time.sleep(action[1])

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("--good", type=int, default=1, help="well-formed traversals before misbehaving")
    parser.add_argument("--log", help="append one JSON line per request received")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--completions", action="store_true", help="declare completions; answer by the value")
    args = parser.parse_args()
    behaviour = Behaviour(args.case, args.good, args.log, args.completions)
    if args.http is not None:
        serve_http(behaviour, args.http)
    else:
        serve_stdio(behaviour)


if __name__ == "__main__":
    main()
