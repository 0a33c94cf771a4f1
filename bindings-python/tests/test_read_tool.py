"""`ReadMcpResourceTool` through `mcplens.Catalog.call_tool` against real servers (the installed
`mcp` SDK's high-level server in memory and over stdio; the hostile server over stdio): a URI
filled in from the template listing is read, an unlisted one refused before anything is sent, a
hostile text arrives sanitized and a 1 MiB one capped with the truncation stated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import mcplens
from servers import fast_server
from support import in_memory, over_stdio, read_output

pytestmark = pytest.mark.anyio
HOSTILE = Path(__file__).resolve().parents[2] / "tests" / "servers" / "hostile" / "server.py"
LIST, READ = "ListMcpResourceTemplatesTool", "ReadMcpResourceTool"


def fill(template: str, **values: str) -> str:
    """The model's part: fill a template it received (mcplens.expand, as a model would by hand)."""
    return mcplens.expand(template, values)


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_a_filled_template_is_read_and_an_unlisted_uri_refused(transport: str) -> None:
    catalog = mcplens.Catalog()
    server, log = fast_server.build()
    opened = in_memory(server) if transport == "memory" else over_stdio("fast_server.py")
    async with opened as session:
        catalog.watch("fast", session)
        assert catalog.visible_tools() == [LIST, "ListMcpResourcesTool", READ]
        listing = json.loads(await catalog.call_tool(LIST, {"server": "fast"}))
        [template] = [t for t in listing["resourceTemplates"] if t["name"] == "files"]
        uri = fill(template["uriTemplate"], path="notes.txt")
        output = await catalog.call_tool(READ, {"server": template["server"], "uri": uri})
        assert output == (
            '{"server":"fast","uri":"file:///notes.txt","contents":[{"uri":"file:///notes.txt",'
            '"mimeType":"text/plain","textChars":9}]}\n--- content 1 text (9 of 9 characters) ---\nnotes.txt'
        )
        listed = json.loads(await catalog.call_tool("ListMcpResourcesTool", '{"server":"fast"}'))["resources"][0]
        assert read_output(await catalog.call_tool(READ, {"server": "fast", "uri": listed["uri"]}))["contents"]

        reads = log.count("resources/read")
        with pytest.raises(mcplens.ToolError) as refused:
            await catalog.call_tool(READ, {"server": "fast", "uri": "https://example.com/?key=s3cret"})
        assert (refused.value.code, refused.value.server) == ("unlisted_uri", "fast")
        assert "s3cret" not in str(refused.value)
        if transport == "memory":
            assert log.count("resources/read") == reads, "nothing is sent for a refused URI"
        with pytest.raises(mcplens.ToolError) as unknown:
            await catalog.call_tool(READ, {"server": "nope", "uri": uri})
        assert unknown.value.code == "unknown_server"
        with pytest.raises(mcplens.ToolError, match="not a listing tool"):
            await catalog.call_tool("Other", {})


@pytest.mark.parametrize("transport", ["memory", "stdio"])
async def test_a_listed_uri_reads_on_the_first_call_before_any_listing(transport: str) -> None:
    """A model reads a URI it knows (from the user, an earlier turn) first: the read makes the
    server current before it authorizes, as the listings do."""
    catalog = mcplens.Catalog()
    server, log = fast_server.build()
    opened = in_memory(server) if transport == "memory" else over_stdio("fast_server.py")
    async with opened as session:
        catalog.watch("fast", session)
        filled = read_output(await catalog.call_tool(READ, {"server": "fast", "uri": "file:///notes.txt"}))
        assert filled["contents"] == [
            {"uri": "file:///notes.txt", "mimeType": "text/plain", "textChars": 9, "text": "notes.txt"}
        ]
        assert catalog.status("fast").status == "ok"
        if transport == "memory":
            assert log.count("resources/list") == 1
            assert log.count("resources/templates/list") == 1
            assert log.count("resources/read") == 1
        with pytest.raises(mcplens.ToolError) as refused:
            await catalog.call_tool(READ, {"server": "fast", "uri": "https://example.com/x"})
        assert refused.value.code == "unlisted_uri"
        assert "not a resource server" in str(refused.value)


async def test_a_read_on_a_server_with_no_listing_says_so() -> None:
    """The refusal says what is true: no listing (the read tried one first: no connection) is not
    "not listed"."""
    catalog = mcplens.Catalog()
    catalog.add_server("gone")
    with pytest.raises(mcplens.ToolError) as refused:
        await catalog.call_tool(READ, {"server": "gone", "uri": "file:///notes.txt"})
    assert (refused.value.code, refused.value.server) == ("unlisted_uri", "gone")
    assert str(refused.value).startswith('Server "gone"\'s resources could not be listed'), str(refused.value)
    assert str(refused.value).endswith("no connection is attached"), str(refused.value)
    assert mcplens._core.current_before(catalog, READ, {"server": "gone", "uri": "x"}) == ["gone"]
    assert mcplens._core.current_before(catalog, READ, {"server": "other", "uri": "x"}) == []
    assert mcplens._core.current_before(catalog, LIST, None) == ["gone"]
    assert mcplens._core.current_before(catalog, LIST, '{"server": 1}') == []


