// End to end over the TypeScript SDK v2 (`@modelcontextprotocol/client` / `server` 2.x): the
// package's listResourceTemplates / listResources / Catalog over a v2 `Client`, against our v2
// servers over memory, stdio and streamable HTTP, on the legacy handshake and pinned to 2026-07-28;
// against server-everything and a Python `mcp` 2.3 server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Catalog, McplensError, listResources, listResourceTemplates } from 'mcplens';

import { EVERYTHING_SERVER, until } from './helpers.mjs';
import { CURSOR_1 } from './servers/v2-server.mjs';
import { ERAS, REVISIONS, connectV2, listRequests, record } from './v2-helpers.mjs';

const T = 'resources/templates/list';
const ROOT = join(import.meta.dirname, '..', '..');
const PYTHON_MCP2 = join(ROOT, '.build', 'venv-mcp2', 'bin', 'python');
const PYTHON_SERVER = join(ROOT, 'bindings-python', 'tests', 'servers', 'sdk_server.py');

const PAGES_TEMPLATES = [
  { uriTemplate: 'file:///{path}', name: 'files', title: 'Files', mimeType: 'text/plain', server: 'v2' },
  { uriTemplate: 'db://{table}/{id}', name: 'rows', description: 'A row in red', server: 'v2' },
  // date-only lastModified, priority 2: dropped by the core, the item kept.
  { uriTemplate: 'mem://sloppy/{id}', name: 'sloppy', server: 'v2' },
  { uriTemplate: 'search://{?q}', name: 'search', server: 'v2' },
];

const PAGES_REQUESTS = [{ method: T }, { method: T, params: { cursor: CURSOR_1 } }, { method: T, params: { cursor: '' } }];

