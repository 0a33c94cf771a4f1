#!/usr/bin/env python3
"""Writes tests/vectors/refresher/*.json (format: tests/vectors/README.md, "refresher").

Every expected action, timeout and status is written here by hand from the rules in
docs/catalog.md, not computed by mcplens. The retry times are drawn from this file's own
SplitMix64 (the generator the core uses), so a jitter bug in the core shows as a mismatch.

Run: python3 tests/vectors/gen_refresher.py
"""

from __future__ import annotations

import pathlib
from typing import Any

from gen_catalog import compact, out, status, write

OUT = pathlib.Path(__file__).parent / "refresher"
CASES: list[dict[str, Any]] = []
MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def delays(seed: int, ceilings: list[int]) -> list[int]:
    """The retry delays (ms) for consecutive draws with these ceilings (equal jitter, the core's
    one retry rule): c - c // 2 + r % (c // 2 + 1)."""
    rng = SplitMix64(seed)
    return [c - c // 2 + rng.next() % (c // 2 + 1) for c in ceilings]


def case(name: str, description: str, steps: list[dict[str, Any]], seed: int = 0, config: dict | None = None) -> None:
    c: dict[str, Any] = {"name": name, "description": description, "seed": seed}
    if config is not None:
        c["config"] = config
    c["steps"] = steps
    CASES.append(c)


# --- events ----------------------------------------------------------------------------------


def ev(kind: dict[str, Any], actions=(), timeout=None, at=None, **checks) -> dict[str, Any]:
    step: dict[str, Any] = {}
    if at is not None:
        step["atMs"] = at
    step.update(kind)
    step["actions"] = list(actions)
    step["timeoutMs"] = timeout
    step.update(checks)
    return step


def attach(server, epoch, resources=True, **kw):
    return ev({"attach": server, "resources": resources, "epoch": epoch}, **kw)


def detach(server, epoch, detached=True, **kw):
    return ev({"detach": server, "epoch": epoch, "detached": detached}, **kw)


def req(server, caller, want="refresh", **kw):
    return ev({"request": server, "want": want, "caller": caller}, **kw)


def lc(server, epoch, decision, **kw):
    return ev({"listChanged": server, "epoch": epoch, "decision": decision}, **kw)


def listen_closed(server, epoch, rpc_code=None, error=None, message=None, closed=None, liveness="unknown", **kw):
    """The watch's `subscriptions/listen` stream was refused (`rpc_code`) or ended, the host
    knowing its connection `liveness` ("open", "closed", "unknown"): `error`, the watch's error;
    else `closed`, what became of the watch ("not_offered", "relisting", "detached"; null for an old
    epoch or a watch not listening: nothing to report)."""
    step = {"listenClosed": server, "epoch": epoch, "rpcCode": rpc_code, "liveness": liveness, "expectError": error}
    if message is not None:
        step["expectMessage"] = message
    if error is None:
        step["closed"] = closed
    return ev(step, **kw)


def listen_ack(server, epoch, acknowledged=True, **kw):
    """The server acknowledged the watch's stream: False for an old epoch or a watch not listening."""
    return ev({"listenAcknowledged": server, "epoch": epoch, "acknowledged": acknowledged}, **kw)


MODERN, LEGACY = "2026-07-28", "2025-11-25"


def watch(server, epoch, version, caps, notifications, **kw):
    """A host watches connection `epoch`, which negotiated `version` and declared `caps`: how
    change notifications will reach it (null: an old epoch)."""
    return ev({"watch": server, "epoch": epoch, "protocolVersion": version, "capabilities": caps,
               "notifications": notifications}, **kw)


def trav(tid, result, disposition, **kw):
    return ev({"traversed": tid, **result, "disposition": disposition}, **kw)


def tick(at, **kw):
    return ev({"timeout": True}, at=at, **kw)


def check(**checks):
    return dict(checks)


# --- traversal results ---------------------------------------------------------------------


def items_page(kind: str, n: int, **extra) -> str:
    if kind == "resources":
        items = [{"uri": f"mem://item/{i}", "name": f"item-{i}"} for i in range(n)]
        return compact({"resources": items, **extra})
    items = [{"uriTemplate": f"mem://item/{i}/{{id}}", "name": f"item-{i}"} for i in range(n)]
    return compact({"resourceTemplates": items, **extra})


def ok(resources=0, templates=0, ttl_r=None, ttl_t=None, caps=None):
    """Both traversals succeed with this many items (and ttlMs, when given)."""
    r = {"answers": [{"page": items_page("resources", resources, **({"ttlMs": ttl_r} if ttl_r is not None else {}))}]}
    t = {"answers": [{"page": items_page("templates", templates, **({"ttlMs": ttl_t} if ttl_t is not None else {}))}]}
    if caps is not None:
        r = {"capabilities": caps, "answers": []}
        t = {"capabilities": caps, "answers": []}
    return {"resources": r, "templates": t}


ANSWER = {
    "transport_error": {"transport": True},
    "deadline": {"timedOut": True},
    "server_error": {"rpcError": {"code": -32603, "message": "boom"}},
    "malformed_result": {"malformed": True},
}


def fail(code: str, on: str = "resources"):
    """The traversal of `on` fails with `code` (templates are not traversed after a resources failure)."""
    if code == "repeated_cursor":
        answers = [{"page": compact({"resources": [], "nextCursor": "c1"})},
                   {"page": compact({"resources": [], "nextCursor": "c1"})}]
    elif code == "item_limit":
        answers = [{"synth": {"count": 10001}}]
    else:
        answers = [ANSWER[code]]
    if on == "resources":
        return {"resources": {"answers": answers}}
    return {"resources": {"answers": [{"page": items_page("resources", 0)}]}, "templates": {"answers": answers}}


ABANDONED = {"abandoned": True}

RL, TL = "resources/list", "resources/templates/list"


def message(code: str, server: str = "a", method: str = RL) -> str:
    return {
        "transport_error": f'server "{server}": {method} failed: the transport failed',
        "deadline": f'server "{server}": {method} exceeded the deadline (60000 ms)',
        "server_error": f'server "{server}": {method} failed with JSON-RPC error -32603',
        "malformed_result": f'server "{server}": {method} returned a malformed result (the host\'s client refused the result)',
        "repeated_cursor": f'server "{server}": {method} repeated a cursor',
        "item_limit": f'server "{server}": {method} exceeded the item limit (10000 items)',
    }[code]


# --- actions -------------------------------------------------------------------------------


def T(tid, epoch=1, server="a"):
    return {"traverse": {"server": server, "epoch": epoch, "traversal": tid}}


def R(callers, outcome, tid=None, server="a"):
    body: dict[str, Any] = {"server": server, "callers": list(callers), "outcome": outcome}
    if tid is not None:
        body["traversal"] = tid
    return {"resolve": body}


def failed(code, server="a", method=RL, msg=None):
    body: dict[str, Any] = {"failure": {"code": code, "message": msg or message(code, server, method)}}
    if code == "server_error":
        body["rpcCode"] = -32603
    return {"failed": body}


NOT_CONNECTED = {"failed": {"failure": {"code": "transport_error", "message": 'server "a": no connection is attached'}}}
COMMITTED, CACHED, DISCARDED = "committed", "cached", "discarded"


def tpl(i, server="a"):
    return {"uriTemplate": f"mem://item/{i}/{{id}}", "name": f"item-{i}", "server": server}


def tools(n, failures=(), server="a"):
    return out([tpl(i, server) for i in range(n)], failures)


ALL = ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"]

# --- coalescing and joining ----------------------------------------------------------------

case("request_starts_one_traversal", "a refresh request of an attached server starts one traversal pair, then resolves", [
    attach("a", 1, status={"a": status("unknown", 0)}),
    req("a", "c1", actions=[T(1)], status={"a": status("unknown", 0, refreshing=True)}),
    trav(1, ok(1, 2), "committed", at=40, actions=[R(["c1"], COMMITTED, 1)],
         status={"a": status("ok", 1, resources=1, templates=2)}),
])
case("ten_requests_join_one_traversal", "ten refresh requests while one traversal runs: exactly one traversal pair", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    *[req("a", f"c{n}") for n in range(2, 11)],
    trav(1, ok(0, 3), "committed", actions=[R([f"c{n}" for n in range(1, 11)], COMMITTED, 1)],
         status={"a": status("ok", 1, templates=3)}),
])
case("current_request_is_answered_from_the_cache", "a current pair answers a current request without traversing", [
    attach("a", 1),
    req("a", "c1", "current", actions=[T(1)]),
    trav(1, ok(1, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", "current", at=5000, actions=[R(["c2"], CACHED)]),
    req("a", "c3", "current", at=99999999, actions=[R(["c3"], CACHED)]),
])
case("refresh_request_traverses_a_current_pair", "an explicit refresh traverses even when the pair is current", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(0, 2), "committed", actions=[R(["c2"], COMMITTED, 2)], status={"a": status("ok", 2, templates=2)}),
])
case("current_request_during_a_refresh_of_a_current_pair", "a current request while a refresh runs over a current pair is answered at once", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", actions=[T(2)]),
    req("a", "c3", "current", actions=[R(["c3"], CACHED)]),
    trav(2, ok(0, 1), "committed", actions=[R(["c2"], COMMITTED, 2)]),
])
case("refresh_during_a_refresh_joins_it", "a refresh request while a current traversal runs joins it", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    req("a", "c2"),
    req("a", "c3", "current"),
    trav(1, ok(0, 1), "committed", actions=[R(["c1", "c2", "c3"], COMMITTED, 1)]),
])
case("force_during_a_refresh_queues_exactly_one_more", "forced requests during a traversal queue one more, shared by all of them", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    req("a", "c2", "force"),
    req("a", "c3", "force"),
    req("a", "c4", "refresh"),
    trav(1, ok(0, 1), "committed", actions=[R(["c1", "c4"], COMMITTED, 1), T(2)],
         status={"a": status("ok", 1, templates=1, refreshing=True)}),
    trav(2, ok(0, 2), "committed", actions=[R(["c2", "c3"], COMMITTED, 2)], status={"a": status("ok", 2, templates=2)}),
])
case("request_unknown_server_is_an_error", "a request for a server the catalog does not know is unknown_server", [
    attach("zeta", 1),
    check(request="nope", want="refresh", expectError="unknown_server",
          expectMessage='Server "nope" not found. Available servers: zeta'),
])