async def test_input_that_cannot_be_json_is_refused_alike_by_every_tool() -> None:
    """The core's refusal (`tool::not_json`), the same words Node gives; nothing is sent."""
    catalog = mcplens.Catalog()
    catalog.add_server("docs")
    for name, arguments in [(READ, {"server": "docs", "uri": object()}), (LIST, {"server": object()})]:
        with pytest.raises(mcplens.ToolError) as refused:
            await catalog.call_tool(name, arguments)
        assert (refused.value.code, str(refused.value)) == (
            "invalid_argument",
            "invalid input: the input is not a JSON object",
        )


async def test_hostile_text_is_sanitized_and_a_large_one_capped() -> None:
    catalog = mcplens.Catalog(read=mcplens.ReadConfig(any_uri=False, max_output_chars=50_000, timeout=20))
    params = StdioServerParameters(command=sys.executable, args=[str(HOSTILE), "--case", "good"])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        catalog.watch("evil", session)
        listing = json.loads(await catalog.call_tool(LIST, None))
        files = next(t for t in listing["resourceTemplates"] if t["uriTemplate"].startswith("file:"))
        uri = fill(files["uriTemplate"], path="a")
        dirty = read_output(await catalog.call_tool(READ, {"server": "evil", "uri": uri}))
        [content] = dirty["contents"]
        text_a = "contents of file:///a\n\tend"
        assert content == {"uri": "file:///a", "mimeType": "text/plain", "textChars": len(text_a), "text": text_a}
        assert dirty["removedChars"] > 0

        text = await catalog.call_tool(READ, {"server": "evil", "uri": fill(files["uriTemplate"], path="big.txt")})
        assert len(text) <= 50_000
        assert text.startswith('{"truncated":{"textChars":1048576,'), "the note comes first"
        big = read_output(text)
        assert big["contents"][0]["text"].startswith("BEGIN 0123")
        assert big["truncated"]["textChars"] == 1_048_576
        assert big["truncated"]["shownChars"] == len(big["contents"][0]["text"]) < 50_000
        assert big["truncated"]["maxOutputChars"] == 50_000

    catalog = mcplens.Catalog(read=mcplens.ReadConfig(any_uri=True))
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        catalog.watch("evil", session)
        with pytest.raises(mcplens.ToolError) as missing:
            await catalog.call_tool(READ, {"server": "evil", "uri": "mem://nothing"})
        assert (missing.value.code, missing.value.rpc_code) == ("server_error", -32002)
        assert str(missing.value).endswith("JSON-RPC error -32002 (resource not found).")
    with pytest.raises(mcplens.ToolError) as closed:
        await catalog.call_tool(READ, {"server": "evil", "uri": "file:///a"})
    assert closed.value.code == "transport_error", "the session closed: no connection to read over"


def test_read_settings_are_checked_by_the_core() -> None:
    config = mcplens.ReadConfig()
    assert (config.any_uri, config.max_output_chars, config.timeout) == (False, 100_000, 30.0)
    assert mcplens.Catalog().read.max_output_chars == 100_000
    for bad in ({"max_output_chars": 10}, {"timeout": 0}, {"timeout": 601}):
        with pytest.raises(mcplens.McplensError) as e:
            mcplens.ReadConfig(**bad)
        assert e.value.code == "invalid_argument"
    spec = mcplens.tool_spec(READ)
    assert spec is not None
    assert spec.to_json() == mcplens.READ_RESOURCE_TOOL.to_json()
    assert spec.strict_input_schema["required"] == ["server", "uri"]
    assert mcplens.LIST_RESOURCES_TOOL.strict_input_schema["properties"]["limit"]["type"] == ["integer", "null"]
    # The list the adapters register is the core's, in its order.
    specs = mcplens._core.tool_specs()
    assert [s.name for s in specs] == [LIST, "ListMcpResourcesTool", READ, "CompleteMcpResourceTemplateTool"]
    assert [s.to_json() for s in specs][2] == mcplens.READ_RESOURCE_TOOL.to_json()
    assert [s.to_json() for s in specs][3] == mcplens.COMPLETE_TEMPLATE_TOOL.to_json()
    assert mcplens.tool_spec("Other") is None


def test_read_call_finish_refuses_a_failure_kind_the_core_does_not_name() -> None:
    """What the SDK reported is one of the core's four kinds; any other is the caller's mistake
    (`invalid_argument`, naming the server), never taken for a malformed answer."""
    catalog = mcplens._core.Catalog()
    machine = mcplens.Refresher(catalog)
    machine.attach("docs", True)
    arguments = {"server": "docs", "uri": "note://1"}
    call = mcplens.ToolCall(catalog, "ReadMcpResourceTool", arguments, config=mcplens.ReadConfig(any_uri=True))
    with pytest.raises(mcplens.ToolError) as e:
        call.finish("transport")  # type: ignore[arg-type]
    assert (e.value.code, e.value.server) == ("invalid_argument", "docs")
    assert str(e.value).endswith('`kind` must be "error_answer", "sdk_error", "schema_refused" or "lost"')
    with pytest.raises(mcplens.ToolError) as e:
        call.finish("sdk_error", -32000)  # the SDK's own "connection closed": the transport's
    assert e.value.code == "transport_error"
