"""Low-level MCP servers written with the installed `mcp` SDK (1.x or 2.x), one per scenario.

In process: `build(scenario)` returns `(server, log)`; `log` records each list request as
`(method, cursor)`. Over stdio: `python sdk_server.py SCENARIO`.

Scenarios:
- `paged`: templates over three pages (opaque cursor, then the real cursor `""`), with sloppy
  optional fields (date-only `lastModified`) that must be dropped per item; resources over two pages.
- `repeat`: templates whose second page sends back the cursor the client just sent.
- `no_templates`: resources only; `resources/templates/list` answers -32601.
- `no_capability`: no `resources` capability (a templates handler exists, and counts calls).
- `slow`: the first templates page takes 30 s.
- `error`: templates answer JSON-RPC -32602.

`build_gated()` (in process only) is the `paged` server plus a `Gate`: it holds the server side of
the session (to send list_changed from the test) and, while armed, parks every templates request
until released.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp
from mcp import types

V2 = hasattr(mcp, "MCPError")
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


def _template(n: int, **extra: Any) -> dict[str, Any]:
    return {"uriTemplate": f"mem://t{n}/{{id}}", "name": f"t{n}", **extra}


SLOPPY = {"annotations": {"lastModified": "2024-05-01", "priority": 0.5}}
TEMPLATE_PAGES: dict[str | None, dict[str, Any]] = {
    None: {"resourceTemplates": [_template(0, title="Zero"), _template(1), _template(2)], "nextCursor": "opaque:2"},
    "opaque:2": {"resourceTemplates": [_template(3, **SLOPPY), _template(4), _template(5)], "nextCursor": ""},
    "": {
        "resourceTemplates": [_template(6, description="six\nlines"), _template(7, mimeType="text/plain", **SLOPPY)],
    },
}
RESOURCE_PAGES: dict[str | None, dict[str, Any]] = {
    None: {"resources": [{"uri": "mem://docs/a.md", "name": "a", "size": 10}], "nextCursor": "r2"},
    "r2": {"resources": [{"uri": "mem://docs/b.md", "name": "b", "mimeType": "text/markdown"}]},
}
REPEAT_PAGES: dict[str | None, dict[str, Any]] = {
    None: {"resourceTemplates": [_template(0)], "nextCursor": "again"},
    "again": {"resourceTemplates": [_template(1)], "nextCursor": "again"},
}


def error(code: int, message: str) -> Exception:
    if V2:
        return mcp.MCPError(code=code, message=message)
    from mcp.shared.exceptions import McpError

    return McpError(types.ErrorData(code=code, message=message))


class Gate:
    """Test control of a `build_gated()` server."""

    def __init__(self) -> None:
        self.session: Any = None  # the server side of the session, once a request came in
        self.parked = 0  # templates requests parked so far
        self._open: anyio.Event | None = None

    def arm(self) -> None:
        self._open = anyio.Event()

    def release(self) -> None:
        if self._open is not None:
            self._open.set()
            self._open = None

    async def list_changed(self) -> None:
        await self.session.send_resource_list_changed()

    async def _pass(self) -> None:
        if self._open is not None:
            self.parked += 1
            await self._open.wait()


def build_gated() -> tuple[Any, list[tuple[str, str | None]], Gate]:
    gate = Gate()
    server, log = build("paged", _gate=gate)
    return server, log, gate


def build(scenario: str, **server_options: Any) -> tuple[Any, list[tuple[str, str | None]]]:
    """The server and its request log; `server_options` go to the 2.x `Server` (e.g. `cache_hints`)."""
    log: list[tuple[str, str | None]] = []
    gate: Gate | None = server_options.pop("_gate", None)

    async def templates(cursor: str | None, session: Any = None) -> dict[str, Any]:
        log.append(("resources/templates/list", cursor))
        if gate is not None:
            gate.session = session
            await gate._pass()
        if scenario == "slow":
            try:
                await anyio.sleep(30)
            except anyio.get_cancelled_exc_class():
                log.append(("cancelled", cursor))
                raise
        if scenario == "error":
            raise error(INVALID_PARAMS, "no templates for you")
        pages = REPEAT_PAGES if scenario == "repeat" else TEMPLATE_PAGES
        if cursor not in pages:
            raise error(INVALID_PARAMS, "unknown cursor")
        return pages[cursor]

    async def resources(cursor: str | None, session: Any = None) -> dict[str, Any]:
        log.append(("resources/list", cursor))
        if gate is not None:
            gate.session = session
        if cursor not in RESOURCE_PAGES:
            raise error(INVALID_PARAMS, "unknown cursor")
        return RESOURCE_PAGES[cursor]

    serve_templates = scenario != "no_templates"
    serve_resources = scenario != "no_capability"  # the capability follows the resources/list handler
    if V2:
        return _build_v2(scenario, templates, resources, serve_templates, serve_resources, server_options), log
    return _build_v1(scenario, templates, resources, serve_templates, serve_resources), log


def _build_v1(scenario: str, templates: Any, resources: Any, serve_templates: bool, serve_resources: bool) -> Any:
    from mcp.server.lowlevel import Server

    server = Server(f"sdk-{scenario}")

    async def on_templates(req: types.ListResourceTemplatesRequest) -> types.ServerResult:
        page = await templates(req.params.cursor if req.params else None, server.request_context.session)
        return types.ServerResult(types.ListResourceTemplatesResult.model_validate(page))

    async def on_resources(req: types.ListResourcesRequest) -> types.ServerResult:
        page = await resources(req.params.cursor if req.params else None, server.request_context.session)
        return types.ServerResult(types.ListResourcesResult.model_validate(page))

    if serve_templates:
        server.request_handlers[types.ListResourceTemplatesRequest] = on_templates
    if serve_resources:
        server.request_handlers[types.ListResourcesRequest] = on_resources
    return server


def _build_v2(
    scenario: str, templates: Any, resources: Any, serve_templates: bool, serve_resources: bool, options: Any
) -> Any:
    from mcp.server.lowlevel import Server

    async def on_templates(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        page = await templates(params.cursor if params else None, ctx.session)
        return types.ListResourceTemplatesResult.model_validate(page)

    async def on_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        page = await resources(params.cursor if params else None, ctx.session)
        return types.ListResourcesResult.model_validate(page)

    return Server(
        f"sdk-{scenario}",
        on_list_resource_templates=on_templates if serve_templates else None,
        on_list_resources=on_resources if serve_resources else None,
        **options,
    )


async def _main(scenario: str) -> None:
    from mcp.server.stdio import stdio_server

    server, _log = build(scenario)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_main, sys.argv[1])
