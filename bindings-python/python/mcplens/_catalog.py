"""`mcplens.Catalog`: the core's catalog (`mcplens._core.Catalog`) driven over `mcp` SDK sessions.

Every rule (tickets, coalescing, staleness, TTL, rendering, the output cap) is the core's. This
module runs the two traversals of a refresh, reads the clock, spawns refresh tasks and hooks the
session's notifications:

- `refresh`: resources then templates (`_traverse`), committed together, or `fail` with the first
  error (the previous pair is kept), or `abandon` when cancelled.
- `watch`: a list_changed goes to the core's `on_list_changed`; on `"refresh_now"` the handler
  calls `begin_refresh` in the same step (no await in between, so the next notification already
  sees the refresh running) and spawns the refresh in the session's task group; `"queued"` and
  `"already_queued"` do nothing, because the running refresh's completion then says
  `refresh_again`, and the task that ran it starts exactly one more.
- Connection closed: the session's task group ending (the session exited) or its receive loop
  closing its read stream (end of stream) invalidates the server with `"connection_closed"`.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Literal

from mcplens import _core
from mcplens._core import CatalogError, Completion, DiscoveryError, Limits, ServerStatus, Ticket
from mcplens._mcp import _sdk, _traverse

__all__ = ["Catalog", "Watch"]

logger = logging.getLogger("mcplens")


class Watch:
    """One `Catalog.watch(server, session)`: keeps `server` current while active."""

    def __init__(self, server: str, session: Any, task_group: Any) -> None:
        self.server = server
        self.session = session
        self._task_group = task_group
        self._active = True
        self._ready = _sdk().anyio.Event()
        self._scope: Any = None  # the cancel scope of the watch's task, once it runs

    @property
    def active(self) -> bool:
        """False once the connection closed, the watch was replaced, or the server removed."""
        return self._active

    async def ready(self) -> None:
        """Returns once list_changed notifications can arrive: at once on a legacy connection; on a
        2.x 2026-07-28 connection once the server acknowledged the `subscriptions/listen` stream
        (or the watch ended)."""
        await self._ready.wait()

    def _stop(self) -> bool:
        """Deactivates (and ends the watch's task); True if it was active."""
        was, self._active = self._active, False
        self._ready.set()
        if self._scope is not None:
            self._scope.cancel()
        return was

    def __repr__(self) -> str:
        return f"<Watch server={self.server!r} active={self._active}>"


class Catalog(_core.Catalog):
    """Per-server resources and templates, refreshed as one transaction over `mcp` sessions.

    ```python
    catalog = mcplens.Catalog()
    await catalog.refresh("docs", session)   # both lists committed together, or DiscoveryError
    catalog.watch("docs", session)           # list_changed → coalesced refresh; close → invalidate
    catalog.call_list_templates_tool({"server": "docs"})   # the model's listing, compact JSON
    ```

    `session` is an initialized `mcp.ClientSession` (1.x or 2.x) or an entered 2.x `mcp.Client`.
    The sans-IO methods of `mcplens._core.Catalog` (`begin_refresh`, `commit`, `fail`, `abandon`,
    `on_list_changed`, `needs_refresh`, ...) are available for hosts that run their own traversals.
    """

    def __init__(self, limits: Limits | None = None) -> None:
        # `limits` is taken by the native constructor (`self.limits`); the `mcp` SDK (and anyio)
        # are imported on first use, so the sans-IO methods work without them.
        self._sessions: dict[str, Any] = {}
        self._watches: dict[str, Watch] = {}
        self._running: dict[str, int] = {}
        self._changed: Any = None  # an anyio.Event while `settled` waits

    async def refresh(self, server: str, session: Any) -> ServerStatus:
        """Refreshes `server` over `session`: resources, then templates, committed together; or the
        first error is recorded (`status` `stale`, previous pair kept) and raised as
        `DiscoveryError`. When a list_changed made this refresh outdated, it also runs the one
        more refresh the core asks for (further ones run in the background of a watched session).
        """
        self._sessions[server] = session
        completion, error = await self._once(server, session, self.begin_refresh(server))
        if completion.refresh_again:
            completion, error = await self._once(server, session, self.begin_refresh(server))
            if completion.refresh_again:
                self._follow_up(server)
        if error is not None:
            raise error
        return self.status(server)

    def watch(self, server: str, session: Any) -> Watch:
        """Keeps `server` current on `session` (entered and initialized): each
        `notifications/resources/list_changed` invalidates it and, as the core decides, refreshes
        it in the session's task group (a burst during a refresh causes exactly one more); the
        connection closing invalidates it. Chains onto the session's message handler, which still
        sees every message. Does not refresh by itself: `await refresh(...)` for the first listing.
        """
        sdk = _sdk()
        client_session = sdk.client_session(session)
        task_group = getattr(client_session, "_task_group", None)
        if task_group is None:
            err = CatalogError(f'server "{server}": invalid argument: watch needs an entered session')
            err.code, err.server = "invalid_argument", server
            raise err
        self.add_server(server)
        self._sessions[server] = session
        if (old := self._watches.get(server)) is not None:
            old._stop()
        watch = self._watches[server] = Watch(server, session, task_group)
        previous = client_session._message_handler

        async def message_handler(message: Any) -> None:
            try:
                if watch.active and sdk.is_list_changed(message):
                    self._list_changed(watch)
            finally:
                await previous(message)

        client_session._message_handler = message_handler
        sdk.on_receive_closed(client_session, lambda: self._closed(watch))
        task_group.start_soon(self._listen, watch, name=f"mcplens watch {server}")
        return watch

    def remove(self, server: str) -> bool:
        """Forgets `server` (entries, watch, session); a refresh in flight is discarded."""
        if (watch := self._watches.pop(server, None)) is not None:
            watch._stop()
        self._sessions.pop(server, None)
        return super().remove(server)

    def clear(self) -> None:
        """Forgets every server."""
        for watch in self._watches.values():
            watch._stop()
        self._watches.clear()
        self._sessions.clear()
        super().clear()

    async def settled(self, server: str | None = None) -> None:
        """Returns once no background refresh (of `server`, or of any server) is running."""
        while any(n for s, n in self._running.items() if server is None or s == server):
            if self._changed is None:
                self._changed = _sdk().anyio.Event()
            await self._changed.wait()

    # --- internals ---

    async def _once(self, server: str, session: Any, ticket: Ticket) -> tuple[Completion, DiscoveryError | None]:
        """Both traversals, then commit, fail or (cancelled, host error) abandon."""
        try:
            resources = await _traverse(session, "resources", server, self.limits)
            templates = await _traverse(session, "resource_templates", server, self.limits)
        except DiscoveryError as e:
            return self.fail(ticket, e.code, str(e)), e
        except BaseException:
            if self.abandon(ticket).refresh_again:
                self._follow_up(server)
            raise
        return self.commit(ticket, resources, templates, time.monotonic()), None

    def _list_changed(self, watch: Watch) -> None:
        """The message handler's part: the core decides; never raises into the SDK."""
        try:
            if self.on_list_changed(watch.server) == "refresh_now":
                self._spawn(watch, self.begin_refresh(watch.server))
        except Exception:
            logger.exception("mcplens: list_changed of %r", watch.server)

    def _follow_up(self, server: str) -> None:
        """The one more refresh the core asked for, in the background of the server's watch."""
        watch = self._watches.get(server)
        if watch is not None and watch.active and not watch._task_group.cancel_scope.cancel_called:
            self._spawn(watch, self.begin_refresh(server))

    def _spawn(self, watch: Watch, ticket: Ticket) -> None:
        self._running[watch.server] = self._running.get(watch.server, 0) + 1
        try:
            watch._task_group.start_soon(self._chain, watch.server, ticket, name=f"mcplens refresh {watch.server}")
        except BaseException:
            self.abandon(ticket)
            self._done(watch.server)
            raise

    async def _chain(self, server: str, ticket: Ticket) -> None:
        """A refresh, then exactly one more each time a completion says `refresh_again`."""
        try:
            while True:
                session = self._sessions.get(server)
                if session is None:  # removed meanwhile
                    self.abandon(ticket)
                    return
                completion, _error = await self._once(server, session, ticket)
                if not completion.refresh_again:
                    return
                ticket = self.begin_refresh(server)
        except Exception:
            logger.exception("mcplens: background refresh of %r", server)
        finally:
            self._done(server)

    def _done(self, server: str) -> None:
        self._running[server] -= 1
        if not self._running[server]:
            del self._running[server]
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def _listen(self, watch: Watch) -> None:
        """Lives as long as the watch: holds the 2026-07-28 listen stream; its end, or the session's
        task group ending, is the connection's close."""
        reason: Literal["connection_closed", "other"] = "connection_closed"
        sdk = _sdk()
        try:
            with sdk.anyio.CancelScope() as watch._scope:
                if not watch.active:
                    return
                listen = sdk.listen(watch.session)
                if listen is not None:
                    try:
                        async with listen as subscription:
                            watch._ready.set()
                            async for _event in subscription:
                                pass  # the SDK also hands each notification to the message handler chain
                        reason = "other"  # the server ended the stream: changes would go unseen
                        return
                    except sdk.listen_unsupported:
                        pass  # a legacy connection: notifications reach the message handler as they are
                    except Exception as e:  # refused, lost, or the connection failed
                        logger.warning("mcplens: list_changed stream of %r ended: %r", watch.server, e)
                        reason = "other"
                        return
                watch._ready.set()
                await sdk.anyio.sleep_forever()
        finally:
            self._closed(watch, reason)

    def _closed(self, watch: Watch, reason: Literal["connection_closed", "other"] = "connection_closed") -> None:
        if watch._stop() and self._watches.get(watch.server) is watch:
            self.invalidate(watch.server, reason)
