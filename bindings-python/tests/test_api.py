"""The Python surface of the core: `Limits`, `Pager`, `Listing`, items and errors."""

from __future__ import annotations

import importlib.metadata
import json
import pickle
import threading

import pytest

import mcplens
from mcplens import DiscoveryError, Limits, McplensError, Pager

PAGE = json.dumps(
    {
        "resourceTemplates": [
            {
                "uriTemplate": "file:///{path}",
                "name": "files",
                "title": "Files",
                "annotations": {
                    "audience": ["assistant", "user"],
                    "priority": 0.25,
                    "lastModified": "2025-01-02T03:04:05Z",
                },
                "_meta": {"x": 1},
            }
        ],
        "ttlMs": 5000,
        "cacheScope": "public",
    }
)


def one_page(page: str | bytes = PAGE, kind: str = "resource_templates") -> mcplens.Listing:
    pager = Pager(kind, "srv", now=0)
    assert pager.next_request() is not None
    pager.accept_page(page, now=0.01)
    assert pager.next_request() is None
    return pager.finish()


def test_exports() -> None:
    for name in mcplens.__all__:
        assert getattr(mcplens, name) is not None, name
    assert mcplens.__version__ == importlib.metadata.version("mcplens")


def test_limits_defaults_and_keywords() -> None:
    limits = Limits()
    assert (limits.max_pages, limits.max_items, limits.max_bytes, limits.deadline_seconds) == (
        100,
        10_000,
        1_000_000,
        60.0,
    )
    assert Limits(max_pages=3, deadline_seconds=1.5) == Limits(max_pages=3, deadline_seconds=1.5) != limits
    assert (limits.repeated_cursors, limits.max_cursor_bytes) == ("by_era", 65_536)
    assert repr(Limits(max_items=5)) == (
        'Limits(max_pages=100, max_items=5, max_bytes=1000000, deadline_seconds=60.0, repeated_cursors="by_era", '
        "max_cursor_bytes=65536)"
    )
    assert Limits(repeated_cursors="follow").repeated_cursors == "follow"
    for bad in ({"repeated_cursors": "sometimes"}, {"max_cursor_bytes": 0}):
        with pytest.raises(mcplens.McplensError) as e:
            Limits(**bad)  # type: ignore[arg-type]
        assert e.value.code == "invalid_argument"
    with pytest.raises(TypeError):
        Limits(3)  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs", [{"max_pages": 0}, {"deadline_seconds": 0}, {"deadline_seconds": -1}, {"deadline_seconds": float("nan")}]
)
def test_invalid_limits(kwargs: dict[str, float]) -> None:
    with pytest.raises(McplensError) as info:
        Limits(**kwargs)  # type: ignore[arg-type]
    assert (info.value.code, info.value.server) == ("invalid_argument", None)


def test_error_classes() -> None:
    assert issubclass(DiscoveryError, McplensError)
    assert issubclass(McplensError, Exception)
    assert DiscoveryError.__module__ == McplensError.__module__ == "mcplens._core"
    pager = Pager("resource_templates", "docs", now=0)
    pager.next_request()
    with pytest.raises(DiscoveryError) as info:
        pager.accept_rpc_error(-32603, now=0)
    err = info.value
    assert (err.code, err.server, err.rpc_code) == ("server_error", "docs", -32603)
    assert str(err) == 'server "docs": resources/templates/list failed with JSON-RPC error -32603'
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is DiscoveryError
    assert (str(copy), copy.code, copy.server, copy.rpc_code) == (str(err), err.code, err.server, err.rpc_code)
    assert repr(copy) == repr(err)
    # Raised by Python code, an error still has every attribute.
    assert (McplensError("x").server, McplensError("x").rpc_code) == (None, None)


def test_request_shape() -> None:
    pager = Pager("resources", "srv", now=0)
    first = pager.next_request()
    assert first is not None
    assert (first.method, first.cursor, first.params, first.params_json()) == ("resources/list", None, None, None)
    pager.accept_page('{"resources": [], "nextCursor": ""}', now=0)
    second = pager.next_request()
    assert second is not None
    assert (second.cursor, second.params, second.params_json()) == ("", {"cursor": ""}, '{"cursor":""}')
    assert pager.next_request() is None  # one request in flight at a time
    pager.accept_page(b'{"resources": []}', now=0)
    assert pager.is_done
    assert pager.diagnostics["requests"] == 2


def test_listing_and_items() -> None:
    listing = one_page()
    assert (listing.kind, listing.server, listing.support) == ("resource_templates", "srv", "listed")
    assert (listing.ttl_ms, listing.cache_scope, len(listing)) == (5000, "public", 1)
    (t,) = listing.items
    assert list(listing) == [t]
    assert isinstance(t, mcplens.ResourceTemplate)
    assert (t.uri_template, t.name, t.title, t.description, t.mime_type, t.server) == (
        "file:///{path}",
        "files",
        "Files",
        None,
        None,
        "srv",
    )
    assert t.annotations == t.annotations
    assert t.annotations is not None
    assert (t.annotations.audience, t.annotations.priority, t.annotations.last_modified) == (
        ("assistant", "user"),
        0.25,
        "2025-01-02T03:04:05Z",
    )
    wire = {
        "uriTemplate": "file:///{path}",
        "name": "files",
        "title": "Files",
        "annotations": {"audience": ["assistant", "user"], "priority": 0.25, "lastModified": "2025-01-02T03:04:05Z"},
        "server": "srv",
    }
    assert t.to_dict() == wire
    assert t.annotations.to_dict() == wire["annotations"]
    assert listing.to_dict()["items"] == [wire]
    assert json.loads(listing.to_json()) == listing.to_dict()
    assert listing.diagnostics["ignoredKeys"] == 1
    assert t == one_page().items[0]


