"""Replays every shared vector in `tests/vectors/refresher/` through `mcplens.Refresher`.

The same runner as Rust's `run_refresher_case` (`core/tests/rules/vectors.rs`; format in
`tests/vectors/README.md`): the exact actions, timeouts, statuses and byte-identical tool output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_catalog_vectors import perform_pair, status_value

import mcplens

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "refresher"
FILES = sorted(VECTORS.glob("*.json"))


def config(spec: dict[str, Any]) -> mcplens.RefreshConfig:
    default = mcplens.RefreshConfig()
    seconds = {"retryBaseMs": "retry_base_seconds", "retryMaxMs": "retry_max_seconds", "minTtlMs": "min_ttl_seconds"}
    kwargs: dict[str, Any] = {name: getattr(default, name) for name in seconds.values()}
    kwargs.update({seconds[k]: v / 1000 for k, v in spec.items() if k in seconds})
    kwargs["shrink_min_items"] = spec.get("shrinkMinItems", default.shrink_min_items)
    return mcplens.RefreshConfig(**kwargs)


def traversed(machine: mcplens.Refresher, server: str, step: dict[str, Any], now_ms: float) -> str:
    """The core's pair performed over the step's answers and handed back; `abandoned`: handed back
    with its first request unanswered."""
    if step.get("abandoned"):
        pair = mcplens.Pager.pair(step["traversed"], server, capabilities='{"resources":{}}', now=now_ms / 1000)
        assert pair.next_request() is not None
        return machine.traversed(pair, now_ms / 1000)
    return machine.traversed(perform_pair(step["traversed"], server, step, now_ms), now_ms / 1000)


def run_case(case: dict[str, Any]) -> list[str]:
    bad: list[str] = []
    catalog = mcplens._core.Catalog(refresh=config(case.get("config", {})))
    machine = mcplens.Refresher(catalog, seed=case.get("seed", 0))
    callers: dict[int, str] = {}
    traversals: dict[int, str] = {}
    now_ms: float = 0
    for i, step in enumerate(case["steps"]):
        now_ms = step.get("atMs", now_ms)
        now = now_ms / 1000

        def expect(what: str, got: Any, want: Any, i: int = i) -> None:
            if got != want:
                bad.append(f"step {i} ({what}): got {got!r}, want {want!r}")

        if "attach" in step:
            expect("attach", machine.attach(step["attach"], step["resources"]), step["epoch"])
        elif "detach" in step:
            expect("detach", machine.detach(step["detach"], step["epoch"]), step["detached"])
        elif "request" in step:
            try:
                caller = machine.request(step["request"], step["want"], now)
                expect("request", "expectError" in step, False)
                callers[caller] = step.get("caller", "")
            except mcplens.CatalogError as e:
                expect("error", (e.code, str(e)), (step.get("expectError"), step.get("expectMessage")))
        elif "watch" in step:
            got = machine.watch(step["watch"], step["epoch"], step["protocolVersion"], json.dumps(step["capabilities"]))
            expect("watch", got, step["notifications"])
        elif "listenAcknowledged" in step:
            got_ack = machine.listen_acknowledged(step["listenAcknowledged"], step["epoch"])
            expect("listenAcknowledged", got_ack, step["acknowledged"])
        elif "listenClosed" in step:
            e = machine.listen_closed(step["listenClosed"], step["epoch"], step["rpcCode"], step["liveness"], now)
            if isinstance(e, mcplens.CatalogError):
                got: Any = (type(e).__name__, e.code, e.server, str(e), e.rpc_code)
            else:
                got = e
            want = (
                ("CatalogError", step["expectError"], step["listenClosed"], step["expectMessage"], step["rpcCode"])
                if step["expectError"]
                else step["closed"]
            )
            expect("listenClosed", got, want)
        elif "listChanged" in step:
            got = machine.on_list_changed(step["listChanged"], step["epoch"], now)
            expect("listChanged", got, step["decision"])
        elif "traversed" in step:
            server = traversals.get(step["traversed"], "a")
            expect("traversed", traversed(machine, server, step, now_ms), step["disposition"])
        elif "timeout" in step:
            machine.handle_timeout(now)
        elif "remove" in step:
            expect("remove", machine.remove(step["remove"]), step["removed"])
        elif "clear" in step:
            machine.clear()
        if "actions" in step:
            got_actions = machine.poll_actions()
            for action in got_actions:
                if "traverse" in action:
                    traversals[action["traverse"]["traversal"]] = action["traverse"]["server"]
                else:
                    action["resolve"]["callers"] = [callers[c] for c in action["resolve"]["callers"]]
            expect("actions", got_actions, step["actions"])
        if "timeoutMs" in step:
            timeout = machine.poll_timeout()
            expect("timeoutMs", None if timeout is None else round(timeout * 1000), step["timeoutMs"])
        for server, want in step.get("status", {}).items():
            expect(f"status {server}", status_value(catalog.status(server, now)), want)
        if "tool" in step:
            expect("tool", catalog.call_list_templates_tool(json.dumps(step["tool"])), step["expect"])
        if "visible" in step:
            expect("visible", catalog.visible_tools(), step["visible"])
        for server, want in step.get("watching", {}).items():
            expect(f"watching {server}", machine.notifications(server), want)
    return bad


def test_vectors_present() -> None:
    assert len(FILES) >= 40, f"only {len(FILES)} refresher vectors under {VECTORS}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_refresher_vector(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["name"] == path.stem, "name must match the file"
    assert run_case(case) == []


def test_listen_closed_refuses_an_unknown_connection_state() -> None:
    """The host's fact is one of three words; anything else is `invalid_argument`, never the watch's error."""
    machine = mcplens.Refresher(mcplens._core.Catalog(), seed=0)
    epoch = machine.attach("a", True)
    assert machine.watch("a", epoch, "2026-07-28", '{"resources":{"listChanged":true}}') == "listening"
    with pytest.raises(mcplens.CatalogError) as e:
        machine.listen_closed("a", epoch, None, "gone")  # type: ignore[arg-type]
    assert (e.value.code, e.value.server) == ("invalid_argument", "a")
    assert 'must be "open", "closed" or "unknown"' in str(e.value)
    assert machine.listen_acknowledged("a", epoch)
    assert machine.listen_closed("a", epoch, None, "open") == "relisting"
