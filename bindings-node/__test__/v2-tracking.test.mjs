// Server tracking on the TypeScript SDK v2 (`@modelcontextprotocol/server` 2.x), both protocol eras:
// `track()` of a low-level `Server` and an `McpServer`, and of the per-request factories v2 serves
// 2026-07-28 from (`serveStdio`, `createMcpHandler`) with their entries (the listen they answer
// themselves); responses byte-identical, errors rethrown unchanged; nothing kept per request.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { ProtocolError, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Catalog, Tracker, callbackExporter, track } from 'mcplens';

import { SERVER_INFO, createScenarioMcpServer, createScenarioServer, runScenario, scenario } from './servers/v2-scenario-server.mjs';
import { collector, tempDir } from './tracking-helpers.mjs';
import { ERAS, REVISIONS, record } from './v2-helpers.mjs';

const SCENARIO_SERVER = join(import.meta.dirname, 'servers', 'v2-scenario-server.mjs');
const CLIENT = { name: 'v2-tracking-client', version: '2.4.0' };

function newClient(era) {
  return new Client(CLIENT, { versionNegotiation: { mode: ERAS[era] } });
}

/** The events a scenario run on `era` must leave: discover first on 2026-07-28, initialize on the legacy handshake, listen last when watched. */
function expected(era, { listen = era === 'modern' } = {}) {
  const steps = scenario(era).map(([, type, resourceName, error]) => ({ type, resourceName, error }));
  const first = era === 'modern' ? { type: 'server/discover' } : { type: 'initialize' };
  return [first, ...steps, ...(listen ? [{ type: 'subscriptions/listen' }] : [])];
}

/** Every event as the era says: its type, name, error, revision, client, server; sessions per era. */
function checkEvents(events, era, transport, want = expected(era)) {
  assert.deepEqual(
    events.map((e) => e.type),
    want.map((w) => `mcp:${w.type}`),
  );
  for (const [i, w] of want.entries()) {
    const e = events[i];
    const where = `event ${i} (${e.type}, ${era})`;
    assert.equal(e.resourceName, w.resourceName, where);
    assert.equal(e.isError, w.error !== undefined, where);
    if (typeof w.error === 'number') assert.equal(e.error.code, w.error, where);
    if (w.error === 'tool_error') assert.equal(e.error.type, 'tool_error', where);
    assert.equal(e.protocolVersion, REVISIONS[era], where);
    assert.deepEqual(e.client, CLIENT, where);
    assert.deepEqual(e.server, SERVER_INFO, where);
    assert.equal(e.transport, transport, where);
    assert.notEqual(e.requestId, undefined, where);
    // 2026-07-28 is sessionless: no session id on its events.
    if (era === 'modern') assert.equal(e.sessionId, undefined, where);
    else assert.match(e.sessionId, /^ses_/, where);
  }
  if (era === 'legacy') assert.equal(new Set(events.map((e) => e.sessionId)).size, 1, 'one session per connection');
}

/** A v2 client on `era` to serveStdio(factory) over memory; `wire` gets every message the server writes, as JSON text. */
async function connectServeStdio(era, factory, { trackWire } = {}) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const wire = [];
  const send = serverTransport.send.bind(serverTransport);
  serverTransport.send = (message, options) => {
    wire.push(JSON.stringify(message));
    return send(message, options);
  };
  const handle = serveStdio(factory, { transport: trackWire === undefined ? serverTransport : track(serverTransport, trackWire) });
  const client = newClient(era);
  await client.connect(clientTransport);
  return { client, wire, close: async () => (await client.close(), await handle.close()) };
}

