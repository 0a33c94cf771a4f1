// A low-level SDK 1.x Server for the refresher's end-to-end tests.
//
//   node refresher-server.mjs LOG   serves over stdio; appends the method of every request it
//                                   receives (as read off the transport) to the file LOG
//
// It lists `templates` templates and `resources` resources, two per page. The test steers it with
// its own `tools/call` of `control` (arguments: `templates`, `resources`, `fail` — what the next
// `resources/list` requests answer: "error" is JSON-RPC -32603 —, `notify` — send
// notifications/resources/list_changed).
import { appendFileSync } from 'node:fs';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

const PAGE = 2;
const log = process.argv[2];
const state = { templates: 0, resources: 0, fail: [] };

function page(key, cursor) {
  if (key === 'resources' && cursor === undefined && state.fail.shift() === 'error') {
    throw new McpError(-32603, 'scripted');
  }
  const count = key === 'resources' ? state.resources : state.templates;
  const start = Number(cursor ?? 0);
  const end = Math.min(start + PAGE, count);
  const items = [];
  for (let i = start; i < end; i++) {
    items.push(key === 'resources' ? { uri: `mem://r${i}`, name: `r${i}` } : { uriTemplate: `mem://t${i}/{id}`, name: `t${i}` });
  }
  return end < count ? { [key]: items, nextCursor: String(end) } : { [key]: items };
}

const server = new Server({ name: 'refresher', version: '1.0.0' }, { capabilities: { resources: {}, tools: {} } });
server.setRequestHandler(ListResourcesRequestSchema, async (r) => page('resources', r.params?.cursor));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async (r) => page('resourceTemplates', r.params?.cursor));
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'control', inputSchema: { type: 'object' } }] }));
server.setRequestHandler(CallToolRequestSchema, async (r) => {
  const args = r.params.arguments ?? {};
  state.templates = args.templates ?? state.templates;
  state.resources = args.resources ?? state.resources;
  state.fail.push(...(args.fail ?? []));
  if (args.notify) await server.sendResourceListChanged();
  return { content: [{ type: 'text', text: 'ok' }] };
});

const transport = new StdioServerTransport();
await server.connect(transport);
const received = transport.onmessage;
transport.onmessage = (message, extra) => {
  if (typeof message.method === 'string' && 'id' in message) appendFileSync(log, `${message.method}\n`);
  received?.(message, extra);
};
