"""A stdlib-only MCP stdio server that sends hand-written pages no SDK server would let through.

`python raw_server.py SCENARIO`. It answers `initialize` (echoing the client's version, with the
`resources` capability), `server/discover` with -32601 (so a 2.x `Client` falls back to the
handshake), `resources/list` with one resource, and `resources/templates/list` from the
scenario's script.

Scenarios:
- `sloppy`: one page whose optional fields are all wrong, plus `_meta`, `icons`, unknown keys and
  bidi/tag characters: the items are kept, the bad fields dropped, the text sanitized.
- `malformed`: `resourceTemplates` is not an array.
- `cursor_int`: `nextCursor` is a number.
- `crash`: the process exits when asked for templates.
- `mortal`: the `sloppy` page; the process exits when pinged.
- `hostile:VARIANT`: a good page (two templates) first, then on every later templates request:
  - `items`: 100,000 tiny templates in one page (over the 10,000-item bound);
  - `bytes`: 1,000 templates with 10,000-character descriptions (a 10 MB page, over the byte bound);
  - `description`: one template whose description is 10 MB of text with bidi and tag characters;
  - `meta`: `_meta` nested 100 deep on the result and on each template (within the SDK's parser);
  - `deep_meta`: `_meta` nested 100,000 deep, which the SDK's own JSON parser refuses (no answer).
"""

from __future__ import annotations

import json
import sys
from typing import Any

SLOPPY_PAGE = {
    "resourceTemplates": [
        {
            "uriTemplate": "file:///{path}",
            "name": "files\u202e\U000e0041",
            "title": 5,
            "description": "line one\nline two\x1b[31m",
            "mimeType": ["text/plain"],
            "annotations": {"priority": 2, "audience": ["system"], "lastModified": "2024-05-01"},
            "_meta": {"secret": "x"},
            "icons": [{"src": "https://example.invalid/i.png"}],
            "xExtra": 1,
        },
        {"uriTemplate": "db://{table}/{id}", "name": "rows", "annotations": {"audience": ["user"], "priority": 1}},
    ],
    "xResultExtra": True,
}

SCRIPTS: dict[str, Any] = {
    "sloppy": SLOPPY_PAGE,
    "mortal": SLOPPY_PAGE,
    "malformed": {"resourceTemplates": "nope"},
    "cursor_int": {"resourceTemplates": [], "nextCursor": 5},
}
GOOD_PAGE = {
    "resourceTemplates": [
        {"uriTemplate": "file:///{path}", "name": "files"},
        {"uriTemplate": "db://{table}/{id}", "name": "rows", "description": "A row"},
    ]
}
RESOURCES_PAGE = {"resources": [{"uri": "file:///README.md", "name": "readme"}]}


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def hostile(variant: str) -> str:
    """The JSON text of a hostile templates page."""
    if variant == "items":
        item = '{"uriTemplate":"t://{x}","name":"t"}'
        return '{"resourceTemplates":[' + ",".join([item] * 100_000) + "]}"
    if variant == "bytes":
        items = [{"uriTemplate": f"t://{n}/{{x}}", "name": f"t{n}", "description": "d" * 10_000} for n in range(1000)]
        return json.dumps({"resourceTemplates": items})
    if variant == "description":
        text = "desc\u202e\U000e0041 " + "x" * 10_000_000
        return json.dumps({"resourceTemplates": [{"uriTemplate": "big://{id}", "name": "big", "description": text}]})
    depth = {"meta": 100, "deep_meta": 100_000}[variant]
    item = '{"uriTemplate":"meta://{id}","name":"meta","_meta":' + nested(depth) + "}"
    return '{"resourceTemplates":[' + item + '],"_meta":' + nested(depth) + "}"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def send_result_text(rid: Any, result: str) -> None:
    sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":' + result + "}\n")
    sys.stdout.flush()


def main(scenario: str) -> None:
    templates_requests = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue  # notifications and responses
        method, rid = msg["method"], msg["id"]
        if method == "initialize":
            version = msg.get("params", {}).get("protocolVersion", "2025-11-25")
            result = {
                "protocolVersion": version,
                "capabilities": {"resources": {}},
                "serverInfo": {"name": f"raw-{scenario}", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "resources/templates/list":
            templates_requests += 1
            if scenario == "crash":
                sys.exit(0)
            if scenario.startswith("hostile:"):
                if templates_requests == 1:
                    send({"jsonrpc": "2.0", "id": rid, "result": GOOD_PAGE})
                else:
                    send_result_text(rid, hostile(scenario.removeprefix("hostile:")))
            else:
                send({"jsonrpc": "2.0", "id": rid, "result": SCRIPTS[scenario]})
        elif method == "resources/list":
            send({"jsonrpc": "2.0", "id": rid, "result": RESOURCES_PAGE})
        elif method == "ping":
            if scenario == "mortal":
                sys.exit(0)
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main(sys.argv[1])