# --- list_changed ---------------------------------------------------------------------------

case("list_changed_keeps_the_pair_while_refreshing", "list_changed: the last good pair is still listed (outdated) until the newer one commits", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(1, 3), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    lc("a", 1, "refresh_now", at=100, actions=[T(2)],
       status={"a": status("outdated", 1, resources=1, templates=3, refreshing=True)}),
    check(tool={}, expect=tools(3)),
    trav(2, ok(1, 4), "committed", at=150, status={"a": status("ok", 2, resources=1, templates=4)}),
    check(tool={}, expect=tools(4)),
])
case("list_changed_storm_gives_exactly_one_more", "any number of list_changed during a traversal give exactly one more traversal pair", [
    attach("a", 1),
    lc("a", 1, "refresh_now", actions=[T(1)]),
    lc("a", 1, "queued"),
    *[lc("a", 1, "already_queued") for _ in range(5)],
    trav(1, ok(0, 2), "discarded", actions=[T(2)], status={"a": status("unknown", 0, refreshing=True)}),
    trav(2, ok(0, 3), "committed", status={"a": status("ok", 1, templates=3)}),
])
case("list_changed_carries_callers_once", "callers of a traversal outdated by list_changed wait for the queued one, but only once", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    lc("a", 1, "queued"),
    trav(1, ok(0, 1), "discarded", actions=[T(2)]),
    lc("a", 1, "queued"),
    trav(2, ok(0, 1), "discarded", actions=[R(["c1"], DISCARDED, 2), T(3)]),
    trav(3, ok(0, 1), "committed", status={"a": status("ok", 1, templates=1)}),
])
case("list_changed_then_failure_keeps_the_pair_stale", "list_changed, then the refresh fails: the previous pair stays (stale) and the tool names the failure", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 2), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    lc("a", 1, "refresh_now", at=1000, actions=[T(2)], status={"a": status("outdated", 1, templates=2, refreshing=True)}),
    trav(2, fail("malformed_result", on="templates"), "failed", at=1010,
         status={"a": status("stale", 1, templates=2, last_error="malformed_result")}),
    check(tool={}, expect=tools(2, [{"server": "a", "code": "malformed_result",
                                        "message": message("malformed_result", method=TL)}])),
])
case("refresh_after_list_changed_joins_the_queued_traversal", "a request after a list_changed waits for the queued traversal, not the outdated one", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    lc("a", 1, "queued"),
    req("a", "c2"),
    req("a", "c3", "current"),
    trav(1, ok(0, 1), "discarded", actions=[T(2)]),
    trav(2, ok(0, 1), "committed", actions=[R(["c2", "c3", "c1"], COMMITTED, 2)]),
])
case("list_changed_of_an_old_connection_is_ignored", "a notification of a replaced connection changes nothing", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    attach("a", 2, status={"a": status("unknown", 1)}),
    lc("a", 1, "ignored", status={"a": status("unknown", 1)}),
    lc("nope", 1, "ignored"),
])
case("list_changed_before_the_first_refresh", "list_changed on a fresh connection starts the first traversal", [
    attach("a", 1),
    lc("a", 1, "refresh_now", actions=[T(1)], status={"a": status("unknown", 0, refreshing=True)}),
    req("a", "c1", "current"),
    trav(1, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
])
case("outdated_pair_current_request_joins", "a current request of an outdated pair joins the traversal under way", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    lc("a", 1, "refresh_now", actions=[T(2)]),
    req("a", "c2", "current"),
    trav(2, ok(0, 2), "committed", actions=[R(["c2"], COMMITTED, 2)]),
])
case("list_changed_during_failure_retry_wait", "list_changed retries a failed server at once and drops the timer", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("transport_error"), "failed", at=100, actions=[R(["c1"], failed("transport_error"), 1)],
         timeout=100 + delays(0, [1000])[0]),
    lc("a", 1, "refresh_now", at=150, actions=[T(2)]),
    trav(2, ok(0, 1), "committed", status={"a": status("ok", 1, templates=1)}),
])

