// The tracking scenario: a low-level Server answering every tracked method (subscribe included),
// with deterministic results and errors, and the client side that exercises all of it.
//
//   node scenario-server.mjs EVENTS.jsonl   a tracked stdio server writing events to EVENTS.jsonl
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

/** The cross-language scenario (`tests/vectors/tracking/scenario/scenario.json`): server and client info, steps. */
export const SCENARIO = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', '..', 'tests', 'vectors', 'tracking', 'scenario', 'scenario.json'), 'utf8'),
);

export const SERVER_INFO = SCENARIO.server;

/** The scenario's server (untracked); `handlers: false` registers only what the constructor does. */
export function createScenarioServer({ handlers = true } = {}) {
  const server = new Server(SERVER_INFO, { capabilities: SCENARIO.capabilities });
  if (handlers) registerHandlers(server);
  return server;
}

/** Registers every tracked method's handler (also usable after `track()`). */
export function registerHandlers(server) {
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
      { name: 'fail', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    if (name === 'echo') return { content: [{ type: 'text', text: String(args?.text ?? '') }] };
    if (name === 'fail') return { content: [{ type: 'text', text: 'the tool failed' }], isError: true };
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [{ uri: 'note://1', name: 'one', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: 'note://{id}', name: 'note' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    if (uri === 'note://missing') throw new McpError(-32002, `Resource not found: ${uri}`);
    if (uri === 'note://crash') throw new Error('the handler crashed');
    return { contents: [{ uri, mimeType: 'text/plain', text: `note ${uri.slice('note://'.length)}` }] };
  });
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [{ name: 'greet', arguments: [{ name: 'who', required: true }] }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${request.params.arguments?.who}` } }],
  }));
}

const ANY = z.any();

/**
 * The requests after `initialize`, in order, with the event each must produce: `[call, expected]`.
 * `call(client)` resolves to the result. The scenario's steps, then one only Node's SDK answers
 * the same way (an unexpected exception is -32603 here, 0 in Python's mcp 1.x).
 */
export const STEPS = [
  ...SCENARIO.steps.map(({ method, params, expect }) => [
    (c) => c.request(params === undefined ? { method } : { method, params }, ANY),
    { type: `mcp:${method}`, ...expect },
  ]),
  [(c) => c.readResource({ uri: 'note://crash' }), { type: 'mcp:resources/read', resourceName: 'note://crash', error: { code: -32603 } }],
];

/** Every event the scenario produces, `initialize` first. */
export const EXPECTED = [{ type: 'mcp:initialize' }, ...STEPS.map(([, e]) => e)];

/** Runs the steps on a connected client; each result, or `{ error: code }`. */
export async function runScenario(client) {
  const out = [];
  for (const [call] of STEPS) {
    try {
      out.push(await call(client));
    } catch (e) {
      out.push({ error: e.code });
    }
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { Tracker, jsonlExporter, track } = await import('mcplens');
  const tracker = new Tracker({ exporters: [jsonlExporter({ path: process.argv[2] })] });
  const server = track(createScenarioServer(), tracker);
  await server.connect(new StdioServerTransport());
}
