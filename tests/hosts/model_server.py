"""A scripted model endpoint on loopback for the real hosts of `make test-hosts`. It speaks the
protocol each host's model client uses — Gemini `streamGenerateContent` (Gemini CLI), OpenAI Chat
Completions (opencode), OpenAI Responses (Codex CLI), all SSE — and plays one agent turn: call the
resource-templates tool of the server the host calls `everything`, then the read tool with the
first template filled in (every variable "1"), then answer with the text the read returned. Every
request is appended to a JSONL log (path, body) so the test can check what the host offered the
model and passed back to it.

    python model_server.py LOG   (prints the port on stdout, then serves until killed)
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOG = sys.argv[1] if len(sys.argv) > 1 else "/dev/null"
READ_URI = os.environ.get("MODEL_READ_URI", "")
# With MODEL_COMPLETE set, the model completes the template's variable (from MODEL_COMPLETE, what it
# has typed) with the completion tool before it reads, and fills the template with the first value.
COMPLETE_FROM = os.environ.get("MODEL_COMPLETE")
ANSWER_PAUSE = 0.3  # seconds before the final answer
lock = threading.Lock()
ids = itertools.count(1)
TEMPLATES, READ, COMPLETE = "ListMcpResourceTemplatesTool", "ReadMcpResourceTool", "CompleteMcpResourceTemplateTool"


def turn(offered: list[str], results: list[tuple[str, str]]) -> tuple[str, str, dict[str, Any]]:
    """The next move: `("call", tool, args)` or `("text", text, {})`, from the tools offered and the
    results (tool name, output text) so far. With `MODEL_READ_URI` set, the model reads that URI
    first (one it knows), and then says how many characters of the read reached it."""
    # The proxy's tools come after the server's: when the server has one of the same name, the
    # proxy's is the last, renamed `…_2`.
    templates = next((n for n in reversed(offered) if re.search(f"mcplens_{TEMPLATES}(_\\d+)?$", n)), None)
    read = next((n for n in reversed(offered) if re.search(f"mcplens_{READ}(_\\d+)?$", n)), None)
    if templates is None or read is None:
        return ("text", "The resource tools were not offered: " + ", ".join(offered), {})
    if READ_URI:
        if not results:
            return ("call", read, {"uri": READ_URI})
        return ("text", f"The read reached me with {len(results[-1][1])} characters.", {})
    if not results:
        return ("call", templates, {})
    name, output = results[-1]
    complete = next((n for n in reversed(offered) if re.search(f"mcplens_{COMPLETE}(_\\d+)?$", n)), None)
    if name.endswith(TEMPLATES):
        found = re.search(r'"uriTemplate":"([^"]+)"', output)
        if not found:
            return ("text", "No template was listed.", {})
        if COMPLETE_FROM is not None and complete is not None:
            variable = re.search(r"\{([^}]*)\}", found[1])
            asked = {"uriTemplate": found[1], "variable": variable[1] if variable else "", "value": COMPLETE_FROM}
            return ("call", complete, asked)
        return ("call", read, {"uri": re.sub(r"\{[^}]*\}", "1", found[1])})
    if complete is not None and name == complete:
        values = re.search(r'"values":\["([^"]*)"', output)
        templates_out = next(out for n, out in results if n.endswith(TEMPLATES))
        template = re.search(r'"uriTemplate":"([^"]+)"', templates_out)
        if not (values and template):
            return ("text", "Nothing to fill the template with: " + output[:200], {})
        return ("call", read, {"uri": re.sub(r"\{[^}]*\}", values[1], template[1])})
    text = re.search(r"--- content 1 text [^\n]*---\n([^\n]*)", output)
    # A model takes its time to answer; a host may end the server the moment it has the answer
    # (Codex: SIGTERM, then SIGKILL 1.5 ms later). The proxy promises an idle tracker writes an
    # event within 50 ms: this pause (well past it) is what a test of that promise needs.
    time.sleep(ANSWER_PAUSE)
    return ("text", "It says: " + (text[1] if text else output[:200]), {})


def as_text(value: Any) -> str:
    """A tool result as the host passed it back (a string, or parts holding text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(as_text(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "response"):
            if key in value:
                return as_text(value[key])
        return json.dumps(value)
    return str(value)


def gemini(body: dict[str, Any]) -> Iterator[str]:
    offered = [d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
    results = [
        (p["functionResponse"]["name"], as_text(p["functionResponse"].get("response")))
        for c in body.get("contents", [])
        for p in c.get("parts", [])
        if "functionResponse" in p
    ]
    kind, what, args = turn(offered, results)
    part = {"functionCall": {"name": what, "args": args}} if kind == "call" else {"text": what}
    usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
    yield json.dumps({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"})


def chat(body: dict[str, Any]) -> Iterator[str]:
    offered = [t["function"]["name"] for t in body.get("tools") or [] if t.get("type") == "function"]
    calls = {
        c["id"]: c["function"]["name"]
        for m in body.get("messages", [])
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    }
    results = [
        (calls.get(m.get("tool_call_id"), ""), as_text(m.get("content")))
        for m in body.get("messages", [])
        if m.get("role") == "tool"
    ]
    if not offered:  # a side request with no tools (opencode's title): a plain answer
        kind, what, args = ("text", "Reading a resource", {})
    else:
        kind, what, args = turn(offered, results)
    n = next(ids)
    head = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
    if kind == "call":
        call = {
            "index": 0,
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": what, "arguments": json.dumps(args)},
        }
        delta: dict[str, Any] = {"role": "assistant", "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": what}, "stop"
    yield json.dumps({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    yield json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage})
    yield "[DONE]"


def responses(body: dict[str, Any]) -> Iterator[str]:
    offered = []
    namespaces = {}
    for t in body.get("tools") or []:
        if t.get("type") == "function":
            offered.append(t["name"])
        elif t.get("type") == "namespace":
            for inner in t.get("tools", []):
                offered.append(inner["name"])
                namespaces[inner["name"]] = t["name"]
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    calls = {i["call_id"]: i.get("name", "") for i in items if i.get("type") == "function_call"}
    results = [
        (calls.get(i["call_id"], ""), as_text(i.get("output")))
        for i in items
        if i.get("type") == "function_call_output"
    ]
    kind, what, args = turn(offered, results)
    n = next(ids)
    if kind == "call":
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": what,
            "arguments": json.dumps(args),
            "status": "completed",
        }
        if what in namespaces:
            item["namespace"] = namespaces[what]
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": what, "annotations": []}],
        }
    response = {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 0,
        "status": "in_progress",
        "model": body.get("model", "m"),
        "output": [],
    }
    yield json.dumps({"type": "response.created", "response": response})
    yield json.dumps({"type": "response.output_item.added", "output_index": 0, "item": item})
    yield json.dumps({"type": "response.output_item.done", "output_index": 0, "item": item})
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    done = {**response, "status": "completed", "output": [item], "usage": usage}
    yield json.dumps({"type": "response.completed", "response": done})


def results_of(path: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool results (name, text as passed back) in a request of any of the three protocols."""
    if ":streamGenerateContent" in path:
        return [
            (p["functionResponse"]["name"], as_text(p["functionResponse"].get("response")))
            for c in body.get("contents", [])
            for p in c.get("parts", [])
            if "functionResponse" in p
        ]
    if path.endswith("/chat/completions"):
        return [("", as_text(m.get("content"))) for m in body.get("messages", []) if m.get("role") == "tool"]
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    return [("", as_text(i.get("output"))) for i in items if i.get("type") == "function_call_output"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, kind: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with lock, open(LOG, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if ":streamGenerateContent" in self.path:
            events = [f"data: {e}\r\n\r\n" for e in gemini(body)]
        elif self.path.endswith("/chat/completions"):
            events = [f"data: {e}\n\n" for e in chat(body)]
        elif self.path.endswith("/responses"):
            events = [f"event: {json.loads(e)['type']}\ndata: {e}\n\n" for e in responses(body)]
        else:
            # Side questions (Gemini CLI's "who speaks next"), token counts, model lists.
            answer = '{"next_speaker": "user", "reasoning": "done"}'
            candidate = {"content": {"role": "model", "parts": [{"text": answer}]}, "finishReason": "STOP", "index": 0}
            self.reply(
                "application/json", json.dumps({"candidates": [candidate], "totalTokens": 1, "data": []}).encode()
            )
            return
        self.reply("text/event-stream", "".join(events).encode())

    def do_GET(self) -> None:
        self.do_POST()


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
