"""Replays every shared vector in `tests/vectors/discovery/` through `mcplens.Pager`.

Same rules as the Rust runner (`core/tests/rules/vectors.rs`, format in `tests/vectors/README.md`): the
results must be identical, because every rule is the core's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcplens

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "discovery"
FILES = sorted(VECTORS.glob("*.json"))
LIST_KEY = {"resources": "resources", "resource_templates": "resourceTemplates"}


def synth(kind: str, spec: dict[str, Any]) -> str:
    start = spec.get("start", 0)
    numbers = range(start, start + spec["count"])
    if kind == "resource_templates":
        items = [{"uriTemplate": f"mem://item/{n}/{{id}}", "name": f"item-{n}"} for n in numbers]
    else:
        items = [{"uri": f"mem://item/{n}", "name": f"item-{n}"} for n in numbers]
    page: dict[str, Any] = {LIST_KEY[kind]: items}
    if "nextCursor" in spec:
        page["nextCursor"] = spec["nextCursor"]
    return json.dumps(page, separators=(",", ":"), ensure_ascii=False)


def limits(spec: dict[str, Any]) -> mcplens.Limits:
    default = mcplens.Limits()
    return mcplens.Limits(
        max_pages=spec.get("maxPages", default.max_pages),
        max_items=spec.get("maxItems", default.max_items),
        max_bytes=spec.get("maxBytes", default.max_bytes),
        deadline_seconds=spec["deadlineMs"] / 1000 if "deadlineMs" in spec else default.deadline_seconds,
        repeated_cursors=spec.get("repeatedCursors", default.repeated_cursors),
        max_cursor_bytes=spec.get("maxCursorBytes", default.max_cursor_bytes),
    )


def secrets(case: dict[str, Any]) -> list[str]:
    """Every cursor (of 3+ characters) in the answers, plus `expect.secrets`."""
    out = [s for s in case["expect"].get("secrets", []) if isinstance(s, str)]
    for answer in case.get("answers", []):
        cursor = None
        if isinstance(answer.get("page"), str):
            try:
                page = json.loads(answer["page"])
            except ValueError:
                page = None
            cursor = page.get("nextCursor") if isinstance(page, dict) else None
        elif "synth" in answer:
            cursor = answer["synth"].get("nextCursor")
        if isinstance(cursor, str) and len(cursor) >= 3:
            out.append(cursor)
    return out


def compact_len(item: dict[str, Any]) -> int:
    return len(json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode())


class Run:
    """What one traversal over canned answers did."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.used = 0
        self.out_of_answers = False
        self.listing: mcplens.Listing | None = None
        self.error: mcplens.DiscoveryError | None = None
        self.declined = 0


def accept(pager: mcplens.Pager, kind: str, answer: dict[str, Any], at: float) -> None:
    """Feeds one answer of the shared format as its text (a page) or its outcome."""
    text = answer["page"] if "page" in answer else synth(kind, answer["synth"]) if "synth" in answer else None
    if text is not None:
        pager.accept_page(text, at)
    elif "rpcError" in answer:
        pager.accept_rpc_error(answer["rpcError"]["code"], at)
    elif "transport" in answer:
        pager.accept_transport_error(at)
    elif "timedOut" in answer:
        pager.accept_timeout(at)
    elif "malformed" in answer:
        pager.accept_malformed(at)
    else:
        raise AssertionError(f"unknown answer {answer}")


