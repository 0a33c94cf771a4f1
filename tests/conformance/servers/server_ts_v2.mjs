// Conformance fixture server: the TypeScript SDK v2 (`@modelcontextprotocol/server` 2.x) `McpServer`
// over stateful Streamable HTTP (`@modelcontextprotocol/node`'s transport: the suite speaks the
// 2025 era, with sessions, SSE streams and server-to-client requests).
//
//   node server_ts_v2.mjs --port N [--events FILE]
//
// The fixtures of `server.mjs` (the 1.x server, `fixtures.mjs`) through the v2 API. It runs on the
// project's Node and resolves the SDK, zod and `mcplens` from the repository's root node_modules.
// - `--events FILE`: the per-session server factory is tracked (`track(factory, tracker)`): every
//   instance it builds with one `Tracker` exporting JSONL to FILE.
// SIGINT/SIGTERM: close the sessions, shut the tracker down (delivering queued events), exit 0.
import { parseArgs } from 'node:util';

import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { Tracker, jsonlExporter, track } from 'mcplens';
import * as z from 'zod';

import { registerFixtures, serveSessions } from './fixtures.mjs';

const { values: args } = parseArgs({ options: { port: { type: 'string' }, events: { type: 'string' } } });
const PORT = Number(args.port);
if (!Number.isInteger(PORT) || PORT <= 0) throw new Error('usage: server_ts_v2.mjs --port N [--events FILE]');

const SDK = {
  ResourceTemplate,
  schema: (shape) => z.object(shape),
  notify: (ctx, notification) => ctx.mcpReq.notify(notification),
  meta: (ctx) => ctx.mcpReq._meta,
  elicit: (mcp, params) => mcp.server.request({ method: 'elicitation/create', params }),
  handle: (mcp, method, fn) => mcp.server.setRequestHandler(method, fn),
};

/** One `McpServer` per session (an SDK server serves one transport). */
function createFixtureServer() {
  const mcp = new McpServer(
    { name: 'mcplens-conformance-ts-v2', version: '2.0.0' },
    { capabilities: { resources: { subscribe: true }, logging: {}, completions: {} } },
  );
  return registerFixtures(mcp, SDK);
}

const tracker = args.events === undefined ? undefined : new Tracker({ exporters: [jsonlExporter({ path: args.events })] });
const build = tracker === undefined ? createFixtureServer : track(createFixtureServer, tracker);
serveSessions({ port: PORT, Transport: NodeStreamableHTTPServerTransport, build, tracker, name: 'server_ts_v2.mjs' });
