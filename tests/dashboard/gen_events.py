"""Writes a tracking events file (docs/events.md, schema 1) with known content, for the report's
browser test and `make bench-report`.

    python3 gen_events.py OUT.jsonl [--events N] [--sessions N] [--seed N] [--start ISO]
                          [--planted] [--bad-lines N] [--no-templates]

Deterministic for a given seed. Sessions start with `initialize` and `resources/templates/list`
(its response names the templates `notes://{topic}/{id}` and `file:///docs/{name}`, unless
--no-templates), then tools/list, tools/call, resources/read (many distinct note URIs),
resources/subscribe and prompts/get, with tool errors, JSON-RPC errors and events ≈ 400 bytes
long. --planted puts HTML, script and bidi text into tool names, URIs, error messages and client
names (the escaping test); --bad-lines adds that many lines that are not events.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import datetime, timedelta, timezone

TEMPLATES = ["notes://{topic}/{id}", "file:///docs/{name}"]
TOOLS = ["search", "echo", "fetch_page", "summarize", "translate", "lookup_user", "create_ticket", "run_query"]
TOPICS = ["rust", "python", "node", "ops", "design"]
CLIENTS = [("claude-code", "2.1.0"), ("cursor", "1.7.2"), ("mcp-inspector", "0.16.0"), ("claude-code", "2.0.9")]
PROMPTS = ["greet", "review_code", "explain"]
PLANTED = {
    "tool": '<script>window.__pwned="tool"</script>',
    "uri": 'notes://x/"><img src=x onerror="window.__pwned=\'uri\'">',
    "message": "<svg onload=\"window.__pwned='message'\">boom</svg> \u202eevil\u202c",
    "client": "<b onmouseover=alert(1)>client</b>\u2066",
}


ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def b62(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(ALPHABET, k=n))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=0, help="default: events / 200, at least 1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", default="2026-11-29T10:00:00+00:00")
    ap.add_argument("--planted", action="store_true")
    ap.add_argument("--bad-lines", type=int, default=0)
    ap.add_argument("--no-templates", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sessions = a.sessions or max(1, a.events // 200)
    start = datetime.fromisoformat(a.start)
    # The events are spread over one hour per 10,000 events (at least ten minutes).
    span_ms = max(600_000, a.events * 360)
    per_session = [a.events // sessions + (1 if i < a.events % sessions else 0) for i in range(sessions)]
    bad_at = set(rng.sample(range(a.events + a.bad_lines), a.bad_lines)) if a.bad_lines else set()
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with open(a.out, "w", encoding="utf-8") as out:
        written = 0
        emitted = 0
        for s, count in enumerate(per_session):
            sid = "ses_" + b62(rng, 27)
            trace = f"{rng.getrandbits(128):032x}"
            client = CLIENTS[s % len(CLIENTS)]
            if a.planted and s == 0:
                client = (PLANTED["client"], "6.6.6")
            t0 = rng.randrange(span_ms)
            for k in range(count):
                while emitted in bad_at:
                    out.write(["not json at all", '{"type":"mcp:tools/call"}', "{truncated", "[]"][emitted % 4] + "\n")
                    emitted += 1
                emitted += 1
                if k == 0:
                    kind = "initialize"
                elif k == 1:
                    kind = "resources/templates/list"
                else:
                    r = rng.random()
                    kind = (
                        "tools/call"
                        if r < 0.45
                        else "resources/read"
                        if r < 0.80
                        else "tools/list"
                        if r < 0.88
                        else "prompts/get"
                        if r < 0.95
                        else "resources/subscribe"
                    )
                ts = start + timedelta(milliseconds=min(span_ms - 1, t0 + k * rng.randrange(1, 400)))
                duration = round(rng.lognormvariate(1.0, 1.0), 3)
                e: dict = {
                    "schema": 1,
                    "id": "evt_" + b62(rng, 27),
                    "type": "mcp:" + kind,
                    "timestamp": ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
                    + f"{ts.microsecond // 1000:03d}Z",
                    "durationMs": duration,
                    "sessionId": sid,
                    "requestId": k,
                    "protocolVersion": "2025-06-18",
                    "client": {"name": client[0], "version": client[1]},
                    "server": {"name": "notes-server", "version": "0.3.0"},
                    "transport": "http",
                    "isError": False,
                    "traceId": trace,
                    "spanId": f"{rng.getrandbits(64):016x}",
                    "truncated": [],
                }
                if kind == "tools/call":
                    tool = TOOLS[min(int(rng.expovariate(0.6)), len(TOOLS) - 1)]
                    if a.planted and k == 2:
                        tool = PLANTED["tool"]
                    e["resourceName"] = tool
                    e["parameters"] = {"name": tool, "arguments": {"query": "q" + b62(rng, 6)}}
                    if rng.random() < 0.04:
                        e["isError"] = True
                        msg = PLANTED["message"] if a.planted and k < 20 else f"{tool} failed: upstream timeout"
                        e["error"] = {"type": "tool_error", "message": msg}
                    else:
                        e["response"] = {"content": [{"type": "text", "text": "ok " + b62(rng, 8)}]}
                elif kind in ("resources/read", "resources/subscribe"):
                    if rng.random() < 0.8:
                        uri = f"notes://{rng.choice(TOPICS)}/{rng.randrange(100_000)}"
                    else:
                        uri = f"file:///docs/{rng.choice(['intro', 'api', 'faq'])}.md"
                    if a.planted and k == 3:
                        uri = PLANTED["uri"]
                    e["resourceName"] = uri
                    e["parameters"] = {"uri": uri}
                    if kind == "resources/read" and rng.random() < 0.03:
                        e["isError"] = True
                        e["error"] = {"code": -32002, "type": "-32002", "message": "Resource not found"}
                    elif kind == "resources/read":
                        e["response"] = {
                            "contents": [
                                {
                                    "uri": uri,
                                    "mimeType": "text/markdown",
                                    "textBytes": rng.randrange(50, 5000),
                                    "sha256": f"{rng.getrandbits(256):064x}",
                                }
                            ]
                        }
                elif kind == "resources/templates/list":
                    if not a.no_templates:
                        e["response"] = {"resourceTemplates": [{"uriTemplate": t, "name": t} for t in TEMPLATES]}
                elif kind == "prompts/get":
                    p = rng.choice(PROMPTS)
                    e["resourceName"] = p
                    e["parameters"] = {"name": p, "arguments": {"who": "you"}}
                out.write(dumps(e) + "\n")
                written += 1
        while emitted < a.events + a.bad_lines:
            out.write("not json at all\n")
            emitted += 1


if __name__ == "__main__":
    main()
