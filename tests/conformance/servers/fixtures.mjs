// The conformance fixtures (`@modelcontextprotocol/conformance` 0.1.16: tools, resources, templates,
// subscriptions, prompts, logging, completion, DNS-rebinding protection) and the stateful Streamable
// HTTP server around them, shared by the TypeScript SDK 1.x (`server.mjs`) and v2 (`server_ts_v2.mjs`)
// fixture servers: each passes its SDK's few differences (`sdk`).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import * as z from 'zod';

// A 1×1 PNG and a minimal WAV (base64), the suite's fixture media.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const subscriptions = new Set();

const text = (t) => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Registers every fixture on `mcp` (an `McpServer`). `sdk`: `ResourceTemplate`; `schema(shape)`,
 * a tool's or prompt's input schema from a zod shape; `notify(ctx, notification)` and `meta(ctx)`
 * in a handler; `elicit(mcp, params)`; `handle(mcp, method, fn)`, a request handler.
 */
export function registerFixtures(mcp, sdk) {
  // Tools.
  mcp.registerTool('test_simple_text', { description: 'Returns simple text content' }, async () =>
    text('This is a simple text response for testing.'),
  );
  mcp.registerTool('test_image_content', { description: 'Returns image content' }, async () => ({
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  }));
  mcp.registerTool('test_audio_content', { description: 'Returns audio content' }, async () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  }));
  mcp.registerTool('test_embedded_resource', { description: 'Returns an embedded resource' }, async () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  }));
  mcp.registerTool('test_multiple_content_types', { description: 'Returns text, image and resource content' }, async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
      },
    ],
  }));
  mcp.registerTool('test_tool_with_logging', { description: 'Sends log messages while it runs', inputSchema: sdk.schema({}) }, async (_a, ctx) => {
    for (const step of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      await sdk.notify(ctx, { method: 'notifications/message', params: { level: 'info', data: step } });
      await sleep(20);
    }
    return text('Tool with logging executed successfully');
  });
  mcp.registerTool('test_tool_with_progress', { description: 'Reports progress while it runs', inputSchema: sdk.schema({}) }, async (_a, ctx) => {
    const progressToken = sdk.meta(ctx)?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) {
      await sdk.notify(ctx, { method: 'notifications/progress', params: { progressToken, progress, total: 100 } });
      await sleep(20);
    }
    return text(String(progressToken));
  });
  mcp.registerTool('test_error_handling', { description: 'Always fails' }, async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  mcp.registerTool(
    'test_sampling',
    { description: 'Asks the client for an LLM completion', inputSchema: sdk.schema({ prompt: z.string() }) },
    async ({ prompt }) => {
      const r = await mcp.server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 });
      return text(`LLM response: ${r.content.type === 'text' ? r.content.text : 'No response'}`);
    },
  );
  const elicit = async (message, properties) => {
    const r = await sdk.elicit(mcp, { mode: 'form', message, requestedSchema: { type: 'object', properties, required: [] } });
    return `action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
  };
  mcp.registerTool(
    'test_elicitation',
    { description: 'Asks the client for user input', inputSchema: sdk.schema({ message: z.string() }) },
    async ({ message }) => text(`User response: ${await elicit(message, { response: { type: 'string', description: "User's response" } })}`),
  );
  mcp.registerTool('test_elicitation_sep1034_defaults', { description: 'Elicitation with defaults (SEP-1034)', inputSchema: sdk.schema({}) }, async () =>
    text(
      `Elicitation completed: ${await elicit('Please review the defaults', {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      })}`,
    ),
  );
  mcp.registerTool('test_elicitation_sep1330_enums', { description: 'Elicitation with enum schemas (SEP-1330)', inputSchema: sdk.schema({}) }, async () =>
    text(
      `Elicitation completed: ${await elicit('Please pick options', {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
          ],
        },
        legacyEnum: { type: 'string', enum: ['opt1', 'opt2'], enumNames: ['Option One', 'Option Two'] },
        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: {
          type: 'array',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
            ],
          },
        },
      })}`,
    ),
  );

  // Resources, a template and subscriptions.
  const fixed = (name, uri, mimeType, body) =>
    mcp.registerResource(name, uri, { description: `The ${name} fixture`, mimeType }, async () => ({
      contents: [{ uri, mimeType, ...body }],
    }));
  fixed('static-text', 'test://static-text', 'text/plain', { text: 'This is the content of the static text resource.' });
  fixed('static-binary', 'test://static-binary', 'image/png', { blob: PNG });
  fixed('watched-resource', 'test://watched-resource', 'text/plain', { text: 'Watched resource content' });
  mcp.registerResource(
    'template',
    new sdk.ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'Data for one id', mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }),
  );
  sdk.handle(mcp, 'resources/subscribe', async (r) => {
    subscriptions.add(r.params.uri);
    return {};
  });
  sdk.handle(mcp, 'resources/unsubscribe', async (r) => {
    subscriptions.delete(r.params.uri);
    return {};
  });

  // Prompts.
  const user = (content) => ({ role: 'user', content });
  mcp.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, () => ({
    messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })],
  }));
  mcp.registerPrompt(
    'test_prompt_with_arguments',
    { description: 'A prompt with two arguments', argsSchema: sdk.schema({ arg1: z.string(), arg2: z.string() }) },
    ({ arg1, arg2 }) => ({ messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` })] }),
  );
  mcp.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'A prompt with an embedded resource', argsSchema: sdk.schema({ resourceUri: z.string() }) },
    ({ resourceUri }) => ({
      messages: [
        user({ type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ],
    }),
  );
  mcp.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
    messages: [user({ type: 'image', data: PNG, mimeType: 'image/png' }), user({ type: 'text', text: 'Please analyze the image above.' })],
  }));

  // Logging and completion.
  sdk.handle(mcp, 'logging/setLevel', async () => ({}));
  sdk.handle(mcp, 'completion/complete', async () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return mcp;
}

/**
 * Serves `build()` (an `McpServer` per session) over stateful Streamable HTTP on 127.0.0.1:`port`
 * with the SDK's `Transport`; SIGINT/SIGTERM close the sessions, shut `tracker` down (delivering
 * queued events) and exit 0. `name` prefixes errors.
 */
export function serveSessions({ port: PORT, Transport, build, tracker, name }) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (transport === undefined) {
        if (typeof sid === 'string') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        transport = new Transport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
          enableDnsRebindingProtection: true,
          allowedHosts: [`127.0.0.1:${PORT}`, `localhost:${PORT}`, `[::1]:${PORT}`],
          allowedOrigins: [`http://127.0.0.1:${PORT}`, `http://localhost:${PORT}`, `http://[::1]:${PORT}`],
        });
        const t = transport;
        t.onclose = () => t.sessionId !== undefined && sessions.delete(t.sessionId);
        await build().connect(t);
      }
      await transport.handleRequest(req, res);
    } catch (e) {
      console.error(`${name}:`, e);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });

  let stopping = false;
  async function stop() {
    if (stopping) return;
    stopping = true;
    for (const t of sessions.values()) await t.close().catch(() => {});
    http.closeAllConnections();
    http.close();
    if (tracker !== undefined) await tracker.shutdown(5_000);
    process.exit(0);
  }
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  http.listen(PORT, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${PORT}/mcp`));
}
