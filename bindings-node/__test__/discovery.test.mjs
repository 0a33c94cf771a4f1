// End to end: listResourceTemplates / listResources over real SDK 1.x clients and servers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McplensError, listResources, listResourceTemplates } from 'mcplens';

import { CURSOR_1, CURSOR_2 } from './servers/paging-server.mjs';
import { EVERYTHING_SERVER, PAGING_SERVER, connectMemory, connectStdio, listRequests } from './helpers.mjs';

const T = 'resources/templates/list';

const PAGES_TEMPLATES = [
  { uriTemplate: 'file:///{path}', name: 'files', title: 'Files', mimeType: 'text/plain', server: 'pg' },
  {
    uriTemplate: 'db://{table}/{id}',
    name: 'rows',
    description: 'A row in red',
    annotations: { audience: ['assistant'], priority: 0.5, lastModified: '2025-01-02T03:04:05Z' },
    server: 'pg',
  },
  // title: 5, date-only lastModified, priority 2, audience ["system"]: dropped, the item kept.
  { uriTemplate: 'mem://sloppy/{id}', name: 'sloppy', server: 'pg' },
  { uriTemplate: 'search://{?q}', name: 'search', server: 'pg' },
];

const PAGES_REQUESTS = [
  { method: T },
  { method: T, params: { cursor: CURSOR_1 } },
  { method: T, params: { cursor: CURSOR_2 } },
];

/** Rejects with a McplensError of `code` (never an McpError or a zod error). */
async function rejectsWith(promise, code, server = 'pg') {
  const e = await promise.then(
    () => assert.fail(`expected ${code}, got a listing`),
    (err) => err,
  );
  assert.ok(e instanceof McplensError, `not a McplensError: ${e?.name}: ${e?.message}`);
  assert.equal(e.name, 'McplensError');
  assert.equal(e.code, code, e.message);
  assert.equal(e.server, server);
  assert.ok(e.message.includes(`"${server}"`), e.message);
  return e;
}

function assertPagesListing(listing, sent) {
  assert.deepEqual(listing.items, PAGES_TEMPLATES);
  assert.equal(listing.support, 'listed');
  assert.deepEqual(listing.diagnostics.droppedFields, {
    'annotations.audience': 1,
    'annotations.lastModified': 1,
    'annotations.priority': 1,
    title: 1,
  });
  assert.equal(listing.diagnostics.requests, 3);
  assert.equal(listing.diagnostics.pages, 3);
  assert.equal(listing.diagnostics.ignoredKeys, 3); // _meta, icons, xUnknown
  assert.equal(listing.diagnostics.sanitizedStrings, 1); // the ANSI escape
  // Page 1 without a params key; then the exact cursors, the empty one included.
  assert.deepEqual(listRequests(sent), PAGES_REQUESTS);
}

