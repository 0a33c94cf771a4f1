"""The sans-IO pager, for hosts on other SDKs: the host sends each request, the core does the rest."""

import mcplens

# Canned answers stand in for the host's transport: {cursor sent: JSON text of the result}.
ANSWERS = {
    None: '{"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}], "nextCursor": "p2"}',
    "p2": '{"resourceTemplates": [{"uriTemplate": "db://{table}/{id}", "name": "rows"}]}',
}

pager = mcplens.Pager("resource_templates", "docs", limits=mcplens.Limits(deadline_seconds=10))
while (request := pager.next_request()) is not None:
    # Send `request.method` with `request.params` (None: no params key at all), waiting at most
    # `pager.remaining()` seconds; then report what happened:
    pager.accept_page(ANSWERS[request.cursor])  # or accept_rpc_error(code), accept_timeout(), ...
listing = pager.finish()
print([t.uri_template for t in listing.items])  # ['file:///{path}', 'db://{table}/{id}']
