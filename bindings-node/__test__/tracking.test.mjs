// Server tracking over real SDK clients and servers: in memory, stdio, and stateful streamable HTTP.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { McplensError, Tracker, jsonlExporter, track } from 'mcplens';
import * as z from 'zod';

import { EXPECTED, SCENARIO, SERVER_INFO, createScenarioServer, registerHandlers, runScenario } from './servers/scenario-server.mjs';
import { checkEvents, collector, connectMemory, tempDir } from './tracking-helpers.mjs';

const run = promisify(execFile);
const SCENARIO_SERVER = join(import.meta.dirname, 'servers', 'scenario-server.mjs');

test('memory: one event per request for every tracked method, with type, resourceName, duration and error code', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const server = track(createScenarioServer(), tracker);
  const { client, close } = await connectMemory(server, { name: 'memory-client', version: '2.0.0' });
  const results = await runScenario(client);
  assert.deepEqual(results[3], { error: -32602 });
  assert.deepEqual(results[7], { error: -32002 });
  await tracker.flush(5_000);
  checkEvents(events, EXPECTED);
  // One session for the connection, client info from the handshake, server info from the server.
  assert.equal(new Set(events.map((e) => e.sessionId)).size, 1);
  for (const e of events) {
    assert.deepEqual(e.client, { name: 'memory-client', version: '2.0.0' });
    assert.deepEqual(e.server, SERVER_INFO);
    assert.equal(e.transport, 'memory');
    assert.equal(e.protocolVersion, '2025-11-25');
  }
  assert.deepEqual(events[2].parameters, { name: 'echo', arguments: { text: 'hello' } });
  assert.deepEqual(events[2].response, { content: [{ type: 'text', text: 'hello' }] });
  assert.equal(events[3].error.message, 'the tool failed');
  // resources/read contents are summarized by default: size and hash, never the text.
  assert.deepEqual(Object.keys(events[7].response.contents[0]).sort(), ['mimeType', 'sha256', 'textBytes', 'uri']);
  assert.equal(events.at(-1).error.message, 'the handler crashed');
  const stats = tracker.stats();
  assert.equal(stats.recorded, EXPECTED.length);
  assert.deepEqual(stats.exporters, [{ name: 'callback', exported: EXPECTED.length, dropped: 0, failed: 0, skipped: 0, pending: 0 }]);
  await close();
  await tracker.shutdown(5_000);
});

test('responses are byte-identical with and without tracking; results and errors are the handler’s own', async () => {
  const plain = await connectMemory(createScenarioServer());
  await runScenario(plain.client);
  await plain.close();

  const tracker = new Tracker({ exporters: [collector().exporter] });
  const tracked = await connectMemory(track(createScenarioServer(), tracker));
  await runScenario(tracked.client);
  await tracked.close();
  assert.equal(tracked.sent.length, EXPECTED.length);
  assert.deepEqual(tracked.sent, plain.sent);

  // At the handler map: the very object the handler returned, not mutated; the very error it threw.
  const server = createScenarioServer({ handlers: false });
  const result = Object.freeze({ contents: Object.freeze([Object.freeze({ uri: 'x://1', text: 'frozen' })]) });
  const error = new McpError(-32050, 'custom');
  server.setRequestHandler((await import('@modelcontextprotocol/sdk/types.js')).ReadResourceRequestSchema, async (r) => {
    if (r.params.uri === 'x://err') throw error;
    return result;
  });
  track(server, tracker);
  const handler = server._requestHandlers.get('resources/read');
  const extra = { requestId: 7, signal: new AbortController().signal };
  assert.equal(await handler({ jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: 'x://1' } }, extra), result);
  await assert.rejects(handler({ jsonrpc: '2.0', id: 8, method: 'resources/read', params: { uri: 'x://err' } }, extra), (e) => {
    assert.equal(e, error);
    assert.equal(e.code, -32050);
    return true;
  });
  await tracker.shutdown(5_000);
});