describe('in memory, our paginating low-level Server', () => {
  test('templates over three pages: exact opaque cursors, "" is a real cursor, sloppy fields dropped', async () => {
    const { client, sent, close } = await connectMemory('pages');
    try {
      assertPagesListing(await listResourceTemplates(client, { server: 'pg' }), sent);
      // The SDK's typed call refuses that page (date-only lastModified, …): the core saw it raw.
      await assert.rejects(client.listResourceTemplates({ cursor: CURSOR_1 }), (e) => Array.isArray(e.issues));
    } finally {
      await close();
    }
  });

  test('resources over two pages; an invalid size is dropped', async () => {
    const { client, sent, close } = await connectMemory('pages');
    try {
      const listing = await listResources(client, { server: 'pg' });
      assert.equal(listing.kind, 'resources');
      assert.deepEqual(listing.items, [
        { uri: 'mem://a', name: 'a', size: 3, server: 'pg' },
        { uri: 'mem://b', name: 'b', mimeType: 'text/plain', server: 'pg' },
      ]);
      assert.deepEqual(listing.diagnostics.droppedFields, { size: 1 });
      assert.deepEqual(listRequests(sent), [
        { method: 'resources/list' },
        { method: 'resources/list', params: { cursor: 'r2' } },
      ]);
    } finally {
      await close();
    }
  });

  test('a repeated cursor fails the traversal without naming the cursor', async () => {
    const { client, close } = await connectMemory('repeat');
    try {
      const e = await rejectsWith(listResourceTemplates(client, { server: 'pg' }), 'repeated_cursor');
      assert.ok(!e.message.includes('same-cursor'));
    } finally {
      await close();
    }
  });

  test('-32601 on templates/list: no templates (legacy server), not an error', async () => {
    const { client, sent, close } = await connectMemory('no-templates');
    try {
      const listing = await listResourceTemplates(client, { server: 'pg' });
      assert.equal(listing.support, 'method_not_found');
      assert.deepEqual(listing.items, []);
      assert.deepEqual(listRequests(sent), [{ method: T }]);
      const resources = await listResources(client, { server: 'pg' });
      assert.equal(resources.items.length, 2);
    } finally {
      await close();
    }
  });

  test('no resources capability: an empty listing and zero requests', async () => {
    const { client, sent, close } = await connectMemory('no-resources');
    try {
      const templates = await listResourceTemplates(client, { server: 'pg' });
      const resources = await listResources(client, { server: 'pg' });
      for (const listing of [templates, resources]) {
        assert.equal(listing.support, 'no_capability');
        assert.deepEqual(listing.items, []);
        assert.equal(listing.diagnostics.requests, 0);
      }
      assert.deepEqual(listRequests(sent), []);
    } finally {
      await close();
    }
  });

  test('a JSON-RPC error is a server_error with the code kept (never an McpError)', async () => {
    const { client, close } = await connectMemory('error');
    try {
      const e = await rejectsWith(listResourceTemplates(client, { server: 'pg' }), 'server_error');
      assert.equal(e.rpcCode, -32603);
      assert.ok(!e.message.includes('boom'), 'server text stays out of the message');
    } finally {
      await close();
    }
  });

  test('a malformed page 2 fails the whole traversal (never a zod error, never a prefix)', async () => {
    const { client, close } = await connectMemory('malformed');
    try {
      await rejectsWith(listResourceTemplates(client, { server: 'pg' }), 'malformed_result');
    } finally {
      await close();
    }
  });

  test('limits: maxPages 2 on a three-page list is page_limit; invalid limits are invalid_argument', async () => {
    const { client, sent, close } = await connectMemory('pages');
    try {
      const e = await rejectsWith(listResourceTemplates(client, { server: 'pg', limits: { maxPages: 2 } }), 'page_limit');
      assert.ok(e.message.includes('2 requests'), e.message);
      assert.equal(listRequests(sent).length, 2);
      await rejectsWith(listResourceTemplates(client, { server: 'pg', limits: { maxPages: 0 } }), 'invalid_argument');
      await rejectsWith(listResourceTemplates(client, { server: 'pg', limits: { maxItems: -1 } }), 'invalid_argument');
      await rejectsWith(listResourceTemplates(client, { server: 'pg', limits: { maxItems: 3 } }), 'item_limit');
    } finally {
      await close();
    }
  });

  test('a slow server: the deadline cancels the in-flight request', async () => {
    const { client, sent, close } = await connectMemory('slow');
    try {
      const start = performance.now();
      const e = await rejectsWith(listResourceTemplates(client, { server: 'pg', limits: { deadlineMs: 300 } }), 'deadline');
      const elapsed = performance.now() - start;
      assert.ok(elapsed >= 290 && elapsed < 2_000, `took ${elapsed} ms`);
      assert.ok(e.message.includes('300 ms'), e.message);
      assert.ok(sent.some((m) => m.method === 'notifications/cancelled'), 'the SDK request was cancelled');
    } finally {
      await close();
    }
  });

  test("the user's AbortSignal cancels the traversal with the signal's reason", async () => {
    const { client, sent, close } = await connectMemory('slow');
    try {
      const start = performance.now();
      const reason = new Error('user gave up');
      const controller = new AbortController();
      setTimeout(() => controller.abort(reason), 100);
      await assert.rejects(listResourceTemplates(client, { server: 'pg', signal: controller.signal }), (e) => e === reason);
      assert.ok(performance.now() - start < 2_000);
      assert.ok(sent.some((m) => m.method === 'notifications/cancelled'), 'the SDK request was cancelled');

      // Already aborted: nothing is sent.
      const before = listRequests(sent).length;
      await assert.rejects(
        listResourceTemplates(client, { server: 'pg', signal: AbortSignal.abort() }),
        (e) => e.name === 'AbortError',
      );
      assert.equal(listRequests(sent).length, before);
    } finally {
      await close();
    }
  });

  test('a hostile page: text sanitized and capped, invalid templates dropped, _meta never kept', async () => {
    const { client, close } = await connectMemory('hostile');
    try {
      const listing = await listResourceTemplates(client, { server: 'pg' });
      assert.deepEqual(
        listing.items.map((i) => i.uriTemplate),
        ['evil://{id}', 'ok://{+path}{?q,r}'],
      );
      const [evil] = listing.items;
      assert.equal(evil.name, 'evilname');
      assert.ok(!/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u200b-\u200d]/u.test(evil.title), evil.title);
      assert.equal([...evil.description].length, 2_048);
      assert.ok(evil.description.endsWith('…'));
      assert.deepEqual(listing.diagnostics.droppedItems, { invalid_uri_template: 2 });
      assert.ok(listing.diagnostics.bytes < 3_000, 'the 100 KB _meta is not counted or kept');
    } finally {
      await close();
    }
  });

  test('a server that pages forever stops at the page limit (100 requests by default)', async () => {
    const { client, sent, close } = await connectMemory('endless');
    try {
      const e = await rejectsWith(listResourceTemplates(client, { server: 'pg' }), 'page_limit');
      assert.ok(e.message.includes('100 requests'), e.message);
      assert.equal(listRequests(sent).length, 100);
    } finally {
      await close();
    }
  });

  test('a connection closed mid-request is a transport_error', async () => {
    const { client, close } = await connectMemory('slow');
    try {
      const pending = listResourceTemplates(client, { server: 'pg' });
      setTimeout(() => client.close(), 50);
      await rejectsWith(pending, 'transport_error');
      // Closed before the traversal starts: also a transport_error (the SDK says "Not connected").
      await rejectsWith(listResourceTemplates(client, { server: 'pg' }), 'transport_error');
    } finally {
      await close();
    }
  });
});