# --- connection epochs ---------------------------------------------------------------------

case("reattach_clears_the_old_pair_first", "a new connection under the same name clears the old one's pair; the old one's events change nothing", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(1, 3), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    attach("a", 2, status={"a": status("unknown", 1)}),
    check(tool={}, expect=tools(0)),
    detach("a", 1, detached=False, status={"a": status("unknown", 1)}),
    req("a", "c2", "current", actions=[T(2, epoch=2)]),
    trav(2, ok(0, 2), "committed", actions=[R(["c2"], COMMITTED, 2)], status={"a": status("ok", 2, templates=2)}),
])
case("reattach_moves_waiting_callers_to_the_new_connection", "callers waiting on the old connection are served over the new one; the old traversal's result is ignored", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    attach("a", 2, actions=[T(2, epoch=2)]),
    trav(1, ok(0, 9), "ignored", status={"a": status("unknown", 0, refreshing=True)}),
    trav(2, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 2)], status={"a": status("ok", 1, templates=1)}),
])
case("detach_discards_waiters_and_ignores_the_late_result", "the connection closes during a traversal: callers are answered discarded, the late result is ignored", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    detach("a", 1, actions=[R(["c1"], DISCARDED)], status={"a": status("unknown", 0)}),
    trav(1, ok(0, 1), "ignored", status={"a": status("unknown", 0)}),
    detach("a", 1, detached=False),
])
case("detach_clears_both_lists", "closing the connection clears resources and templates together", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(2, 2), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    detach("a", 1, status={"a": status("unknown", 1)}),
    check(tool={}, expect=tools(0)),
])
case("watch_on_2026_07_28_listens_only_when_list_changed_is_advertised", "on 2026-07-28 a watch opens subscriptions/listen only for a server that advertises resources.listChanged; otherwise it stands without a stream (not_offered)", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening", watching={"a": "listening"}),
    attach("b", 2),
    watch("b", 2, MODERN, {"resources": {"listChanged": False}}, "not_offered", watching={"a": "listening", "b": "not_offered"}),
    attach("c", 3),
    watch("c", 3, MODERN, {"resources": {}}, "not_offered"),
    attach("d", 4),
    watch("d", 4, MODERN, {"resources": {"listChanged": "yes"}, "tools": {"listChanged": True}}, "not_offered"),
    attach("e", 5),
    watch("e", 5, "2027-01-15", {"resources": {"listChanged": True}}, "listening"),
])
case("watch_before_2026_07_28_takes_notifications_unasked", "before 2026-07-28 list_changed arrives unasked, advertised or not (FastMCP sends it without advertising): nothing to open", [
    attach("a", 1),
    watch("a", 1, LEGACY, {"resources": {}}, "unsolicited", watching={"a": "unsolicited"}),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(1, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    lc("a", 1, "refresh_now", actions=[T(2)], status={"a": status("outdated", 1, resources=1, templates=1, refreshing=True)}),
    attach("b", 2),
    watch("b", 2, "2025-06-18", {"resources": {"listChanged": True}}, "unsolicited"),
    attach("c", 3),
    watch("c", 3, "not a date", {"resources": {"listChanged": True}}, "unsolicited"),
])
case("watch_of_an_old_connection_is_ignored", "a watch of a replaced or closed connection decides nothing; a new connection is not watched until its own watch", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    attach("a", 2, watching={"a": None}),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, None, watching={"a": None}),
    watch("a", 2, MODERN, {"resources": {}}, "not_offered"),
    detach("a", 2, watching={"a": None}),
    watch("a", 2, MODERN, {"resources": {}}, None),
    watch("b", 1, MODERN, {"resources": {}}, None),
])
case("listen_method_not_found_is_not_offered_and_keeps_the_pair", "a subscriptions/listen answered -32601 means the server offers no change notifications: not a failure; the watch stands without a stream, the pair stays, and the connection's closing still clears it", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(2, 3), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    listen_closed("a", 1, -32601, closed="not_offered", watching={"a": "not_offered"},
                  status={"a": status("ok", 1, resources=2, templates=3)}),
    check(tool={}, expect=tools(3)),
    detach("a", 1, status={"a": status("unknown", 1)}),
])
case("listen_refused_is_a_server_error_and_keeps_the_pair", "a subscriptions/listen refused with another JSON-RPC error fails the watch with server_error and its code; the connection and its pair stay, and its closing still clears them", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(2, 3), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    listen_closed("a", 1, -32603, "server_error", 'server "a": subscriptions/listen failed with JSON-RPC error -32603',
                  watching={"a": None}, status={"a": status("ok", 1, resources=2, templates=3)}),
    check(tool={}, expect=tools(3)),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(2, 3), "committed", actions=[R(["c2"], COMMITTED, 2)]),
    detach("a", 1, status={"a": status("unknown", 2)}),
])
case("listen_lost_before_its_acknowledgement_is_a_transport_error", "a listen stream that fails before the server acknowledged it is a transport_error for the watch; nothing else changes", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    listen_closed("a", 1, None, "transport_error",
                  'server "a": subscriptions/listen failed before the server acknowledged it: the transport failed',
                  status={"a": status("unknown", 0)}),
    req("a", "c1", "current", actions=[T(1)]),
])
case("listen_closed_on_an_old_connection_is_ignored", "a listen refusal, end or acknowledgement of a replaced or closed connection reports nothing and changes nothing", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 2), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    attach("a", 2, status={"a": status("unknown", 1)}),
    listen_closed("a", 1, -32603, None, status={"a": status("unknown", 1)}),
    listen_ack("a", 1, False),
    detach("a", 2),
    listen_closed("a", 2, None, None),
    listen_closed("b", 1, -32603, None),
])
case("listen_on_a_watch_not_listening_is_ignored", "an acknowledgement or end of a stream the watch did not open (unsolicited, not offered, or not watched) reports nothing and changes nothing", [
    attach("a", 1),
    listen_closed("a", 1, -32603, None),
    watch("a", 1, LEGACY, {"resources": {"listChanged": True}}, "unsolicited"),
    listen_ack("a", 1, False),
    listen_closed("a", 1, None, None, watching={"a": "unsolicited"}),
    watch("a", 1, MODERN, {"resources": {}}, "not_offered"),
    listen_closed("a", 1, -32601, None, watching={"a": "not_offered"}),
])
case("listen_ended_after_its_acknowledgement_relists_when_the_connection_stays", "a stream acknowledged then ended while the host knows the connection is open (a proxy's upstream): the watch stands without a stream, the pair is kept outdated and re-listed at once (a change may have gone unheard); the end's error code does not matter", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(2, 3), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    listen_ack("a", 1),
    listen_closed("a", 1, -32603, closed="relisting", liveness="open", actions=[T(2)], watching={"a": "not_offered"},
                  status={"a": status("outdated", 1, resources=2, templates=3, refreshing=True)}),
    trav(2, ok(2, 4), "committed", status={"a": status("ok", 2, resources=2, templates=4)}),
    listen_closed("a", 1, None, None, liveness="open"),
])
case("listen_ended_after_its_acknowledgement_is_the_connections_end_otherwise", "a stream acknowledged then ended when the connection closed, or when the host cannot tell (an SDK client over HTTP learns the server went away from it): the connection's end, both lists cleared, waiting callers discarded", [
    attach("a", 1),
    watch("a", 1, MODERN, {"resources": {"listChanged": True}}, "listening"),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(2, 3), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    listen_ack("a", 1),
    req("a", "c2", actions=[T(2)]),
    listen_closed("a", 1, closed="detached", actions=[R(["c2"], DISCARDED)], watching={"a": None},
                  status={"a": status("unknown", 1)}),
    detach("a", 1, detached=False),
    attach("a", 2),
    watch("a", 2, MODERN, {"resources": {"listChanged": True}}, "listening"),
    listen_ack("a", 2),
    listen_closed("a", 2, closed="detached", liveness="closed", status={"a": status("unknown", 1)}),
])
case("request_without_a_connection_fails", "a request of a server whose connection closed fails fast and is recorded", [
    attach("a", 1),
    detach("a", 1),
    req("a", "c1", "current", actions=[R(["c1"], NOT_CONNECTED)], status={"a": status("failed", 0, last_error="transport_error")}),
    check(tool={}, expect=out([], [{"server": "a", "code": "transport_error",
                                     "message": 'server "a": no connection is attached'}])),
])
case("detach_drops_the_retry_timer", "a closed connection is not retried", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("transport_error"), "failed", at=10, actions=[R(["c1"], failed("transport_error"), 1)],
         timeout=10 + delays(0, [1000])[0]),
    detach("a", 1, at=20),
])
case("reattach_resets_the_backoff", "a new connection starts the backoff from its first step", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("deadline"), "failed", at=0, actions=[R(["c1"], failed("deadline"), 1)], timeout=delays(5, [1000])[0]),
    tick(delays(5, [1000])[0], actions=[T(2)]),
    trav(2, fail("deadline"), "failed", at=3000, timeout=3000 + delays(5, [1000, 2000])[1]),
    attach("a", 2, at=3001),
    req("a", "c2", actions=[T(3, epoch=2)]),
    trav(3, fail("deadline"), "failed", at=4000, actions=[R(["c2"], failed("deadline"), 3)],
         timeout=4000 + delays(5, [1000, 2000, 1000])[2]),
], seed=5)

