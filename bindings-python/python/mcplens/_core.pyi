"""Type stubs for the native module `mcplens._core` (checked by `python -m mypy.stubtest`)."""

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeAlias, final

from typing_extensions import Self, disjoint_base

from mcplens._template import CatalogMatches, TemplateValue, TemplateVariable

__all__ = [
    "LIST_RESOURCES_TOOL",
    "LIST_RESOURCE_TEMPLATES_TOOL",
    "Annotations",
    "Catalog",
    "CatalogError",
    "DiscoveryError",
    "Failure",
    "Limits",
    "Listing",
    "McplensError",
    "Pager",
    "RefreshConfig",
    "Refresher",
    "Request",
    "Resource",
    "ResourceTemplate",
    "ServerStatus",
    "ToolError",
    "ToolSpec",
    "__version__",
    "cli_main",
    "has_resources_capability",
    "initialized",
    "misuse",
    "sdk_rpc_code",
]
# URI templates.
__all__ += ["TemplateError", "expand", "matches", "variables"]
# The read tool.
__all__ += [
    "COMPLETE_TEMPLATE_TOOL",
    "READ_RESOURCE_TOOL",
    "CompleteConfig",
    "ReadConfig",
    "ToolCall",
    "asks_server",
    "current_before",
    "tool_spec",
    "tool_specs",
]
# Server tracking.
__all__ += [
    "AFTER_RESPONSE_SECONDS",
    "ANSWERED_MAX",
    "DEFAULT_AGENTCAT_BASE_URL",
    "DEFAULT_JSONL_PATH",
    "ERROR_CODES",
    "TRACKED_METHODS",
    "TrackerCore",
    "TrackingError",
    "TrackingSession",
    "check_tracker_options",
    "flush_at_exit",
]

__version__: str

_Kind: TypeAlias = Literal["resources", "resource_templates"]
_Support: TypeAlias = Literal["listed", "no_capability", "method_not_found"]
_Status: TypeAlias = Literal["unknown", "ok", "unsupported", "outdated", "failed", "stale"]
_Decision: TypeAlias = Literal["refresh_now", "queued", "already_queued", "ignored"]
_SdkFailure: TypeAlias = Literal["error_answer", "sdk_error", "schema_refused", "lost"]
_Reason: TypeAlias = Literal["list_changed", "connection_closed", "configuration_changed", "disabled", "other"]
_Want: TypeAlias = Literal["current", "refresh", "force"]
_Disposition: TypeAlias = Literal["committed", "confirming", "failed", "discarded", "ignored"]
_Notifications: TypeAlias = Literal["unsolicited", "listening", "not_offered"]
_RepeatedCursors: TypeAlias = Literal["by_era", "fail", "follow"]
# The core's ErrorCode, in the order of docs/errors.md (core/tests/rules/error_codes.rs checks it).
_ErrorCode: TypeAlias = Literal[
    "malformed_result",
    "repeated_cursor",
    "page_limit",
    "item_limit",
    "byte_limit",
    "deadline",
    "server_error",
    "transport_error",
    "message_too_large",
    "invalid_argument",
    "invalid_state",
    "unknown_server",
    "output_too_large",
    "unlisted_uri",
    "not_offered",
    "invalid_uri_template",
    "invalid_value",
    "prefix_on_composite",
    "match_limit",
    "io_error",
    "timeout",
    "hook_failed",
    "export_failed",
    "exporter_panicked",
]

class McplensError(Exception):
    """Base class of every mcplens error."""

    code: _ErrorCode
    """The stable snake_case code (`docs/errors.md`)."""
    server: str | None
    """The server the error is about, when there is one."""
    rpc_code: int | None
    """The JSON-RPC error code of a `server_error`."""

class DiscoveryError(McplensError):
    """A traversal failed."""

class CatalogError(McplensError):
    """A catalog operation was refused (`unknown_server`, `invalid_argument`)."""

