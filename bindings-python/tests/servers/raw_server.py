"""A stdlib-only MCP stdio server that sends hand-written pages no SDK server would let through.

`python raw_server.py SCENARIO`. It answers `initialize` (echoing the client's version, with the
`resources` capability), `server/discover` with -32601 (so a 2.x `Client` falls back to the
handshake), and `resources/templates/list` from the scenario's script.

Scenarios:
- `sloppy`: one page whose optional fields are all wrong, plus `_meta`, `icons`, unknown keys and
  bidi/tag characters: the items are kept, the bad fields dropped, the text sanitized.
- `malformed`: `resourceTemplates` is not an array.
- `cursor_int`: `nextCursor` is a number.
- `crash`: the process exits when asked for templates.
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
    "malformed": {"resourceTemplates": "nope"},
    "cursor_int": {"resourceTemplates": [], "nextCursor": 5},
}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(scenario: str) -> None:
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
            if scenario == "crash":
                sys.exit(0)
            send({"jsonrpc": "2.0", "id": rid, "result": SCRIPTS[scenario]})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main(sys.argv[1])