# --- retry with backoff and equal jitter ---------------------------------------------------

d = delays(7, [1000, 2000, 4000])
case("transient_failure_retries_on_the_backoff_schedule", "transport_error: retried after 500..1000 ms, then 1000..2000 ms, … and recovers", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("transport_error"), "failed", at=100, actions=[R(["c1"], failed("transport_error"), 1)],
         timeout=100 + d[0], status={"a": status("failed", 0, last_error="transport_error")}),
    tick(100 + d[0] - 1, timeout=100 + d[0]),
    tick(100 + d[0], actions=[T(2)]),
    trav(2, fail("transport_error"), "failed", at=5000, timeout=5000 + d[1]),
    tick(5000 + d[1], actions=[T(3)]),
    trav(3, fail("transport_error"), "failed", at=9000, timeout=9000 + d[2]),
    tick(9000 + d[2], actions=[T(4)]),
    trav(4, ok(0, 1), "committed", at=20000, status={"a": status("ok", 1, templates=1)}),
], seed=7)
d = delays(11, [1000, 2000, 4000, 4000, 4000])
steps = [attach("a", 1), req("a", "c1", actions=[T(1)])]
t = 0
for n in range(5):
    t += 10000
    extra = {"actions": [R(["c1"], failed("server_error"), 1)]} if n == 0 else {}
    steps.append(trav(n + 1, fail("server_error"), "failed", at=t, timeout=t + d[n], **extra))
    steps.append(tick(t + d[n], actions=[T(n + 2)]))
