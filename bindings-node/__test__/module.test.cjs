// CommonJS and ES module entry points: both load, export the same names, and share one set of objects.
const assert = require('node:assert/strict');
const { test } = require('node:test');

const cjs = require('mcplens');

const API = [
  'Catalog',
  'McplensError',
  'Pager',
  'ToolCall',
  'Refresher',
  'coreVersion',
  'errorCodes',
  'hasResourcesCapability',
  'listResourceTemplates',
  'listResourceTemplatesTool',
  'listResources',
  'listResourcesTool',
  'readResourceTool',
  'completeTemplateTool',
  'resourceToolSpecs',
  'toolSpec',
  'expand',
  'matches',
  'variables',
  'Tracker',
  'TrackingSession',
  'callbackExporter',
  'jsonlExporter',
  'mcpcatExporter',
  'otlpExporter',
  'track',
];

test('require("mcplens") gives the public API', () => {
  for (const name of API) assert.ok(cjs[name] !== undefined, name);
  assert.equal(cjs.coreVersion, require('mcplens/package.json').version, 'one version for core and package');
});

test('import("mcplens") gives the same objects (one McplensError class)', async () => {
  const esm = await import('mcplens');
  assert.deepEqual(Object.keys(esm).sort(), [...API].sort());
  for (const name of API) assert.equal(esm[name], cjs[name], name);
});

test('Pager: a bad argument or an out-of-order call is a McplensError, never a napi error', () => {
  const { Pager, McplensError } = cjs;
  const pager = new Pager({ kind: 'resource_templates', server: 's', resourcesCapability: true, now: 0 });
  assert.deepEqual(pager.nextRequest(), { method: 'resources/templates/list' });
  assert.throws(() => pager.acceptPage(5, 0), (e) => e instanceof McplensError && e.code === 'invalid_argument');
  assert.throws(
    () => new Pager({ kind: 'tools', server: 's', resourcesCapability: true, now: 0 }),
    (e) => e instanceof McplensError && e.code === 'invalid_argument' && e.server === 's',
  );
  assert.throws(
    () => new Pager({ kind: 'resources', server: 's', resourcesCapability: true, now: -1 }),
    (e) => e instanceof McplensError && e.code === 'invalid_argument',
  );
  assert.equal(pager.remaining(10), 60_000 - 10);
  pager.acceptPage('{"resourceTemplates":[{"uriTemplate":"a://{b}","name":"n"}],"nextCursor":"c"}', 20);
  assert.deepEqual(pager.nextRequest(), { method: 'resources/templates/list', params: { cursor: 'c' } });
  assert.throws(() => pager.acceptRpcError(-32000, 30), (e) => e.code === 'server_error' && e.rpcCode === -32000);
  assert.equal(pager.isDone(), true);
  assert.equal(pager.diagnostics().pages, 1);
  assert.throws(() => pager.finish(), (e) => e.code === 'server_error');
  assert.throws(() => pager.finish(), (e) => e.code === 'invalid_state');

  // finish() before the traversal ended: invalid_state, and the pager is spent.
  const early = new Pager({ kind: 'resources', server: 's', resourcesCapability: true, now: 0 });
  early.nextRequest();
  assert.throws(() => early.finish(), (e) => e instanceof McplensError && e.code === 'invalid_state');
  assert.throws(() => early.acceptPage('{"resources":[]}', 1), (e) => e.code === 'invalid_state');
});

test('hasResourcesCapability reads the capabilities object', () => {
  assert.equal(cjs.hasResourcesCapability({ resources: {} }), true);
  assert.equal(cjs.hasResourcesCapability({ resources: true }), false);
  assert.equal(cjs.hasResourcesCapability(undefined), false);
});

test("the SDK v2's CommonJS build: its Client and Server objects work as the ES module build's do", async () => {
  const { Client, InMemoryTransport } = require('@modelcontextprotocol/client');
  const { Server } = require('@modelcontextprotocol/server');
  const { serveStdio } = require('@modelcontextprotocol/server/stdio');
  for (const mode of ['legacy', { pin: '2026-07-28' }]) {
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const handle = serveStdio(() => {
      const server = new Server({ name: 'cjs', version: '2.0.0' }, { capabilities: { resources: {} } });
      server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [{ uriTemplate: 'a://{b}', name: 'a' }] }));
      server.setRequestHandler('resources/list', async () => ({ resources: [] }));
      return server;
    }, { transport: serverTransport });
    const client = new Client({ name: 'cjs', version: '0.0.0' }, { versionNegotiation: { mode } });
    await client.connect(clientTransport);
    try {
      const catalog = new cjs.Catalog();
      await catalog.watch('cjs', client);
      assert.equal((await catalog.refresh('cjs', client)).templates, 1);
      assert.deepEqual(catalog.templates(), [{ uriTemplate: 'a://{b}', name: 'a', server: 'cjs' }]);
    } finally {
      await client.close();
      await handle.close();
    }
  }
});

test('the published types import from neither SDK line nor zod (all optional peers)', () => {
  const { readdirSync, readFileSync } = require('node:fs');
  const { join } = require('node:path');
  const dir = join(__dirname, '..', 'dist');
  const files = readdirSync(dir).filter((f) => /\.d\.m?ts$/.test(f));
  assert.ok(files.length >= 6, files.join(' '));
  for (const f of [...files.map((n) => join(dir, n)), join(__dirname, '..', 'native.d.ts')]) {
    const imports = readFileSync(f, 'utf8').match(/(?:from|import\()\s*['"][^'"]+['"]/g) ?? [];
    for (const i of imports) assert.ok(!/@modelcontextprotocol|['"]zod/.test(i), `${f}: ${i}`);
  }
});