test('McpServer tracked before registration: lazy handlers wrapped; idempotent; only the instance is patched', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const mcp = new McpServer({ name: 'lazy', version: '0.1.0' });
  assert.deepEqual([...mcp.server._requestHandlers.keys()], ['ping', 'initialize']);
  assert.equal(track(mcp, tracker), mcp);
  assert.equal(track(mcp, tracker), mcp, 'idempotent');
  assert.equal(track(mcp.server, tracker), mcp.server, 'idempotent through .server');
  // Registered after track(): McpServer adds resources/* and tools/* handlers lazily.
  mcp.registerTool('slow', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: 'done' }] };
  });
  mcp.registerResource('doc', new ResourceTemplate('doc://{id}', { list: undefined }), {}, async (uri, { id }) => ({
    contents: [{ uri: uri.href, text: `doc ${id}` }],
  }));
  mcp.registerPrompt('hi', { argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hi ${who}` } }],
  }));
  const { client, close } = await connectMemory(mcp);
  // Registered after connect too.
  mcp.registerTool('late', {}, async () => ({ content: [{ type: 'text', text: 'late' }] }));
  await client.callTool({ name: 'slow', arguments: { ms: 30 } });
  await client.readResource({ uri: 'doc://9' });
  await client.listResourceTemplates();
  await client.getPrompt({ name: 'hi', arguments: { who: 'x' } });
  await client.callTool({ name: 'late', arguments: {} });
  await tracker.flush(5_000);
  checkEvents(events, [
    { type: 'mcp:initialize' },
    { type: 'mcp:tools/call', resourceName: 'slow' },
    { type: 'mcp:resources/read', resourceName: 'doc://9' },
    { type: 'mcp:resources/templates/list' },
    { type: 'mcp:prompts/get', resourceName: 'hi' },
    { type: 'mcp:tools/call', resourceName: 'late' },
  ]);
  assert.ok(events[1].durationMs >= 25, `the slow tool took ${events[1].durationMs} ms`);
  await close();

  // Untouched: the SDK's classes, Map.prototype, and other instances.
  const other = new Server({ name: 'other', version: '1' }, { capabilities: {} });
  assert.equal(other._requestHandlers.set, Map.prototype.set);
  assert.ok(!Object.hasOwn(other, '_onclose'));
  assert.equal(Object.hasOwn(Server.prototype, Symbol.for('mcplens.tracked')), false);
  // One set of exit listeners for every tracker, added by the first (SIGINT/SIGTERM only where the
  // app has none; exit.test.mjs checks what they do): a second tracker adds none.
  const listeners = () => ['beforeExit', 'exit', 'SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s));
  const before = listeners();
  assert.ok(before.slice(0, 4).every((n) => n >= 1) && before[4] === 0, `${before}`);
  const second = new Tracker({ exporters: [collector().exporter] });
  const c2 = await connectMemory(track(new McpServer({ name: 'second', version: '1' }), second));
  await c2.close();
  assert.deepEqual(listeners(), before);
  await second.shutdown(5_000);
  await tracker.shutdown(5_000);
});

test('the CommonJS and ES module builds of the SDK are both tracked (two different Server classes)', async () => {
  const { Server: CjsServer } = createRequire(import.meta.url)('@modelcontextprotocol/sdk/server/index.js');
  assert.notEqual(CjsServer, Server);
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  for (const S of [Server, CjsServer]) {
    const server = new S(SERVER_INFO, { capabilities: SCENARIO.capabilities });
    track(server, tracker);
    registerHandlers(server); // after track(): through the patched map
    const { client, close } = await connectMemory(server);
    await client.listTools();
    await close();
  }
  await tracker.flush(5_000);
  assert.deepEqual(
    events.map((e) => e.type),
    ['mcp:initialize', 'mcp:tools/list', 'mcp:initialize', 'mcp:tools/list'],
  );
  assert.equal(new Set(events.map((e) => e.sessionId)).size, 2, 'one session per server instance');
  await tracker.shutdown(5_000);
});

test('track() throws a TypeError for anything but an SDK Server or McpServer; the core checks the options', () => {
  const tracker = new Tracker({ enableTracing: false });
  for (const bad of [undefined, null, 42, 'server', {}, { server: {} }, new Client({ name: 'c', version: '1' })]) {
    assert.throws(() => track(bad, tracker), TypeError);
  }
  assert.throws(() => track(createScenarioServer(), {}), TypeError);
  assert.throws(() => new Tracker({ exporters: [{ kind: 'jsonl' }] }), TypeError);
  // Values are the core's to check (tests/vectors/tracking-config): the error names the option.
  for (const [options, option] of [
    [{ captureResponses: 'no' }, 'captureResponses'],
    [{ enableTracng: false }, 'enableTracng'],
    [{ queueCapacity: 0 }, 'queueCapacity'],
  ]) {
    assert.throws(
      () => new Tracker(options),
      (e) => e.name === 'McplensError' && e.code === 'invalid_argument' && e.option === option,
    );
  }
});

test('redaction: built-in rules, the redact hook, and a failing hook drops the event (counted)', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter], redact: (s) => s.replaceAll('Ada', '[name]') });
  const server = track(createScenarioServer(), tracker);
  const { client, close } = await connectMemory(server);
  await client.readResource({ uri: 'note://7?token=s3cr3t-value' });
  await client.callTool({ name: 'echo', arguments: { text: 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789', who: 'Ada' } });
  await client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
  await tracker.flush(5_000);
  const [, read, call, prompt] = events;
  assert.doesNotMatch(JSON.stringify(events), /s3cr3t|abcdefghijklmnop|Ada/);
  assert.match(read.resourceName, /^note:\/\/7\?token=/);
  assert.equal(read.resourceName, read.parameters.uri);
  assert.equal(call.parameters.arguments.who, '[name]');
  assert.equal(prompt.response.messages[0].content.text, 'Hello [name]');
  await close();
  await tracker.shutdown(5_000);

  // A hook that throws (or returns a non-string) drops the event: fail closed.
  const failing = collector();
  let calls = 0;
  const strict = new Tracker({
    exporters: [failing.exporter],
    redact: (s) => {
      calls += 1;
      if (s.includes('hello')) throw new Error('no');
      return s === 'note://1' ? 42 : s;
    },
  });
  const c2 = await connectMemory(track(createScenarioServer(), strict));
  await c2.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  await c2.client.readResource({ uri: 'note://1' });
  await c2.client.listTools();
  await strict.flush(5_000);
  assert.ok(calls > 0);
  assert.deepEqual(
    failing.events.map((e) => e.type),
    ['mcp:initialize', 'mcp:tools/list'],
  );
  const stats = strict.stats();
  assert.equal(stats.recorded, 4);
  assert.equal(stats.redactionFailed, 2);
  await c2.close();
  await strict.shutdown(5_000);
});

test('a server’s own request methods are recorded by their names (registered before and after track())', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const server = new Server({ name: 'acme', version: '1.0.0' }, { capabilities: {} });
  const Search = z.object({ method: z.literal('acme/search'), params: z.object({ query: z.string() }) });
  server.setRequestHandler(Search, async (request) => ({ hits: [request.params.query] }));
  track(server, tracker);
  const Fail = z.object({ method: z.literal('acme/fail'), params: z.optional(z.object({})) });
  server.setRequestHandler(Fail, async () => {
    throw new McpError(-32000, 'index offline');
  });
  const { client, close } = await connectMemory(server);
  const hits = await client.request({ method: 'acme/search', params: { query: 'q3' } }, z.object({ hits: z.array(z.string()) }));
  assert.deepEqual(hits, { hits: ['q3'] });
  await assert.rejects(client.request({ method: 'acme/fail', params: {} }, z.object({})), /index offline/);
  await close();
  await tracker.flush(5_000);
  const own = events.filter((e) => e.type !== 'mcp:initialize');
  assert.deepEqual(
    own.map((e) => [e.type, e.isError, e.error?.code ?? null, e.error?.type ?? null]),
    [
      ['mcp:acme/search', false, null, null],
      ['mcp:acme/fail', true, -32000, '-32000'],
    ],
  );
  assert.deepEqual([own[0].parameters, own[0].response, own[0].resourceName], [{ query: 'q3' }, { hits: ['q3'] }, undefined]);
  await tracker.shutdown(5_000);
});

test('enableTracing: false leaves the server untouched and records nothing', async () => {
  const dir = tempDir();
  const path = join(dir, 'events.jsonl');
  const tracker = new Tracker({ enableTracing: false, exporters: [jsonlExporter({ path })] });
  const server = createScenarioServer();
  const before = new Map(server._requestHandlers);
  assert.equal(track(server, tracker), server);
  assert.deepEqual(new Map(server._requestHandlers), before);
  assert.equal(server._requestHandlers.set, Map.prototype.set);
  const { client, close } = await connectMemory(server);
  await runScenario(client);
  await close();
  await tracker.flush(1_000);
  const zero = { exported: 0, dropped: 0, failed: 0, skipped: 0, pending: 0 };
  assert.deepEqual(tracker.stats(), {
    recorded: 0,
    dropped: 0,
    filtered: 0,
    redactionFailed: 0,
    unidentified: 0,
    queued: 0,
    exporters: [{ name: 'jsonl', ...zero }],
  });
  assert.equal(existsSync(path), false);
  await tracker.shutdown(1_000);
});

test('captureResponses: false still records tool errors; captureParameters: false keeps resourceName; resource text opt-in', async () => {
  const lean = collector();
  const tracker = new Tracker({ exporters: [lean.exporter], captureResponses: false, captureParameters: false });
  const c1 = await connectMemory(track(createScenarioServer(), tracker));
  await c1.client.callTool({ name: 'fail', arguments: {} });
  await c1.client.readResource({ uri: 'note://3' });
  await tracker.flush(5_000);
  const [, fail, read] = lean.events;
  assert.equal(fail.isError, true);
  assert.equal(fail.error.type, 'tool_error');
  assert.equal(read.resourceName, 'note://3');
  for (const e of lean.events) {
    assert.equal(e.response, undefined);
    assert.equal(e.parameters, undefined);
  }
  await c1.close();
  await tracker.shutdown(5_000);

  const full = collector();
  const withText = new Tracker({ exporters: [full.exporter], captureResourceText: true });
  const c2 = await connectMemory(track(createScenarioServer(), withText));
  await c2.client.readResource({ uri: 'note://3' });
  await withText.flush(5_000);
  assert.equal(full.events[1].response.contents[0].text, 'note 3');
  await c2.close();
  await withText.shutdown(5_000);
});

test('not captured, not serialized: only what the core reads of params and results crosses (its projections), so arguments JSON cannot hold (a BigInt) no longer cost the event', async () => {
  const lean = collector();
  const tracker = new Tracker({ exporters: [lean.exporter], captureResponses: false, captureParameters: false });
  const session = tracker.openSession();
  const big = { name: 'divide', arguments: { a: 10n }, _meta: { progressToken: 7 } };
  session.record('tools/call', { id: 1, params: big }, { result: { content: [{ type: 'text', text: 'x', n: 1n }], isError: true } }, Date.now(), 1);
  session.record('resources/read', { id: 2, params: { uri: 'note://3', extra: 2n } }, { result: [1n] }, Date.now(), 1);
  session.record('x/custom', { id: 3, params: [1n] }, { result: 1n }, Date.now(), 1);
  await tracker.flush(5_000);
  const [call, read, custom] = lean.events;
  assert.deepEqual([call.resourceName, call.isError, call.error?.type], ['divide', true, 'tool_error']);
  assert.deepEqual([read.resourceName, read.isError], ['note://3', false]);
  assert.deepEqual([custom.eventType ?? custom.type, custom.isError], ['mcp:x/custom', false]);
  for (const e of lean.events) assert.deepEqual([e.parameters, e.response], [undefined, undefined]);
  await tracker.shutdown(5_000);
});

test('identify: called off the request path; the session’s events carry the identity', async () => {
  const { events, exporter } = collector();
  const seen = [];
  const tracker = new Tracker({
    exporters: [exporter],
    identify: async (request, extra) => {
      seen.push([request.method, typeof extra?.requestId]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { id: 'user-1', name: 'Ada', data: { plan: 'pro' } };
    },
  });
  const { client, close } = await connectMemory(track(createScenarioServer(), tracker));
  await client.listTools();
  await client.listPrompts();
  await tracker.flush(5_000);
  assert.deepEqual(seen, [['initialize', 'number']], 'asked once per session, with its first request');
  assert.equal(events.length, 3);
  for (const e of events) assert.deepEqual(e.identity, { id: 'user-1', name: 'Ada', data: { plan: 'pro' } });
  await close();
  await tracker.shutdown(5_000);
});

test('identify held in the core: a failing hook, or one that never answers, lets the events go on without an identity (counted)', async () => {
  for (const [identify, extra] of [
    [async () => Promise.reject(new Error('directory down')), {}],
    [() => new Promise(() => {}), { identifyTimeoutMs: 50 }],
    [() => 42, {}], // not an identity: a failure
  ]) {
    const { events, exporter } = collector();
    const tracker = new Tracker({ exporters: [exporter], identify, ...extra });
    const { client, close } = await connectMemory(track(createScenarioServer(), tracker));
    await client.listTools(); // the request never waits for identify
    await tracker.flush(10_000);
    assert.equal(events.length, 2, 'initialize and tools/list, exported');
    assert.ok(events.every((e) => e.identity === undefined));
    assert.equal(tracker.stats().unidentified, 2);
    await close();
    await tracker.shutdown(5_000);
  }
});

test('callback exporter: a throw counts the batch failed; flush and shutdown time out as McplensError', async () => {
  const tracker = new Tracker({
    exporters: [
      (await import('mcplens')).callbackExporter(() => {
        throw new Error('sink down');
      }),
    ],
  });
  const { client, close } = await connectMemory(track(createScenarioServer(), tracker));
  await client.listTools();
  await tracker.flush(5_000);
  assert.deepEqual(tracker.stats().exporters, [{ name: 'callback', exported: 0, dropped: 0, failed: 2, skipped: 0, pending: 0 }]);
  await close();
  await tracker.shutdown(5_000);

  const stuck = new Tracker({ exporters: [(await import('mcplens')).callbackExporter(() => new Promise(() => {}))] });
  const c2 = await connectMemory(track(createScenarioServer(), stuck));
  await assert.rejects(stuck.flush(200), (e) => e instanceof McplensError && e.code === 'timeout');
  await assert.rejects(stuck.shutdown(200), (e) => e instanceof McplensError && e.code === 'timeout');
  await c2.close();
});

test('stdio: a tracked server process records every request and flushes at beforeExit', async () => {
  const dir = tempDir();
  const path = join(dir, 'events.jsonl');
  const transport = new StdioClientTransport({ command: process.execPath, args: [SCENARIO_SERVER, path], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const errors = [];
  const client = new Client({ name: 'stdio-client', version: '3.0.0' });
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  await runScenario(client);
  await client.close(); // stdin ends; the server's loop drains; beforeExit flushes
  const events = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  checkEvents(events, EXPECTED);
  for (const e of events) {
    assert.equal(e.transport, 'stdio');
    assert.deepEqual(e.client, { name: 'stdio-client', version: '3.0.0' });
  }
  assert.deepEqual(errors, [], 'the server wrote nothing but JSON-RPC to stdout');
  assert.equal(stderr, '');
});

test('nothing is written to stdout or stderr by tracking', async () => {
  const script = `
    import { Tracker, track, jsonlExporter } from 'mcplens';
    import { createScenarioServer, runScenario } from ${JSON.stringify(SCENARIO_SERVER)};
    import { connectMemory } from ${JSON.stringify(join(import.meta.dirname, 'tracking-helpers.mjs'))};
    const tracker = new Tracker({ exporters: [jsonlExporter({ path: process.argv[1] })], redact: (s) => s });
    const c = await connectMemory(track(createScenarioServer(), tracker));
    await runScenario(c.client);
    await c.close();
    await tracker.shutdown(5000);
  `;
  const path = join(tempDir(), 'events.jsonl');
  const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script, path], {
    cwd: import.meta.dirname,
    timeout: 30_000,
  });
  assert.equal(stdout, '');
  assert.equal(stderr, '');
  assert.equal(readFileSync(path, 'utf8').trim().split('\n').length, EXPECTED.length);
});

test('stateful streamable HTTP: two concurrent clients, one session (and server instance) each', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const transports = new Map();
  const http = createHttpServer(async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      await track(createScenarioServer(), tracker).connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);
  const clients = [];
  for (const name of ['http-a', 'http-b']) {
    const client = new Client({ name, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    clients.push({ client, transport, name });
  }
  await Promise.all(clients.map(({ client }) => runScenario(client)));
  await tracker.flush(5_000);
  assert.equal(events.length, 2 * EXPECTED.length);
  const bySession = new Map();
  for (const e of events) bySession.set(e.sessionId, [...(bySession.get(e.sessionId) ?? []), e]);
  assert.equal(bySession.size, 2);
  const names = [];
  for (const sessionEvents of bySession.values()) {
    checkEvents(sessionEvents, EXPECTED);
    const [first] = sessionEvents;
    names.push(first.client.name);
    for (const e of sessionEvents) {
      assert.equal(e.transport, 'http');
      assert.deepEqual(e.client, first.client);
    }
  }
  assert.deepEqual(names.sort(), ['http-a', 'http-b']);
  for (const { transport } of clients) await transport.terminateSession();
  for (const { client } of clients) await client.close();
  await new Promise((resolve) => http.close(resolve));
  await tracker.shutdown(5_000);
});

test('large payloads (over the 64 KiB text buffer) and string request ids reach the core', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const server = track(createScenarioServer(), tracker);
  const { client, close } = await connectMemory(server);
  const big = 'é'.repeat(60_000); // 120,000 UTF-8 bytes each way
  assert.deepEqual(await client.callTool({ name: 'echo', arguments: { text: big } }), { content: [{ type: 'text', text: big }] });
  await close();
  const handler = server._requestHandlers.get('tools/list');
  await handler({ jsonrpc: '2.0', id: 'req-7', method: 'tools/list' }, { requestId: 'req-7', signal: new AbortController().signal });
  await tracker.flush(5_000);
  const [, call, list] = events;
  assert.equal(call.type, 'mcp:tools/call');
  assert.equal(call.resourceName, 'echo');
  assert.match(call.parameters.arguments.text, /^é+…\[truncated: \d+ bytes\]$/);
  assert.ok(call.truncated.some((t) => t.path === '/parameters/arguments/text' && t.reason === 'string_length'));
  assert.ok(call.truncated.some((t) => t.path.startsWith('/response/content')));
  assert.equal(list.requestId, 'req-7');
  await tracker.shutdown(5_000);
});

test('a request is serialized and recorded after its response is sent; a loop that never yields records every request, in order', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const mcp = new McpServer(SERVER_INFO);
  let answered = 0;
  const readAt = [];
  // toJSON runs when mcplens serializes the result (the in-memory transport hands objects over).
  mcp.registerTool('probe', { inputSchema: { n: z.number() } }, async ({ n }) => ({
    content: [{ type: 'text', text: String(n) }],
    toJSON() {
      readAt.push(answered);
      return { content: this.content };
    },
  }));
  const { client, close } = await connectMemory(track(mcp, tracker));
  await client.callTool({ name: 'probe', arguments: { n: 0 } });
  answered += 1;
  await new Promise((resolve) => setImmediate(resolve));
  // The transport (connectMemory's send) serializes it as it sends; mcplens once the client has it.
  assert.deepEqual(readAt, [0, 1]);

  // 200 calls in one chain of promises: held requests are recorded 64 at a time, in order.
  for (let n = 1; n <= 200; n++) await client.callTool({ name: 'probe', arguments: { n } });
  assert.equal(tracker.stats().recorded, 1 + 1 + 200, 'stats() counts what is held'); // initialize, then the calls
  await tracker.flush(5_000);
  const calls = events.filter((e) => e.type === 'mcp:tools/call');
  assert.deepEqual(
    calls.map((e) => e.parameters.arguments.n),
    Array.from({ length: 201 }, (_, n) => n),
  );
  assert.deepEqual(
    calls.map((e) => e.response.content[0].text),
    calls.map((e) => String(e.parameters.arguments.n)),
  );
  await close();
  await tracker.shutdown(5_000);
});
