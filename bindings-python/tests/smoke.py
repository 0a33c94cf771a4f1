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
print(f"mcplens {mcplens.__version__}: installed and imported in a fresh venv ({mcplens.__file__})")
