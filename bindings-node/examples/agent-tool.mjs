// Registers ListMcpResourceTemplatesTool in an agent's tool list and answers the model's calls.
// The MCP server here is an in-process SDK McpServer; an agent would use its own connected clients.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Catalog, McplensError, listResourceTemplatesTool } from 'mcplens';

// An MCP server with two resource templates, connected to the agent's client.
const server = new McpServer({ name: 'docs', version: '1.0.0' });
const read = async (uri) => ({ contents: [{ uri: uri.href, text: '…' }] });
server.registerResource('page', new ResourceTemplate('docs://pages/{slug}', { list: undefined }), { title: 'Doc page' }, read);
server.registerResource('api', new ResourceTemplate('docs://api/{symbol}', { list: undefined }), { mimeType: 'text/markdown' }, read);
const client = new Client({ name: 'agent', version: '1.0.0' });
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await Promise.all([server.connect(serverSide), client.connect(clientSide)]);

// The agent's catalog of every connected server.
const catalog = new Catalog();
catalog.watch('docs', client);
await catalog.refresh('docs', client);

// The agent's tool list: the spec comes from the Rust core (the same text in Rust, Python and Node).
// Agents that load rarely used tools on demand put it with their deferred tools.
const { name, description, inputSchema, annotations, deferred } = listResourceTemplatesTool;
const tools = [{ name: 'Read', description: 'Reads an MCP resource by server and URI.', input_schema: { type: 'object' } }];
const deferredTools = [];
(deferred ? deferredTools : tools).push({ name, description, input_schema: inputSchema, annotations });

/** The agent's dispatcher for the model's tool calls: a result, or an error the model can act on. */
function callTool(toolName, input) {
  if (toolName !== listResourceTemplatesTool.name) throw new Error(`unknown tool ${toolName}`);
  try {
    return { content: catalog.callListTemplatesTool(input) };
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    return { content: e.message, is_error: true }; // e.g. unknown_server names the available servers
  }
}

console.log('tools:', tools.map((t) => t.name).join(', '), '| deferred:', deferredTools.map((t) => t.name).join(', '));
console.log(callTool('ListMcpResourceTemplatesTool', { server: 'docs' }).content);
console.log(callTool('ListMcpResourceTemplatesTool', { server: 'wiki' }).content);
await client.close();
await server.close();