for (const era of ['legacy', 'modern']) {
  test(`${era}: serveStdio(track(factory)) with its transport tracked — every method of the era, revision and session rule per request`, async () => {
    const { events, exporter } = collector();
    const tracker = new Tracker({ exporters: [exporter] });
    const c = await connectServeStdio(era, track(createScenarioServer, tracker), { trackWire: tracker });
    await runScenario(c.client, era);
    await new Catalog().watch('v2', c.client); // 2026-07-28: subscriptions/listen, answered by serveStdio itself
    await c.close();
    await tracker.flush(5_000);
    checkEvents(events, era, 'stdio');
    assert.equal(tracker.stats().recorded, events.length);
    await tracker.shutdown(5_000);
  });

  test(`${era}: an McpServer (lazy handlers) and a plain server.connect() are tracked alike`, async () => {
    const { events, exporter } = collector();
    const tracker = new Tracker({ exporters: [exporter] });
    const c = await connectServeStdio(era, () => track(createScenarioMcpServer(), tracker));
    await c.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await c.client.readResource({ uri: 'note://3' });
    await c.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
    await c.close();
    if (era === 'legacy') {
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      const server = track(createScenarioServer(), tracker);
      await server.connect(serverTransport);
      const client = newClient(era);
      await client.connect(clientTransport);
      await client.listTools();
      await client.close();
    }
    await tracker.flush(5_000);
    const want = [
      { type: era === 'modern' ? 'server/discover' : 'initialize' },
      { type: 'tools/call', resourceName: 'echo' },
      { type: 'resources/read', resourceName: 'note://3' },
      { type: 'prompts/get', resourceName: 'greet' },
    ];
    checkEvents(events.slice(0, 4), era, 'stdio', want);
    if (era === 'legacy') {
      assert.deepEqual(events.slice(4).map((e) => [e.type, e.transport, e.protocolVersion]), [
        ['mcp:initialize', 'memory', REVISIONS.legacy],
        ['mcp:tools/list', 'memory', REVISIONS.legacy],
      ]);
    }
    await tracker.shutdown(5_000);
  });

  test(`${era}: responses byte-identical with and without tracking; the handler's own result object and error`, async () => {
    const plain = await connectServeStdio(era, createScenarioServer);
    await runScenario(plain.client, era);
    await plain.close();
    const tracker = new Tracker({ exporters: [collector().exporter] });
    const tracked = await connectServeStdio(era, track(createScenarioServer, tracker), { trackWire: tracker });
    await runScenario(tracked.client, era);
    await tracked.close();
    assert.ok(plain.wire.length >= scenario(era).length);
    assert.deepEqual(tracked.wire, plain.wire);

    // At the handler map (v2's signature: the request without its id, and `ctx`): the tracking
    // wrapper returns the very object and rethrows the very error.
    const server = track(createScenarioServer(), tracker);
    const result = Object.freeze({ contents: Object.freeze([]) });
    const error = new ProtocolError(-32050, 'custom');
    server._requestHandlers.set('resources/read', async (r) => {
      if (r.params.uri === 'x://err') throw error;
      return result;
    });
    const handler = server._requestHandlers.get('resources/read');
    const ctx = { mcpReq: { id: 7, method: 'resources/read', signal: new AbortController().signal } };
    assert.equal(await handler({ method: 'resources/read', params: { uri: 'x://1' } }, ctx), result);
    await assert.rejects(handler({ method: 'resources/read', params: { uri: 'x://err' } }, ctx), (e) => e === error);
    await tracker.shutdown(5_000);
  });
}

