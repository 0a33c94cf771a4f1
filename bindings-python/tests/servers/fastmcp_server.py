"""A community `fastmcp` server (2.x, 3.x or 4.x: whichever this environment has) for the fastmcp tests.

`build(page_size=None)` returns the untracked `FastMCP("fastmcp-docs")`:
- five resource templates (`TEMPLATES`) and three static resources; with `page_size` (fastmcp 3.x
  and 4.x: `list_page_size`), every list is paginated with fastmcp's base64 `{"o": offset}` cursors;
- tools: `echo(text)`, `fail()` raising `ToolError`, `add_template(n)` adding `extra://{n}/{id}`
  and sending `notifications/resources/list_changed` on the session of that request (fastmcp 2.x
  queues one more of its own);
- resources: `mem://static`, `note://{id}`, `mem://broken` raising `ResourceError`; anything else is
  fastmcp's not-found error;
- a prompt `greet(who)`.

As a process: `python fastmcp_server.py stdio|http [--port P] [--page-size N] [--events FILE]`:
stdio, or streamable HTTP on 127.0.0.1:P (path `/mcp`, "listening" printed to stderr once it
serves). With `--events`, the server is `mcplens.track`ed into that JSONL file.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import warnings
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with contextlib.suppress(ImportError):  # authlib turns its own deprecation warnings on at import
        import authlib.deprecate  # noqa: F401
    warnings.simplefilter("ignore")  # fastmcp 2.x imports authlib's deprecated modules
    import fastmcp
    from fastmcp import Context, FastMCP
    from fastmcp.exceptions import ResourceError, ToolError

MAJOR = int(fastmcp.__version__.split(".")[0])
PAGINATES = "list_page_size" in inspect.signature(FastMCP.__init__).parameters  # 3.x and 4.x
TEMPLATES = ["note://{id}", "docs://{section}/{page}", "issue://{number}", "user://{name}/avatar", "log://{day}"]
RESOURCES = ["mem://static", "mem://readme", "mem://broken"]


def build(page_size: int | None = None) -> Any:
    options: dict[str, Any] = {"version": "1.2.3"}
    if page_size is not None:
        if not PAGINATES:
            raise ValueError(f"fastmcp {fastmcp.__version__} has no list_page_size")
        options["list_page_size"] = page_size
    server = FastMCP("fastmcp-docs", **options)

    @server.tool
    def echo(text: str = "") -> str:
        """Echo"""
        return text

    @server.tool
    def fail() -> str:
        """Raises a ToolError"""
        raise ToolError("the tool failed")

    @server.tool
    async def add_template(n: int, ctx: Context) -> str:
        """Adds the template extra://{n}/{id}"""
        uri = f"extra://{n}/{{id}}"
        server.resource(uri, name=f"extra-{n}")(lambda id: f"extra {n} {id}")
        await ctx.session.send_resource_list_changed()
        return uri

    @server.resource("mem://static", name="static", mime_type="text/plain")
    def static() -> str:
        return "static text"

    @server.resource("mem://readme", name="readme", description="The readme")
    def readme() -> str:
        return "# readme"

    @server.resource("mem://broken", name="broken")
    def broken() -> str:
        raise ResourceError("the resource failed")

    @server.resource("note://{id}", name="note")
    def note(id: str) -> str:
        return f"note {id}"

    @server.resource("docs://{section}/{page}", name="docs", description="Documentation pages")
    def docs(section: str, page: str) -> str:
        return f"{section}/{page}"

    @server.resource("issue://{number}", name="issue", title="Issue")
    def issue(number: str) -> str:
        return f"issue {number}"

    @server.resource("user://{name}/avatar", name="avatar", mime_type="image/png")
    def avatar(name: str) -> bytes:
        return name.encode()

    @server.resource("log://{day}", name="log")
    def log(day: str) -> str:
        return f"log of {day}"

    @server.prompt
    def greet(who: str) -> str:
        """Greets"""
        return f"Hello, {who}!"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--page-size", type=int)
    parser.add_argument("--events")
    args = parser.parse_args()
    server = build(args.page_size)
    if args.events:
        import mcplens

        mcplens.track(server, exporters=[mcplens.JsonlExporter(args.events)], transport="stdio")
    if args.transport == "stdio":
        server.run("stdio", show_banner=False)
        return
    from listening import serve

    serve(server.http_app(path="/mcp"), args.port)


if __name__ == "__main__":
    main()
