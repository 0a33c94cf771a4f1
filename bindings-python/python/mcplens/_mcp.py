"""Glue for the official `mcp` SDK, 1.x and 2.x: drives the core's `Pager` over a client session.

It only converts values and drives the SDK's I/O. Every rule (request shape, cursors, bounds,
validation, projection, sanitizing, error codes) is the core's.

- Raw pages: 1.x `send_request` with a pass-through result model (1.x validates only against the
  result type it is given). 2.x `send_request` validates every result against the negotiated
  protocol's schema first, so one sloppy optional field would fail the page; the glue sends on the
  session's own dispatcher instead, after the session's own per-request stamp (protocol headers,
  2026-07-28 `_meta`), and falls back to `send_request` if a later 2.x moves those internals.
- Deadline: `pager.remaining(time.monotonic())` bounds each in-flight request with an anyio cancel
  scope, which cancels the SDK call (2.x then tells the server `notifications/cancelled`).
- A 2.x `mcp.Client` is read through its `.session`, which bypasses the Client's response cache.
- A community `fastmcp.Client` (2.x-4.x) is read through its `.session`, the SDK `ClientSession` it
  drives: under its typed one-page call (`list_resource_templates_mcp`, which validates the page and
  caches page 1) and its walk (which logs a repeated cursor and returns the partial list).
- Watching (`Catalog.watch`): the session's private `_message_handler` is wrapped (the SDKs take
  the handler at construction only); 1.x delivers a `ServerNotification` (`.root`), 2.x the model.
  On a 2.x 2026-07-28 connection list_changed flows only while a `subscriptions/listen` stream is
  open (`Client.listen`); the SDK then also passes it to the message handler. Neither SDK has a
  close callback: the end of the session's receive loop is seen when it closes its read stream.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

from mcplens import _core
from mcplens._core import Limits, Listing, Pager, Request, ToolCall, initialized

__all__ = ["list_resource_templates", "list_resources"]


async def list_resource_templates(session: Any, *, server: str, limits: Limits | None = None) -> Listing:
    """Every resource template of one server, bounded, validated and sanitized.

    `session` is an initialized `mcp.ClientSession` (1.x or 2.x), an entered 2.x `mcp.Client` or a
    connected `fastmcp.Client` (2.x-4.x); `server` is the host's name for it. Raises
    `mcplens.DiscoveryError` (`.code`) on any failure: no prefix of a failed traversal is ever returned.
    """
    return await _traverse(session, "resource_templates", server, limits)


async def list_resources(session: Any, *, server: str, limits: Limits | None = None) -> Listing:
    """Every concrete resource of one server; see `list_resource_templates`."""
    return await _traverse(session, "resources", server, limits)


async def _traverse(
    target: Any, kind: Literal["resources", "resource_templates"], server: str, limits: Limits | None
) -> Listing:
    sdk = _sdk()
    session = sdk.client_session(target)
    declares = initialized(server, None if session is None else sdk.capabilities_json(session))
    pager = Pager(
        kind,
        server,
        resources_capability=declares,
        limits=limits,
        now=time.monotonic(),
        protocol_version=sdk.protocol_version(session),
    )
    await _perform(session, pager)
    return pager.finish()


def _pair(target: Any, traversal: int, server: str, limits: Limits | None) -> Pager:
    """The core's traversal pair of a refresher's `traverse` action over `target`."""
    sdk = _sdk()
    session = sdk.client_session(target)
    return Pager.pair(
        traversal,
        server,
        capabilities=None if session is None else sdk.capabilities_json(session),
        limits=limits,
        now=time.monotonic(),
        protocol_version=sdk.protocol_version(session),
    )


async def _perform(target: Any, pager: Pager) -> None:
    """Sends the pager's requests over `target` and feeds it what came back, until it asks no more."""
    sdk = _sdk()
    session = sdk.client_session(target)
    while (request := pager.next_request()) is not None:
        with sdk.anyio.move_on_after(pager.remaining(time.monotonic())) as scope:
            outcome, value = await sdk.fetch(session, request, parsed=True)
        now = time.monotonic()
        if scope.cancelled_caught:
            pager.accept_timeout(now)
        elif outcome == "page":
            if not pager.accept_page_parsed(value, now):
                pager.accept_page(sdk.json(value), now)
        else:  # what the SDK raised, for the core to classify
            pager.accept_failure(outcome, value, now=now)


