"""Conformance fixture server: mcp 2.x `MCPServer` over stateful Streamable HTTP (`/mcp`).

    python server_v2.py --port N [--events FILE]

`--events FILE`: tracked with `mcplens.track`, JSONL events to FILE (delivered at exit). Stop it
with SIGINT or SIGTERM.
"""

from __future__ import annotations

import asyncio
from typing import Any

import _fixtures as fx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message
from mcp.types import (
    AudioContent,
    Completion,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)
from pydantic import TypeAdapter

args = fx.parse_args()
mcp = MCPServer("mcplens-conformance-py2", version="1.0.0", log_level="WARNING")
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
async def test_tool_with_logging(ctx: Context) -> str:
    for step in fx.LOG_STEPS:
        await ctx.info(step)
        await asyncio.sleep(0.02)
    return "Tool with logging executed successfully"


@mcp.tool(description="Reports progress while it runs")
async def test_tool_with_progress(ctx: Context) -> str:
    for progress in (0, 50, 100):
        await ctx.report_progress(progress, 100)
        await asyncio.sleep(0.02)
    meta: Any = ctx.request_context.meta or {}
    return str(meta.get("progress_token", meta.get("progressToken", 0)))


@mcp.tool(description="Always fails")
def test_error_handling() -> str:
    raise RuntimeError(fx.ERROR_TEXT)


@mcp.tool(description="Asks the client for an LLM completion")
async def test_sampling(prompt: str, ctx: Context) -> str:
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_context.request_id,
    )
    content = result.content
    return f"LLM response: {content.text if isinstance(content, TextContent) else 'No response'}"


async def _elicit(ctx: Context, message: str, schema: dict[str, Any]) -> tuple[str, Any]:
    result = await ctx.session.elicit_form(message, schema, ctx.request_context.request_id)
    return result.action, result.content


@mcp.tool(description="Asks the client for user input")
async def test_elicitation(message: str, ctx: Context) -> str:
    return fx.elicited("User response", *await _elicit(ctx, message, fx.ELICIT_SCHEMA))


@mcp.tool(description="Elicitation with defaults (SEP-1034)")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    return fx.elicited("Elicitation completed", *await _elicit(ctx, "Please review the defaults", fx.SEP1034_SCHEMA))


@mcp.tool(description="Elicitation with enum schemas (SEP-1330)")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
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


async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
    subscriptions.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
    subscriptions.discard(str(params.uri))
    return EmptyResult()


async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()


low = mcp._lowlevel_server
low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
low.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


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


# Completion.
@mcp.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion:
    return Completion(values=[], total=0, has_more=False)


if __name__ == "__main__":
    tracker = None
    if args.events is not None:
        import mcplens

        tracker = mcplens.Tracker(exporters=[mcplens.JsonlExporter(args.events)])
        mcplens.track(mcp, tracker)
    fx.serve(mcp.streamable_http_app(host="127.0.0.1"), args.port, tracker)
