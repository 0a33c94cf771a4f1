// Test servers on the TypeScript SDK v2 (`@modelcontextprotocol/server` 2.x), both eras.
//
//   node v2-server.mjs stdio [SCENARIO]   serveStdio(factory): the legacy handshake or 2026-07-28
//   node v2-server.mjs http [SCENARIO]    createMcpHandler(factory) on 127.0.0.1, an instance per
//                                         request; prints the URL on stdout
//
// In memory, `createV2Server(scenario, state)` is the factory's product and `serveMemory(...)`
// serves it with serveStdio over an in-memory transport (both eras). Every instance of one process
// shares `state`: `requests` counts the list requests the server answered (by method), `control`
// steers it (`delays[i]`: milliseconds before templates page i is answered — `cancelled` counts the
// pages cancelled while waiting —, `fail` answers templates with -32603, `exit` ends a stdio
// server's process); the
// `control` tool sets both and `notify: true` sends notifications/resources/list_changed (over HTTP
// through the handler's bus, which serves 2026-07-28 listen streams only), the
// `stats` tool returns `{requests, cancelled}` as JSON text. Scenarios:
// - `pages`: 3 template pages (an opaque cursor, then ""), sloppy optional fields, 2 resource pages;
// - `cached`: one template page, cache hints `ttlMs` 60 s, `public` (the v2 client would cache it);
// - `mcp`: an `McpServer` with one resource and one resource template (the SDK builds the pages);
// - `complete`: an `McpServer` whose template `docs://pages/{slug}` completes `slug` (`complete` callbacks).
import { createServer as createHttpServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import { McpServer, ProtocolError, ResourceTemplate, Server, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

export const CURSOR_1 = 'opaque/➜ page 2?x={"a":1}&y=%20';

const TEMPLATE_PAGES = new Map([
  [
    undefined,
    {
      resourceTemplates: [
        { uriTemplate: 'file:///{path}', name: 'files', title: 'Files', mimeType: 'text/plain', _meta: { x: 1 } },
        { uriTemplate: 'db://{table}/{id}', name: 'rows', description: 'A row\u001b[31m in red' },
      ],
      nextCursor: CURSOR_1,
    },
  ],
  [
    CURSOR_1,
    {
      resourceTemplates: [
        // Sloppy optional fields: the core drops each, keeps the item (a v2 client's schema refuses the page).
        { uriTemplate: 'mem://sloppy/{id}', name: 'sloppy', annotations: { lastModified: '2025-01-02', priority: 2 } },
      ],
      nextCursor: '',
    },
  ],
  ['', { resourceTemplates: [{ uriTemplate: 'search://{?q}', name: 'search' }] }],
]);

/** Which templates page a cursor asks for (0, 1, 2). */
const PAGE_INDEX = new Map([...TEMPLATE_PAGES.keys()].map((cursor, i) => [cursor, i]));

const RESOURCE_PAGES = new Map([
  [undefined, { resources: [{ uri: 'mem://a', name: 'a', size: 3 }], nextCursor: 'r2' }],
  ['r2', { resources: [{ uri: 'mem://b', name: 'b' }] }],
]);

/** The state every instance of one process shares. */
export function newState() {
  return { requests: {}, cancelled: 0, control: { delays: [], fail: false }, instances: 0 };
}

function page(pages, cursor) {
  const p = pages.get(cursor);
  if (p === undefined) throw new ProtocolError(-32602, 'Invalid cursor');
  return structuredClone(p);
}

/** One server instance (what a factory returns); `notify` sends list_changed (default: this instance's). */
export function createV2Server(scenario, state, notify) {
  state.instances += 1;
  const count = (method) => {
    state.requests[method] = (state.requests[method] ?? 0) + 1;
  };
  if (scenario === 'mcp') return mcpServer(state, count);
  if (scenario === 'complete') return completeServer();
  const server = new Server(
    { name: `v2-${scenario}`, version: '2.0.0' },
    {
      capabilities: { resources: { listChanged: true }, tools: {} },
      ...(scenario === 'cached' && {
        cacheHints: { 'resources/templates/list': { ttlMs: 60_000, cacheScope: 'public' }, 'resources/list': { ttlMs: 60_000, cacheScope: 'public' } },
      }),
    },
  );
  server.setRequestHandler('resources/list', async (req) => {
    count('resources/list');
    return scenario === 'cached' ? { resources: [{ uri: 'mem://a', name: 'a' }] } : page(RESOURCE_PAGES, req.params?.cursor);
  });
  server.setRequestHandler('resources/templates/list', async (req, ctx) => {
    count('resources/templates/list');
    const delayMs = state.control.delays[PAGE_INDEX.get(req.params?.cursor)] ?? 0;
    if (delayMs > 0) {
      await sleep(delayMs, undefined, { signal: ctx.mcpReq.signal }).catch(() => {});
      if (ctx.mcpReq.signal.aborted) state.cancelled += 1;
    }
    if (state.control.fail) throw new ProtocolError(-32603, 'boom');
    if (scenario === 'cached') return { resourceTemplates: [{ uriTemplate: 'c://{id}', name: 'cached' }] };
    return page(TEMPLATE_PAGES, req.params?.cursor);
  });
  server.setRequestHandler('tools/list', async () => ({
    tools: ['control', 'stats'].map((name) => ({ name, inputSchema: { type: 'object' } })),
  }));
  server.setRequestHandler('tools/call', async (req) => control(state, req.params, notify ?? (() => server.sendResourceListChanged())));
  return server;
}

function mcpServer(state, count) {
  const server = new McpServer({ name: 'v2-mcp', version: '2.0.0' }, { capabilities: { resources: { listChanged: true } } });
  server.registerResource('readme', 'docs://readme', { title: 'Readme', mimeType: 'text/markdown' }, async (uri) => {
    count('resources/read');
    return { contents: [{ uri: uri.href, text: '# hi' }] };
  });
  server.registerResource(
    'pages',
    new ResourceTemplate('docs://pages/{slug}', { list: undefined }),
    { title: 'Pages', description: 'A page\u001b[2J by slug' },
    async (uri) => ({ contents: [{ uri: uri.href, text: 'page' }] }),
  );
  server.registerTool('stats', { description: 'request counts' }, async () => control(state, { name: 'stats' }));
  return server;
}

function completeServer() {
  const server = new McpServer({ name: 'v2-complete', version: '2.0.0' });
  const complete = { slug: (typed) => ['intro', 'install', 'usage'].filter((s) => s.startsWith(typed)) };
  server.registerResource('pages', new ResourceTemplate('docs://pages/{slug}', { list: undefined, complete }), {}, async (uri, { slug }) => ({
    contents: [{ uri: uri.href, text: `page ${slug}` }],
  }));
  return server;
}

async function control(state, params, notify) {
  if (params.name === 'stats') return { content: [{ type: 'text', text: JSON.stringify({ requests: state.requests, cancelled: state.cancelled }) }] };
  const args = params.arguments ?? {};
  if (args.exit) setImmediate(() => process.exit(0));
  Object.assign(state.control, args.delays === undefined ? {} : { delays: args.delays }, args.fail === undefined ? {} : { fail: args.fail });
  if (args.notify) await notify();
  return { content: [{ type: 'text', text: 'ok' }] };
}

/** serveStdio over `transport` (e.g. an in-memory one): the legacy handshake and 2026-07-28 alike. */
export function serveMemory(scenario, state, transport) {
  const instances = [];
  const handle = serveStdio(
    (ctx) => {
      const server = createV2Server(scenario, state);
      instances.push({ era: ctx.era, server });
      return server;
    },
    { transport },
  );
  return { handle, instances };
}

/** createMcpHandler on an ephemeral loopback port; resolves with `{url, close, handler}`. */
export async function serveHttp(scenario, state) {
  const { toNodeHandler } = await import('@modelcontextprotocol/node');
  // Over HTTP, 2026-07-28 notifications go through the handler's bus to the listen streams.
  const handler = createMcpHandler(() => createV2Server(scenario, state, () => handler.notify.resourcesChanged()));
  const node = toNodeHandler(handler);
  const http = createHttpServer((req, res) => void node(req, res));
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);
  return {
    url,
    handler,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [mode, scenario = 'pages'] = process.argv.slice(2);
  const state = newState();
  if (mode === 'http') {
    const { url } = await serveHttp(scenario, state);
    process.stdout.write(`${url.href}\n`);
  } else {
    serveStdio(() => createV2Server(scenario, state));
  }
}