case("backoff_doubles_up_to_the_cap", "server_error: the retry ceiling doubles from retryBaseMs up to retryMaxMs", steps,
     seed=11, config={"retryBaseMs": 1000, "retryMaxMs": 4000})
case("deadline_is_retried", "deadline is transient: retried on a timer", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("deadline", on="templates"), "failed", at=60000,
         actions=[R(["c1"], failed("deadline", method=TL), 1)], timeout=60000 + delays(3, [1000])[0]),
], seed=3)
for code in ("malformed_result", "repeated_cursor", "item_limit"):
    case(f"{code}_is_not_retried_on_a_timer", f"{code} says the server is broken: no timer", [
        attach("a", 1),
        req("a", "c1", actions=[T(1)]),
        trav(1, fail(code), "failed", at=50, actions=[R(["c1"], failed(code), 1)],
             status={"a": status("failed", 0, last_error=code)}),
        tick(10_000_000),
    ])
case("broken_server_is_answered_from_the_catalog", "after a non-transient failure a current request traverses nothing; an explicit refresh does", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 2), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", actions=[T(2)]),
    trav(2, fail("malformed_result"), "failed", actions=[R(["c2"], failed("malformed_result"), 2)]),
    req("a", "c3", "current", at=999999, actions=[R(["c3"], CACHED)],
        status={"a": status("stale", 1, templates=2, last_error="malformed_result")}),
    req("a", "c4", actions=[T(3)]),
    trav(3, ok(0, 3), "committed", actions=[R(["c4"], COMMITTED, 3)], status={"a": status("ok", 2, templates=3)}),
])
case("failed_server_current_request_waits_for_the_retry", "during the backoff a current request is answered from the catalog: the timer is what retries", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("server_error"), "failed", at=0, actions=[R(["c1"], failed("server_error"), 1)], timeout=delays(0, [1000])[0]),
    req("a", "c2", "current", actions=[R(["c2"], CACHED)], timeout=delays(0, [1000])[0]),
])
case("explicit_refresh_during_the_backoff_replaces_the_timer", "an explicit refresh during the backoff traverses now; the timer is dropped", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("transport_error"), "failed", at=0, actions=[R(["c1"], failed("transport_error"), 1)], timeout=delays(0, [1000])[0]),
    req("a", "c2", at=1, actions=[T(2)]),
    tick(100000),
    trav(2, ok(0, 1), "committed", actions=[R(["c2"], COMMITTED, 2)]),
])
d = delays(9, [1000, 2000, 1000])
case("success_resets_the_backoff", "a commit resets the backoff to its first step", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, fail("transport_error"), "failed", at=0, actions=[R(["c1"], failed("transport_error"), 1)], timeout=d[0]),
    tick(d[0], actions=[T(2)]),
    trav(2, fail("transport_error"), "failed", at=5000, timeout=5000 + d[1]),
    tick(5000 + d[1], actions=[T(3)]),
    trav(3, ok(0, 1), "committed", at=9000),
    req("a", "c2", at=9500, actions=[T(4)]),
    trav(4, fail("transport_error"), "failed", at=10000, actions=[R(["c2"], failed("transport_error"), 4)],
         timeout=10000 + d[2], status={"a": status("stale", 1, templates=1, last_error="transport_error")}),
], seed=9)
case("failure_with_a_queued_traversal_sets_no_timer", "a transient failure while another traversal is queued starts that one instead of a timer", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    req("a", "c2", "force"),
    trav(1, fail("transport_error"), "failed", actions=[R(["c1"], failed("transport_error"), 1), T(2)]),
    trav(2, ok(0, 1), "committed", actions=[R(["c2"], COMMITTED, 2)]),
])
case("two_servers_retry_independently", "each server has its own backoff; poll_timeout is the earliest", [
    attach("a", 1),
    attach("b", 2),
    req("a", "c1", actions=[T(1)]),
    req("b", "c2", actions=[T(2, epoch=2, server="b")]),
    trav(1, fail("transport_error"), "failed", at=0, actions=[R(["c1"], failed("transport_error"), 1)],
         timeout=delays(13, [1000])[0]),
    trav(2, fail("transport_error", on="resources"), "failed", at=10000,
         actions=[R(["c2"], failed("transport_error", server="b"), 2, server="b")], timeout=delays(13, [1000])[0]),
    tick(delays(13, [1000])[0], actions=[T(3)], timeout=10000 + delays(13, [1000, 1000])[1]),
    tick(10000 + delays(13, [1000, 1000])[1], actions=[T(4, epoch=2, server="b")]),
], seed=13)

