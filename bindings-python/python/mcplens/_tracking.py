"""Server tracking for the official `mcp` SDK, 1.x and 2.x: `Tracker`, `track()`, `Tracker.traced`.

The glue only finds the hook, reads the clock, the request id and the session, and hands the
request's own objects to the core (`TrackerCore.hold`), which measures its duration and holds them
until the pass after the response (the core's `tracking::Answered` rule: `AFTER_RESPONSE_SECONDS`
after the first request held, arranged with the running loop — asyncio's `call_later`, a trio system
task — or at once when `ANSWERED_MAX` are held, and before flush, shutdown, stats, a session's close
and exit). The pass serializes `params` (and the result when responses are captured) in Rust,
releases the GIL and queues raw parts. Events are built, redacted, capped and exported on the core's
threads.

Hook points (verified against mcp 1.30.0 and 2.3.0):
- 1.x `Server` / `FastMCP` (`._mcp_server`): `request_handlers` (keyed by request class) becomes a
  dict subclass that wraps every handler, including ones registered later. `initialize` never passes
  through it (the `ServerSession` answers it); the client info is read from the session instead.
  A call with no request (`tools/call` refreshing its tool cache through the `tools/list` handler)
  is the SDK's own and is not recorded. Request context: the `request_ctx` context variable.
- 2.x `Server` / `MCPServer` (`._lowlevel_server`): one outermost entry in `Server.middleware`
  (`(ctx, call_next)`), which sees every request, `initialize` included, and every handler
  registered at any time. The per-connection session lives in `Connection.state` and is closed by
  the connection's `exit_stack`.
- Community `fastmcp.FastMCP` (2.x and 3.x on mcp 1.x, 4.x on mcp 2.x; `._mcp_server`, the SDK
  `Server` subclass fastmcp answers through): the hook of its `mcp` major, under fastmcp's own
  middleware chain. Its typed middleware hooks see fastmcp objects (a `ToolResult`, lists before
  pagination, a `ToolError` as an exception); this seam sees what goes on the wire (the page sent,
  a `ToolError` as the `isError` result fastmcp sends), so the events are the SDK servers' for the
  same exchange. `initialize` is seen on mcp 2.x only, as for the SDK servers.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import json
import logging
import os
import signal
import sys
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from time import perf_counter_ns
from typing import Any, Literal, TypedDict, TypeVar, cast

from mcplens._core import (
    AFTER_RESPONSE_SECONDS,
    DEFAULT_AGENTCAT_BASE_URL,
    DEFAULT_JSONL_PATH,
    TRACKED_METHODS,
    TrackerCore,
    TrackingError,
    TrackingSession,
    check_tracker_options,
    flush_at_exit,
)

__all__ = [
    "CallbackExporter",
    "ExporterStats",
    "JsonlExporter",
    "McpcatExporter",
    "OtlpExporter",
    "Tracker",
    "TrackerStats",
    "TrackingError",
    "track",
]

_log = logging.getLogger("mcplens")
_CODES: dict[str, int] = {name: i for i, name in enumerate(TRACKED_METHODS)}
# Every tracker core made in this process: its held requests are recorded at exit.
_CORES: weakref.WeakSet[TrackerCore] = weakref.WeakSet()


def _after_response(core: TrackerCore) -> None:
    """Arranges the core's pass (`record_answered`) after the response: `AFTER_RESPONSE_SECONDS`
    later on the running loop (asyncio `call_later`; under trio a system task that sleeps as long),
    or at once when no loop runs. Never raises."""
    try:
        asyncio.get_running_loop().call_later(AFTER_RESPONSE_SECONDS, core.record_answered)
        return
    except RuntimeError:  # no asyncio loop in this thread
        pass
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            trio.lowlevel.spawn_system_task(_trio_after, core, trio)
            return
        except RuntimeError:  # not inside trio.run
            pass
    core.record_answered()


async def _trio_after(core: TrackerCore, trio: Any) -> None:
    try:
        await trio.sleep(AFTER_RESPONSE_SECONDS)
    finally:  # cancelled when the run ends: recorded then
        core.record_answered()


# ---------------------------------------------------------------------------------------------
# Exporters: plain values; `_spec` is the entry in the core's configuration, which checks it.


class _Exporter:
    __slots__ = ("_spec",)
    _spec: dict[str, Any]

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


class JsonlExporter(_Exporter):
    """Append events as JSON lines to a file (the default exporter, `mcplens-events.jsonl`),
    rotated by size."""

    __slots__ = ()

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        spec = {"type": "jsonl"} if path is None else {"type": "jsonl", "path": os.fspath(path)}
        object.__setattr__(self, "_spec", spec)

    @property
    def path(self) -> str:
        return str(self._spec.get("path", DEFAULT_JSONL_PATH))

    def __repr__(self) -> str:
        return f"JsonlExporter(path={self.path!r})"


class OtlpExporter(_Exporter):
    """OTLP/HTTP protobuf to `{endpoint}/v1/traces` (spans) and `{endpoint}/v1/metrics`
    (`mcp.server.operation.duration`), with the OpenTelemetry MCP semantic-convention names."""

    __slots__ = ()

    def __init__(self, endpoint: str, headers: Mapping[str, str] | None = None) -> None:
        pairs = [[k, v] for k, v in (headers or {}).items()]
        object.__setattr__(self, "_spec", {"type": "otlp", "endpoint": endpoint, "headers": pairs})

    @property
    def endpoint(self) -> str:
        return str(self._spec["endpoint"])

    @property
    def headers(self) -> dict[str, str]:
        return dict(self._spec["headers"])

    def __repr__(self) -> str:
        # Header values may be credentials: only their names.
        return f"OtlpExporter(endpoint={self.endpoint!r}, headers={list(self.headers)!r})"


class McpcatExporter(_Exporter):
    """The agentcat (formerly MCPcat) events API: `POST {base_url}/v1/public/events/` (default
    `https://api.agentcat.com`), one event per request, `Authorization: Token <api_key>` when set."""

    __slots__ = ()

    def __init__(self, project_id: str, base_url: str | None = None, api_key: str | None = None) -> None:
        spec = {"type": "mcpcat", "projectId": project_id, "baseUrl": base_url, "apiKey": api_key}
        object.__setattr__(self, "_spec", {k: v for k, v in spec.items() if v is not None})

    @property
    def project_id(self) -> str:
        return str(self._spec["projectId"])

    @property
    def base_url(self) -> str:
        return str(self._spec.get("baseUrl", DEFAULT_AGENTCAT_BASE_URL))

    def __repr__(self) -> str:
        # The API key is a credential: never shown.
        return f"McpcatExporter(project_id={self.project_id!r}, base_url={self.base_url!r})"


class CallbackExporter(_Exporter):
    """Calls `callback(events)` with each batch (a list of event dicts) on the exporter's thread;
    if it raises, the batch is counted as failed."""

    __slots__ = ("callback",)
    callback: Callable[[list[dict[str, Any]]], object]

    def __init__(self, callback: Callable[[list[dict[str, Any]]], object]) -> None:
        if not callable(callback):
            raise TypeError("CallbackExporter needs a callable: fn(events: list[dict]) -> None")
        object.__setattr__(self, "_spec", {"type": "callback"})
        object.__setattr__(self, "callback", callback)

    def __repr__(self) -> str:
        return "CallbackExporter(...)"


Exporter = JsonlExporter | OtlpExporter | McpcatExporter | CallbackExporter
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
S = TypeVar("S")


class ExporterStats(TypedDict):
    """Counters of one exporter (the core's `ExporterStats`, the same JSON in every language)."""

    name: str
    exported: int
    dropped: int
    failed: int
    skipped: int
    pending: int


# The core's `Stats` JSON, the same in every language (docs/tracking.md, "Delivery, counters").
class TrackerStats(TypedDict):
    recorded: int
    dropped: int
    filtered: int
    redactionFailed: int
    unidentified: int
    queued: int
    exporters: list[ExporterStats]


def _ms(seconds: object) -> object:
    """Seconds as the core's milliseconds; anything else as it is, for the core to refuse."""
    return seconds if isinstance(seconds, bool) or not isinstance(seconds, int | float) else round(seconds * 1000)


class Tracker:
    """Records every tracked MCP request of the servers given to `track()` as an event.

    Exporters default to `JsonlExporter()` (`./mcplens-events.jsonl`). Options left `None` take
    the core's defaults (docs/tracking.md); every option is checked by the core, here, and a bad
    one raises `TrackingError` (`invalid_argument`, `.option` names it). `redact(text) -> str`
    runs on every string of every event after the built-in rules (on a core thread, all strings of
    one event under one GIL acquisition; if it raises, or takes over `hook_timeout_seconds`, the
    event is dropped and counted; a callback exporter over `callback_timeout_seconds` fails its
    batch).
    `identify(request_context) -> dict | None` runs once per session (an `async` one off the
    request path, under asyncio or trio) and may return `{"id", "name", "data"}`; the session's
    events wait for it in the core (at most `identify_max_records` events and
    `identify_timeout_seconds`), and it never fails
    a request. The native tracker starts when the first server is tracked (its name and version go
    into every event); one tracker is meant for one server.
    """

    def __init__(
        self,
        *,
        exporters: Sequence[Exporter] | None = None,
        enable_tracing: bool | None = None,
        capture_parameters: bool | None = None,
        capture_responses: bool | None = None,
        capture_resource_text: bool | None = None,
        redact: Callable[[str], str] | None = None,
        identify: Callable[[Any], Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None] | None = None,
        queue_capacity: int | None = None,
        identify_max_records: int | None = None,
        identify_timeout_seconds: float | None = None,
        hook_timeout_seconds: float | None = None,
        callback_timeout_seconds: float | None = None,
    ) -> None:
        for name, fn in (("redact", redact), ("identify", identify)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be callable")
        exporters = list(exporters or ())
        for e in exporters:
            if not isinstance(e, _Exporter):
                raise TypeError(
                    "exporters must be JsonlExporter, OtlpExporter, McpcatExporter or CallbackExporter, "
                    f"not {type(e).__qualname__}"
                )
        # The core's configuration JSON; it checks every value (`None`: its default).
        self._config = json.dumps(
            {
                "enableTracing": enable_tracing,
                "captureParameters": capture_parameters,
                "captureResponses": capture_responses,
                "captureResourceText": capture_resource_text,
                "queueCapacity": queue_capacity,
                "identifyMaxRecords": identify_max_records,
                "identifyTimeoutMs": _ms(identify_timeout_seconds),
                "hookTimeoutMs": _ms(hook_timeout_seconds),
                "callbackTimeoutMs": _ms(callback_timeout_seconds),
                "exporters": [e._spec for e in exporters],
            },
            default=str,
        )
        self._callbacks = [e.callback for e in exporters if isinstance(e, CallbackExporter)]
        enabled, zero = check_tracker_options(self._config)
        self._enabled = enabled
        self._zero_stats = zero
        self._redact = redact
        self._identify = identify
        self._core: TrackerCore | None = None
        self._lock = threading.Lock()
        self._sessions = _Sessions(self)
        # The host's OpenTelemetry span is looked up only for OTLP (the hot path stays as it is).
        self._host_span = _host_span if any(isinstance(e, OtlpExporter) for e in exporters) and _otel() else None

    @property
    def enabled(self) -> bool:
        """`enable_tracing`: when False, `track()` installs nothing and `traced` returns the handler."""
        return self._enabled

    def _start(
        self, server_name: str | None = None, server_version: str | None = None, *, seed: int | None = None
    ) -> TrackerCore:
        with self._lock:
            if self._core is None:
                self._core = TrackerCore(
                    self._config,
                    self._callbacks,
                    server_name=server_name,
                    server_version=server_version,
                    redact=self._redact,
                    seed=seed,
                )
                _CORES.add(self._core)
                if self._enabled:
                    _flush_on_sigterm()
            return self._core

    def flush(self, timeout_seconds: float = 5.0) -> None:
        """Deliver every event recorded so far; raises `TrackingError` (`timeout`, `.pending`)."""
        if self._core is not None:
            self._core.flush(timeout_seconds)

    def shutdown(self, timeout_seconds: float = 5.0) -> None:
        """Stop recording, deliver what is queued within the timeout and stop the threads."""
        if self._core is not None:
            self._core.shutdown(timeout_seconds)

    def stats(self) -> TrackerStats:
        """The counters: `recorded`, `dropped`, `filtered`, `redactionFailed`, `unidentified`,
        `queued`, and per exporter (a list, in order) `name`, `exported`, `dropped`, `failed`,
        `skipped`, `pending` (the same JSON in every language)."""
        text = self._zero_stats if self._core is None else self._core.stats_json()
        return cast(TrackerStats, json.loads(text))

    def traced(self, method: str) -> Callable[[F], F]:
        """Decorator: record each call of an `async` handler as a `method` request (any request
        method: a server's own is recorded under its name, `mcp:<method>`).

        For handlers registered some other way than through `track()`. The request is read from the
        arguments: an SDK request object (`h(request)`; a `None` request is an SDK-internal call and
        is not recorded), a 2.x `(ctx, params)` pair, or the 1.x decorator shapes (`(name,
        arguments)` for tools/call and prompts/get, `(uri)` for resources/read, subscribe and
        unsubscribe). The handler's result is returned as is; exceptions propagate after being
        recorded.
        """
        if not isinstance(method, str) or not method:
            raise ValueError(f"method must be a request method's name; got {method!r}")
        code: int | str = _CODES.get(method, method)

        def decorate(fn: F) -> F:
            is_async = inspect.iscoroutinefunction(fn)  # (not narrowing `fn`: it stays an F)
            if not is_async:
                raise TypeError("Tracker.traced wraps async handlers")
            if not self.enabled:
                return fn
            core = self._start()
            sessions = self._sessions
            span = self._host_span

            @functools.wraps(fn)
            async def traced_handler(*args: Any, **kwargs: Any) -> Any:
                if len(args) == 1 and args[0] is None and not kwargs:
                    return await fn(*args)
                t0 = perf_counter_ns()
                try:
                    result = await fn(*args, **kwargs)
                except Exception as exc:
                    _record_failure(core, code, t0, exc, lambda: _traced_parts(sessions, method, args, kwargs), span)
                    raise
                try:
                    ctx, params = _call_parts(method, args, kwargs)
                    rid = getattr(ctx, "request_id", None)
                    if core.hold(code, sessions.of(ctx), t0, rid, params, result, None, span and span()):
                        _after_response(core)
                except Exception:
                    _log.debug("mcplens: recording failed", exc_info=True)
                return result

            return cast(F, traced_handler)

        return decorate

    def __repr__(self) -> str:
        state = "disabled" if not self.enabled else ("running" if self._core is not None else "not started")
        return f"<mcplens.Tracker {state}>"


def track(
    server: S,
    tracker: Tracker | None = None,
    *,
    transport: Literal["stdio", "memory"] | None = None,
    **options: Any,
) -> S:
    """Track every request of `server`: an mcp 1.x `Server` or `FastMCP`, an mcp 2.x `Server` or
    `MCPServer`, or a community `fastmcp.FastMCP` (2.x-4.x). Returns `server` itself. Handlers
    registered later are tracked too; tracking a server twice is a no-op. `transport`: what events
    say for connections that are not HTTP (`"stdio"` or `"memory"`): the Python SDKs hand a server
    the same in-memory streams for both, so it cannot be read from them; HTTP sessions always say
    `"http"`. `options` are `Tracker` options, for when no `tracker` is given."""
    if transport not in (None, "stdio", "memory"):
        raise ValueError(f"transport must be 'stdio', 'memory' or None, not {transport!r}")
    if tracker is None:
        tracker = Tracker(**options)
    elif options:
        raise TypeError("pass options to Tracker(...) or to track(), not both")
    low, major = _resolve(server)
    if _is_tracked(low, major) or not tracker.enabled:
        return server
    version = _text(getattr(low, "version", None))
    if version is None and major == 1:  # what 1.x sends as serverInfo.version then
        import importlib.metadata

        version = importlib.metadata.version("mcp")
    core = tracker._start(_text(getattr(low, "name", None)), version)
    if major == 1:
        _install_v1(low, tracker, core, transport)
    else:
        _install_v2(low, tracker, core, transport)
    return server


# ---------------------------------------------------------------------------------------------
# Shared helpers.


def _text(v: object) -> str | None:
    return v if isinstance(v, str) else None


@functools.cache
def _sdk_major() -> int:
    import mcp

    return 2 if hasattr(mcp, "MCPError") else 1


def _resolve(server: object) -> tuple[Any, int]:
    try:
        major = _sdk_major()
    except ImportError:
        major = 0
    if major == 1:
        from mcp.server.fastmcp import FastMCP  # type: ignore[attr-defined,unused-ignore]
        from mcp.server.lowlevel import Server

        if isinstance(server, FastMCP):
            return server._mcp_server, 1
        if isinstance(server, Server):
            return server, 1
    elif major == 2:
        from mcp.server.lowlevel import Server as Server2
        from mcp.server.mcpserver import MCPServer

        if isinstance(server, MCPServer):
            return server._lowlevel_server, 2
        if isinstance(server, Server2):
            return server, 2
    fastmcp = sys.modules.get("fastmcp")
    if major and fastmcp is not None and isinstance(server, fastmcp.FastMCP):
        return server._mcp_server, major  # community fastmcp: the SDK `Server` it answers through
    raise TypeError(
        "mcplens.track() supports mcp 1.x `mcp.server.lowlevel.Server` and `mcp.server.fastmcp.FastMCP`, "
        "mcp 2.x `mcp.server.lowlevel.Server` and `mcp.server.mcpserver.MCPServer`, and community "
        "`fastmcp.FastMCP` (2.x-4.x); "
        f"got {type(server).__module__}.{type(server).__qualname__}"
        + ("" if major else " (the `mcp` package is not installed)")
    )


def _is_tracked(low: Any, major: int) -> bool:
    if major == 1:
        return isinstance(low.request_handlers, _TrackedHandlers)
    return any(getattr(m, "_mcplens_tracker", None) is not None for m in low.middleware)


def _error_of(exc: BaseException) -> tuple[int, str]:
    """The JSON-RPC error the SDK sends for `exc`: the code of an `McpError` (1.x) / `MCPError`
    (2.x); -32602 for a pydantic `ValidationError` in 2.x; code 0 for anything else (both majors)."""
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {"McpError", "MCPError"}:
        err = getattr(exc, "error", None)
        code = getattr(err, "code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code, str(getattr(err, "message", ""))
    if "ValidationError" in names and _sdk_major() == 2:
        return -32602, "Invalid request parameters"
    return 0, str(exc)


@functools.cache
def _otel() -> Any:
    """`opentelemetry.trace`, when `opentelemetry-api` is installed (never a dependency)."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace


def _host_span() -> tuple[int, int] | None:
    """The process's own active OpenTelemetry span (`(trace_id, span_id)`): mcplens' span goes
    under it. A remote context (the client's `traceparent`, carried by a non-recording span when no
    SDK is installed) is not one: `_meta.traceparent` is read for that as before."""
    ctx = _otel().get_current_span().get_span_context()
    return (ctx.trace_id, ctx.span_id) if ctx.is_valid and not ctx.is_remote else None


def _record_failure(
    core: TrackerCore,
    code: int | str,
    t0: int,
    exc: BaseException,
    parts: Callable[[], Any],
    host_span: Callable[[], tuple[int, int] | None] | None,
) -> None:
    """Records a handler's exception as the JSON-RPC error the SDK sends for it (`parts()`: the
    request's session, id and params); never raises."""
    try:
        s, rid, params = parts()
        if core.hold(code, s, t0, rid, params, None, _error_of(exc), host_span and host_span()):
            _after_response(core)
    except Exception:
        _log.debug("mcplens: recording failed", exc_info=True)


def _traced_parts(sessions: _Sessions, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    ctx, params = _call_parts(method, args, kwargs)
    return sessions.of(ctx), getattr(ctx, "request_id", None), params


_URI_METHODS = ("resources/read", "resources/subscribe", "resources/unsubscribe")


def _call_parts(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """`(request context or None, params)` of a call to a handler wrapped by `traced`."""
    first = args[0] if args else None
    if first is not None and hasattr(first, "request_id") and hasattr(first, "session"):
        # 2.x `(ctx, params)`.
        return first, args[1] if len(args) > 1 else kwargs.get("params", getattr(first, "params", None))
    ctx = _v1_context()
    if first is not None and hasattr(first, "method") and hasattr(first, "params"):
        return ctx, first.params  # an SDK request object
    # 1.x decorator shapes: `(uri)` or `(name, arguments)`.
    names = ("uri",) if method in _URI_METHODS else ("name", "arguments")
    params = dict(zip(names, args, strict=False))
    params.update({k: v for k, v in kwargs.items() if k in names})
    if "uri" in params:
        params["uri"] = str(params["uri"])
    return ctx, params or None


def _v1_context() -> Any:
    try:
        from mcp.server.lowlevel.server import request_ctx  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    return request_ctx.get(None)


class _Sessions:
    """Per-connection tracking sessions of one tracker."""

    __slots__ = ("_default", "_key", "_open", "_tasks", "by_id", "tracker")

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.by_id: dict[int, TrackingSession] = {}  # 1.x: id(ServerSession) -> session, client known
        self._open: dict[int, TrackingSession] = {}  # 1.x: client not known yet
        self._key = f"mcplens:{id(self)}"  # 2.x: Connection.state key
        self._default: TrackingSession | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def of(self, ctx: Any) -> TrackingSession:
        """The session of a request context (1.x `RequestContext`, 2.x `ServerRequestContext`)."""
        if ctx is None:
            return self.default()
        conn = getattr(ctx.session, "_connection", None)
        if conn is not None:
            s = conn.state.get(self._key)
            return s if s is not None else self.open_v2(ctx, conn)
        s = self.by_id.get(id(ctx.session))
        return s if s is not None else self.open_v1(ctx)

    def default(self) -> TrackingSession:
        if self._default is None:
            self._default = self.tracker._start().open_session(None, None)
        return self._default

    def open_v1(self, ctx: Any, transport: Literal["stdio", "memory"] | None = None) -> TrackingSession:
        core = self.tracker._start()
        ss = ctx.session
        key = id(ss)
        s = self._open.get(key)
        if s is None:
            http = getattr(ctx, "request", None)
            headers = getattr(http, "headers", None)
            sid = headers.get("mcp-session-id") if headers is not None else None
            s = core.open_session(sid, "http" if http is not None else transport)
            self._open[key] = s
            f = weakref.finalize(ss, self._closed, key, s)
            f.atexit = False
            self._identify(s, ctx)
        cp = getattr(ss, "client_params", None)
        info = getattr(cp, "clientInfo", None)
        if info is not None:
            from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS  # type: ignore[import-not-found,unused-ignore]
            from mcp.types import LATEST_PROTOCOL_VERSION

            requested = getattr(cp, "protocolVersion", None)
            version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
            core.set_session_client(s, _text(info.name), _text(info.version), _text(version))
            del self._open[key]
            self.by_id[key] = s
        return s

    def _closed(self, key: int, s: TrackingSession) -> None:
        self.by_id.pop(key, None)
        self._open.pop(key, None)
        core = self.tracker._core
        if core is not None:
            core.close_session(s)

    def open_v2(self, ctx: Any, conn: Any, transport: Literal["stdio", "memory"] | None = None) -> TrackingSession:
        core = self.tracker._start()
        opening = self._key + ":open"
        s = conn.state.get(opening)
        if s is None:
            http = getattr(ctx, "request", None) is not None
            s = core.open_session(_text(getattr(conn, "session_id", None)), "http" if http else transport)
            conn.state[opening] = s
            conn.exit_stack.callback(core.close_session, s)
            self._identify(s, ctx)
        cp = conn.client_params
        info = getattr(cp, "client_info", None)
        if info is not None:
            core.set_session_client(s, _text(info.name), _text(info.version), _text(conn.protocol_version))
            conn.state[self._key] = s
        return cast(TrackingSession, s)

    def _identify(self, s: TrackingSession, ctx: Any) -> None:
        """Run the identify hook for a new session; the core holds the session's records until
        it answers (bounded). Never raises."""
        fn = self.tracker._identify
        core = self.tracker._core
        if fn is None or core is None:
            return
        core.begin_identify(s)
        try:
            out = fn(ctx)
            if inspect.isawaitable(out):
                self._spawn(_identity(out, core, s))
                return
            core.resolve_identity(s, out)
        except Exception:
            _log.debug("mcplens: identify failed", exc_info=True)
            core.identify_failed(s)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Runs `coro` beside the request, in the running event loop: asyncio's, or trio's (as a
        system task, so that it needs no nursery of the server's)."""
        try:
            task = asyncio.get_running_loop().create_task(coro)
            self._tasks.add(task)  # a strong reference while it runs
            task.add_done_callback(self._tasks.discard)
            return
        except RuntimeError:
            pass
        try:
            import trio  # type: ignore[import-not-found,unused-ignore]

            trio.lowlevel.spawn_system_task(_awaited, coro)
        except (ImportError, RuntimeError):
            coro.close()
            raise RuntimeError("an async identify needs a running asyncio or trio event loop") from None


async def _identity(aw: Awaitable[Any], core: TrackerCore, s: TrackingSession) -> None:
    """Awaits an async identify's answer and hands it to the core; never raises but cancellation
    (then the core's `identify_timeout_seconds` releases the session's events)."""
    try:
        answer = await aw
    except Exception:
        _log.debug("mcplens: identify failed", exc_info=True)
        return core.identify_failed(s)
    core.resolve_identity(s, answer)


async def _awaited(aw: Awaitable[Any]) -> Any:
    return await aw


# ---------------------------------------------------------------------------------------------
# mcp 1.x: the handler dict.


class _TrackedHandlers(dict[Any, Any]):
    """`Server.request_handlers` that wraps every tracked handler put into it."""

    __slots__ = ("_wrap",)

    def __init__(self, wrap: Callable[[Any, Any], Any], items: Mapping[Any, Any]) -> None:
        super().__init__()
        self._wrap = wrap
        for k, v in items.items():
            self[k] = v

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, self._wrap(key, value))

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]


def _install_v1(low: Any, tracker: Tracker, core: TrackerCore, transport: Literal["stdio", "memory"] | None) -> None:
    from mcp.server.lowlevel.server import request_ctx  # type: ignore[attr-defined,unused-ignore]
    from mcp.types import ErrorData

    sessions = tracker._sessions
    by_id = sessions.by_id
    hold = core.hold
    span = tracker._host_span

    def parts(ctx: Any) -> tuple[TrackingSession, Any]:
        return by_id.get(id(ctx.session)) or sessions.open_v1(ctx, transport), ctx.request_id

    def wrap(key: Any, handler: Any) -> Any:
        field = getattr(key, "model_fields", {}).get("method")
        code = _CODES.get(getattr(field, "default", None))  # type: ignore[arg-type]
        if code is None or getattr(handler, "_mcplens_tracker", None) is tracker:
            return handler

        async def tracked(req: Any) -> Any:
            if req is None:  # the SDK calling its own handler (tools/call refreshing its tool cache)
                return await handler(req)
            t0 = perf_counter_ns()
            try:
                result = await handler(req)
            except Exception as exc:
                _record_failure(core, code, t0, exc, lambda: (*parts(request_ctx.get()), req.params), span)
                raise
            try:
                ctx = request_ctx.get()
                s = by_id.get(id(ctx.session)) or sessions.open_v1(ctx, transport)
                error = (result.code, result.message) if result.__class__ is ErrorData else None
                if hold(code, s, t0, ctx.request_id, req.params, result, error, span and span()):
                    _after_response(core)
            except Exception:
                _log.debug("mcplens: recording failed", exc_info=True)
            return result

        tracked._mcplens_tracker = tracker  # type: ignore[attr-defined]
        tracked.__wrapped__ = handler  # type: ignore[attr-defined]
        return tracked

    handlers = _TrackedHandlers(wrap, low.request_handlers)
    low.request_handlers = handlers
    experimental = getattr(low, "_experimental_handlers", None)
    if experimental is not None and hasattr(experimental, "_request_handlers"):
        experimental._request_handlers = handlers


# ---------------------------------------------------------------------------------------------
# mcp 2.x: one middleware.


def _install_v2(low: Any, tracker: Tracker, core: TrackerCore, transport: Literal["stdio", "memory"] | None) -> None:
    sessions = tracker._sessions
    key = sessions._key
    hold = core.hold
    codes = _CODES
    span = tracker._host_span
    handlers = getattr(low, "_request_handlers", {})

    def session(ctx: Any) -> Any:
        conn = ctx.session._connection
        return conn.state.get(key) or sessions.open_v2(ctx, conn, transport)

    async def mcplens_middleware(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        code: int | str | None = codes.get(ctx.method)
        if code is None and ctx.method in handlers:  # the server's own method: by its name
            code = ctx.method
        if code is None or ctx.request_id is None:  # no handler (the SDK answers -32601), or a notification
            return await call_next(ctx)
        t0 = perf_counter_ns()
        try:
            result = await call_next(ctx)
        except Exception as exc:
            _record_failure(core, code, t0, exc, lambda: (session(ctx), ctx.request_id, ctx.params), span)
            raise
        try:
            conn = ctx.session._connection
            s = conn.state.get(key) or sessions.open_v2(ctx, conn, transport)
            if hold(code, s, t0, ctx.request_id, ctx.params, result, None, span and span()):
                _after_response(core)
        except Exception:
            _log.debug("mcplens: recording failed", exc_info=True)
        return result

    mcplens_middleware._mcplens_tracker = tracker  # type: ignore[attr-defined]
    # Outermost, but inside the SDK's OpenTelemetry middleware (its span is the request's own: the
    # host span mcplens' span goes under).
    at = next((i + 1 for i, m in enumerate(low.middleware) if type(m).__name__ == "OpenTelemetryMiddleware"), 0)
    low.middleware.insert(at, mcplens_middleware)


# Exit: the core delivers what every live tracker recorded, within its exit timeout: at `atexit`,
# and on SIGTERM (whose default action skips `atexit`) when the app has no handler of its own.
def _exit_flush() -> None:
    """Records what every tracker holds, then the core's exit flush."""
    for core in list(_CORES):
        core.record_answered()
    flush_at_exit()


atexit.register(_exit_flush)


def _on_sigterm(signum: int, frame: object) -> None:
    _exit_flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # the default action, as if this handler were not there


def _flush_on_sigterm() -> None:
    """Once, from the main thread (the only one that may set a handler), if SIGTERM has its
    default action; an app that sets its own handler, before or after, replaces this one."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