/** createMcpHandler(track(factory)), its handler tracked, on a loopback port. */
async function serveHttp(tracker, factory = createScenarioServer) {
  let built = 0;
  const handler = createMcpHandler(
    track((ctx) => {
      built += 1;
      return factory(ctx);
    }, tracker),
  );
  track(handler, tracker);
  const http = createHttpServer(toNodeHandler(handler));
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${http.address().port}/mcp`),
    built: () => built,
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

test('createMcpHandler: a fresh instance per request, one tracker for all; both eras, listen included', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const h = await serveHttp(tracker);
  try {
    for (const era of ['modern', 'legacy']) {
      const client = newClient(era);
      await client.connect(new StreamableHTTPClientTransport(h.url));
      await runScenario(client, era);
      if (era === 'modern') await new Catalog().watch('v2', client); // served by the handler's listen router
      await client.close();
    }
  } finally {
    await h.close();
  }
  await tracker.flush(5_000);
  const modern = events.filter((e) => e.protocolVersion === REVISIONS.modern);
  checkEvents(modern, 'modern', 'http');
  // Legacy over stateless HTTP: each request its own instance, so its own session; the revision
  // comes from the MCP-Protocol-Version header, the client only in the initialize request.
  const legacy = events.filter((e) => e.protocolVersion !== REVISIONS.modern);
  assert.deepEqual(
    legacy.map((e) => e.type),
    expected('legacy', { listen: false }).map((w) => `mcp:${w.type}`),
  );
  for (const e of legacy) assert.equal(e.protocolVersion, REVISIONS.legacy, e.type);
  assert.equal(new Set(legacy.map((e) => e.sessionId)).size, legacy.length);
  assert.deepEqual(legacy[0].client, CLIENT);
  // Every request but the listen built an instance (the listen's is built and closed unused).
  assert.ok(h.built() >= events.length, `${h.built()} instances for ${events.length} events`);
  assert.equal(tracker.stats().recorded, events.length);
  await tracker.shutdown(5_000);
});

test('a refused subscriptions/listen is an error event (memory and HTTP); watch rejects with the core\'s server_error, the pair stays', async () => {
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [exporter] });
  const refused = async (client) => {
    const catalog = new Catalog();
    await catalog.refresh('v2', client);
    const listed = catalog.templates({ server: 'v2' }).map((t) => t.uriTemplate);
    const e = await catalog.watch('v2', client).then(() => assert.fail('watch resolved'), (err) => err);
    assert.deepEqual([e.name, e.code, e.server, e.rpcCode, e.message], [
      'McplensError',
      'server_error',
      'v2',
      -32603,
      'server "v2": subscriptions/listen failed with JSON-RPC error -32603',
    ]);
    assert.ok(e.cause instanceof Error, 'the SDK error is the cause');
    // The connection stays attached with its pair (listen_failed changes nothing else).
    assert.deepEqual(listed, ['note://{id}']);
    assert.deepEqual(catalog.templates({ server: 'v2' }).map((t) => t.uriTemplate), listed);
    assert.equal(catalog.status('v2').lastError, null, 'nothing recorded against the server');
  };
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(track(createScenarioServer, tracker), { transport: track(serverTransport, tracker), maxSubscriptions: 0 });
  const memory = newClient('modern');
  await memory.connect(clientTransport);
  await refused(memory);
  await memory.close();
  await handle.close();
  const handler = track(createMcpHandler(track(createScenarioServer, tracker), { maxSubscriptions: 0 }), tracker);
  const http = newClient('modern');
  await http.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch: (url, init) => handler.fetch(new Request(url, init)) }));
  await refused(http);
  await http.close();
  await handler.close();
  await tracker.flush(5_000);
  const listens = events.filter((e) => e.type === 'mcp:subscriptions/listen');
  assert.deepEqual(listens.map((e) => [e.transport, e.isError, e.error?.code, e.protocolVersion, e.sessionId]), [
    ['stdio', true, -32603, REVISIONS.modern, undefined],
    ['http', true, -32603, REVISIONS.modern, undefined],
  ]);
  await tracker.shutdown(5_000);
});

test('serveStdio(track(factory)) in a child process over stdio: both eras into one JSONL file', async () => {
  const file = join(tempDir(), 'events.jsonl');
  for (const era of ['legacy', 'modern']) {
    const client = newClient(era);
    const transport = new StdioClientTransport({ command: process.execPath, args: [SCENARIO_SERVER, file], stderr: 'inherit' });
    const sent = record(transport);
    await client.connect(transport);
    assert.equal(client.getNegotiatedProtocolVersion(), REVISIONS[era]);
    await runScenario(client, era);
    await new Catalog().watch('v2', client);
    await client.close(); // the server process flushes at beforeExit
    assert.equal(sent.filter((m) => m.method === 'subscriptions/listen').length, era === 'modern' ? 1 : 0);
  }
  const events = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  // The pinned client probes with server/discover on a sibling process it SIGTERMs at once (and
  // SIGKILLs 1 s later): the server's SIGTERM handler delivers that event, in its own time. The
  // in-memory tests above see serveStdio answer the probe in place.
  const modern = events.filter((e) => e.protocolVersion === REVISIONS.modern);
  const probe = modern.filter((e) => e.type === 'mcp:server/discover');
  assert.ok(probe.length <= 1);
  checkEvents(probe, 'modern', 'stdio', probe.length === 0 ? [] : [{ type: 'server/discover' }]);
  checkEvents(modern.filter((e) => !probe.includes(e)), 'modern', 'stdio', expected('modern').slice(1));
  checkEvents(events.filter((e) => e.protocolVersion === REVISIONS.legacy), 'legacy', 'stdio', expected('legacy', { listen: false }));
});

test('1,000 then 10,000 requests through createMcpHandler: the heap grows by less than 5 MB', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  let exported = 0; // the exporter keeps no event
  const counting = new Tracker({ exporters: [callbackExporter((batch) => void (exported += batch.length))] });
  const handler = track(createMcpHandler(track(createScenarioServer, counting)), counting);
  // A 2026-07-28 tools/call as the v2 client sends it, replayed with fresh ids (no client state).
  const headers = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-method': 'tools/call',
    'mcp-name': 'echo',
    'mcp-protocol-version': REVISIONS.modern,
  };
  const meta = {
    'io.modelcontextprotocol/protocolVersion': REVISIONS.modern,
    'io.modelcontextprotocol/clientInfo': CLIENT,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  let id = 0;
  async function requests(n) {
    for (let i = 0; i < n; i++, id++) {
      const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `call ${id}` }, _meta: meta } });
      const response = await handler.fetch(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body }));
      const text = await response.text();
      assert.ok(text.includes(`"text":"call ${id}"`), text);
    }
    await counting.flush(10_000);
  }
  async function heap() {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    return process.memoryUsage().heapUsed;
  }
  await requests(1_000);
  const after1k = await heap();
  await requests(10_000);
  const after11k = await heap();
  const growthMb = (after11k - after1k) / 2 ** 20;
  const mb = (bytes) => (bytes / 2 ** 20).toFixed(2);
  t.diagnostic(`heap after gc(): ${mb(after1k)} MB after 1,000 requests, ${mb(after11k)} MB after 10,000 more (${growthMb >= 0 ? '+' : ''}${growthMb.toFixed(2)} MB)`);
  assert.equal(exported, 11_000, 'every request became an event');
  assert.equal(counting.stats().recorded, 11_000);
  assert.ok(growthMb < 5, `the heap grew by ${growthMb.toFixed(2)} MB`);
  await handler.close();
  await counting.shutdown(5_000);
});