# --- ttlMs ---------------------------------------------------------------------------------

case("ttl_expiry_makes_the_next_current_request_traverse", "an expired ttlMs makes the next current request traverse", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 1, ttl_t=60000), "committed", at=1000, actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", "current", at=60999, actions=[R(["c2"], CACHED)], status={"a": status("ok", 1, templates=1)}),
    req("a", "c3", "current", at=61000, actions=[T(2)], status={"a": status("outdated", 1, templates=1, refreshing=True)}),
    trav(2, ok(0, 1, ttl_t=60000), "committed", at=61010, actions=[R(["c3"], COMMITTED, 2)]),
])
case("ttl_zero_is_bounded_by_min_ttl", "ttlMs 0 (mcp 2.3 and fastmcp 4 on 2026-07-28): ok right after the commit, outdated once minTtlMs (10 s) ran out; at most one traversal pair per minTtlMs", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(1, 1, ttl_r=0, ttl_t=0), "committed", at=1000, actions=[R(["c1"], COMMITTED, 1)],
         status={"a": status("ok", 1, resources=1, templates=1)}),
    req("a", "c2", "current", at=1001, actions=[R(["c2"], CACHED)]),
    req("a", "c3", "current", at=10999, actions=[R(["c3"], CACHED)], status={"a": status("ok", 1, resources=1, templates=1)}),
    check(atMs=11000, status={"a": status("outdated", 1, resources=1, templates=1)}),
    req("a", "c4", "current", at=11000, actions=[T(2)]),
    req("a", "c5", "current", at=11001),
    trav(2, ok(1, 1, ttl_r=0, ttl_t=0), "committed", at=11005, actions=[R(["c4", "c5"], COMMITTED, 2)]),
    req("a", "c6", "current", at=11006, actions=[R(["c6"], CACHED)]),
])
case("min_ttl_is_configurable", "with minTtlMs 0 a ttlMs 0 listing is traversed on every current request", [
    attach("a", 1),
    req("a", "c1", "current", actions=[T(1)]),
    trav(1, ok(0, 1, ttl_t=0), "committed", at=5, actions=[R(["c1"], COMMITTED, 1)],
         status={"a": status("outdated", 1, templates=1)}),
    req("a", "c2", "current", at=5, actions=[T(2)]),
], config={"minTtlMs": 0})
case("ttl_smaller_of_both_lists", "the smaller ttlMs of the two lists decides", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(1, 1, ttl_r=20000, ttl_t=50000), "committed", at=0, actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", "current", at=19999, actions=[R(["c2"], CACHED)]),
    req("a", "c3", "current", at=20000, actions=[T(2)]),
])
case("no_ttl_never_expires", "without ttlMs a pair stays current until invalidated", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", "current", at=864000000000, actions=[R(["c2"], CACHED)]),
])

