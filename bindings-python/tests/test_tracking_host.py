"""Replays the tracker's host contract (`tests/vectors/tracking-host/contract.json`) through the
public Python API: what the Python and Node bindings once answered differently (an identity whose
`id`/`name` is not a string, `isError` when responses are not captured, a negative flush timeout),
decided once in the core (`core/src/tracking/pipeline/host.rs`); `bindings-node/__test__/tracking-host.test.mjs`
replays the same file through the Node package."""

from __future__ import annotations

import asyncio
import json
import pathlib
import time
from typing import Any

import pytest

import mcplens
from servers import tracked_server
from support import in_memory

pytestmark = pytest.mark.anyio

CONTRACT = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "tests/vectors/tracking-host/contract.json").read_text("utf-8")
)


@pytest.mark.parametrize("case", CONTRACT["identify"], ids=lambda c: json.dumps(c["answer"]))
async def test_identify_answer(case: dict[str, Any]) -> None:
    got: list[dict[str, Any]] = []
    tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(got.extend)], identify=lambda ctx: case["answer"])
    server = tracked_server.build("lowlevel")
    mcplens.track(server, tracker)
    async with in_memory(server) as session:
        await session.list_tools()
        await asyncio.sleep(0)
        tracker.flush(10)
    listed = [e for e in got if e["type"] == "mcp:tools/list"]
    assert [e.get("identity") for e in listed] == [case["identity"]]
    assert tracker.stats()["unidentified"] == (len(got) if case.get("unidentified") else 0)
    tracker.shutdown(5)


@pytest.mark.parametrize("case", CONTRACT["toolsCallResponsesOff"], ids=lambda c: json.dumps(c["isError"]))
async def test_tool_error_when_responses_are_not_captured(case: dict[str, Any]) -> None:
    got: list[dict[str, Any]] = []
    tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(got.extend)], capture_responses=False)

    @tracker.traced("tools/call")
    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "not kept"}], "isError": case["isError"]}

    await call("divide", {"a": 1})
    tracker.flush(10)
    [event] = got
    assert (event["isError"], event.get("error"), "response" in event) == (
        case["error"] is not None,
        case["error"],
        False,
    )
    tracker.shutdown(5)


@pytest.mark.parametrize("case", CONTRACT["timeouts"], ids=lambda c: str(c["value"]))
async def test_flush_timeout(case: dict[str, Any]) -> None:
    tracker = mcplens.Tracker(exporters=[mcplens.CallbackExporter(lambda events: None)])
    tracker._start("srv")
    want = case["expectError"]
    for call in (tracker.flush, tracker.shutdown):
        with pytest.raises(mcplens.TrackingError) as info:
            call(case["value"])
        assert (info.value.code, info.value.option) == (want["code"], want["option"]["python"])
    tracker.shutdown(5)


@pytest.mark.parametrize("case", CONTRACT["hookTimeouts"], ids=lambda c: f"{c['hook']}-{c['lateMs']}ms")
async def test_hook_timeouts(case: dict[str, Any]) -> None:
    late = case["lateMs"] / 1000
    got: list[dict[str, Any]] = []

    def slow_redact(text: str) -> str:
        time.sleep(late)
        return text

    def slow_export(events: list[dict[str, Any]]) -> None:
        time.sleep(late)
        got.extend(events)

    if case["hook"] == "redact":
        tracker = mcplens.Tracker(
            exporters=[mcplens.CallbackExporter(got.extend)],
            redact=slow_redact,
            hook_timeout_seconds=case["options"]["hookTimeoutMs"] / 1000,
        )
    else:
        tracker = mcplens.Tracker(
            exporters=[mcplens.CallbackExporter(slow_export)],
            callback_timeout_seconds=case["options"]["callbackTimeoutMs"] / 1000,
        )

    @tracker.traced("tools/call")
    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": []}

    for _ in range(case["requests"]):
        await call("echo", {})
    tracker.flush(10)
    stats = tracker.stats()
    failed = stats["exporters"][0]["failed"]
    seen = {"recorded": stats["recorded"], "redactionFailed": stats["redactionFailed"], "failed": failed}
    assert {k: seen[k] for k in case["stats"]} == case["stats"]
    tracker.shutdown(5)
    await asyncio.sleep(late)  # the late call ends before the test does
