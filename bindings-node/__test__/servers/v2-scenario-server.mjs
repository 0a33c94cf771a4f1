// The tracking scenario on the TypeScript SDK v2: a low-level `Server` (or an `McpServer`) that
// answers every tracked method of both protocol eras with deterministic results and errors, and the
// client side that calls each of them.
//
//   node v2-scenario-server.mjs EVENTS.jsonl   serveStdio(track(factory)) with its transport tracked,
//                                              writing events to EVENTS.jsonl (both eras); SIGTERM
//                                              shuts the tracker down first
import { pathToFileURL } from 'node:url';

import { McpServer, ProtocolError, ResourceTemplate, Server } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { Tracker, jsonlExporter, track } from 'mcplens';
import * as z from 'zod';

export const SERVER_INFO = { name: 'v2-scenario', version: '2.4.0' };
const CAPABILITIES = { tools: {}, resources: { subscribe: true, listChanged: true }, prompts: {}, completions: {}, logging: {} };

/** A low-level v2 `Server` with a handler for every tracked method. */
export function createScenarioServer() {
  const server = new Server(SERVER_INFO, { capabilities: CAPABILITIES });
  server.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  server.setRequestHandler('tools/call', async (request) => {
    const { name, arguments: args } = request.params;
    if (name === 'echo') return { content: [{ type: 'text', text: String(args?.text ?? '') }] };
    if (name === 'fail') return { content: [{ type: 'text', text: 'the tool failed' }], isError: true };
    throw new ProtocolError(-32602, `Unknown tool: ${name}`);
  });
  server.setRequestHandler('resources/list', async () => ({ resources: [{ uri: 'note://1', name: 'one' }] }));
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [{ uriTemplate: 'note://{id}', name: 'note' }] }));
  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params;
    if (uri === 'note://missing') throw new ProtocolError(-32602, `Resource not found: ${uri}`);
    if (uri === 'note://crash') throw new Error('the handler crashed');
    return { contents: [{ uri, mimeType: 'text/plain', text: `note ${uri.slice('note://'.length)}` }] };
  });
  server.setRequestHandler('resources/subscribe', async () => ({}));
  server.setRequestHandler('resources/unsubscribe', async () => ({}));
  server.setRequestHandler('prompts/list', async () => ({ prompts: [{ name: 'greet' }] }));
  server.setRequestHandler('prompts/get', async (request) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${request.params.arguments?.who}` } }],
  }));
  server.setRequestHandler('completion/complete', async () => ({ completion: { values: ['a'], total: 1, hasMore: false } }));
  server.setRequestHandler('logging/setLevel', async () => ({}));
  return server;
}

/** The same surface as an `McpServer` (its handlers registered lazily by the SDK). */
export function createScenarioMcpServer() {
  const mcp = new McpServer(SERVER_INFO, { capabilities: { logging: {} } });
  mcp.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  mcp.registerResource('note', new ResourceTemplate('note://{id}', { list: undefined }), { mimeType: 'text/plain' }, async (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: `note ${id}` }],
  }));
  mcp.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${who}` } }],
  }));
  return mcp;
}

/**
 * The client's calls on `era` and the event each must leave, `[call, type, resourceName?, errorCode?]`;
 * `watch` (the listen) is the caller's. The 2026-07-28 era has no `initialize`, `ping`,
 * `logging/setLevel` or `resources/(un)subscribe` (the client refuses to send them); it opens with
 * `server/discover`.
 */
export function scenario(era) {
  const steps = [
    [(c) => c.listTools(), 'tools/list'],
    [(c) => c.callTool({ name: 'echo', arguments: { text: 'hi' } }), 'tools/call', 'echo'],
    [(c) => c.callTool({ name: 'fail', arguments: {} }), 'tools/call', 'fail', 'tool_error'],
    [(c) => c.callTool({ name: 'nope', arguments: {} }), 'tools/call', 'nope', -32602],
    [(c) => c.listResources(), 'resources/list'],
    [(c) => c.listResourceTemplates(), 'resources/templates/list'],
    [(c) => c.readResource({ uri: 'note://7' }), 'resources/read', 'note://7'],
    [(c) => c.readResource({ uri: 'note://missing' }), 'resources/read', 'note://missing', -32602],
    [(c) => c.readResource({ uri: 'note://crash' }), 'resources/read', 'note://crash', -32603],
    [(c) => c.listPrompts(), 'prompts/list'],
    [(c) => c.getPrompt({ name: 'greet', arguments: { who: 'Ada' } }), 'prompts/get', 'greet'],
    [(c) => c.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'A' } }), 'completion/complete', 'greet'],
  ];
  if (era === 'modern') return steps;
  return [
    ...steps,
    [(c) => c.ping(), 'ping'],
    [(c) => c.setLoggingLevel('info'), 'logging/setLevel'],
    [(c) => c.subscribeResource({ uri: 'note://7' }), 'resources/subscribe', 'note://7'],
    [(c) => c.unsubscribeResource({ uri: 'note://7' }), 'resources/unsubscribe', 'note://7'],
  ];
}

/** Runs the calls in order; a rejected one gives `{ error: code }`. */
export async function runScenario(client, era) {
  const out = [];
  for (const [call] of scenario(era)) {
    try {
      out.push(await call(client));
    } catch (e) {
      out.push({ error: e.code });
    }
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const tracker = new Tracker({ exporters: [jsonlExporter({ path: process.argv[2] })] });
  serveStdio(track(createScenarioServer, tracker), { transport: track(new StdioServerTransport(), tracker) });
  // A v2 client probes on a sibling process and SIGTERMs it at once (mcplens installs no signal handler).
  process.on('SIGTERM', () => void tracker.shutdown(2_000).finally(() => process.exit(0)));
}
