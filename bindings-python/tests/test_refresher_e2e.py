"""`mcplens.Catalog` end to end over stdio against the installed SDK's low-level server
(`servers/refresher_server.py`), the issue's (a) to (e):

(a) list_changed, then the next traversal fails: the previous listing is still served, `stale`,
    with the failure in the tool output; a reader polling during every refresh never sees it emptied;
(b) `watch(server, B)` after `watch(server, A)`: A's listing is gone at once, A's later list_changed
    and close change nothing, B's listing is served;
(c) ten concurrent `refresh()` calls: exactly one traversal pair;
(d) every server's own request log: no `resources/read`, `completion/complete`, `tools/call` or
    `prompts/get` from discovery or the catalog (the only `tools/call`s are the test's own control
    calls, counted);
(e) a transient failure is retried on the backoff schedule and recovers on its own;
(f) a traversal cancelled on its own (as the event loop cancels every task when it ends) starts
    nothing: the refresh queued behind it is answered, and no task is left to outlive the loop.

No assertion is about time: the tests wait on the catalog's own state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import mcplens
from support import over_stdio

pytestmark = pytest.mark.anyio


class Server:
    """One `refresher_server.py` over stdio: its session and its request log."""

    def __init__(self, session: Any, log: Path) -> None:
        self.session, self.log, self.controls = session, log, 0

    async def control(self, **arguments: Any) -> None:
        self.controls += 1
        await self.session.call_tool("control", arguments)

    def requests(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def count(self, method: str) -> int:
        return self.requests().count(method)

    def assert_only_discovery(self) -> None:
        """(d): the handshake, the two lists, and the test's own control calls — nothing else."""
        requests = self.requests()
        own = {"tools/call", "tools/list"}  # the SDK client lists tools before its first call_tool
        allowed = {"initialize", "resources/list", "resources/templates/list", "subscriptions/listen", *own}
        assert set(requests) <= allowed, requests
        for forbidden in ("resources/read", "completion/complete", "prompts/get"):
            assert forbidden not in requests
        assert requests.count("tools/call") == self.controls, "every tools/call is the test's own"


@asynccontextmanager
async def server(tmp_path: Path, name: str) -> AsyncIterator[Server]:
    log = tmp_path / f"{name}.log"
    async with over_stdio("refresher_server.py", str(log)) as session:
        yield Server(session, log)


async def until(predicate: Callable[[], bool]) -> None:
    """Polls state that SDK tasks change (no event to wait on), for at most 10 s."""
    with anyio.fail_after(10):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.005)


NEVER = mcplens.RefreshConfig(retry_base_seconds=3600, retry_max_seconds=3600)


async def test_a_list_changed_then_failure_keeps_the_listing(tmp_path: Path) -> None:
    # At most 7 items per list: the 8th template makes the refresh fail (item_limit, not retried).
    catalog = mcplens.Catalog(limits=mcplens.Limits(max_items=7), refresh=NEVER)
    async with server(tmp_path, "a") as srv:
        await srv.control(templates=7, resources=3)
        await catalog.refresh("s", srv.session)
        catalog.watch("s", srv.session)
        seen: list[int] = []
        done = anyio.Event()

        async def reader() -> None:
            while not done.is_set():
                seen.append(len(catalog.templates("s")))
                await anyio.lowlevel.checkpoint()

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            await srv.control(templates=8, notify=True)
            await until(lambda: catalog.status("s").status == "stale")
            status = catalog.status("s")
            assert (status.templates, status.last_error and status.last_error.code) == (7, "item_limit")
            await catalog.ensure_fresh()  # a failed server is answered from the catalog
            output = json.loads(catalog.call_list_templates_tool())
            assert output["total"] == 7, "the previous listing is still served"
            assert [(f["server"], f["code"]) for f in output["failures"]] == [("s", "item_limit")]
            # A good refresh replaces it in one step.
            await srv.control(templates=6, notify=True)
            await until(lambda: catalog.status("s").status == "ok")
            done.set()
        assert len(catalog.templates("s")) == 6
        assert set(seen) <= {7, 6}, f"the reader saw the listing emptied or cut: {set(seen)}"
        assert seen[-1] == 6
    srv.assert_only_discovery()