# --- shrink guard --------------------------------------------------------------------------

def committed12():
    return [attach("a", 1), req("a", "c1", actions=[T(1)]),
            trav(1, ok(12, 12), "committed", actions=[R(["c1"], COMMITTED, 1)])]


case("shrink_to_zero_is_confirmed_then_commits", "12 templates → 0: one more traversal pair confirms; the confirming pair commits", [
    *committed12(),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(12, 0), "confirming", actions=[T(3)], status={"a": status("ok", 1, resources=12, templates=12, refreshing=True)}),
    check(tool={"limit": 1}, expect=out([tpl(0)], total=12, next_offset=1)),
    trav(3, ok(12, 0), "committed", actions=[R(["c2"], COMMITTED, 3)], status={"a": status("ok", 2, resources=12, templates=0)}),
])
case("shrink_confirmation_restores_the_list", "a transient empty answer is not committed when the confirming pair is full again", [
    *committed12(),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(0, 12), "confirming", actions=[T(3)]),
    trav(3, ok(12, 11), "committed", actions=[R(["c2"], COMMITTED, 3)], status={"a": status("ok", 2, resources=12, templates=11)}),
])
case("shrink_over_ninety_percent_is_confirmed", "50 resources → 4 (more than 90 % removed) is confirmed", [
    attach("a", 1), req("a", "c1", actions=[T(1)]),
    trav(1, ok(50, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(4, 1), "confirming", actions=[T(3)]),
    trav(3, ok(4, 1), "committed", actions=[R(["c2"], COMMITTED, 3)], status={"a": status("ok", 2, resources=4, templates=1)}),
])
case("shrink_of_exactly_ninety_percent_commits", "50 resources → 5 removes exactly 90 %: no confirmation", [
    attach("a", 1), req("a", "c1", actions=[T(1)]),
    trav(1, ok(50, 1), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(5, 1), "committed", actions=[R(["c2"], COMMITTED, 2)]),
])
case("small_lists_are_not_guarded", "9 templates → 0 commits at once", [
    attach("a", 1), req("a", "c1", actions=[T(1)]),
    trav(1, ok(0, 9), "committed", actions=[R(["c1"], COMMITTED, 1)]),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(0, 0), "committed", actions=[R(["c2"], COMMITTED, 2)], status={"a": status("ok", 2)}),
])
case("shrink_confirmation_failure_keeps_the_previous_pair", "the confirming pair fails: the previous pair stays, stale, and the failure is retried", [
    *committed12(),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(12, 0), "confirming", actions=[T(3)]),
    trav(3, fail("transport_error"), "failed", at=500, actions=[R(["c2"], failed("transport_error"), 3)],
         timeout=500 + delays(0, [1000])[0], status={"a": status("stale", 1, resources=12, templates=12, last_error="transport_error")}),
])
case("list_changed_storm_cannot_make_one_refresh_traverse_more_than_twice", "list_changed during a confirmation: the next refresh is a new one, itself at most two traversal pairs", [
    *committed12(),
    lc("a", 1, "refresh_now", actions=[T(2)]),
    trav(2, ok(12, 0), "confirming", actions=[T(3)]),
    lc("a", 1, "queued"),
    lc("a", 1, "already_queued"),
    trav(3, ok(12, 0), "discarded", actions=[T(4)], status={"a": status("outdated", 1, resources=12, templates=12, refreshing=True)}),
    trav(4, ok(12, 0), "confirming", actions=[T(5)]),
    trav(5, ok(12, 0), "committed", status={"a": status("ok", 2, resources=12)}),
])
case("shrink_guard_can_be_turned_off", "shrinkMinItems above any list size turns the guard off", [
    *committed12(),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(0, 0), "committed", actions=[R(["c2"], COMMITTED, 2)]),
], config={"shrinkMinItems": 1000000})
case("shrink_guard_covers_losing_the_capability", "a server that stops declaring resources empties both lists: confirmed first", [
    *committed12(),
    req("a", "c2", actions=[T(2)]),
    trav(2, ok(caps={"tools": {}}), "confirming", actions=[T(3)]),
    trav(3, ok(caps={"tools": {}}), "committed", actions=[R(["c2"], COMMITTED, 3)],
         status={"a": status("unsupported", 2)}, visible=[]),
])