async function rejectsWith(promise, code, server = 'v2') {
  const e = await promise.then(
    () => assert.fail(`expected ${code}, got a result`),
    (err) => err,
  );
  assert.ok(e instanceof McplensError, `not a McplensError: ${e?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  assert.equal(e.server, server);
  return e;
}

/** On the legacy handshake nothing carries the 2026-07-28 `_meta` envelope; on 2026-07-28 every request does. */
function assertEnvelope(sent, era) {
  for (const m of sent.filter((m) => typeof m.method === 'string' && m.method.startsWith('resources/'))) {
    const meta = m.params?._meta;
    if (era === 'legacy') assert.equal(meta, undefined, JSON.stringify(m));
    else assert.equal(meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28', JSON.stringify(m));
  }
}

for (const kind of ['memory', 'stdio', 'http']) {
  for (const era of ['legacy', 'modern']) {
    describe(`v2 client ↔ v2 server over ${kind}, ${era === 'legacy' ? 'legacy handshake' : 'pinned to 2026-07-28'}`, () => {
      test('negotiated revision; raw pages: the core drops sloppy fields, cursors sent back exactly', async () => {
        const c = await connectV2(kind, era);
        try {
          assert.equal(c.client.getNegotiatedProtocolVersion(), REVISIONS[era]);
          assert.equal(c.client.getProtocolEra(), era);
          const listing = await listResourceTemplates(c.client, { server: 'v2' });
          assert.deepEqual(listing.items, PAGES_TEMPLATES);
          assert.deepEqual(listing.diagnostics.droppedFields, { 'annotations.lastModified': 1, 'annotations.priority': 1 });
          assert.equal(listing.diagnostics.sanitizedStrings, 1);
          // 2026-07-28: the SDK stamps its default cache fields on every page.
          assert.deepEqual([listing.ttlMs, listing.cacheScope], era === 'modern' ? [0, 'private'] : [undefined, undefined]);
          const resources = await listResources(c.client, { server: 'v2' });
          assert.deepEqual(resources.items, [
            { uri: 'mem://a', name: 'a', size: 3, server: 'v2' },
            { uri: 'mem://b', name: 'b', server: 'v2' },
          ]);
          assert.deepEqual(listRequests(c.sent), [...PAGES_REQUESTS, { method: 'resources/list' }, { method: 'resources/list', params: { cursor: 'r2' } }]);
          assertEnvelope(c.sent, era);
          if (era === 'modern') {
            // The v2 client's own schema refuses that page on 2026-07-28: mcplens read it off the transport.
            await assert.rejects(c.client.listResourceTemplates({ cursor: CURSOR_1 }), { code: 'INVALID_RESULT' });
          }
        } finally {
          await c.close();
        }
      });

      test("never served from the v2 client's response cache: every traversal, refresh and retry reaches the server", async () => {
        const c = await connectV2(kind, era, { scenario: 'cached' });
        try {
          const count = async () => (await c.stats()).requests[T] ?? 0;
          await c.client.listResourceTemplates();
          await c.client.listResourceTemplates();
          // The client caches the 60 s public page on 2026-07-28 (the SDK's cache hints apply there only).
          assert.equal(await count(), era === 'modern' ? 1 : 2);
          const before = await count();
          await listResourceTemplates(c.client, { server: 'v2' });
          await listResourceTemplates(c.client, { server: 'v2' });
          assert.equal(await count(), before + 2);
          const catalog = new Catalog();
          const status = await catalog.refresh('v2', c.client);
          assert.equal(status.templates, 1);
          await catalog.refresh('v2', c.client, { force: true });
          assert.equal(await count(), before + 4);
          // A failed refresh; then the refresher's own retries (1 ms backoff) reach the server until it
          // answers again (another catalog: its retries are timed, the counts above are exact).
          await c.control({ fail: true });
          const retrying = new Catalog({ refresh: { retryBaseMs: 1, retryMaxMs: 1 } });
          await rejectsWith(retrying.refresh('v2', c.client), 'server_error');
          const failed = await count();
          await until(async () => (await count()) >= failed + 2, 'two retries to reach the server');
          await c.control({ fail: false });
          await until(() => retrying.status('v2').status === 'ok', 'a retry to succeed');
          retrying.clear();
          const now = await count();
          assert.equal((await catalog.refresh('v2', c.client, { force: true })).status, 'ok');
          assert.equal(await count(), now + 1);
        } finally {
          await c.close();
        }
      });

      test('the in-flight request gets the remaining deadline and is cancelled when it runs out', async () => {
        const c = await connectV2(kind, era);
        try {
          // Page 1 takes 300 ms, page 2 none, page 3 would take a minute: the traversal has 2 s.
          await c.control({ delays: [300, 0, 60_000] });
          const timeouts = [];
          const request = c.client.request.bind(c.client);
          c.client.request = (req, schema, options) => {
            if (req.method === T) timeouts.push(options.timeout);
            return request(req, schema, options);
          };
          await rejectsWith(listResourceTemplates(c.client, { server: 'v2', limits: { deadlineMs: 2000 } }), 'deadline');
          assert.equal((await c.stats()).requests[T], 3);
          // Each request waits what is left of the 2 s: pages 2 and 3 at most 2000 - 300 ms.
          assert.equal(timeouts.length, 3);
          assert.ok(timeouts[0] <= 2000 && timeouts[1] <= 1700 && timeouts[2] <= timeouts[1], JSON.stringify(timeouts));
          // A stateless legacy HTTP server answers notifications/cancelled with a fresh instance: nothing to cancel.
          if (kind !== 'http' || era === 'modern') await until(async () => (await c.stats()).cancelled === 1, 'the cancellation');
        } finally {
          await c.close();
        }
      });

      const notifies = !(kind === 'http' && era === 'legacy');
      test(`watch: list_changed refreshes${era === 'modern' ? ' (through subscriptions/listen)' : ''}; the server going away clears both lists`, { skip: !notifies && 'a stateless legacy HTTP server sends no notifications' }, async () => {
        const c = await connectV2(kind, era);
        const catalog = new Catalog();
        try {
          await catalog.watch('v2', c.client);
          assert.equal((await catalog.refresh('v2', c.client)).generation, 1);
          const listens = c.sent.filter((m) => m.method === 'subscriptions/listen');
          assert.deepEqual(listens.map((m) => m.params.notifications), era === 'modern' ? [{ resourcesListChanged: true }] : []);
          await c.control({ notify: true });
          await until(() => catalog.status('v2').generation === 2, 'the list_changed refresh');
          assert.equal(catalog.templates().length, 4);
          await c.serverClose();
          await until(() => catalog.status('v2').status === 'unknown', 'the close to clear the server');
          assert.deepEqual([catalog.templates(), catalog.resources()], [[], []]);
        } finally {
          await c.close().catch(() => {});
        }
      });
    });
  }
}

describe('v2 specifics', () => {
  test("the client's own listChanged subscription is reused: one subscriptions/listen on the wire", async () => {
    let changed = 0;
    const c = await connectV2('memory', 'modern', {
      clientOptions: { listChanged: { resources: { onChanged: () => (changed += 1), autoRefresh: false } } },
    });
    try {
      const catalog = new Catalog();
      await catalog.watch('v2', c.client);
      await catalog.refresh('v2', c.client);
      await c.control({ notify: true });
      await until(() => catalog.status('v2').generation === 2 && changed === 1, 'both list_changed handlers');
      assert.equal(c.sent.filter((m) => m.method === 'subscriptions/listen').length, 1);
    } finally {
      await c.close();
    }
  });

  test('server.connect(InMemoryTransport) serves the legacy handshake only; a pinned client cannot connect', async () => {
    const c = await connectV2('memory-plain', 'legacy');
    try {
      assert.equal(c.client.getNegotiatedProtocolVersion(), REVISIONS.legacy);
      assert.deepEqual((await listResourceTemplates(c.client, { server: 'v2' })).items, PAGES_TEMPLATES);
    } finally {
      await c.close();
    }
    await assert.rejects(connectV2('memory-plain', 'modern'), { code: 'ERA_NEGOTIATION_FAILED' });
  });

  test('an McpServer: its resource and template on both eras', async () => {
    for (const era of ['legacy', 'modern']) {
      const c = await connectV2('memory', era, { scenario: 'mcp' });
      try {
        const catalog = new Catalog();
        await catalog.refresh('docs', c.client);
        assert.deepEqual(catalog.resources(), [{ uri: 'docs://readme', name: 'readme', title: 'Readme', mimeType: 'text/markdown', server: 'docs' }]);
        assert.deepEqual(catalog.templates(), [
          { uriTemplate: 'docs://pages/{slug}', name: 'pages', title: 'Pages', description: 'A page by slug', server: 'docs' },
        ]);
      } finally {
        await c.close();
      }
    }
  });
});

/** A v2 client over stdio to `command args`; `mode`: the client's versionNegotiation mode. */
async function stdioClient(command, args, mode) {
  const client = new Client({ name: 'mcplens-test', version: '0.0.0' }, { versionNegotiation: { mode } });
  const transport = new StdioClientTransport({ command, args, stderr: 'ignore' });
  const sent = record(transport);
  await client.connect(transport);
  return { client, sent };
}

/** versionNegotiation modes, by name. */
const MODES = { legacy: 'legacy', auto: 'auto', pinned: { pin: '2026-07-28' } };

describe('v2 client ↔ other servers over stdio', () => {
  // server-everything is built on SDK 1.x: the legacy handshake only.
  for (const [name, revision] of [['legacy', REVISIONS.legacy], ['auto', REVISIONS.legacy], ['pinned', null]]) {
    const what = revision === null ? 'connect refused' : `${revision}; the listings match the SDK's own`;
    test(`server-everything, versionNegotiation ${name}: ${what}`, async () => {
      if (revision === null) {
        await assert.rejects(stdioClient(process.execPath, [EVERYTHING_SERVER, 'stdio'], MODES[name]), { code: 'ERA_NEGOTIATION_FAILED' });
        return;
      }
      const { client } = await stdioClient(process.execPath, [EVERYTHING_SERVER, 'stdio'], MODES[name]);
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), revision);
        const templates = await listResourceTemplates(client, { server: 'everything' });
        const sdk = await client.listResourceTemplates();
        assert.ok(sdk.resourceTemplates.length > 0);
        assert.deepEqual(
          templates.items.map((t) => [t.uriTemplate, t.name]),
          sdk.resourceTemplates.map((t) => [t.uriTemplate, t.name]),
        );
        const resources = await listResources(client, { server: 'everything' });
        assert.deepEqual(
          resources.items.map((r) => r.uri),
          (await client.listResources()).resources.map((r) => r.uri),
        );
      } finally {
        await client.close();
      }
    });
  }

  test('the Python mcp 2.3 server is installed (.build/venv-mcp2, made by make)', () => {
    assert.ok(existsSync(PYTHON_MCP2), `${PYTHON_MCP2} is missing: run make test-node`);
  });

  // A server that sends back the cursor it was given, forever: the legacy rule fails at the first
  // repeat; on 2026-07-28 (whose spec forbids judging a cursor's value) the page bound ends it.
  for (const [name, code, requests] of [['legacy', 'repeated_cursor', 2], ['auto', 'page_limit', 5]]) {
    test(`a Python mcp 2.3 server repeating its cursor, versionNegotiation ${name}: ${code}`, async () => {
      const { client, sent } = await stdioClient(PYTHON_MCP2, [PYTHON_SERVER, 'repeat'], MODES[name]);
      try {
        await rejectsWith(listResourceTemplates(client, { server: 'py', limits: { maxPages: 5 } }), code, 'py');
        assert.equal(listRequests(sent).length, requests);
        if (name === 'auto') {
          // The host may ask for the legacy rule on 2026-07-28.
          await rejectsWith(listResourceTemplates(client, { server: 'py', limits: { maxPages: 5, repeatedCursors: 'fail' } }), 'repeated_cursor', 'py');
        }
      } finally {
        await client.close();
      }
    });
  }

  // mcp 2.3 answers server/discover: `auto` reaches 2026-07-28.
  for (const [name, revision] of [['legacy', REVISIONS.legacy], ['auto', REVISIONS.modern], ['pinned', REVISIONS.modern]]) {
    test(`a Python mcp 2.3 low-level Server, versionNegotiation ${name}: ${revision}; paged templates, sloppy fields dropped`, async () => {
      const { client, sent } = await stdioClient(PYTHON_MCP2, [PYTHON_SERVER, 'paged'], MODES[name]);
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), revision);
        const listing = await listResourceTemplates(client, { server: 'py' });
        assert.deepEqual(
          listing.items.map((t) => t.name),
          ['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7'],
        );
        assert.deepEqual(listing.diagnostics.droppedFields, { 'annotations.lastModified': 2 });
        assert.deepEqual(listRequests(sent), [{ method: T }, { method: T, params: { cursor: 'opaque:2' } }, { method: T, params: { cursor: '' } }]);
        assertEnvelope(sent, revision === REVISIONS.legacy ? 'legacy' : 'modern');
      } finally {
        await client.close();
      }
    });
  }
});