async def test_b_a_second_session_replaces_the_first(tmp_path: Path) -> None:
    catalog = mcplens.Catalog(refresh=NEVER)
    async with server(tmp_path, "b1") as one:
        await one.control(templates=3)
        await catalog.refresh("s", one.session)
        first = catalog.watch("s", one.session)
        assert len(catalog.templates("s")) == 3
        async with server(tmp_path, "b2") as two:
            await two.control(templates=5)
            second = catalog.watch("s", two.session)
            assert (first.active, second.active) == (False, True)
            assert catalog.templates("s") == [], "the first session's listing is gone at once"
            # The first session's list_changed changes nothing (the call returns after it arrived).
            await one.control(templates=4, notify=True)
            assert not catalog._machine.is_busy("s")
            assert catalog.status("s").status == "unknown"
            await catalog.ensure_fresh("s")
            assert len(catalog.templates("s")) == 5, "the second session's listing is served"
        # The second session closed: its watch cleared the listing; nothing is left to traverse on.
        assert (catalog.status("s").status, second.active) == ("unknown", False)
        await catalog.ensure_fresh("s")
        status = catalog.status("s")
        assert (status.status, status.last_error and status.last_error.code) == ("failed", "transport_error")
    # The first session's close changes nothing either.
    assert catalog.status("s").status == "failed"
    assert one.count("resources/templates/list") == 2, "one traversal of the first server (2 pages)"
    one.assert_only_discovery()
    two.assert_only_discovery()


async def test_c_ten_concurrent_refreshes_traverse_once(tmp_path: Path) -> None:
    catalog = mcplens.Catalog(refresh=NEVER)
    async with server(tmp_path, "c") as srv:
        await srv.control(templates=5, resources=1)
        statuses: list[mcplens.ServerStatus] = []

        async def one() -> None:
            statuses.append(await catalog.refresh("s", srv.session))

        async with anyio.create_task_group() as tg:
            for _ in range(10):
                tg.start_soon(one)
        assert [s.generation for s in statuses] == [1] * 10
        # One traversal pair: 1 resources page, 3 template pages.
        assert (srv.count("resources/list"), srv.count("resources/templates/list")) == (1, 3)
    srv.assert_only_discovery()


async def test_e_transient_failures_are_retried_until_they_recover(tmp_path: Path) -> None:
    # A small base keeps the test short; the schedule itself is pinned by the shared vectors.
    catalog = mcplens.Catalog(refresh=mcplens.RefreshConfig(retry_base_seconds=0.02))
    async with server(tmp_path, "e") as srv:
        await srv.control(templates=2, fail=["error", "error"])
        with pytest.raises(mcplens.DiscoveryError) as info:
            await catalog.refresh("s", srv.session)
        assert (info.value.code, info.value.rpc_code) == ("server_error", -32603)
        assert catalog.status("s").status == "failed"
        # Nobody asks again: the timer retries (failing once more), then recovers.
        await until(lambda: catalog.status("s").status == "ok")
        status = catalog.status("s")
        assert (status.templates, status.generation, status.last_error) == (2, 1, None)
        assert srv.count("resources/list") == 3
    srv.assert_only_discovery()


async def test_f_a_cancelled_traversal_starts_nothing(tmp_path: Path) -> None:
    catalog = mcplens.Catalog(refresh=NEVER)
    started: list[str] = []

    def catalog_tasks() -> list[asyncio.Task[Any]]:
        return [t for t in asyncio.all_tasks() if t.get_name().startswith("mcplens refresh") and not t.done()]

    async with server(tmp_path, "f") as srv:
        await srv.control(templates=1, fail=["hang"])
        async with anyio.create_task_group() as tg:
            tg.start_soon(catalog.refresh, "s", srv.session)
            await until(lambda: srv.count("resources/list") == 1)  # the first traversal hangs there
            tg.start_soon(partial(catalog.refresh, "s", srv.session, force=True))
            await until(lambda: len(catalog._waiters) == 2)  # forced: queued behind it, not joined
            [traversal] = catalog_tasks()
            # Runs once the cancelled task has ended, before any other task steps again: a task it
            # started then is one that an ending event loop would leave never awaited.
            traversal.add_done_callback(lambda _: started.extend(t.get_name() for t in catalog_tasks()))
            traversal.cancel()  # what asyncio.Runner does to every task left at its end
            # A task of the session's task group cancelled from outside ends the session (this body
            # included, the session's scope being around it).
            await anyio.sleep(10)
        pytest.fail("the session outlived its cancelled task")
    assert traversal.done()
    assert started == [], "the cancelled traversal started another one"
    assert srv.count("resources/list") == 1