def drive(
    kind: str,
    server: str,
    capabilities: Any,
    limits: mcplens.Limits,
    start_ms: float,
    answers: list[dict[str, Any]],
    protocol_version: str = "",
    pages: str = "text",
) -> Run:
    """Drives a pager over the canned answers (`core/tests/rules/vectors.rs` `drive`). `pages`: "text"
    as the answers give them; else parsed first, as an SDK does (a page that is not JSON goes as
    its text), then handed over as the parsed value's JSON text ("reserialized") or as the value
    itself ("parsed": `accept_page_parsed`, its text when that declines)."""
    run = Run()
    now = start_ms
    try:
        pager = mcplens.Pager(
            kind,
            server,
            resources_capability=mcplens.has_resources_capability(json.dumps(capabilities)),
            limits=limits,
            now=now / 1000,
            protocol_version=protocol_version,
        )
        while (request := pager.next_request()) is not None:
            entry: dict[str, Any] = {"method": request.method}
            if request.params is not None:
                entry["params"] = request.params
            run.requests.append(entry)
            if run.used == len(answers):
                run.out_of_answers = True
                break
            answer = answers[run.used]
            run.used += 1
            now = answer.get("atMs", now)
            at = now / 1000
            text = answer["page"] if "page" in answer else synth(kind, answer["synth"]) if "synth" in answer else None
            try:
                value = json.loads(text) if text is not None and pages != "text" else None
            except (ValueError, RecursionError):
                value = None
            try:
                if value is not None and pages == "reserialized":
                    pager.accept_page(json.dumps(value, separators=(",", ":")), at)
                elif value is not None and pages == "parsed":
                    if not pager.accept_page_parsed(value, at):
                        run.declined += 1
                        pager.accept_page(json.dumps(value, separators=(",", ":")), at)
                else:
                    accept(pager, kind, answer, at)
            except mcplens.DiscoveryError:
                break
        run.listing = pager.finish()
    except mcplens.DiscoveryError as e:
        run.error = e
    return run


def run_case(case: dict[str, Any]) -> list[str]:
    """Drives a pager over the canned answers; returns the mismatches with the expectation."""
    bad: list[str] = []
    kind, server = case["kind"], case.get("server", "srv")
    answers, expect = case.get("answers", []), case["expect"]
    run = drive(
        kind,
        server,
        case.get("capabilities", {"resources": {}}),
        limits(case.get("limits", {})),
        case.get("startMs", 0),
        answers,
        case.get("protocolVersion", ""),
    )
    requests, used, listing, error = run.requests, run.used, run.listing, run.error
    if run.out_of_answers:
        bad.append(f"ran out of answers at request {used + 1}")
    if used != len(answers):
        bad.append(f"used {used} of {len(answers)} answers")
    if "requests" in expect and requests != expect["requests"]:
        bad.append(f"requests: got {requests}, want {expect['requests']}")
    want_error = expect.get("error")
    if error is None and want_error is not None:
        bad.append(f"expected error {want_error}, got success")
    elif error is not None and want_error is None:
        bad.append(f"unexpected error {error.code} ({error})")
    elif error is not None:
        message = str(error)
        if error.code != want_error:
            bad.append(f"error: got {error.code} ({message}), want {want_error}")
        if error.server != server or server not in message:
            bad.append(f"error does not name the server: {message}")
        bad.extend(f"error message leaks {s!r}: {message}" for s in secrets(case) if s in message)
    else:
        assert listing is not None
        got = listing.to_dict()
        if json.loads(listing.to_json()) != got:
            bad.append("to_json() and to_dict() disagree")
        if "items" in expect and got["items"] != expect["items"]:
            bad.append(f"items: got {got['items']}, want {expect['items']}")
        if "itemCount" in expect and len(listing.items) != expect["itemCount"]:
            bad.append(f"itemCount: got {len(listing.items)}, want {expect['itemCount']}")
        for key in ("support", "ttlMs", "cacheScope", "diagnostics"):
            if key in expect and got.get(key) != expect[key]:
                bad.append(f"{key}: got {got.get(key)}, want {expect[key]}")
        if [i.to_dict() for i in listing.items] != got["items"]:
            bad.append("typed items and to_dict() disagree")
        total = sum(compact_len(item) for item in got["items"])
        if total != listing.diagnostics["bytes"]:
            bad.append(f"byte accounting: items serialize to {total}, diagnostics say {listing.diagnostics['bytes']}")
    return bad


def test_vectors_present() -> None:
    assert FILES, f"no discovery vectors under {VECTORS}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_discovery_vector(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    assert case["name"] == path.stem, "name must match the file"
    assert run_case(case) == []