class ToolError(McplensError):
    """A resource tool refused its input or its read failed: the message is meant for the model.
    Listing tools: `unknown_server`, `invalid_argument`, `output_too_large`; the read tool also
    `unlisted_uri`, `match_limit`, `server_error` (with `rpc_code`), `transport_error`, `deadline`,
    `malformed_result`."""

class TemplateError(McplensError):
    """A URI template or its values were refused (`invalid_uri_template`, `invalid_value`,
    `prefix_on_composite`, `output_too_large`, `invalid_argument`, `match_limit`)."""

@final
class Limits:
    """Bounds on one traversal; crossing any of them fails the whole traversal."""

    def __new__(
        cls,
        *,
        max_pages: int = 100,
        max_items: int = 10_000,
        max_bytes: int = 1_000_000,
        deadline_seconds: float = 60.0,
        repeated_cursors: _RepeatedCursors = "by_era",
        max_cursor_bytes: int = 65_536,
    ) -> Limits: ...
    @property
    def max_pages(self) -> int: ...
    @property
    def max_items(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def deadline_seconds(self) -> float: ...
    @property
    def repeated_cursors(self) -> _RepeatedCursors: ...
    @property
    def max_cursor_bytes(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Request:
    """The next request a host must send."""

    @property
    def method(self) -> str: ...
    @property
    def cursor(self) -> str | None: ...
    @property
    def params(self) -> dict[str, str] | None: ...
    def params_json(self) -> str | None: ...

@final
class Pager:
    """The sans-IO pager: `next_request()` → send → `accept_*()` → … → `finish()`; or a refresher's
    traversal pair (`Pager.pair`), performed by the same loop and handed back to `Refresher.traversed`.

    `now` is seconds on any monotonic clock (default: `time.monotonic()`); `protocol_version` is the
    revision the connection negotiated (it decides what a repeated cursor does by default).
    """

    def __new__(
        cls,
        kind: _Kind,
        server: str,
        *,
        resources_capability: bool = True,
        limits: Limits | None = None,
        now: float | None = None,
        protocol_version: str = "",
    ) -> Pager: ...
    @staticmethod
    def pair(
        traversal: int,
        server: str,
        *,
        capabilities: str | None,
        limits: Limits | None = None,
        now: float | None = None,
        protocol_version: str = "",
    ) -> Pager:
        """The pair of a refresher's `traverse` action: resources, then templates, as the core
        decides. `capabilities`: the server's, as JSON text (`None`: not initialized). A pair
        fails into itself (its `accept_*` raise only on misuse); `finish()` refuses it."""
    @property
    def kind(self) -> _Kind | None:
        """The list being read (`None` once a pair ended)."""
    @property
    def server(self) -> str: ...
    @property
    def is_done(self) -> bool: ...
    @property
    def diagnostics(self) -> dict[str, Any]: ...
    def next_request(self) -> Request | None: ...
    def remaining(self, now: float | None = None) -> float: ...
    def accept_page(self, page: str | bytes, now: float | None = None) -> None: ...
    def accept_page_parsed(self, page: dict[str, Any], now: float | None = None) -> bool:
        """The `result` as the host's SDK parsed it, read in place by the rules of its JSON text;
        False (nothing applied) when it holds what JSON text carries otherwise: call `accept_page`."""
    def accept_failure(
        self,
        kind: _SdkFailure,
        code: float | None = None,
        connection_held: bool | None = None,
        now: float | None = None,
    ) -> None: ...
    def accept_rpc_error(self, code: int, now: float | None = None) -> None: ...
    def accept_transport_error(self, now: float | None = None) -> None: ...
    def accept_timeout(self, now: float | None = None) -> None: ...
    def accept_malformed(self, now: float | None = None) -> None: ...
    def finish(self) -> Listing: ...

@final
class Annotations:
    """The kept annotations of an item."""

    @property
    def audience(self) -> tuple[Literal["user", "assistant"], ...] | None: ...
    @property
    def priority(self) -> float | None: ...
    @property
    def last_modified(self) -> str | None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class ResourceTemplate:
    """A projected, sanitized resource template."""

    @property
    def uri_template(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def mime_type(self) -> str | None: ...
    @property
    def annotations(self) -> Annotations | None: ...
    @property
    def server(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Resource:
    """A projected, sanitized concrete resource."""

    @property
    def uri(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def mime_type(self) -> str | None: ...
    @property
    def size(self) -> int | None: ...
    @property
    def annotations(self) -> Annotations | None: ...
    @property
    def server(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Listing:
    """A complete, projected, sanitized listing of one server."""

    @property
    def kind(self) -> _Kind: ...
    @property
    def server(self) -> str: ...
    @property
    def items(self) -> tuple[ResourceTemplate | Resource, ...]: ...
    @property
    def support(self) -> _Support: ...
    @property
    def ttl_ms(self) -> int | None: ...
    @property
    def cache_scope(self) -> str | None: ...
    @property
    def diagnostics(self) -> dict[str, Any]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[ResourceTemplate | Resource]: ...

@final
class Failure:
    """A failed refresh as the catalog keeps it: a stable code and mcplens' own message."""

    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class ServerStatus:
    """A snapshot of one server's catalog entry."""

    @property
    def server(self) -> str: ...
    @property
    def status(self) -> _Status: ...
    @property
    def generation(self) -> int:
        """Commits so far (0 = never)."""
    @property
    def last_error(self) -> Failure | None:
        """The last failure, kept until the next successful commit."""
    @property
    def resources(self) -> int: ...
    @property
    def templates(self) -> int: ...
    @property
    def refreshing(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@disjoint_base
class Catalog:
    """The per-server catalog: the state its refresh machine (`Refresher`, one per catalog) keeps,
    and the reads every host answers from. `mcplens.Catalog` drives it over `mcp` sessions.

    `now` is seconds on any monotonic clock (default: `time.monotonic()`).
    """

    def __new__(
        cls,
        limits: Limits | None = None,
        *,
        refresh: RefreshConfig | None = None,
        read: ReadConfig | None = None,
        complete: CompleteConfig | None = None,
    ) -> Self: ...
    @property
    def limits(self) -> Limits | None: ...
    @property
    def read(self) -> ReadConfig:
        """The read tool's settings."""
    @property
    def complete(self) -> CompleteConfig:
        """The completion tool's settings."""
    @property
    def generation(self) -> int:
        """Catalog-wide change counter: compare it with the last value seen to learn of a change."""
    def visible_tools(self) -> list[str]:
        """The resource tools to offer the model now: three while a server declares `resources`, and
        the completion tool too while a server offers completion."""
    def servers(self) -> list[str]: ...
    def status(self, server: str, now: float | None = None) -> ServerStatus: ...
    def needs_refresh(self, server: str, now: float | None = None) -> bool:
        """Would a request for a current listing traverse at `now` (no pair yet, outdated, `ttlMs` ran
        out)? A failed server is answered from the catalog until a retry or list_changed."""
    def templates(self, server: str | None = None) -> list[ResourceTemplate]: ...
    def resources(self, server: str | None = None) -> list[Resource]: ...
    def call_list_templates_tool(self, arguments: Mapping[str, Any] | str | None = None) -> str: ...
    def call_list_resources_tool(self, arguments: Mapping[str, Any] | str | None = None) -> str: ...
    def call_listing_tool(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> str:
        """Either listing tool by name (`invalid_argument` for any other name)."""
    def match_uri(self, uri: str) -> CatalogMatches: ...

@final
class RefreshConfig:
    """The refresher's settings: retry backoff (full jitter), the `ttlMs` floor, the shrink guard."""

    def __new__(
        cls,
        *,
        retry_base_seconds: float = 1.0,
        retry_max_seconds: float = 300.0,
        min_ttl_seconds: float = 10.0,
        shrink_min_items: int = 10,
    ) -> RefreshConfig: ...
    @property
    def retry_base_seconds(self) -> float: ...
    @property
    def retry_max_seconds(self) -> float: ...
    @property
    def min_ttl_seconds(self) -> float: ...
    @property
    def shrink_min_items(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Refresher:
    """The refresh state machine of a catalog (sans-IO): events in, actions out; the catalog is its
    state, and a catalog has one (a second raises `CatalogError` `invalid_argument`).

    Actions (`poll_actions`) are dicts: `{"traverse": {"server", "epoch", "traversal"}}` or
    `{"resolve": {"server", "callers", "outcome", "traversal"?}}`, where `outcome` is `"cached"`,
    `"committed"`, `"discarded"` or `{"failed": {"failure": {"code", "message"}, "rpcCode"?}}`.
    `now` is seconds on the caller's monotonic clock (default: `time.monotonic()`).
    """

    def __new__(cls, catalog: Catalog, *, seed: int | None = None) -> Refresher: ...
    def add_server(self, server: str) -> None: ...
    def invalidate(self, server: str, reason: _Reason = "other", now: float | None = None) -> None: ...
    def attach(self, server: str, resources_capability: bool) -> int: ...
    def attach_capabilities(self, server: str, capabilities: str) -> int:
        """`attach` from the server's capabilities (JSON text): `resources` and `completions`."""
    def detach(self, server: str, epoch: int) -> bool: ...
    def epoch(self, server: str) -> int | None: ...
    def watch(self, server: str, epoch: int, protocol_version: str, capabilities: str) -> _Notifications | None: ...
    def notifications(self, server: str) -> _Notifications | None: ...
    def listen_acknowledged(self, server: str, epoch: int) -> bool: ...
    def listen_closed(
        self,
        server: str,
        epoch: int,
        rpc_code: int | None = None,
        connection: Literal["open", "closed", "unknown"] = "unknown",
        now: float | None = None,
    ) -> CatalogError | Literal["not_offered", "relisting", "detached"] | None: ...
    def on_list_changed(self, server: str, epoch: int, now: float | None = None) -> _Decision: ...
    def request(self, server: str, want: _Want = "refresh", now: float | None = None) -> int: ...
    def traversed(self, pair: Pager, now: float | None = None) -> _Disposition:
        """A pair (`Pager.pair`) handed back: ended (committed, failed…) or not (abandoned)."""
    def traversal_abandoned(self, traversal: int, now: float | None = None) -> _Disposition: ...
    def handle_timeout(self, now: float | None = None) -> None: ...
    def poll_actions(self) -> list[dict[str, Any]]: ...
    def poll_timeout(self) -> float | None: ...
    def is_busy(self, server: str | None = None) -> bool: ...
    def remove(self, server: str) -> bool: ...
    def clear(self) -> None: ...

@final
class CompleteConfig:
    """The completion tool's settings: `max_output_chars` (the output cap, 1,000 to 100,000),
    `timeout` (seconds, up to 600). Out of bounds: `McplensError` `invalid_argument`."""

    def __new__(cls, *, max_output_chars: int = 10_000, timeout: float = 10.0) -> CompleteConfig: ...
    @property
    def max_output_chars(self) -> int: ...
    @property
    def timeout(self) -> float: ...

@final
class ReadConfig:
    """The read tool's settings: `any_uri` (read URIs the server did not list), `max_output_chars`
    (the output cap, 1,000 to 10,000,000), `timeout` (seconds, up to 600). Out of bounds:
    `McplensError` `invalid_argument`."""

    def __new__(
        cls, *, any_uri: bool = False, max_output_chars: int = 100_000, timeout: float = 30.0
    ) -> ReadConfig: ...
    @property
    def any_uri(self) -> bool: ...
    @property
    def max_output_chars(self) -> int: ...
    @property
    def timeout(self) -> float: ...

@final
class ToolCall:
    """One model call of a tool that asks a server (`ReadMcpResourceTool`,
    `CompleteMcpResourceTemplateTool`), validated against the catalog (sans-IO): send `method` with
    `params` over `server`'s session, wait at most `remaining()`, then `finish` with what happened.
    `config`: that tool's settings (default: the catalog's). Raises `ToolError`."""

    def __new__(
        cls,
        catalog: Catalog,
        name: str,
        arguments: Mapping[str, Any] | str,
        *,
        config: ReadConfig | CompleteConfig | None = None,
        now: float | None = None,
    ) -> ToolCall: ...
    @property
    def server(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def params(self) -> dict[str, Any]: ...
    def params_json(self) -> str: ...
    def remaining(self, now: float | None = None) -> float: ...
    def finish(
        self, outcome: Literal["page", "timeout"] | _SdkFailure, value: str | bytes | float | None = None
    ) -> str:
        """The model's output for what became of the request: `"page"` with the result's JSON text,
        `"timeout"`, or what the SDK reported instead (`"error_answer"`/`"sdk_error"` with the code,
        `"schema_refused"`, `"lost"`), classified by the core."""

@final
class ToolSpec:
    """A resource tool's spec, from the core: the same text in every language."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...
    @property
    def strict_input_schema(self) -> dict[str, Any]:
        """The input schema in the strict form (every property required; optional ones also `null`)."""
    @property
    def annotations(self) -> dict[str, Any]: ...
    @property
    def deferred(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...

LIST_RESOURCE_TEMPLATES_TOOL: ToolSpec
"""`ListMcpResourceTemplatesTool`: register it with the model; answer it with `Catalog.call_list_templates_tool`."""

LIST_RESOURCES_TOOL: ToolSpec
"""`ListMcpResourcesTool`: register it with the model; answer it with `Catalog.call_list_resources_tool`."""

READ_RESOURCE_TOOL: ToolSpec
"""`ReadMcpResourceTool`: register it with the model; answer it with `mcplens.Catalog.call_tool`."""

COMPLETE_TEMPLATE_TOOL: ToolSpec
"""`CompleteMcpResourceTemplateTool`: register it with the model; answer it with `mcplens.Catalog.call_tool`."""

def asks_server(name: str) -> bool:
    """Does the resource tool `name` ask a server (a `ToolCall`: the read, the completion)?"""

def tool_spec(name: str) -> ToolSpec | None:
    """The spec of the resource tool named `name` (`Catalog.visible_tools()` names them)."""

def tool_specs() -> list[ToolSpec]:
    """Every resource tool's spec, in the core's order: what an adapter registers (which to offer
    at a step is `Catalog.visible_tools()`)."""

def current_before(catalog: Catalog, name: str, arguments: Mapping[str, Any] | str | None = None) -> list[str]:
    """The servers a call of the resource tool `name` with the model's `arguments` must see current
    before it answers: the listing's server (or every server), the read's server; none for input
    the tool refuses. `mcplens.Catalog.call_tool` makes them current first."""

def has_resources_capability(capabilities_json: str) -> bool: ...
def sdk_rpc_code(kind: _SdkFailure, code: float | None = None, connection_held: bool | None = None) -> int | None: ...
def misuse(misuse: Literal["session_not_entered", "not_an_sdk_client"], server: str | None = None) -> CatalogError:
    """The `CatalogError` (`invalid_argument`) of a misuse about `server`: the core's message."""

def initialized(server: str, capabilities_json: str | None) -> bool:
    """Is the client initialized (its server's capabilities, or None / "null" before `initialize` or
    `server/discover`), and does its server declare `resources`? Raises `DiscoveryError`
    `invalid_argument` when not initialized."""

def cli_main(argv: list[str]) -> int:
    """Run the `mcplens` command line with `argv` (the program name first); return its exit code."""

# ---------------------------------------------------------------------------------------------
# URI templates (RFC 6570; `docs/templates.md`).

def variables(template: str) -> list[TemplateVariable]: ...
def expand(template: str, values: Mapping[str, Any]) -> str: ...
def matches(template: str, uri: str) -> dict[str, TemplateValue] | None: ...

# ---------------------------------------------------------------------------------------------
# Server tracking (the glue is `mcplens._tracking`).

TRACKED_METHODS: tuple[str, ...]
"""The tracked JSON-RPC methods, in the core's code order (a method's code is its index)."""

class TrackingError(McplensError):
    """A tracking operation failed (`invalid_argument`, `io_error`, `timeout`)."""

    pending: int | None
    """After a `timeout`: how many events were still undelivered."""
    option: str | None
    """After an `invalid_argument`: the option, as its path in the core's `TrackerConfig` JSON
    (`queueCapacity`, `exporters[1].endpoint`)."""

DEFAULT_AGENTCAT_BASE_URL: str
"""The agentcat API the agentcat exporter posts to by default (agentcat 2.1.0's)."""
DEFAULT_JSONL_PATH: str
"""Where the JSONL exporter writes when no path is given (the core's default)."""
AFTER_RESPONSE_SECONDS: float
"""How long after the first held request the pass records what `TrackerCore.hold` held (the core's
`tracking::AFTER_RESPONSE`: a later turn of the event loop than the one that sent its response)."""
ANSWERED_MAX: int
"""Requests held at most: the one that reaches it records the pass at once (`tracking::ANSWERED_MAX`)."""
ERROR_CODES: tuple[_ErrorCode, ...]
"""Every stable error code, in the order of `docs/errors.md` (the core's `ErrorCode::ALL`)."""

def flush_at_exit() -> None:
    """The interpreter is exiting: every live tracker delivers what it recorded, within the core's
    exit timeout (registered with `atexit` by `mcplens._tracking`)."""

def check_tracker_options(config_json: str) -> tuple[bool, str]:
    """Check tracker options (the core's `TrackerConfig` JSON) as the core will; returns
    whether tracing is on and the zero counters (JSON). Raises `TrackingError`."""

@final
class TrackingSession:
    """One client connection as the tracker knows it."""

    @property
    def id(self) -> str: ...

@final
class TrackerCore:
    """The native tracker behind `mcplens.Tracker` (use that; this is its engine)."""

    def __new__(
        cls,
        config_json: str,
        callbacks: Sequence[Callable[[list[dict[str, Any]]], object]],
        *,
        server_name: str | None = None,
        server_version: str | None = None,
        redact: Callable[[str], str] | None = None,
        seed: int | None = None,
    ) -> TrackerCore: ...
    def open_session(
        self, transport_session_id: str | None = None, transport: Literal["stdio", "http", "memory"] | None = None
    ) -> TrackingSession: ...
    def set_session_client(
        self,
        session: TrackingSession,
        name: str | None,
        version: str | None = None,
        protocol_version: str | None = None,
    ) -> None: ...
    def begin_identify(self, session: TrackingSession) -> None: ...
    def resolve_identity(self, session: TrackingSession, identity: object) -> None: ...
    def identify_failed(self, session: TrackingSession) -> None: ...
    def close_session(self, session: TrackingSession) -> None: ...
    def hold(
        self,
        method: int | str,
        session: TrackingSession,
        t0_ns: int,
        request_id: int | str | None,
        params: object,
        result: object,
        error: tuple[int, str] | None = None,
        host_span: tuple[int, int] | None = None,
        /,
    ) -> bool:
        """A request answered (or failed, `error`): the duration is measured now, the objects are
        held and recorded by the next pass, in order. True for the first request of a pass: the
        caller arranges `record_answered` `AFTER_RESPONSE_SECONDS` later."""
    def record_answered(self) -> None:
        """The pass: records every held request, in the order held (flush, shutdown, stats and a
        session's close run it first)."""
    def flush(self, timeout_seconds: float) -> None: ...
    def shutdown(self, timeout_seconds: float) -> None: ...
    def stats_json(self) -> str: ...
    def _freeze_clock(self, started_unix_ns: int, duration_ns: int) -> None: ...