def test_resource_items() -> None:
    listing = one_page(
        '{"resources": [{"uri": "mem://a", "name": "a", "size": 3, "mimeType": "text/plain"}]}', "resources"
    )
    (r,) = listing.items
    assert isinstance(r, mcplens.Resource)
    assert (r.uri, r.name, r.size, r.mime_type, r.annotations) == ("mem://a", "a", 3, "text/plain", None)


def test_no_capability_makes_no_request() -> None:
    pager = Pager("resource_templates", "srv", resources_capability=False, now=0)
    assert pager.next_request() is None
    listing = pager.finish()
    assert (listing.support, len(listing), listing.diagnostics["requests"]) == ("no_capability", 0, 0)
    assert mcplens.has_resources_capability('{"resources": {}}')
    assert not mcplens.has_resources_capability('{"tools": {}}')


def test_misuse() -> None:
    with pytest.raises(McplensError) as info:
        Pager("prompts", "srv")  # type: ignore[arg-type]
    assert info.value.code == "invalid_argument"
    pager = Pager("resources", "srv", now=0)
    with pytest.raises(DiscoveryError) as info:
        pager.accept_page("{}", now=0)
    assert info.value.code == "invalid_state"
    pager.next_request()
    with pytest.raises(TypeError):
        pager.accept_page(5, now=0)  # type: ignore[arg-type]
    with pytest.raises(McplensError):
        pager.remaining(now=-1)
    pager.accept_page('{"resources": []}', now=0)
    pager.finish()
    with pytest.raises(DiscoveryError) as info:
        pager.finish()
    assert info.value.code == "invalid_state"
    assert pager.is_done


def test_non_utf8_page_is_malformed() -> None:
    pager = Pager("resources", "srv", now=0)
    pager.next_request()
    with pytest.raises(DiscoveryError) as info:
        pager.accept_page(b'{"resources": ["\xff"]}', now=0)
    assert info.value.code == "malformed_result"


def test_clock_defaults_to_monotonic() -> None:
    pager = Pager("resources", "srv", limits=Limits(deadline_seconds=30))
    assert 29 < pager.remaining() <= 30
    assert Pager("resources", "srv", now=100).remaining(now=110) == 50


def test_deadline_in_seconds() -> None:
    pager = Pager("resources", "srv", limits=Limits(deadline_seconds=0.25), now=1.0)
    pager.next_request()
    assert pager.remaining(now=1.1) == pytest.approx(0.15)
    with pytest.raises(DiscoveryError) as info:
        pager.accept_page('{"resources": []}', now=1.251)
    assert info.value.code == "deadline"


def test_big_page_parses_off_the_gil() -> None:
    page = json.dumps(
        {"resourceTemplates": [{"uriTemplate": f"mem://{n}/{{id}}", "name": f"n{n}"} for n in range(5000)]}
    )
    listings: list[mcplens.Listing] = []
    threads = [threading.Thread(target=lambda: listings.append(one_page(page))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [len(listing) for listing in listings] == [5000] * 4


def test_error_codes_come_from_the_core() -> None:
    codes = mcplens._core.ERROR_CODES
    assert codes[:3] == ("malformed_result", "repeated_cursor", "page_limit")
    assert len(codes) == len(set(codes)) == 24


def test_a_pair_goes_back_to_its_refresher_once() -> None:
    """The core's pair fails into itself, is not finished like a pager, and is handed back once;
    a pager of one list is not a pair."""
    catalog = mcplens._core.Catalog()
    machine = mcplens.Refresher(catalog, seed=0)
    machine.attach("a", True)
    machine.request("a", "refresh", now=0)
    (action,) = machine.poll_actions()
    pair = mcplens.Pager.pair(action["traverse"]["traversal"], "a", capabilities='{"resources":{}}', now=0)
    assert (pair.kind, pair.next_request().method) == ("resources", "resources/list")
    pair.accept_transport_error(now=0)  # the pair's end, not an exception
    assert (pair.is_done, pair.kind, pair.next_request()) == (True, None, None)
    with pytest.raises(mcplens.DiscoveryError) as e:
        pair.finish()
    assert e.value.code == "invalid_state"
    with pytest.raises(mcplens.DiscoveryError) as e:
        machine.traversed(mcplens.Pager("resources", "a", now=0))
    assert e.value.code == "invalid_state"
    assert machine.traversed(pair, now=0) == "failed"
    assert [a["resolve"]["outcome"]["failed"]["failure"]["code"] for a in machine.poll_actions()] == ["transport_error"]
    with pytest.raises(mcplens.DiscoveryError) as e:
        machine.traversed(pair, now=0)
    assert e.value.code == "invalid_state"
    # Not initialized: the pair ends at once with the core's error, asking nothing.
    machine.request("a", "refresh", now=0)
    (action,) = machine.poll_actions()
    pair = mcplens.Pager.pair(action["traverse"]["traversal"], "a", capabilities=None, now=0)
    assert (pair.is_done, pair.next_request()) == (True, None)
    assert machine.traversed(pair, now=0) == "failed"
    assert catalog.status("a", now=0).last_error.code == "invalid_argument"
