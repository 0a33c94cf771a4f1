"""Conformance fixture server: mcp 1.x `FastMCP` over stateful Streamable HTTP (`/mcp`).

    python server_v1.py --port N [--events FILE]

`--events FILE`: tracked with `mcplens.track`, JSONL events to FILE (delivered at exit). Stop it
with SIGINT or SIGTERM.
"""

from __future__ import annotations

import asyncio
from typing import Any

import _fixtures as fx
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.prompts.base import Message
from mcp.types import (
    AudioContent,
    Completion,
    EmbeddedResource,
    ImageContent,
    SamplingMessage,
    TextContent,
)
from pydantic import TypeAdapter

args = fx.parse_args()
mcp = FastMCP("mcplens-conformance-py1", host="127.0.0.1", port=args.port, log_level="WARNING")
Block = TextContent | ImageContent | AudioContent | EmbeddedResource
blocks = TypeAdapter(list[Block]).validate_python
messages = TypeAdapter(list[Message]).validate_python
subscriptions: set[str] = set()


# Tools.
@mcp.tool(description="Returns simple text content")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@mcp.tool(description="Returns image content")
def test_image_content() -> list[Block]:
    return blocks([fx.IMAGE_BLOCK])


@mcp.tool(description="Returns audio content")
def test_audio_content() -> list[Block]:
    return blocks([fx.AUDIO_BLOCK])


@mcp.tool(description="Returns an embedded resource")
def test_embedded_resource() -> list[Block]:
    return blocks([fx.EMBEDDED_BLOCK])


@mcp.tool(description="Returns text, image and resource content")
def test_multiple_content_types() -> list[Block]:
    return blocks(fx.MIXED_BLOCKS)


@mcp.tool(description="Sends log messages while it runs")
async def test_tool_with_logging(ctx: Context[Any, Any, Any]) -> str:
    for step in fx.LOG_STEPS:
        await ctx.info(step)
        await asyncio.sleep(0.02)
    return "Tool with logging executed successfully"


@mcp.tool(description="Reports progress while it runs")
async def test_tool_with_progress(ctx: Context[Any, Any, Any]) -> str:
    for progress in (0, 50, 100):
        await ctx.report_progress(progress, 100)
        await asyncio.sleep(0.02)
    meta = ctx.request_context.meta
    return str(meta.progressToken if meta is not None else 0)


@mcp.tool(description="Always fails")
def test_error_handling() -> str:
    raise RuntimeError(fx.ERROR_TEXT)


@mcp.tool(description="Asks the client for an LLM completion")
async def test_sampling(prompt: str, ctx: Context[Any, Any, Any]) -> str:
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_context.request_id,
    )
    content = result.content
    return f"LLM response: {content.text if isinstance(content, TextContent) else 'No response'}"


async def _elicit(ctx: Context[Any, Any, Any], message: str, schema: dict[str, Any]) -> tuple[str, Any]:
    result = await ctx.session.elicit_form(message, schema, ctx.request_context.request_id)
    return result.action, result.content


@mcp.tool(description="Asks the client for user input")
async def test_elicitation(message: str, ctx: Context[Any, Any, Any]) -> str:
    return fx.elicited("User response", *await _elicit(ctx, message, fx.ELICIT_SCHEMA))


@mcp.tool(description="Elicitation with defaults (SEP-1034)")
async def test_elicitation_sep1034_defaults(ctx: Context[Any, Any, Any]) -> str:
    return fx.elicited("Elicitation completed", *await _elicit(ctx, "Please review the defaults", fx.SEP1034_SCHEMA))


@mcp.tool(description="Elicitation with enum schemas (SEP-1330)")
async def test_elicitation_sep1330_enums(ctx: Context[Any, Any, Any]) -> str:
    return fx.elicited("Elicitation completed", *await _elicit(ctx, "Please pick options", fx.SEP1330_SCHEMA))


# Resources, a template and subscriptions.
@mcp.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    return fx.STATIC_TEXT


@mcp.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    return fx.PNG_BYTES


@mcp.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    return fx.WATCHED_TEXT


@mcp.resource("test://template/{id}/data", name="template", mime_type="application/json")
def template(id: str) -> str:
    return fx.template_text(id)


@mcp._mcp_server.subscribe_resource()
async def subscribe(uri: Any) -> None:
    subscriptions.add(str(uri))


@mcp._mcp_server.unsubscribe_resource()
async def unsubscribe(uri: Any) -> None:
    subscriptions.discard(str(uri))


# Prompts.
@mcp.prompt(description="A prompt without arguments")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@mcp.prompt(description="A prompt with two arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcp.prompt(description="A prompt with an embedded resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    return messages(fx.embedded_prompt(resourceUri))


@mcp.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[Message]:
    return messages(fx.IMAGE_PROMPT)


# Logging and completion.
@mcp._mcp_server.set_logging_level()
async def set_level(level: Any) -> None:
    return None


@mcp.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion:
    return Completion(values=[], total=0, hasMore=False)


if __name__ == "__main__":
    tracker = None
    if args.events is not None:
        import mcplens

        tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter(args.events)])
        mcplens.track(mcp, tracker)
    fx.serve(mcp.streamable_http_app(), args.port, tracker)
