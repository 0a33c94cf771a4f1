// A tracked MCP server over stdio: every request becomes one event in ./mcplens-events.jsonl.
//   node server-quickstart.mjs   (then connect any MCP client to it over stdio)
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Tracker, jsonlExporter, track } from 'mcplens';
import * as z from 'zod';

const tracker = new Tracker({
  exporters: [jsonlExporter({ path: 'mcplens-events.jsonl' })], // or otlpExporter, mcpcatExporter, callbackExporter
  captureResourceText: false, // resources/read contents recorded as size + SHA-256 only
});
const server = track(new McpServer({ name: 'notes', version: '1.0.0' }), tracker);

server.registerResource('note', new ResourceTemplate('note://{id}', { list: undefined }), { mimeType: 'text/plain' },
  async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `Note ${id}` }] }));
server.registerTool('add', { inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));

await server.connect(new StdioServerTransport());
// Queued events are flushed before the process exits (beforeExit); call `await tracker.flush(5000)`
// or `await tracker.shutdown(5000)` to deliver them sooner.
