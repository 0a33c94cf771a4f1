"""Fixture data and the command line shared by `server_v1.py` (mcp 1.x) and `server_v2.py` (mcp 2.x).

The names and payloads are the ones `@modelcontextprotocol/conformance` 0.1.16 asks for.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
from typing import Any

# A 1x1 PNG and a minimal WAV (base64).
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
PNG_BYTES = base64.b64decode(PNG)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

STATIC_TEXT = "This is the content of the static text resource."
WATCHED_TEXT = "Watched resource content"
LOG_STEPS = ("Tool execution started", "Tool processing data", "Tool execution completed")
ERROR_TEXT = "This tool intentionally returns an error for testing"

# Content blocks and prompt messages as wire JSON (camelCase); each server validates them into its
# SDK's own models, so both majors send the same bytes.
IMAGE_BLOCK: dict[str, Any] = {"type": "image", "data": PNG, "mimeType": "image/png"}
AUDIO_BLOCK: dict[str, Any] = {"type": "audio", "data": WAV, "mimeType": "audio/wav"}
EMBEDDED_BLOCK: dict[str, Any] = {
    "type": "resource",
    "resource": {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    },
}
MIXED_BLOCKS: list[dict[str, Any]] = [
    {"type": "text", "text": "Multiple content types test:"},
    IMAGE_BLOCK,
    {
        "type": "resource",
        "resource": {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        },
    },
]

ELICIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"response": {"type": "string", "description": "User's response"}},
    "required": [],
}
SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
    "required": [],
}
SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}],
        },
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}]
            },
        },
    },
    "required": [],
}


def template_text(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


def embedded_prompt(resource_uri: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": resource_uri,
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
    ]


IMAGE_PROMPT: list[dict[str, Any]] = [
    {"role": "user", "content": IMAGE_BLOCK},
    {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}},
]


def elicited(prefix: str, action: str, content: Any) -> str:
    return f"{prefix}: action={action}, content={json.dumps(content or {}, separators=(',', ':'))}"


def parse_args() -> argparse.Namespace:
    """`--port N [--events FILE]`."""
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--events", help="track the server with mcplens, JSONL events to this file")
    return p.parse_args()


def serve(app: Any, port: int, tracker: Any) -> None:
    """Serves the SDK's Starlette app on 127.0.0.1 until SIGINT/SIGTERM, then delivers the tracker's
    events. Open SSE streams get one second to close (uvicorn would otherwise wait for them)."""
    import signal

    import uvicorn

    # uvicorn re-raises the signal it stopped on once it is done: make SIGTERM a KeyboardInterrupt too.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run()
    if tracker is not None:
        tracker.shutdown(5.0)
