#!/usr/bin/env python3
"""Writes the inputs of tests/vectors/tracking/*.json (one operation in → one event out).

Each case's `fields` (what the event must say, written by hand from docs/events.md) is checked by
every runner. The exact event line (`expect`) is filled in by the Rust runner
(`MCPLENS_BLESS=1 cargo test -p mcplens --test vectors tracking`) and then reviewed; from then on
Rust, Python and Node must each produce exactly that line. Run this script only to add cases: it
keeps the `expect` of cases whose inputs did not change.

Run: python3 tests/vectors/gen_tracking.py
"""
from __future__ import annotations

import json
import pathlib

OUT = pathlib.Path(__file__).parent / "tracking"
T0 = 1_767_323_045_678  # 2026-01-02T03:04:05.678Z
CASES: list[dict] = []
LEGACY = {"transport": "stdio", "client": {"name": "claude-code", "version": "2.1.0"}, "protocolVersion": "2025-11-25"}
HTTP = {"transport": "http", "transportSessionId": "7f3c2a90-4b1e-4d8a-9c55-0e6b1d2f8a31",
        "client": {"name": "inspector", "version": "0.17.0"}, "protocolVersion": "2025-11-25"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-py-client", "version": "2.3.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def case(name, description, method, *, params=None, result=None, error=None, session=None, options=None,
         redact=None, request_id=3, duration_us=1500, fields=None):
    op = {"method": method, "startedAtMs": T0 + len(CASES), "durationUs": duration_us}
    if request_id is not None:
        op["requestId"] = request_id
    if params is not None:
        op["params"] = params
    if error is not None:
        op["error"] = error
    elif result is not None:
        op["result"] = result
    c = {
        "name": name,
        "description": description,
        "seed": 7 + len(CASES),
        "server": {"name": "notes-server", "version": "0.3.0"},
        "session": LEGACY if session is None else session,
        "operation": op,
        "fields": fields or {},
    }
    if options:
        c["options"] = options
    if redact:
        c["redact"] = redact
    CASES.append(c)


def text(t):
    return {"content": [{"type": "text", "text": t}]}


# --- every tracked method (legacy era) ---------------------------------------------------------
case("initialize", "initialize: the client and protocol version come from its params and result (the session has none yet)",
     "initialize", session={"transport": "stdio"}, request_id=0,
     params={"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2.1.0"}},
     result={"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "notes-server", "version": "0.3.0"}},
     fields={"type": "mcp:initialize", "protocolVersion": "2025-11-25", "client": {"name": "claude-code", "version": "2.1.0"}})
case("tools_list_cursor_hidden", "tools/list: params.cursor and result.nextCursor are never recorded",
     "tools/list", params={"cursor": "eyJvIjo1MH0="},
     result={"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "nextCursor": "eyJvIjoxMDB9"},
     fields={"type": "mcp:tools/list", "parameters": {"cursor": "[REDACTED]"}})
case("tools_call_echo", "tools/call: the tool name is the resource name; params and result kept as sent",
     "tools/call", params={"name": "echo", "arguments": {"text": "hello"}}, result=text("hello"),
     fields={"type": "mcp:tools/call", "resourceName": "echo", "isError": False})
case("tools_call_tool_error", "tools/call: a result with isError is an error of type tool_error, its first text block the message",
     "tools/call", params={"name": "divide", "arguments": {"a": 1, "b": 0}},
     result={"content": [{"type": "text", "text": "division by zero"}], "isError": True},
     fields={"isError": True, "error": {"type": "tool_error", "message": "division by zero"}})
case("tools_call_rpc_error", "tools/call: a JSON-RPC error keeps its code; no response",
     "tools/call", params={"name": "nope", "arguments": {}}, error={"code": -32602, "message": "Unknown tool: nope"},
     fields={"isError": True, "error": {"code": -32602, "type": "-32602", "message": "Unknown tool: nope"}, "resourceName": "nope"})
case("tools_call_responses_off_tool_error", "captureResponses off: no response, but a tool error is still an error",
     "tools/call", options={"captureResponses": False}, params={"name": "divide", "arguments": {"a": 1, "b": 0}},
     result={"content": [{"type": "text", "text": "division by zero"}], "isError": True},
     fields={"isError": True, "error": {"type": "tool_error", "message": "tool error"}, "response": None})
case("tools_call_parameters_off", "captureParameters off: no parameters, the resource name and trace context still read",
     "tools/call", options={"captureParameters": False},
     params={"name": "echo", "arguments": {"text": "private"}, "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
     result=text("private"),
     fields={"resourceName": "echo", "parameters": None, "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "parentSpanId": "00f067aa0ba902b7"})
case("tools_call_traceparent", "params._meta.traceparent gives the trace id and the parent span",
     "tools/call", params={"name": "echo", "arguments": {"text": "x"}, "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
     result=text("x"), fields={"traceId": "0af7651916cd43dd8448eb211c80319c", "parentSpanId": "b7ad6b7169203331"})
case("tools_call_invalid_traceparent", "an invalid traceparent (all-zero trace id) is ignored: a fresh trace, no parent",
     "tools/call", params={"name": "echo", "arguments": {}, "_meta": {"traceparent": "00-00000000000000000000000000000000-b7ad6b7169203331-01"}},
     result=text(""), fields={"parentSpanId": None})
case("tools_call_string_request_id", "a string JSON-RPC id is kept as a string",
     "tools/call", request_id="req-42", params={"name": "echo", "arguments": {"text": "a"}}, result=text("a"),
     fields={"requestId": "req-42"})
case("tools_call_no_request_id", "no request id known: no requestId key",
     "tools/call", request_id=None, params={"name": "echo", "arguments": {"text": "a"}}, result=text("a"),
     fields={"requestId": None})
case("tools_call_secrets_redacted", "built-in redaction: secret keys, bearer tokens, URL userinfo and secret query parameters",
     "tools/call",
     params={"name": "deploy", "arguments": {"password": "hunter2", "url": "https://bob:pw@api.example.com/v1?id=7&access_token=abc123",
                                              "note": "use Bearer abcdefghijklmnop to call", "apiKey": "k-1"}},
     result=text("deployed with ghp_0123456789abcdefghijklmnopqrstuvwxyz"),
     fields={"parameters": {"name": "deploy", "arguments": {"password": "[REDACTED]", "url": "https://[REDACTED]@api.example.com/v1?id=7&access_token=[REDACTED]",
                                                             "note": "use Bearer [REDACTED] to call", "apiKey": "[REDACTED]"}}})
case("tools_call_redact_hook", "the user's redact(text) hook sees every string of the event (all in one call)",
     "tools/call", redact="mask-digits", params={"name": "lookup", "arguments": {"phone": "+1 555 0100", "n": 7}},
     result=text("order 1234 shipped"),
     fields={"parameters": {"name": "lookup", "arguments": {"phone": "+# ### ####", "n": 7}}, "response": text("order #### shipped")})
case("tools_call_redact_hook_error_message", "the redact hook also sees the error message and the resource name",
     "tools/call", redact="mask-digits", params={"name": "t2", "arguments": {}}, error={"code": -32000, "message": "row 17 locked"},
     fields={"resourceName": "t#", "error": {"code": -32000, "type": "-32000", "message": "row ## locked"}})
case("tools_call_long_string", "a string over 32 KiB is cut on a character boundary with a marker, and listed",
     "tools/call", params={"name": "echo", "arguments": {"text": "é" * 20000}}, result=text("ok"),
     fields={"truncated": [{"path": "/parameters/arguments/text", "reason": "string_length", "originalBytes": 40000}]})
case("tools_call_deep_nesting", "nesting deeper than 10 becomes a marker",
     "tools/call", params={"name": "t", "arguments": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": {"k": 1}}}}}}}}}}}},
     result=text("ok"))
case("tools_call_wide_array", "an array of 150 items keeps 100 and one marker",
     "tools/call", params={"name": "t", "arguments": {"ids": list(range(150))}}, result=text("ok"))
case("tools_call_wide_object", "an object of 120 keys keeps 100 and a … key",
     "tools/call", params={"name": "t", "arguments": {f"k{i:03}": i for i in range(120)}}, result=text("ok"))
case("tools_call_event_size", "an event over 100 KiB is shrunk to fit (tighter caps first)",
     "tools/call", params={"name": "t", "arguments": {f"s{i}": "x" * 30000 for i in range(5)}}, result=text("ok"))
case("tools_call_image_content", "image data in a result is replaced by its size and SHA-256",
     "tools/call", params={"name": "render", "arguments": {}},
     result={"content": [{"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "mimeType": "image/png"}]})
case("tools_call_embedded_blob", "an embedded resource's blob is replaced by its size and SHA-256",
     "tools/call", params={"name": "fetch", "arguments": {}},
     result={"content": [{"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAECAwQF", "mimeType": "application/octet-stream"}}]})
case("tools_call_identity", "the session's identity is on the event",
     "tools/call", session={**LEGACY, "identity": {"id": "user-17", "name": "Ada", "data": {"plan": "pro"}}},
     params={"name": "echo", "arguments": {"text": "hi"}}, result=text("hi"),
     fields={"identity": {"id": "user-17", "name": "Ada", "data": {"plan": "pro"}}})
case("tools_call_escapes", "control characters, quotes and non-ASCII text are escaped exactly as JSON requires",
     "tools/call", params={"name": "echo", "arguments": {"text": "tab\there \"q\" \\ \u0001 ünï 😀 \u2028"}}, result=text("line\nbreak"))
case("resources_list_cursor_hidden", "resources/list: nextCursor is never recorded",
     "resources/list", params={"cursor": "page-2"},
     result={"resources": [{"uri": "note://1", "name": "one", "mimeType": "text/plain"}], "nextCursor": "page-3"},
     fields={"type": "mcp:resources/list"})
case("resources_read_text", "resources/read: the URI is the resource name; contents summarized (size and SHA-256, no text)",
     "resources/read", params={"uri": "note://1"},
     result={"contents": [{"uri": "note://1", "mimeType": "text/markdown", "text": "# hello\n"}]},
     fields={"resourceName": "note://1"})
case("resources_read_capture_text", "captureResourceText on: the text is kept",
     "resources/read", options={"captureResourceText": True}, params={"uri": "note://2"},
     result={"contents": [{"uri": "note://2", "mimeType": "text/plain", "text": "kept"}]})
case("resources_read_blob", "a blob is never kept: its decoded size and SHA-256",
     "resources/read", params={"uri": "file:///logo.png"},
     result={"contents": [{"uri": "file:///logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}]})
case("resources_read_not_found", "resources/read error -32002",
     "resources/read", params={"uri": "note://missing"}, error={"code": -32002, "message": "Resource not found: note://missing"},
     fields={"isError": True, "resourceName": "note://missing"})
case("resources_read_secret_uri", "a URI's secret query parameter is redacted everywhere, the resource name included",
     "resources/read", params={"uri": "https://cdn.example.com/doc.pdf?X-Amz-Signature=deadbeef&v=2"},
     result={"contents": [{"uri": "https://cdn.example.com/doc.pdf?X-Amz-Signature=deadbeef&v=2", "mimeType": "application/pdf", "blob": "JVBERi0="}]},
     fields={"resourceName": "https://cdn.example.com/doc.pdf?X-Amz-Signature=[REDACTED]&v=2"})
case("resources_subscribe", "resources/subscribe: the URI", "resources/subscribe", params={"uri": "note://1"}, result={},
     fields={"resourceName": "note://1"})
case("resources_unsubscribe", "resources/unsubscribe: the URI", "resources/unsubscribe", params={"uri": "note://1"}, result={},
     fields={"resourceName": "note://1"})
case("resources_templates_list", "resources/templates/list", "resources/templates/list", params={},
     result={"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "note"}], "nextCursor": "t2"})
case("prompts_list", "prompts/list", "prompts/list", params=None,
     result={"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}]})
case("prompts_get", "prompts/get: the prompt name", "prompts/get", params={"name": "greet", "arguments": {"who": "Ada"}},
     result={"messages": [{"role": "user", "content": {"type": "text", "text": "Hello Ada"}}]}, fields={"resourceName": "greet"})
case("prompts_get_error", "prompts/get error", "prompts/get", params={"name": "nope"}, error={"code": -32602, "message": "Unknown prompt"})
case("ping", "ping is tracked", "ping", params=None, result={}, fields={"type": "mcp:ping"})
case("completion_complete_resource", "completion/complete: a ref/resource names its URI template",
     "completion/complete", params={"ref": {"type": "ref/resource", "uri": "note://{id}"}, "argument": {"name": "id", "value": "1"}},
     result={"completion": {"values": ["1", "10"], "hasMore": False}}, fields={"resourceName": "note://{id}"})
case("completion_complete_prompt", "completion/complete: a ref/prompt names the prompt",
     "completion/complete", params={"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
     result={"completion": {"values": ["Ada"]}}, fields={"resourceName": "greet"})
case("logging_set_level", "logging/setLevel", "logging/setLevel", params={"level": "debug"}, result={}, fields={"type": "mcp:logging/setLevel"})
case("tasks_get", "tasks/get", "tasks/get", params={"taskId": "t-1"}, result={"taskId": "t-1", "status": "working"})
case("tasks_result", "tasks/result", "tasks/result", params={"taskId": "t-1"}, result=text("done"))
case("tasks_list", "tasks/list: the cursor is hidden", "tasks/list", params={"cursor": "c1"}, result={"tasks": [], "nextCursor": "c2"})
case("tasks_cancel", "tasks/cancel", "tasks/cancel", params={"taskId": "t-1"}, result={})
case("session_id_derived", "an HTTP session's id is derived from Mcp-Session-Id (the same in every language)",
     "tools/list", session=HTTP, params={}, result={"tools": []}, fields={"transport": "http"})
case("session_id_minted", "no transport session id: the id is minted (from the seed here, for the vector)",
     "tools/list", session={"transport": "memory"}, params={}, result={"tools": []}, fields={"transport": "memory"})
case("session_protocol_version", "the session's negotiated version is on every event", "prompts/list",
     session={**LEGACY, "protocolVersion": "2025-06-18"}, params=None, result={"prompts": []}, fields={"protocolVersion": "2025-06-18"})
case("enable_tracing_off", "enableTracing false: no event at all", "tools/call", options={"enableTracing": False},
     params={"name": "echo", "arguments": {"text": "x"}}, result=text("x"))

# --- protocol 2026-07-28: sessionless ----------------------------------------------------------
MODERN = {"transport": "http", "transportSessionId": "ignored-by-the-2026-era"}
case("modern_tools_call_sessionless", "a 2026-07-28 request: protocolVersion and client from its _meta, no sessionId",
     "tools/call", session=MODERN, params={"name": "echo", "arguments": {"text": "hi"}, "_meta": MODERN_META}, result=text("hi"),
     fields={"sessionId": None, "protocolVersion": "2026-07-28", "client": {"name": "mcp-py-client", "version": "2.3.0"}})
case("modern_server_discover", "server/discover (2026-07-28)", "server/discover", session=MODERN, params={"_meta": MODERN_META},
     result={"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": {"tools": {}}, "serverInfo": {"name": "notes-server", "version": "0.3.0"}},
     fields={"type": "mcp:server/discover", "sessionId": None})
case("modern_subscriptions_listen", "subscriptions/listen names the resource URIs it subscribes to",
     "subscriptions/listen", session=MODERN,
     params={"notifications": {"resourcesListChanged": True, "resourceSubscriptions": ["note://1", "file:///x?token=s3cr3t"]}, "_meta": MODERN_META},
     result={}, fields={"resourceUris": ["note://1", "file:///x?token=[REDACTED]"], "sessionId": None})
case("modern_resources_read", "resources/read in the 2026-07-28 era (-32602 for not found)", "resources/read", session=MODERN,
     params={"uri": "note://404", "_meta": MODERN_META}, error={"code": -32602, "message": "Resource not found"},
     fields={"sessionId": None, "resourceName": "note://404"})
case("modern_resources_directory_read", "resources/directory/read: the URI; its cursor hidden", "resources/directory/read", session=MODERN,
     params={"uri": "file:///docs/", "cursor": "d2", "_meta": MODERN_META},
     result={"resources": [{"uri": "file:///docs/a.md", "name": "a.md"}]}, fields={"resourceName": "file:///docs/"})
case("modern_tasks_update", "tasks/update (2026-07-28)", "tasks/update", session=MODERN,
     params={"taskId": "t-1", "inputResponses": {"q1": {"action": "accept"}}, "_meta": MODERN_META}, result={})
case("modern_redact_hook", "the redact hook sees the resource URIs too", "subscriptions/listen", session=MODERN, redact="mask-digits",
     params={"notifications": {"resourceSubscriptions": ["note://42"]}, "_meta": MODERN_META}, result={},
     fields={"resourceUris": ["note://##"]})


# --- request methods the core does not know: recorded by name, the name bounded ---------------
case("other_method", "a server's own request method is recorded by its name", "acme/search",
     params={"query": "notes about q3", "limit": 5}, result={"hits": [{"uri": "note://7"}]},
     fields={"type": "mcp:acme/search", "resourceName": None, "parameters": {"query": "notes about q3", "limit": 5}})
case("other_method_error", "a server's own request method that failed", "acme/search",
     params={"query": "q"}, error={"code": -32000, "message": "index offline"},
     fields={"type": "mcp:acme/search", "isError": True,
             "error": {"code": -32000, "type": "-32000", "message": "index offline"}})
case("other_method_name_too_long", "a method name over 128 bytes is not carried: (invalid)", "acme/" + "x" * 124,
     params={}, result={}, fields={"type": "mcp:(invalid)"})
case("other_method_name_with_a_space", "a method name outside printable ASCII is not carried: (invalid)",
     "acme/search now", params={}, result={}, fields={"type": "mcp:(invalid)"})
case("tools_call_nothing_captured_projections", "neither captured: a host passes what the core's projections keep (params: the name and _meta; result: isError), and the event is what the whole values give",
     "tools/call", options={"captureParameters": False, "captureResponses": False},
     params={"name": "divide", "arguments": {"a": 1}, "extra": [1, 2], "_meta": {"progressToken": 3}},
     result={"content": [{"type": "text", "text": "secret"}], "isError": True, "structuredContent": {"k": 1}},
     fields={"resourceName": "divide", "parameters": None, "response": None, "isError": True,
             "error": {"type": "tool_error", "message": "tool error"}})
case("tools_call_result_not_an_object_not_captured", "responses not captured: a tools/call result that is not an object passes as nothing (it holds no isError); not a tool error",
     "tools/call", options={"captureParameters": False, "captureResponses": False},
     params=["divide", {"isError": True}], result=[{"isError": True}],
     fields={"resourceName": None, "parameters": None, "response": None, "isError": False})
case("other_method_nothing_captured", "another method, neither captured: only params._meta is read, and no result (not even an isError)",
     "x/custom", options={"captureParameters": False, "captureResponses": False},
     params={"name": "n", "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
     result={"isError": True},
     fields={"parameters": None, "response": None, "isError": False, "traceId": "4bf92f3577b34da6a3ce929d0e0e4736"})


def main() -> None:
    OUT.mkdir(exist_ok=True)
    names = set()
    for c in CASES:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        path = OUT / f"{c['name']}.json"
        old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        inputs = {k: v for k, v in c.items()}
        if old and {k: v for k, v in old.items() if k != "expect"} == inputs:
            inputs["expect"] = old.get("expect")
        else:
            inputs["expect"] = None
            inputs["unblessed"] = True
        path.write_text(json.dumps(inputs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for p in OUT.glob("*.json"):
        if p.stem not in names:
            p.unlink()
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
