// The tracking benchmark's server (bench/tracking.mjs): an SDK 1.x McpServer with tool `echo(text)`
// and resources `note://{id}` (1 KB text), untracked or tracked by mcplens, agentcat, mcpcat or
// @posthog/mcp. In process: `trackedServer(variant, options)`; over stdio (the client in another
// process): `node tracking-server.mjs <variant> <sink URL> <events file>`.
import { pathToFileURL } from 'node:url';

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { PostHog } from 'posthog-node';
import * as z from 'zod';

import { Tracker, jsonlExporter, track } from 'mcplens';

export const VARIANTS = ['untracked', 'mcplens', 'agentcat', 'mcpcat', '@posthog/mcp'];

function notesServer() {
  const mcp = new McpServer({ name: 'bench-notes', version: '1.0.0' });
  mcp.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  mcp.registerResource('note', new ResourceTemplate('note://{id}', { list: undefined }), { mimeType: 'text/plain' }, async (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: `note ${id} `.padEnd(1024, '.') }],
  }));
  return mcp;
}

/** agentcat / mcpcat: events to the loopback sink, nothing added to the server's tools. */
const CAT_OPTIONS = (apiBaseUrl) => ({ apiBaseUrl, disableDiagnostics: true, enableReportMissing: false, enableToolCallContext: false });

/**
 * The server, tracked by `variant`: mcplens with `tracker` (default: JSONL to `events`), the others
 * posting to `sinkUrl` (@posthog/mcp through a posthog-node client whose host is the sink; no
 * get_more_tools, no context parameter).
 */
export async function trackedServer(variant, { sinkUrl, events, tracker }) {
  const server = notesServer();
  switch (variant) {
    case 'untracked':
      return server;
    case 'mcplens':
      return track(server, tracker ?? new Tracker({ exporters: [jsonlExporter({ path: events })] }));
    case 'agentcat':
      return (await import('agentcat')).track(server, 'proj_bench', CAT_OPTIONS(sinkUrl));
    case 'mcpcat':
      return (await import('mcpcat')).track(server, 'proj_bench', CAT_OPTIONS(sinkUrl));
    case '@posthog/mcp':
      (await import('@posthog/mcp')).instrument(server, new PostHog('phc_bench', { host: sinkUrl }), { reportMissing: false, context: false });
      return server;
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [variant, sinkUrl, events] = process.argv.slice(2);
  const server = await trackedServer(variant, { sinkUrl, events });
  const transport = new StdioServerTransport();
  transport.onclose = () => process.exit(0); // the incumbents' timers would keep the process up
  await server.connect(transport);
}
