// A tracked MCP server on the TypeScript SDK v2 over stdio, both protocol eras (the legacy handshake
// and 2026-07-28): every request becomes one event in ./mcplens-events.jsonl.
//   node server-quickstart-v2.mjs   (then connect any MCP client to it over stdio)
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { Tracker, jsonlExporter, track } from 'mcplens';
import * as z from 'zod';

const tracker = new Tracker({
  exporters: [jsonlExporter({ path: 'mcplens-events.jsonl' })], // or otlpExporter, mcpcatExporter, callbackExporter
  captureResourceText: false, // resources/read contents recorded as size + SHA-256 only
});

// v2 serves from a factory: a fresh server per connection (and per 2026-07-28 discover probe).
function notes() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerResource('note', new ResourceTemplate('note://{id}', { list: undefined }), { mimeType: 'text/plain' },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `Note ${id}` }] }));
  server.registerTool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  return server;
}

// One tracker for every instance the factory builds, and for the transport (serveStdio answers
// subscriptions/listen itself). Over HTTP: track(createMcpHandler(track(notes, tracker)), tracker).
serveStdio(track(notes, tracker), { transport: track(new StdioServerTransport(), tracker) });
// Queued events are flushed when the process ends: at beforeExit, process.exit() and SIGTERM (a v2
// client SIGTERMs the process it probed with server/discover), within 2 s (docs/tracking.md).
