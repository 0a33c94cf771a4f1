"""Replays the shared tracking vectors (`tests/vectors/tracking*/`, format in
`tests/vectors/README.md`) through the public Python tracker: each event vector's operation goes
through `mcplens.Tracker` and its native core as a Python host hands it over (params and result
as Python objects, serialized by the binding), to a JSONL file whose line must be byte for byte the
one Rust and Node write; each config vector builds `mcplens.Tracker(...)` from its options."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

import mcplens
from mcplens._tracking import _CODES

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "vectors"
EVENT_CASES = sorted((VECTORS / "tracking").glob("*.json"))
CONFIG_CASES = sorted((VECTORS / "tracking-config").glob("*.json"))

# The core's option names → this binding's keyword arguments (the public constructor).
KWARGS = {
    "enableTracing": "enable_tracing",
    "captureParameters": "capture_parameters",
    "captureResponses": "capture_responses",
    "captureResourceText": "capture_resource_text",
    "queueCapacity": "queue_capacity",
    "identifyMaxRecords": "identify_max_records",
}


def redact_hook(name: str) -> Any:
    assert name == "mask-digits", name
    return lambda s: "".join("#" if c.isascii() and c.isdigit() else c for c in s)


def exporter(spec: dict[str, Any], tmp: pathlib.Path) -> Any:
    kind = spec["type"]
    if kind == "jsonl":
        return (
            mcplens.JsonlExporter((tmp / spec["path"]) if spec["path"] else "")
            if "path" in spec
            else mcplens.JsonlExporter()
        )
    if kind == "otlp":
        return mcplens.OtlpExporter(spec["endpoint"], headers=dict(spec.get("headers", [])))
    if kind == "mcpcat":
        return mcplens.McpcatExporter(spec["projectId"], base_url=spec.get("baseUrl"), api_key=spec.get("apiKey"))
    assert kind == "callback", kind
    return mcplens.CallbackExporter(lambda events: None)


SECONDS = {
    "identifyTimeoutMs": "identify_timeout_seconds",
    "hookTimeoutMs": "hook_timeout_seconds",
    "callbackTimeoutMs": "callback_timeout_seconds",
}


def tracker_kwargs(options: dict[str, Any], tmp: pathlib.Path) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        if key == "exporters":
            kwargs["exporters"] = [exporter(e, tmp) for e in value]
        elif key in SECONDS:
            kwargs[SECONDS[key]] = value / 1000
        else:
            kwargs[KWARGS[key]] = value
    return kwargs


def test_there_are_vectors() -> None:
    assert len(EVENT_CASES) >= 40
    assert len(CONFIG_CASES) >= 10


@pytest.mark.parametrize("path", EVENT_CASES, ids=lambda p: p.stem)
def test_event_vector(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    out = tmp_path / "events.jsonl"
    kwargs = tracker_kwargs(case.get("options", {}), tmp_path)
    redact = case.get("redact")
    tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter(out)], redact=redact and redact_hook(redact), **kwargs)
    server = case["server"]
    core = tracker._start(server["name"], server.get("version"), seed=case["seed"])
    s = case["session"]
    session = core.open_session(s.get("transportSessionId"), s.get("transport"))
    client = s.get("client")
    if client is not None or s.get("protocolVersion") is not None:
        core.set_session_client(
            session, client and client["name"], client and client.get("version"), s.get("protocolVersion")
        )
    if "identity" in s:
        core.begin_identify(session)
        core.resolve_identity(session, s["identity"])
    op = case["operation"]
    core._freeze_clock(op["startedAtMs"] * 1_000_000, op["durationUs"] * 1000)
    code = _CODES.get(op["method"], op["method"])  # another method goes by its name
    rid, params = op.get("requestId"), op.get("params")
    if "error" in op:
        core.hold(code, session, 0, rid, params, None, (op["error"]["code"], op["error"]["message"]))
    else:
        core.hold(code, session, 0, rid, params, op.get("result"))
    tracker.flush(30)
    tracker.shutdown(30)
    # Lines end at "\n" only (`splitlines` would also cut at U+2028, which JSON keeps as it is).
    lines = out.read_text(encoding="utf-8").split("\n")[:-1] if out.exists() else []
    assert lines == ([] if case["expect"] is None else [case["expect"]])


@pytest.mark.parametrize("path", CONFIG_CASES, ids=lambda p: p.stem)
def test_config_vector(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    if "expectError" in case:
        with pytest.raises(mcplens.TrackingError) as caught:
            mcplens.Tracker(**tracker_kwargs(case["options"], tmp_path))
        assert (caught.value.code, caught.value.option) == (case["expectError"]["code"], case["expectError"]["option"])
        return
    tracker = mcplens.Tracker(**tracker_kwargs(case["options"], tmp_path))
    want = case["expect"]
    assert [e["name"] for e in tracker.stats()["exporters"]] == want["exporters"]
    if "sessionId" in want:
        core = tracker._start("srv")
        assert core.open_session(case["transportSessionId"]).id == want["sessionId"]
        tracker.shutdown(5)
