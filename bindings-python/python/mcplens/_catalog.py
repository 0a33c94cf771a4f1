"""`mcplens.Catalog`: the core's catalog and refresh state machine driven over `mcp` SDK sessions.

Every rule (joining, queueing, connection epochs, retries with backoff, `ttlMs`, the shrink guard,
commits, staleness, rendering) is the core's `Refresher` (`mcplens._core.Refresher`). This module
performs its actions and nothing else:

- `traverse`: both traversals (resources, then templates) run in a task of the connection's own
  task group, and the result (listings, the first error, or abandoned) is handed back;
- `resolve`: the waiting callers wake up with the outcome;
- one timer task sleeps until `poll_timeout()` and calls `handle_timeout`.

Connections: each session a server is refreshed or watched over is one connection (an epoch);
another session under the same name replaces it. `watch` chains onto the session's message handler
(list_changed → `on_list_changed`), and the session's receive loop ending, or its task group ending,
detaches the connection. How a watch learns of changes is the core's `Refresher.watch`: on a 2.x
2026-07-28 connection whose server advertises `resources.listChanged` the watch holds
`subscriptions/listen`; its refusal or end goes to the core's `listen_closed`, which decides (-32601
"not offered"; any other refusal an error raised by `Watch.ready()`; an end after the
acknowledgement the connection's end).
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any, Literal

from mcplens import _core
from mcplens._core import CatalogError, CompleteConfig, DiscoveryError, Limits, ReadConfig, RefreshConfig, ServerStatus
from mcplens._mcp import _pair, _perform, _sdk

__all__ = ["Catalog", "Watch"]

_Notifications = Literal["unsolicited", "listening", "not_offered"]

logger = logging.getLogger("mcplens")


class Watch:
    """One `Catalog.watch(server, session)`: keeps `server` current while active."""

    def __init__(self, server: str, session: Any) -> None:
        self.server = server
        self.session = session
        self._active = True
        self._ready = _sdk().anyio.Event()
        self._error: CatalogError | None = None  # a refused listen stream, from the core
        self._scope: Any = None  # the cancel scope of the watch's task, once it runs
        self._notifications: _Notifications | None = None  # the core's answer, once the watch stands

    @property
    def active(self) -> bool:
        """False once the connection closed, the watch was replaced, or the server removed."""
        return self._active

    @property
    def notifications(self) -> _Notifications | None:
        """How this watch learns of changes, once it stands (`None` before, or after it failed):
        `"unsolicited"` (before 2026-07-28, list_changed arrives unasked), `"listening"` (2026-07-28,
        on the `subscriptions/listen` stream), `"not_offered"` (2026-07-28, the server offers none:
        it does not advertise `resources.listChanged`, or answered the stream with -32601; the pair
        is kept current by refreshes and its `ttlMs`)."""
        return self._notifications

    async def ready(self) -> None:
        """Returns once the watch stands: at once on a legacy connection and where the server
        offers no change notifications (`notifications == "not_offered"`); on a 2.x 2026-07-28
        connection whose server advertises `resources.listChanged`, once the server acknowledged
        the `subscriptions/listen` stream (or the watch ended). Raises `CatalogError`
        (`server_error` with `rpc_code`, or `transport_error`) when the server refused the stream
        otherwise or it failed before the acknowledgement: the connection and its pair stay, and
        its closing still clears them."""
        await self._ready.wait()
        if self._error is not None:
            raise self._error

    def _stop(self) -> bool:
        """Deactivates (and ends the watch's task); True if it was active."""
        was, self._active = self._active, False
        self._ready.set()
        if self._scope is not None:
            self._scope.cancel()
        return was

    def __repr__(self) -> str:
        return f"<Watch server={self.server!r} active={self._active}>"


class _Connection:
    """One session of one server, as the refresher's epoch."""

    def __init__(self, server: str, epoch: int, session: Any, task_group: Any) -> None:
        self.server, self.epoch, self.session, self.task_group = server, epoch, session, task_group
        self.watch: Watch | None = None


class _Waiter:
    def __init__(self) -> None:
        self.event = _sdk().anyio.Event()
        self.outcome: Any = None


class Catalog(_core.Catalog):
    """Per-server resources and templates, refreshed as one transaction over `mcp` sessions.

    ```python
    catalog = mcplens.Catalog()
    await catalog.refresh("docs", session)   # both lists committed together, or DiscoveryError
    catalog.watch("docs", session)           # list_changed → refresh; close → both lists cleared
    await catalog.ensure_fresh()             # before answering the model: traverses what is due
    catalog.call_list_templates_tool({"server": "docs"})   # the model's listing, compact JSON
    await catalog.call_tool(name, arguments)  # any tool of visible_tools(), the read tool included
    ```

    `session` is an initialized, entered `mcp.ClientSession` (1.x or 2.x), an entered 2.x
    `mcp.Client` or a connected `fastmcp.Client` (held as its current session: a reconnected client
    is a new connection). `refresh` (`mcplens.RefreshConfig`) sets the retry backoff, the `ttlMs` floor and
    the shrink guard. The catalog's state has one owner, its refresh machine: this class drives it;
    hosts on other SDKs drive a `mcplens.Refresher` over a `mcplens._core.Catalog` themselves.
    """

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        refresh: RefreshConfig | None = None,
        read: ReadConfig | None = None,
        complete: CompleteConfig | None = None,
    ) -> None:
        # `limits`, `refresh`, `read` and `complete` are taken by the native constructor; the `mcp` SDK (and anyio)
        # are imported on first use, so the reads work without them.
        self._machine = _core.Refresher(self)
        self._connections: dict[int, _Connection] = {}  # by epoch
        self._waiters: dict[int, _Waiter] = {}  # by caller id
        self._timer: tuple[float, int] | None = None  # (due, token) of the armed timer
        self._timer_token = 0
        self._timer_scope: Any = None
        self._changed: Any = None  # an anyio.Event while `settled` waits

    async def refresh(self, server: str, session: Any, *, force: bool = False) -> ServerStatus:
        """Refreshes `server` over `session` (a new session under that name replaces the previous
        connection): joins a refresh under way, else starts one; `force` asks for one that begins
        after this call. Returns the status once both lists committed; raises `DiscoveryError` when
        the traversal failed (the catalog keeps the previous pair, status `stale`)."""
        self._connect(server, session := _sdk().connection(session))
        return await self._wait(server, self._machine.request(server, "force" if force else "refresh"))

    async def ensure_fresh(self, server: str | None = None) -> None:
        """Makes `server`'s listing (or every server's) current: traverses only a server that has
        no pair yet, is outdated by list_changed, or whose `ttlMs` ran out. Failures show in the
        status and the tool's `failures`, not as exceptions."""
        await self._current([server] if server else self.servers())

    async def _current(self, servers: list[str]) -> None:
        callers = [(s, self._machine.request(s, "current")) for s in servers]
        for name, caller in callers:
            with contextlib.suppress(DiscoveryError):
                await self._wait(name, caller)

    def watch(self, server: str, session: Any) -> Watch:
        """Keeps `server` current on `session`: each `notifications/resources/list_changed` goes to
        the refresher (which keeps the last pair listed, outdated, and refreshes); the connection
        closing clears both lists. Chains onto the session's message handler, which still sees
        every message. Does not refresh by itself: `await refresh(...)` for the first listing."""
        sdk = _sdk()
        conn = self._connect(server, session := sdk.connection(session))
        if conn.watch is not None:
            conn.watch._stop()
        watch = conn.watch = Watch(server, session)
        client_session = sdk.client_session(session)
        previous = client_session._message_handler

        async def message_handler(message: Any) -> None:
            try:
                if watch.active and sdk.is_list_changed(message):
                    self._machine.on_list_changed(server, conn.epoch)
                    self._drive()
            except Exception:
                logger.exception("mcplens: list_changed of %r", server)
            finally:
                await previous(message)

        client_session._message_handler = message_handler
        sdk.on_receive_closed(client_session, lambda: self._closed(conn, watch))
        conn.task_group.start_soon(self._listen, conn, watch, name=f"mcplens watch {server}")
        return watch

    async def call_tool(self, name: str, arguments: Any = None) -> str:
        """Answers the resource tool `name` (one of `visible_tools()`) with the model's `arguments`
        (a dict, its JSON text, or None) once the servers it reads are current
        (`_core.current_before`: a listing's, the read's or completion's server): a listing from the
        catalog; a read or a completion over the server's session, bounded by the catalog's
        `ReadConfig` / `CompleteConfig`. Returns the tool's output; raises `ToolError` — its message
        is meant for the model."""
        await self._current(_core.current_before(self, name, arguments))
        if not _core.asks_server(name):
            return self.call_listing_tool(name, arguments)
        call = _core.ToolCall(self, name, {} if arguments is None else arguments)
        conn = self._connections.get(self._machine.epoch(call.server) or 0)
        if conn is None:
            return call.finish("lost")
        sdk = _sdk()
        outcome: str = "timeout"  # unless an answer comes within the call's time
        value: Any = None
        with sdk.anyio.move_on_after(call.remaining()):
            outcome, value = await sdk.fetch(sdk.client_session(conn.session), call)
        return call.finish(outcome, value)

    def add_server(self, server: str) -> None:
        """Registers `server` without a connection (idempotent): listed, status `unknown`."""
        self._machine.add_server(server)

    def invalidate(
        self,
        server: str,
        reason: Literal["list_changed", "connection_closed", "configuration_changed", "disabled", "other"] = "other",
    ) -> None:
        """Invalidates `server`: `"list_changed"` keeps its pair (outdated) and refreshes;
        `"connection_closed"` and `"disabled"` end its connection (both lists cleared); any other
        reason clears both lists and keeps the connection (the next request traverses)."""
        self._machine.invalidate(server, reason)
        current = self._machine.epoch(server)
        for conn in [c for c in self._connections.values() if c.server == server and c.epoch != current]:
            self._forget(conn)
        self._drive()

    def remove(self, server: str) -> bool:
        """Forgets `server` (entries, connection, watch); a refresh still waiting raises `unknown_server`."""
        for conn in [c for c in self._connections.values() if c.server == server]:
            self._forget(conn)
        known = self._machine.remove(server)
        self._drive()
        return known

    def clear(self) -> None:
        """Forgets every server."""
        for conn in list(self._connections.values()):
            self._forget(conn)
        self._machine.clear()
        self._drive()

    async def settled(self, server: str | None = None) -> None:
        """Returns once no traversal of `server` (or of any server) is in flight or queued."""
        while self._machine.is_busy(server):
            if self._changed is None:
                self._changed = _sdk().anyio.Event()
            await self._changed.wait()

    # --- internals: performing the machine's actions ---

    def _connect(self, server: str, session: Any) -> _Connection:
        """The connection of `session` for `server`, attaching it if new."""
        current = self._connections.get(self._machine.epoch(server) or 0)
        if current is not None and current.session is session:
            return current
        sdk = _sdk()
        client_session = sdk.client_session(session)
        task_group = getattr(client_session, "_task_group", None)
        if task_group is None:
            raise _core.misuse("session_not_entered", server)
        capabilities = sdk.capabilities_json(client_session)
        _core.initialized(server, capabilities)  # raises for a session not initialized
        if current is not None:
            self._forget(current)
        conn = _Connection(server, self._machine.attach_capabilities(server, capabilities), session, task_group)
        self._connections[conn.epoch] = conn
        self._drive()
        return conn

    def _forget(self, conn: _Connection) -> None:
        self._connections.pop(conn.epoch, None)
        if conn.watch is not None:
            conn.watch._stop()

    async def _wait(self, server: str, caller: int) -> ServerStatus:
        waiter = self._waiters[caller] = _Waiter()
        try:
            self._drive()
            await waiter.event.wait()
        finally:
            self._waiters.pop(caller, None)
        failed = waiter.outcome.get("failed") if isinstance(waiter.outcome, dict) else None
        if failed is not None:
            err = DiscoveryError(failed["failure"]["message"])
            err.code, err.server, err.rpc_code = failed["failure"]["code"], server, failed.get("rpcCode")
            raise err
        return self.status(server)

    def _drive(self, dying: bool = False) -> None:
        """Performs every pending action, then arms the timer (from a cancelled task: neither — a
        traversal it would start is abandoned at once)."""
        while actions := self._machine.poll_actions():
            for action in actions:
                if "traverse" in action:
                    self._spawn(action["traverse"]["epoch"], action["traverse"]["traversal"], dying)
                else:
                    for caller in action["resolve"]["callers"]:
                        if (waiter := self._waiters.get(caller)) is not None:
                            waiter.outcome = action["resolve"]["outcome"]
                            waiter.event.set()
        if not dying:
            self._arm()
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _spawn(self, epoch: int, traversal: int, dying: bool = False) -> None:
        conn = self._connections.get(epoch)
        try:
            if dying or conn is None or conn.task_group.cancel_scope.cancel_called:
                raise RuntimeError("the session is closing")
            conn.task_group.start_soon(self._traverse, conn, traversal, name=f"mcplens refresh {conn.server}")
        except RuntimeError:  # the session's task group is closed or closing
            self._machine.traversal_abandoned(traversal)

    async def _traverse(self, conn: _Connection, traversal: int) -> None:
        """Performs the core's traversal pair and hands it back (ended, or abandoned: the core decides)."""
        pair = _pair(conn.session, traversal, conn.server, self.limits)
        try:
            await _perform(conn.session, pair)
        except BaseException:
            # Cancelled (the session closing, or the event loop cancelling every task as it ends):
            # a dying task starts nothing, or what it started could outlive the loop unawaited.
            self._machine.traversed(pair)
            self._drive(dying=True)
            raise
        self._machine.traversed(pair)
        self._drive()

    def _arm(self) -> None:
        """One timer: re-armed in a live connection's task group whenever `poll_timeout` moves."""
        due = self._machine.poll_timeout()
        if due == (self._timer[0] if self._timer else None):
            return
        if self._timer_scope is not None:
            self._timer_scope.cancel()
        self._timer, self._timer_scope = None, None
        if due is None:
            return
        self._timer_token += 1
        for conn in reversed(self._connections.values()):
            if not conn.task_group.cancel_scope.cancel_called:
                self._timer = (due, self._timer_token)
                conn.task_group.start_soon(self._sleep, conn, due, self._timer_token, name="mcplens timer")
                return

    async def _sleep(self, conn: _Connection, due: float, token: int) -> None:
        anyio = _sdk().anyio
        fired = False
        try:
            with anyio.CancelScope() as scope:
                if self._timer is None or self._timer[1] != token:
                    return
                self._timer_scope = scope
                await anyio.sleep(max(0.0, due - time.monotonic()))
                fired = True
        finally:
            if self._timer is not None and self._timer[1] == token:
                self._timer, self._timer_scope = None, None
                if fired:
                    self._machine.handle_timeout()
                # Fired: perform the retries; cancelled with its task group: re-arm in another one;
                # cancelled alone (the event loop ending): start nothing.
                self._drive(dying=not fired and not conn.task_group.cancel_scope.cancel_called)

    async def _listen(self, conn: _Connection, watch: Watch) -> None:
        """Lives as long as the watch: holds the 2026-07-28 listen stream when the core says to open
        one, and hands its acknowledgement and its end (or refusal) to the core, whose
        `listen_closed` decides: not offered, the watch's error for `ready()`, or (after the
        acknowledgement: an SDK client cannot tell whether its connection outlives the stream) the
        connection's end. The session's task group ending is the connection's end too."""
        sdk = _sdk()
        try:
            with sdk.anyio.CancelScope() as watch._scope:
                if not watch.active:
                    return
                session = sdk.client_session(watch.session)
                notifications = self._machine.watch(
                    conn.server, conn.epoch, sdk.protocol_version(session), sdk.capabilities_json(session)
                )
                if notifications == "listening":
                    rpc_code = None
                    try:
                        async with sdk.listen(watch.session) as subscription:
                            self._machine.listen_acknowledged(conn.server, conn.epoch)
                            watch._notifications = notifications
                            watch._ready.set()
                            async for _event in subscription:
                                pass  # the SDK also hands each notification to the message handler chain
                    except Exception as e:
                        if watch._ready.is_set():
                            logger.warning("mcplens: list_changed stream of %r ended: %r", watch.server, e)
                        rpc_code = sdk.rpc_code(e)
                    closed = self._machine.listen_closed(conn.server, conn.epoch, rpc_code, "unknown")
                    if closed == "detached":
                        return
                    if isinstance(closed, CatalogError):
                        watch._error = closed
                        notifications = None
                    else:  # not offered (relisting leaves the watch so too), or an old connection
                        notifications = None if closed is None else "not_offered"
                watch._notifications = notifications
                watch._ready.set()
                await sdk.anyio.sleep_forever()
        finally:
            self._closed(conn, watch)

    def _closed(self, conn: _Connection, watch: Watch) -> None:
        if watch._stop() and conn.watch is watch:
            self._forget(conn)
            self._machine.detach(conn.server, conn.epoch)
            self._drive()