describe('in memory, an SDK McpServer with ResourceTemplates', () => {
  test('templates and resources as registered, _meta and icons left out', async () => {
    const mcp = new McpServer({ name: 'high-level', version: '1.0.0' });
    const read = async (uri) => ({ contents: [{ uri: uri.href, text: '' }] });
    mcp.registerResource('file', new ResourceTemplate('file:///{path}', { list: undefined }), {
      title: 'File',
      mimeType: 'text/plain',
      icons: [{ src: 'https://example.invalid/i.png' }],
      _meta: { x: 1 },
    }, read);
    mcp.registerResource('row', new ResourceTemplate('db://{table}/{id}', { list: undefined }), { description: 'A row' }, read);
    mcp.registerResource('readme', 'mem://readme', { mimeType: 'text/markdown' }, read);
    const [ct, st] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'mcplens-test', version: '0.0.0' });
    await Promise.all([mcp.connect(st), client.connect(ct)]);
    try {
      const templates = await listResourceTemplates(client, { server: 'hl' });
      assert.deepEqual(templates.items, [
        { uriTemplate: 'file:///{path}', name: 'file', title: 'File', mimeType: 'text/plain', server: 'hl' },
        { uriTemplate: 'db://{table}/{id}', name: 'row', description: 'A row', server: 'hl' },
      ]);
      assert.equal(templates.diagnostics.ignoredKeys, 2);
      const resources = await listResources(client, { server: 'hl' });
      assert.deepEqual(resources.items, [{ uri: 'mem://readme', name: 'readme', mimeType: 'text/markdown', server: 'hl' }]);
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});

describe('over stdio, our paginating low-level Server', () => {
  test('the same listing as in memory; a deadline past the timer range does not fire at once', async () => {
    const { client, sent, close } = await connectStdio([PAGING_SERVER, 'pages']);
    try {
      const limits = { deadlineMs: 10_000_000_000 }; // > 2^31-1 ms, where Node timers overflow
      assertPagesListing(await listResourceTemplates(client, { server: 'pg', limits }), sent);
    } finally {
      await close();
    }
  });

  test('the server process dies while page 2 is asked: transport_error', async () => {
    const { client, close } = await connectStdio([PAGING_SERVER, 'crash']);
    try {
      await rejectsWith(listResourceTemplates(client, { server: 'pg' }), 'transport_error');
    } finally {
      await close();
    }
  });

  test('a slow server over stdio: deadline', async () => {
    const { client, close } = await connectStdio([PAGING_SERVER, 'slow']);
    try {
      await rejectsWith(listResourceTemplates(client, { server: 'pg', limits: { deadlineMs: 200 } }), 'deadline');
    } finally {
      await close();
    }
  });
});

describe('@modelcontextprotocol/server-everything over stdio', () => {
  let conn;
  before(async () => {
    conn = await connectStdio([EVERYTHING_SERVER, 'stdio']);
  });
  after(() => conn?.close());

  async function sdkAll(method, key) {
    const out = [];
    let cursor;
    do {
      const page = await conn.client[method](cursor === undefined ? {} : { cursor });
      out.push(...page[key]);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return out;
  }

  test('templates: the same templates as the SDK lists, projected', async () => {
    const listing = await listResourceTemplates(conn.client, { server: 'everything' });
    assert.equal(listing.support, 'listed');
    const sdk = await sdkAll('listResourceTemplates', 'resourceTemplates');
    assert.ok(sdk.length > 0);
    assert.deepEqual(
      listing.items.map((i) => [i.uriTemplate, i.name, i.server]),
      sdk.map((i) => [i.uriTemplate, i.name, 'everything']),
    );
    for (const item of listing.items) assert.ok(!('_meta' in item) && !('icons' in item));
  });

  test('resources: the same resources as the SDK lists, projected', async () => {
    const listing = await listResources(conn.client, { server: 'everything' });
    assert.equal(listing.support, 'listed');
    const sdk = await sdkAll('listResources', 'resources');
    assert.ok(sdk.length > 0);
    assert.deepEqual(
      listing.items.map((i) => [i.uri, i.name]),
      sdk.map((i) => [i.uri, i.name]),
    );
    assert.equal(listing.diagnostics.pages, listing.diagnostics.requests);
  });
});
