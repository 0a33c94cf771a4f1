// End to end: Catalog refresh / watch / tool over real SDK 1.x clients and servers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Catalog, McplensError, listResourceTemplatesTool } from 'mcplens';

import { STORM_TRAVERSALS } from './servers/paging-server.mjs';
import { EVERYTHING_SERVER, PAGING_SERVER, connectMemory, connectStdio, until } from './helpers.mjs';

const PAGES_TEMPLATES = [
  { uriTemplate: 'file:///{path}', name: 'files', title: 'Files', mimeType: 'text/plain', server: 'pg' },
  {
    uriTemplate: 'db://{table}/{id}',
    name: 'rows',
    description: 'A row in red',
    annotations: { audience: ['assistant'], priority: 0.5, lastModified: '2025-01-02T03:04:05Z' },
    server: 'pg',
  },
  { uriTemplate: 'mem://sloppy/{id}', name: 'sloppy', server: 'pg' },
  { uriTemplate: 'search://{?q}', name: 'search', server: 'pg' },
];

/** The tool's byte-exact output for the `pages` scenario under the name `pg`. */
const PAGES_TOOL_OUTPUT = JSON.stringify({ resourceTemplates: PAGES_TEMPLATES, failures: [], total: 4 });

/** Rejects with a McplensError of `code`. */
async function rejectsWith(promise, code, server = 'pg') {
  const e = await promise.then(
    () => assert.fail(`expected ${code}`),
    (err) => err,
  );
  assert.ok(e instanceof McplensError, `not a McplensError: ${e?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  assert.equal(e.server, server);
  return e;
}

function throwsWith(f, code) {
  assert.throws(f, (e) => e instanceof McplensError && e.code === code);
}

describe('the listing tool spec', () => {
  test("is the core's: name, description, input schema, read-only annotations, deferred", () => {
    const spec = listResourceTemplatesTool;
    assert.equal(spec.name, 'ListMcpResourceTemplatesTool');
    assert.match(spec.description, /RFC 6570/);
    assert.equal(spec.inputSchema.type, 'object');
    assert.deepEqual(Object.keys(spec.inputSchema.properties).sort(), ['limit', 'offset', 'server']);
    assert.equal(spec.inputSchema.additionalProperties, false);
    assert.equal(spec.annotations.readOnlyHint, true);
    assert.equal(spec.deferred, true);
    assert.ok(Object.isFrozen(spec) && Object.isFrozen(spec.inputSchema.properties.limit));
  });
});

describe('in memory, our paginating low-level Server', () => {
  test('refresh commits both lists; templates(), resources(), status() and the tool read them', async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const catalog = new Catalog();
      const status = await catalog.refresh('pg', client);
      assert.deepEqual(status, {
        server: 'pg',
        status: 'ok',
        generation: 1,
        lastError: null,
        resources: 2,
        templates: 4,
        refreshing: false,
      });
      assert.deepEqual(catalog.templates(), PAGES_TEMPLATES);
      assert.deepEqual(catalog.templates({ server: 'pg' }), PAGES_TEMPLATES);
      assert.deepEqual(
        catalog.resources().map((r) => r.uri),
        ['mem://a', 'mem://b'],
      );
      assert.equal(catalog.callListTemplatesTool({}), PAGES_TOOL_OUTPUT);
      assert.equal(catalog.callListTemplatesTool(), PAGES_TOOL_OUTPUT);
      assert.equal(catalog.callListTemplatesTool('{"server":"pg"}'), PAGES_TOOL_OUTPUT);
      const page = JSON.parse(catalog.callListTemplatesTool({ limit: 2, offset: 1 }));
      assert.deepEqual(page.resourceTemplates, PAGES_TEMPLATES.slice(1, 3));
      assert.equal(page.nextOffset, 3);
      // Both lists were traversed once.
      assert.equal(server.stats.templates.traversals, 1);
      assert.equal(server.stats.resources.traversals, 1);
      assert.equal(catalog.needsRefresh('pg'), false);
      assert.deepEqual(catalog.servers(), ['pg']);
    } finally {
      await close();
    }
  });

  test('tool errors are McplensErrors with the core codes and messages', async () => {
    const catalog = new Catalog();
    catalog.addServer('b');
    catalog.addServer('a');
    assert.throws(
      () => catalog.callListTemplatesTool({ server: 'nope' }),
      (e) =>
        e instanceof McplensError &&
        e.code === 'unknown_server' &&
        e.server === 'nope' &&
        e.message === 'Server "nope" not found. Available servers: a, b',
    );
    throwsWith(() => catalog.callListTemplatesTool({ limit: 0 }), 'invalid_argument');
    throwsWith(() => catalog.callListTemplatesTool({ cursor: 'x' }), 'invalid_argument');
    throwsWith(() => catalog.callListTemplatesTool('not json'), 'invalid_argument');
    throwsWith(() => catalog.callListTemplatesTool({ limit: 10n }), 'invalid_argument');
    throwsWith(() => catalog.status('nope'), 'unknown_server');
    throwsWith(() => catalog.templates({ server: 'nope' }), 'unknown_server');
    throwsWith(() => catalog.invalidate('a', 'because'), 'invalid_argument');
    // Limits out of bounds or of the wrong shape are refused when the catalog is made, not at its
    // first traversal (which ran in the background, where a throw had no one to reach).
    throwsWith(() => new Catalog({ limits: { maxPages: 0 } }), 'invalid_argument');
    throwsWith(() => new Catalog({ limits: { maxPages: 'ten' } }), 'invalid_argument');
  });

  test('Refresher.traverse performs the core\'s pair over a real SDK client and hands it back', async () => {
    const { client, close } = await connectMemory('pages');
    try {
      const { Refresher } = await import('mcplens');
      const catalog = new Catalog();
      const machine = new Refresher(catalog);
      machine.attach('pg', true);
      const traversal = () => {
        machine.request('pg', 'refresh');
        return machine.pollActions().find((a) => 'traverse' in a).traverse.traversal;
      };
      // An aborted signal: the pair is handed back unfinished, abandoned — nothing recorded.
      const aborted = AbortSignal.abort(new Error('stop'));
      assert.equal(await machine.traverse(client, traversal(), { server: 'pg', signal: aborted }), 'discarded');
      assert.equal(catalog.status('pg').status, 'unknown');
      assert.equal(await machine.traverse(client, traversal(), { server: 'pg' }), 'committed');
      assert.equal(catalog.callListTemplatesTool({}), PAGES_TOOL_OUTPUT);
    } finally {
      await close();
    }
  });

  test('a failed refresh keeps the previous pair (stale) and is not sticky', async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const catalog = new Catalog();
      await catalog.refresh('pg', client);
      server.control.fail = true;
      const e = await rejectsWith(catalog.refresh('pg', client), 'server_error');
      assert.equal(e.rpcCode, -32603);
      const status = catalog.status('pg');
      assert.equal(status.status, 'stale');
      assert.equal(status.lastError.code, 'server_error');
      assert.equal(status.templates, 4);
      const out = JSON.parse(catalog.callListTemplatesTool({}));
      assert.deepEqual(out.resourceTemplates, PAGES_TEMPLATES, 'the last good templates are still listed');
      assert.deepEqual(out.failures, [{ server: 'pg', code: 'server_error', message: e.message }]);
      assert.ok(!e.message.includes('boom'), 'server text stays out');

      server.control.fail = false;
      const ok = await catalog.refresh('pg', client);
      assert.equal(ok.status, 'ok');
      assert.equal(ok.generation, 2);
      assert.equal(catalog.callListTemplatesTool({}), PAGES_TOOL_OUTPUT);
    } finally {
      await close();
    }
  });

  test('catalog limits bound every traversal: a slow server fails the refresh with deadline', async () => {
    const { client, close } = await connectMemory('slow');
    try {
      const catalog = new Catalog({ limits: { deadlineMs: 200 } });
      await rejectsWith(catalog.refresh('pg', client), 'deadline');
      assert.equal(catalog.status('pg').status, 'failed');
      assert.deepEqual(JSON.parse(catalog.callListTemplatesTool({})).failures.map((f) => f.code), ['deadline']);
    } finally {
      await close();
    }
  });

  test('-32601 on templates/list: resources kept, no templates; no resources capability: unsupported', async () => {
    const legacy = await connectMemory('no-templates');
    const bare = await connectMemory('no-resources');
    try {
      const catalog = new Catalog();
      const status = await catalog.refresh('legacy', legacy.client);
      assert.equal(status.status, 'ok');
      assert.equal(status.resources, 2);
      assert.equal(status.templates, 0);
      assert.equal((await catalog.refresh('bare', bare.client)).status, 'unsupported');
      assert.equal(catalog.callListTemplatesTool({}), '{"resourceTemplates":[],"failures":[],"total":0}');
    } finally {
      await legacy.close();
      await bare.close();
    }
  });

  test('watching the same client again chains nothing more: one handler, one onclose, one refresh per list_changed', async () => {
    const { client, server, close } = await connectMemory('pages');
    let closes = 0;
    client.onclose = () => closes++;
    try {
      const catalog = new Catalog();
      await catalog.watch('pg', client);
      await catalog.refresh('pg', client);
      const handler = client._notificationHandlers.get('notifications/resources/list_changed');
      const onclose = client.onclose;
      for (let i = 0; i < 5; i++) await catalog.watch('pg', client);
      assert.equal(client._notificationHandlers.get('notifications/resources/list_changed'), handler, 'the same handler');
      assert.equal(client.onclose, onclose, 'the same onclose');
      await server.sendResourceListChanged();
      await until(() => server.stats.templates.traversals === 2, 'one refresh');
      await catalog.settled();
      assert.equal(server.stats.templates.traversals, 2, 'exactly one refresh for one list_changed');
      // The app replaces the handler: the next watch chains onto the new one.
      let seen = 0;
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => seen++);
      await catalog.watch('pg', client);
      await server.sendResourceListChanged();
      await until(() => server.stats.templates.traversals === 3 && seen === 1, 'the refresh and the app handler');
      await catalog.settled();
    } finally {
      await close();
    }
    assert.ok(closes >= 1, "the app's onclose ran (the in-memory transport reports its close twice)");
  });

  test('a list_changed burst during a slow refresh causes exactly one more refresh, never two at once', async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const catalog = new Catalog();
      catalog.watch('pg', client);
      server.control.delayMs = 150;
      const first = catalog.refresh('pg', client);
      await until(() => server.stats.templates.inFlight === 1, 'the first templates request');
      for (let i = 0; i < 5; i++) await server.sendResourceListChanged();
      const status = await first; // resolves after the follow-up refresh
      await catalog.settled('pg');
      assert.equal(server.stats.templates.traversals, 2, 'the first refresh and exactly one more');
      assert.equal(server.stats.resources.traversals, 2);
      assert.equal(server.stats.templates.maxInFlight, 1, 'never two refreshes of one server at once');
      // The first refresh was discarded (its data may predate the change); the second committed.
      assert.equal(status.generation, 1);
      assert.equal(status.status, 'ok');
      assert.equal(catalog.callListTemplatesTool({}), PAGES_TOOL_OUTPUT);

      // A burst while idle: the first notification refreshes now, the rest queue exactly one more.
      server.control.delayMs = 50;
      for (let i = 0; i < 5; i++) await server.sendResourceListChanged();
      await until(() => server.stats.templates.traversals > 2, 'a refresh');
      await catalog.settled();
      assert.equal(server.stats.templates.traversals, 4);
      assert.equal(server.stats.templates.maxInFlight, 1);
      assert.equal(catalog.status('pg').generation, 2);
    } finally {
      await close();
    }
  });

  test('refreshes while one runs join it; forced ones share exactly one more (never concurrent)', async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const catalog = new Catalog();
      server.control.delayMs = 50;
      const results = await Promise.all([1, 2, 3, 4].map(() => catalog.refresh('pg', client)));
      assert.deepEqual(
        results.map((s) => s.generation),
        [1, 1, 1, 1],
      );
      assert.equal(server.stats.templates.traversals, 1);
      const forced = await Promise.all([
        catalog.refresh('pg', client),
        catalog.refresh('pg', client, { force: true }),
        catalog.refresh('pg', client, { force: true }),
      ]);
      assert.deepEqual(
        forced.map((s) => s.generation),
        [2, 3, 3],
      );
      assert.equal(server.stats.templates.traversals, 3);
      assert.equal(server.stats.templates.maxInFlight, 1);
    } finally {
      await close();
    }
  });

  test("watch chains onto the app's list_changed handler and onclose: both still run", async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const seen = [];
      client.setNotificationHandler(ResourceListChangedNotificationSchema, (n) => {
        seen.push(n.method);
      });
      let closed = 0;
      client.onclose = () => {
        closed += 1;
      };
      const catalog = new Catalog();
      catalog.watch('pg', client);
      await catalog.refresh('pg', client);
      await server.sendResourceListChanged();
      await until(() => seen.length === 1, "the app's handler");
      await catalog.settled();
      assert.deepEqual(seen, ['notifications/resources/list_changed']);
      assert.equal(server.stats.templates.traversals, 2, 'list_changed refreshed the catalog');
      assert.equal(catalog.status('pg').generation, 2);

      await client.close();
      // (The SDK's InMemoryTransport reports its close twice, with or without mcplens.)
      assert.ok(closed >= 1, "the app's onclose ran");
      assert.equal(catalog.status('pg').status, 'unknown', 'closing invalidated the server');
      assert.deepEqual(catalog.templates(), []);
      assert.equal(catalog.callListTemplatesTool({}), '{"resourceTemplates":[],"failures":[],"total":0}');
    } finally {
      await close();
    }
  });

  test('the connection closing during a refresh: nothing comes of it, nothing is recorded', async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const catalog = new Catalog();
      await catalog.refresh('pg', client);
      catalog.watch('pg', client);
      server.control.delayMs = 5_000;
      const pending = catalog.refresh('pg', client);
      await until(() => server.stats.templates.inFlight === 1, 'the templates request');
      await server.sendResourceListChanged(); // queues one more refresh…
      await until(() => catalog.status('pg').status === 'outdated', 'the list_changed');
      assert.equal(catalog.templates().length, 4, 'the last good pair is still listed');
      await client.close(); // …which the closed connection makes pointless
      assert.equal((await pending).status, 'unknown', 'the caller is answered: nothing came of it');
      await catalog.settled();
      assert.equal(server.stats.templates.traversals, 2, 'no request after the close');
      const status = catalog.status('pg');
      assert.equal(status.status, 'unknown', 'cleared by onclose; the late failure is ignored');
      assert.equal(status.lastError, null);
      assert.equal(status.refreshing, false);
    } finally {
      await close();
    }
  });

  test('remove stops the watch; invalidate clears both lists', async () => {
    const { client, server, close } = await connectMemory('pages');
    try {
      const catalog = new Catalog();
      catalog.watch('pg', client);
      await catalog.refresh('pg', client);
      catalog.invalidate('pg');
      assert.equal(catalog.status('pg').status, 'unknown');
      assert.equal(catalog.needsRefresh('pg'), true);
      assert.equal(catalog.status('pg').refreshing, false, 'invalidating starts nothing by itself');
      assert.equal(catalog.remove('pg'), true);
      assert.equal(catalog.remove('pg'), false);
      await server.sendResourceListChanged();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await catalog.settled();
      assert.equal(server.stats.templates.traversals, 1, 'no refresh after remove');
      assert.deepEqual(catalog.servers(), []);
    } finally {
      await close();
    }
  });

  test('a broken client (a host bug, not a traversal failure): the refresh is abandoned, nothing recorded', async () => {
    const catalog = new Catalog();
    const bug = new TypeError('host bug');
    const broken = {
      request: async () => ({}),
      getServerCapabilities: () => {
        throw bug;
      },
    };
    await assert.rejects(catalog.refresh('x', broken), (e) => e === bug);
    assert.deepEqual(catalog.servers(), [], 'nothing was attached or recorded');
  });

  test('watch needs an SDK client with a notification handler map', () => {
    const catalog = new Catalog();
    assert.throws(
      () => catalog.watch('x', { request: async () => ({}), getServerCapabilities: () => ({}) }),
      (e) =>
        e instanceof McplensError &&
        e.code === 'invalid_argument' &&
        e.message === 'server "x": invalid argument: watch needs an MCP SDK client (1.x or v2; no notification handler map to chain onto)',
    );
    assert.deepEqual(catalog.servers(), [], 'nothing was attached');
  });

  test('a hostile server: text sanitized in the tool output, a list_changed storm never overlaps refreshes', async () => {
    const { client, server, close } = await connectMemory('storm');
    try {
      const catalog = new Catalog();
      catalog.watch('pg', client);
      await catalog.refresh('pg', client);
      await catalog.settled();
      // Every traversal that saw notifications caused exactly one more, one at a time.
      assert.equal(server.stats.templates.traversals, STORM_TRAVERSALS + 1);
      assert.equal(server.stats.templates.maxInFlight, 1);
      const out = catalog.callListTemplatesTool({});
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200d\u202a-\u202e\u2066-\u2069]/u.test(out), out);
      assert.ok(!out.includes('\\u001b') && !out.includes('_meta') && !out.includes('yyyy'));
      const { resourceTemplates, total } = JSON.parse(out);
      assert.equal(total, 2);
      assert.deepEqual(
        resourceTemplates.map((t) => t.uriTemplate),
        ['evil://{id}', 'ok://{+path}{?q,r}'],
      );
      assert.equal(resourceTemplates[0].name, 'evilname');
      assert.equal([...resourceTemplates[0].description].length, 2_048);
      assert.equal(catalog.status('pg').status, 'ok');
    } finally {
      await close();
    }
  });
});

describe('in memory, an SDK McpServer with ResourceTemplates', () => {
  test('refresh lists its templates; registering one more (list_changed) refreshes the watched catalog', async () => {
    const mcp = new McpServer({ name: 'high-level', version: '1.0.0' });
    const read = async (uri) => ({ contents: [{ uri: uri.href, text: '' }] });
    mcp.registerResource('file', new ResourceTemplate('file:///{path}', { list: undefined }), { title: 'File' }, read);
    mcp.registerResource('readme', 'mem://readme', { mimeType: 'text/markdown' }, read);
    const [ct, st] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'mcplens-test', version: '0.0.0' });
    await Promise.all([mcp.connect(st), client.connect(ct)]);
    try {
      const catalog = new Catalog();
      catalog.watch('hl', client);
      const status = await catalog.refresh('hl', client);
      assert.equal(status.templates, 1);
      assert.equal(status.resources, 1);
      assert.equal(
        catalog.callListTemplatesTool({ server: 'hl' }),
        '{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"file","title":"File","server":"hl"}],"failures":[],"total":1}',
      );
      mcp.registerResource('row', new ResourceTemplate('db://{table}/{id}', { list: undefined }), { description: 'A row' }, read);
      await until(() => catalog.status('hl').generation === 2, 'the list_changed refresh');
      await catalog.settled();
      assert.deepEqual(
        catalog.templates().map((t) => t.uriTemplate),
        ['file:///{path}', 'db://{table}/{id}'],
      );
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});

describe('over stdio', () => {
  test('our paginating server: the same tool output as in memory', async () => {
    const { client, close } = await connectStdio([PAGING_SERVER, 'pages']);
    try {
      const catalog = new Catalog();
      assert.equal((await catalog.refresh('pg', client)).status, 'ok');
      assert.equal(catalog.callListTemplatesTool({}), PAGES_TOOL_OUTPUT);
    } finally {
      await close();
    }
  });

  test('server-everything: refresh, then its gzip-file-as-resource tool sends list_changed and the watch refreshes', async () => {
    const { client, close } = await connectStdio([EVERYTHING_SERVER, 'stdio']);
    try {
      const catalog = new Catalog();
      catalog.watch('everything', client);
      const status = await catalog.refresh('everything', client);
      assert.equal(status.status, 'ok');
      assert.equal(status.templates, 2);
      const before = catalog.resources().length;
      assert.ok(before >= 7, `${before} resources`);
      const out = JSON.parse(catalog.callListTemplatesTool({ server: 'everything' }));
      assert.deepEqual(
        out.resourceTemplates.map((t) => t.uriTemplate),
        ['demo://resource/dynamic/text/{resourceId}', 'demo://resource/dynamic/blob/{resourceId}'],
      );

      await client.callTool({ name: 'gzip-file-as-resource', arguments: { name: 'x.gz', data: 'data:text/plain;base64,aGVsbG8=' } });
      await until(() => catalog.status('everything').generation >= 2, 'the list_changed refresh');
      await catalog.settled();
      const uris = catalog.resources({ server: 'everything' }).map((r) => r.uri);
      assert.equal(uris.length, before + 1);
      assert.ok(uris.includes('demo://resource/session/x.gz'), uris.join(', '));

      await client.close();
      assert.equal(catalog.status('everything').status, 'unknown');
    } finally {
      await close();
    }
  });
});