# --- removal, abandon, visibility ----------------------------------------------------------

case("remove_discards_waiters", "removing a server answers its callers discarded and forgets it; its late result is ignored", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    req("a", "c2", "force"),
    ev({"remove": "a", "removed": True}, actions=[R(["c1", "c2"], DISCARDED)]),
    trav(1, ok(0, 1), "ignored"),
    check(request="a", want="current", expectError="unknown_server",
          expectMessage='Server "a" not found. Available servers: (none)'),
    ev({"remove": "a", "removed": False}),
])
case("clear_forgets_every_server", "clear answers every caller discarded and forgets every server", [
    attach("a", 1),
    attach("b", 2),
    req("a", "c1", actions=[T(1)]),
    req("b", "c2", actions=[T(2, epoch=2, server="b")]),
    ev({"clear": True}, actions=[R(["c1"], DISCARDED), R(["c2"], DISCARDED, server="b")], visible=[]),
    trav(2, ok(0, 1), "ignored"),
])
case("abandoned_traversal_discards_its_callers", "a traversal the host could not finish changes nothing and answers its callers discarded", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    trav(1, ABANDONED, "discarded", actions=[R(["c1"], DISCARDED, 1)], status={"a": status("unknown", 0)}),
    req("a", "c2", "current", actions=[T(2)]),
])
case("abandoned_traversal_hands_out_the_queued_one", "an abandoned traversal still starts the queued one, which its callers join once", [
    attach("a", 1),
    req("a", "c1", actions=[T(1)]),
    req("a", "c2", "force"),
    trav(1, ABANDONED, "discarded", actions=[T(2)]),
    trav(2, ok(0, 1), "committed", actions=[R(["c2", "c1"], COMMITTED, 2)]),
])
case("visibility_follows_attached_capabilities", "both listing tools while an attached server declares resources, neither otherwise", [
    check(visible=[]),
    attach("a", 1, resources=False, visible=[]),
    attach("b", 2, resources=True, visible=ALL),
    detach("b", 2, visible=[]),
    attach("b", 3, resources=True, visible=ALL),
    ev({"remove": "b", "removed": True}, visible=[]),
])
case("visibility_learned_from_a_commit", "a commit says whether the server declares resources", [
    attach("a", 1, resources=True, visible=ALL),
    req("a", "c1", actions=[T(1)]),
    trav(1, ok(caps={"tools": {}}), "committed", actions=[R(["c1"], COMMITTED, 1)], visible=[],
         status={"a": status("unsupported", 1)}),
])


def main() -> None:
    write(OUT, CASES, "refresher")


if __name__ == "__main__":
    main()
