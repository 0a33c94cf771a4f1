// Conformance fixture server: @modelcontextprotocol/sdk 1.x `McpServer` over stateful Streamable HTTP.
//
//   node server.mjs --port N [--events FILE] [--mutate mime|text]
//   node server.mjs --stdio   (one session over stdio: the child of `bridge.mjs`)
//
// It implements the fixture names of `@modelcontextprotocol/conformance` 0.1.16 (`fixtures.mjs`). It
// runs on the project's Node and resolves the SDK, zod and `mcplens` from the repository's root
// node_modules.
// - `--events FILE`: every per-session server is tracked with one `Tracker` exporting JSONL to FILE.
// - `--mutate KIND`: a negative control (see `mutating-wrapper.mjs`), applied on top of tracking.
// SIGINT/SIGTERM: close the sessions, shut the tracker down (delivering queued events), exit 0.
import { parseArgs } from 'node:util';

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CompleteRequestSchema,
  ElicitResultSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Tracker, jsonlExporter, track } from 'mcplens';

import { registerFixtures, serveSessions } from './fixtures.mjs';
import { mutate } from './mutating-wrapper.mjs';

const { values: args } = parseArgs({
  options: { port: { type: 'string' }, events: { type: 'string' }, mutate: { type: 'string' }, stdio: { type: 'boolean' } },
});
const PORT = Number(args.port);
if (!args.stdio && (!Number.isInteger(PORT) || PORT <= 0)) {
  throw new Error('usage: server.mjs --port N [--events FILE] [--mutate mime|text] | --stdio');
}

const SCHEMAS = {
  'resources/subscribe': SubscribeRequestSchema,
  'resources/unsubscribe': UnsubscribeRequestSchema,
  'logging/setLevel': SetLevelRequestSchema,
  'completion/complete': CompleteRequestSchema,
};
const SDK = {
  ResourceTemplate,
  schema: (shape) => shape,
  notify: (extra, notification) => extra.sendNotification(notification),
  meta: (extra) => extra._meta,
  elicit: (mcp, params) => mcp.server.request({ method: 'elicitation/create', params }, ElicitResultSchema),
  handle: (mcp, method, fn) => mcp.server.setRequestHandler(SCHEMAS[method], fn),
};

/** One `McpServer` per session (an SDK server serves one transport). */
function createFixtureServer() {
  const mcp = new McpServer(
    { name: 'mcplens-conformance-ts', version: '1.0.0' },
    { capabilities: { resources: { subscribe: true }, logging: {}, completions: {} } },
  );
  return registerFixtures(mcp, SDK);
}

const tracker = args.events === undefined ? undefined : new Tracker({ exporters: [jsonlExporter({ path: args.events })] });
function build() {
  let server = createFixtureServer();
  if (tracker !== undefined) server = track(server, tracker);
  if (args.mutate !== undefined) mutate(server, args.mutate);
  return server;
}
if (args.stdio) await build().connect(new StdioServerTransport());
else serveSessions({ port: PORT, Transport: StreamableHTTPServerTransport, build, tracker, name: 'server.mjs' });
