"""Run by `make build-python` in a fresh virtualenv right after `pip install ./bindings-python`.

Nothing else is installed there: the package must import and page without the `mcp` SDK.
"""

import importlib.util

import mcplens

assert importlib.util.find_spec("mcp") is None, "the fresh venv should hold mcplens only"
pager = mcplens.Pager("resource_templates", "smoke", now=0)
while (request := pager.next_request()) is not None:
    pager.accept_page('{"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}]}', now=0)
listing = pager.finish()
assert [t.uri_template for t in listing.items] == ["file:///{path}"], listing
catalog = mcplens.Catalog()  # the sans-IO catalog needs no SDK either
assert catalog.call_list_templates_tool({}) == '{"resourceTemplates":[],"failures":[],"total":0}'
assert mcplens.LIST_RESOURCE_TEMPLATES_TOOL.name == "ListMcpResourceTemplatesTool"
print(f"mcplens {mcplens.__version__}: installed and imported in a fresh venv ({mcplens.__file__})")