def lone_surrogate(text: str) -> bool:
    """The page parses to a value holding a lone surrogate."""
    try:
        json.dumps(json.loads(text), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return False  # not JSON an SDK could parse: it goes as text
    return False


def outcome(run: Run) -> dict[str, Any]:
    """What a traversal ended with, comparable across runs."""
    listing = run.listing
    return {
        "requests": run.requests,
        "used": run.used,
        "error": None if run.error is None else (run.error.code, str(run.error)),
        "listing": None
        if listing is None
        else (list(listing), listing.support, listing.ttl_ms, listing.cache_scope, listing.diagnostics),
    }


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_discovery_vector_as_parsed_values(path: Path) -> None:
    """A page handed over as the dict the SDK parsed (`accept_page_parsed`) ends every vector as its
    JSON text does; a page holding what JSON text carries otherwise (a lone surrogate, an integer
    past 64 bits) is declined with nothing applied, and goes as text."""
    case = json.loads(path.read_text(encoding="utf-8"))
    args = (
        case["kind"],
        case.get("server", "srv"),
        case.get("capabilities", {"resources": {}}),
        limits(case.get("limits", {})),
        case.get("startMs", 0),
        case.get("answers", []),
        case.get("protocolVersion", ""),
    )
    as_text, parsed = drive(*args, pages="reserialized"), drive(*args, pages="parsed")
    assert outcome(parsed) == outcome(as_text)
    # Declined exactly the pages (of those handed over) holding a lone surrogate, which no UTF-8
    # text can: the vectors' one kind of value JSON values carry otherwise.
    handed = case.get("answers", [])[: parsed.used]
    assert parsed.declined == sum(lone_surrogate(a["page"]) for a in handed if "page" in a)


def test_a_parsed_page_json_text_cannot_hold_is_declined_with_nothing_applied() -> None:
    items = [{"uriTemplate": "a://{x}", "name": "a"}]
    deep: Any = []
    for _ in range(200):  # deeper than JSON text may nest (serde_json's 128)
        deep = [deep]
    for odd in ["lone \ud800", 2**70, float("nan"), float("inf"), ("a", "b"), b"bytes", {1: "key"}, deep]:
        pager = mcplens.Pager("resource_templates", "srv", resources_capability=True, now=0)
        pager.next_request()
        page = {"resourceTemplates": [*items, {"uriTemplate": "b://{x}", "name": "b", "_meta": {"x": odd}}]}
        assert pager.accept_page_parsed(page, 0) is False, odd
        assert pager.diagnostics["pages"] == 0
        assert not pager.is_done
        pager.accept_page(json.dumps({"resourceTemplates": items}), 0)  # the same request, now as text
        assert [t.name for t in pager.finish()] == ["a"]


def test_a_listing_hands_out_the_pages_own_long_strings_it_kept_as_sent() -> None:
    """A long string (1,024 bytes or more) the core kept exactly as the page lent it is the page's own
    object in the listing, as the SDK's models hold it; a string the rules changed, a short one or
    one of a page read as text is a string of its own, equal to what the listing kept."""
    long = "a description long enough to be worth sharing " * 30
    uri = "file:///{path}/" + "x" * 1100
    page = {
        "resourceTemplates": [
            {"uriTemplate": uri, "name": "n", "description": long, "title": "T\u0007" + "t" * 1100},
            {"uriTemplate": "bad {", "name": "dropped", "description": long + "!"},
        ],
        "nextCursor": "c",
    }
    pager = mcplens.Pager("resource_templates", "srv", resources_capability=True, now=0)
    pager.next_request()
    assert pager.accept_page_parsed(page, 0) is True
    pager.next_request()
    as_text = {"resourceTemplates": [{"uriTemplate": "b://{x}", "name": "b", "description": long + "?"}]}
    pager.accept_page(json.dumps(as_text), 0)
    first, second = pager.finish()
    sent = page["resourceTemplates"][0]
    assert first.description is sent["description"]
    assert first.uri_template is sent["uriTemplate"]
    assert first.name == "n"  # short: a string of its own
    assert first.title != sent["title"]  # sanitized: a string of its own
    assert first.title.startswith("T")
    assert second.description == long + "?"
