// A typed usage example over the TypeScript SDK v2 (`@modelcontextprotocol/client` 2.x), checked by
// `tsc --noEmit` (make lint-node) against the package's own entry point: the v2 `Client` is
// accepted as it is, on either era. It is never run.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Catalog, listResourceTemplates, type Listing, type ResourceTemplate } from 'mcplens';

export async function discoverV2(url: string): Promise<string> {
  const modern = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await modern.connect(new StreamableHTTPClientTransport(new URL(url)));
  const legacy = new Client({ name: 'agent', version: '1.0.0' });
  await legacy.connect(new StdioClientTransport({ command: 'node', args: ['server.js'] }));
  const templates: Listing<ResourceTemplate> = await listResourceTemplates(modern, { server: 'http' });
  const catalog = new Catalog();
  await catalog.watch('http', modern); // 2026-07-28: list_changed through subscriptions/listen
  await catalog.watch('stdio', legacy);
  await Promise.all([catalog.refresh('http', modern), catalog.refresh('stdio', legacy)]);
  console.log(templates.items.length, modern.getProtocolEra());
  return catalog.callListTemplatesTool({});
}

// Server side: a v2 McpServer, its factory for createMcpHandler / serveStdio, and their entries.
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { Tracker, track } from 'mcplens';

export function serveV2(): (request: Request) => Promise<Response> {
  const tracker = new Tracker();
  const build = (): McpServer => new McpServer({ name: 'notes', version: '1.0.0' });
  const one: McpServer = track(build(), tracker);
  console.log(one.isConnected());
  serveStdio(track(build, tracker), { transport: track(new StdioServerTransport(), tracker) });
  const handler = track(createMcpHandler(track(build, tracker)), tracker);
  return (request) => handler.fetch(request);
}
