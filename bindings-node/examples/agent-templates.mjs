// A model fills in a listed resource template — with the values the server suggests when it offers
// completion (CompleteMcpResourceTemplateTool), else from a listed resource — and the agent builds the
// URI with `expand` and routes the read back to the right server with `catalog.matchUri`. The two MCP
// servers are in-process SDK McpServers (the crm one completes its customer ids); an agent would use
// its own connected clients.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Catalog, expand, variables } from 'mcplens';

const catalog = new Catalog();
const clients = new Map(); // the agent's connections, by server name
for (const [name, template, text] of [['docs', 'docs://pages/{slug}', 'page'], ['crm', 'crm://customers/{id}', 'customer']]) {
  const server = new McpServer({ name, version: '1.0.0' });
  const complete = name === 'crm' ? { id: (typed) => ['1001', '1002'].filter((id) => id.startsWith(typed)) } : undefined;
  server.registerResource(name, new ResourceTemplate(template, { list: undefined, complete }), {}, async (uri, values) => ({
    contents: [{ uri: uri.href, text: `${text} ${JSON.stringify(values)}` }],
  }));
  server.registerResource('index', `${name}://index`, { mimeType: 'text/plain' }, async (uri) => ({ contents: [{ uri: uri.href, text: 'index' }] }));
  const client = new Client({ name: 'agent', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  clients.set(name, client);
  await catalog.refresh(name, client);
}

// The model lists concrete resources and templates (both tools answer from the catalog) ...
console.log(catalog.callListResourcesTool({ server: 'crm' }));
const listing = JSON.parse(catalog.callListTemplatesTool({ server: 'crm' }));
const { uriTemplate } = listing.resourceTemplates[0];
// ... and fills in the template it picked, asking the server (it is named under "completion") for
// each variable's values, the ones chosen so far as context; then the URI.
const values = {};
for (const { name } of variables(uriTemplate)) {
  const args = { server: 'crm', uriTemplate, variable: name, value: '', arguments: values };
  values[name] = listing.completion?.includes('crm')
    ? JSON.parse(await catalog.callTool('CompleteMcpResourceTemplateTool', args)).values[0]
    : '42';
}
const uri = expand(uriTemplate, values);
// The agent routes the read to the server whose template the URI fits (most specific first).
const [route] = catalog.matchUri(uri).matches;
console.log(`${uri} -> ${route.server} ${JSON.stringify(route.values)}`);
const { contents } = await clients.get(route.server).readResource({ uri });
console.log(contents[0].text);
for (const client of clients.values()) await client.close();
