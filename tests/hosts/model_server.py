"""A scripted model endpoint on loopback for the real hosts of `make test-hosts`: it speaks the
protocol a host's model client uses (today Gemini's `streamGenerateContent`, SSE) and plays one
agent turn: call the resource-templates tool of the server the host calls `everything`, then the
read tool with the first template filled in (every variable "1"), then answer with the text the
read returned. Every request is appended to a JSONL log (path, body) for the test to check what the
host offered and passed back.

    python model_server.py LOG   (prints the port on stdout, then serves until killed)
"""

from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOG = sys.argv[1] if len(sys.argv) > 1 else "/dev/null"
lock = threading.Lock()


def fill(template: str) -> str:
    return re.sub(r"\{[^}]*\}", "1", template)


def gemini_turn(body: dict[str, Any]) -> dict[str, Any]:
    """The next move from the conversation so far: a function call, or the final text."""
    names = [d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
    templates = next((n for n in names if n.endswith("ListMcpResourceTemplatesTool")), None)
    read = next((n for n in names if n.endswith("ReadMcpResourceTool")), None)
    answered = [
        p["functionResponse"] for c in body.get("contents", []) for p in c.get("parts", []) if "functionResponse" in p
    ]
    if templates is None or read is None:
        return {"text": "The resource tools were not offered: " + ", ".join(names)}
    if not answered:
        return {"functionCall": {"name": templates, "args": {}}}
    last = json.dumps(answered[-1]["response"])
    if answered[-1]["name"] == templates:
        found = re.search(r'\\"uriTemplate\\":\\"([^\\"]+)\\"', last) or re.search(r'"uriTemplate":"([^"]+)"', last)
        if not found:
            return {"text": "No template was listed."}
        return {"functionCall": {"name": read, "args": {"uri": fill(found[1])}}}
    text = re.search(r"--- content 1 text [^\n\\]*---(?:\\n|\n)([^\\\n]*)", last)
    return {"text": "It says: " + (text[1] if text else last[:200])}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with lock, open(LOG, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if ":streamGenerateContent" in self.path:
            part = gemini_turn(body)
            chunk = {
                "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
                "modelVersion": "gemini-2.5-flash",
            }
            data = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if ":generateContent" in self.path:
            # Side questions (e.g. "who speaks next"): a plain answer.
            reply = {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"text": '{"next_speaker": "user", "reasoning": "done"}'}],
                        },
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
            }
        elif ":countTokens" in self.path:
            reply = {"totalTokens": 1}
        else:
            reply = {}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.do_POST()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