class _Sdk:
    """What differs between `mcp` 1.x and 2.x, resolved once on first use."""

    def __init__(self) -> None:
        import anyio
        import anyio.streams.memory
        import mcp
        import pydantic
        import pydantic_core
        from mcp import types
        from mcp.shared import exceptions

        self.anyio = anyio
        self.v2 = hasattr(mcp, "MCPError")
        self.session_type: Any = mcp.ClientSession
        self.client_type: Any = getattr(mcp, "Client", None)
        self.rpc_error: type[Exception] = getattr(exceptions, "MCPError" if self.v2 else "McpError")
        self.validation_error = pydantic.ValidationError
        self.transport_errors = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)
        self.to_json = pydantic_core.to_json
        self.serialization_error = pydantic_core.PydanticSerializationError
        self.request_adapter = pydantic.TypeAdapter(types.ClientRequest)

        class RawResult(pydantic.RootModel[Any]):
            """Whatever the server sent as the result: the core validates it."""

        self.raw_result = RawResult
        self.list_changed: type[Any] = types.ResourceListChangedNotification
        if self.v2:
            from mcp.client import subscriptions

            self.listen_session = subscriptions.listen

    def client_session(self, target: Any) -> Any:
        """The `ClientSession` under `target`; None for a `fastmcp.Client` that is not connected."""
        if isinstance(target, self.session_type):
            return target
        if self.client_type is not None and isinstance(target, self.client_type):
            return target.session
        if (fastmcp := sys.modules.get("fastmcp")) is not None and isinstance(target, fastmcp.Client):
            try:
                return target.session
            except Exception:  # not connected, or the connection was lost
                return None
        raise TypeError(f"expected an mcp.ClientSession, mcp.Client or fastmcp.Client, got {type(target).__name__}")

    def connection(self, target: Any) -> Any:
        """What the catalog holds as one connection: a `fastmcp.Client`'s current session (the
        client reconnects with a new one), else `target` itself."""
        fastmcp = sys.modules.get("fastmcp")
        session = self.client_session(target) if fastmcp and isinstance(target, fastmcp.Client) else None
        return target if session is None else session

    def is_list_changed(self, message: Any) -> bool:
        """A resources list_changed notification, as either major delivers it to a message handler."""
        return isinstance(getattr(message, "root", message), self.list_changed)

    def listen(self, target: Any) -> Any:
        """2.x, 2026-07-28: a `subscriptions/listen` stream of resources list_changed."""
        if self.client_type is not None and isinstance(target, self.client_type):
            return target.listen(resources_list_changed=True)  # also evicts the Client's response cache
        return self.listen_session(target, resources_list_changed=True)

    def on_receive_closed(self, session: Any, callback: Callable[[], None]) -> bool:
        """Calls `callback` once the session's receive loop closes its read stream (end of stream or
        session exit). False when the stream is not one this hook knows (e.g. an in-process 2.x
        `Client`, which has no stream)."""
        holder = getattr(session, "_dispatcher", None) if self.v2 else session
        stream = getattr(holder, "_read_stream", None)
        stream = getattr(stream, "_inner", stream)  # 2.x wraps memory streams with sender contexts
        if not isinstance(stream, self.anyio.streams.memory.MemoryObjectReceiveStream):
            return False
        original = stream.aclose

        async def aclose() -> None:
            try:
                await original()
            finally:
                callback()

        stream.aclose = aclose  # type: ignore[method-assign]
        return True

    def capabilities(self, session: Any) -> Any:
        return session.server_capabilities if self.v2 else session.get_server_capabilities()

    def capabilities_json(self, session: Any) -> str:
        """The initialized session's server capabilities as JSON text ("null" before `initialize`)."""
        caps = self.capabilities(session)
        return "null" if caps is None else caps.model_dump_json(by_alias=True, exclude_none=True)

    def protocol_version(self, session: Any) -> str:
        """The negotiated protocol version ("" on 1.x, which has only versions before 2026-07-28)."""
        return (getattr(session, "protocol_version", None) if self.v2 else None) or ""

    async def fetch(
        self, session: Any, request: Request | ToolCall, parsed: bool = False
    ) -> tuple[Literal["page", "sdk_error", "schema_refused", "lost"], Any]:
        """One request: ("page", JSON text, or with `parsed` the result as parsed), or what the SDK
        raised, as facts for the core to classify (`Pager.accept_failure`): ("sdk_error", code) |
        ("schema_refused", None) | ("lost", None)."""
        data: dict[str, Any] = {"method": request.method}
        if (params := request.params) is not None:
            data["params"] = params
        try:
            raw = await self._send(session, data)
        except self.rpc_error as e:
            return "sdk_error", e.error.code  # type: ignore[attr-defined]
        except self.validation_error:
            return "schema_refused", None
        except self.transport_errors:
            return "lost", None
        return "page", raw if parsed else self.json(raw)

    def rpc_code(self, e: BaseException) -> int | None:
        """The JSON-RPC code of an error the server answered (the core's `sdk_rpc_code`); None for
        anything else."""
        if not isinstance(e, self.rpc_error):
            return None
        return _core.sdk_rpc_code("sdk_error", e.error.code)  # type: ignore[attr-defined]

    async def _send(self, session: Any, data: dict[str, Any]) -> Any:
        stamp = getattr(session, "_stamp", None)
        dispatcher = getattr(session, "_dispatcher", None)
        if self.v2 and stamp is not None and hasattr(dispatcher, "send_raw_request"):
            opts: dict[str, Any] = {}
            stamp(data, opts)
            return await dispatcher.send_raw_request(data["method"], data.get("params"), opts)  # type: ignore[union-attr]
        request = self.request_adapter.validate_python(data)
        return (await session.send_request(request, self.raw_result)).root

    def json(self, raw: Any) -> bytes | str:
        try:
            return self.to_json(raw)
        except (self.serialization_error, ValueError):
            # e.g. a lone surrogate: JSON escapes keep it for the core to replace.
            return json.dumps(raw)


@functools.cache
def _sdk() -> _Sdk:
    return _Sdk()
