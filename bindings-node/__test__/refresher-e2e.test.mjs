// The Catalog end to end over stdio against a low-level SDK 1.x Server
// (servers/refresher-server.mjs), the (a)–(e):
// (a) list_changed, then the next traversal fails: the previous listing is still served, `stale`,
//     with the failure in the tool output; a reader polling during every refresh never sees it emptied;
// (b) watch(server, B) after watch(server, A): A's listing is gone at once, A's later list_changed and
//     close change nothing, B's listing is served;
// (c) ten concurrent refresh() calls: exactly one traversal pair;
// (d) every server's own request log: no resources/read, completion/complete, tools/call or
//     prompts/get from discovery or the catalog (the only tools/call are the test's own, counted);
// (e) a transient failure is retried on the backoff schedule and recovers on its own.
// No assertion is about time: the tests wait on the catalog's own state.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { Catalog, McplensError } from 'mcplens';

import { connectStdio, until } from './helpers.mjs';

const SERVER = join(import.meta.dirname, 'servers', 'refresher-server.mjs');
const DIR = mkdtempSync(join(tmpdir(), 'mcplens-refresher-'));
const NEVER = { retryBaseMs: 3_600_000, retryMaxMs: 3_600_000 };

/** One refresher-server over stdio: its client and its request log. */
async function start(name) {
  const log = join(DIR, `${name}.log`);
  const { client, close } = await connectStdio([SERVER, log]);
  const srv = {
    client,
    close,
    controls: 0,
    async control(args) {
      srv.controls += 1;
      await client.callTool({ name: 'control', arguments: args });
    },
    requests() {
      try {
        return readFileSync(log, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    count(method) {
      return srv.requests().filter((m) => m === method).length;
    },
    /** (d): the handshake, the two lists, and the test's own control calls — nothing else. */
    assertOnlyDiscovery() {
      const requests = srv.requests();
      const allowed = ['initialize', 'resources/list', 'resources/templates/list', 'tools/call', 'tools/list'];
      assert.deepEqual(requests.filter((m) => !allowed.includes(m)), []);
      for (const forbidden of ['resources/read', 'completion/complete', 'prompts/get']) assert.ok(!requests.includes(forbidden));
      assert.equal(srv.count('tools/call'), srv.controls, "every tools/call is the test's own");
    },
  };
  return srv;
}

describe('the refresher end to end over stdio', () => {
  test('(a) list_changed, then a failed traversal: the previous listing is still served, stale, never emptied', async () => {
    // At most 7 items per list: the 8th template makes the refresh fail (item_limit, not retried).
    const catalog = new Catalog({ limits: { maxItems: 7 }, refresh: NEVER });
    const srv = await start('a');
    try {
      await srv.control({ templates: 7, resources: 3 });
      await catalog.refresh('s', srv.client);
      catalog.watch('s', srv.client);
      const seen = new Set();
      let reading = true;
      const reader = (async () => {
        while (reading) {
          seen.add(catalog.templates({ server: 's' }).length);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      await srv.control({ templates: 8, notify: true });
      await until(() => catalog.status('s').status === 'stale', 'the failed refresh');
      const status = catalog.status('s');
      assert.deepEqual([status.templates, status.lastError?.code], [7, 'item_limit']);
      await catalog.ensureFresh(); // a failed server is answered from the catalog
      const output = JSON.parse(catalog.callListTemplatesTool({}));
      assert.equal(output.total, 7, 'the previous listing is still served');
      assert.deepEqual(output.failures.map((f) => [f.server, f.code]), [['s', 'item_limit']]);
      // A good refresh replaces it in one step.
      await srv.control({ templates: 6, notify: true });
      await until(() => catalog.status('s').status === 'ok', 'the good refresh');
      reading = false;
      await reader;
      assert.equal(catalog.templates({ server: 's' }).length, 6);
      assert.deepEqual([...seen].sort(), [6, 7], 'the reader never saw the listing emptied or cut');
    } finally {
      await srv.close();
    }
    srv.assertOnlyDiscovery();
  });

  test('(b) watch(server, B) after A: A is gone at once; its list_changed and close change nothing; B is served', async () => {
    const catalog = new Catalog({ refresh: NEVER });
    const one = await start('b1');
    const two = await start('b2');
    try {
      await one.control({ templates: 3 });
      await catalog.refresh('s', one.client);
      catalog.watch('s', one.client);
      assert.equal(catalog.templates({ server: 's' }).length, 3);
      await two.control({ templates: 5 });
      catalog.watch('s', two.client);
      assert.deepEqual(catalog.templates({ server: 's' }), [], "A's listing is gone at once");
      // A's list_changed changes nothing (the call resolves after the notification arrived).
      await one.control({ templates: 4, notify: true });
      assert.equal(catalog.status('s').status, 'unknown');
      await catalog.settled();
      await one.close();
      assert.equal(catalog.status('s').status, 'unknown');
      await catalog.ensureFresh('s');
      assert.equal(catalog.templates({ server: 's' }).length, 5, "B's listing is served");
      assert.equal(one.count('resources/templates/list'), 2, "one traversal of A's server (2 pages)");
    } finally {
      await one.close();
      await two.close();
    }
    assert.equal(catalog.status('s').status, 'unknown', "B's close cleared it");
    one.assertOnlyDiscovery();
    two.assertOnlyDiscovery();
  });

  test('(c) ten concurrent refresh() calls: exactly one traversal pair', async () => {
    const catalog = new Catalog({ refresh: NEVER });
    const srv = await start('c');
    try {
      await srv.control({ templates: 5, resources: 1 });
      const statuses = await Promise.all(Array.from({ length: 10 }, () => catalog.refresh('s', srv.client)));
      assert.deepEqual(statuses.map((s) => s.generation), Array(10).fill(1));
      assert.deepEqual([srv.count('resources/list'), srv.count('resources/templates/list')], [1, 3]);
    } finally {
      await srv.close();
    }
    srv.assertOnlyDiscovery();
  });

  test('(e) a transient failure is retried by the timer until it recovers', async () => {
    // A small base keeps the test short; the schedule itself is pinned by the shared vectors.
    const catalog = new Catalog({ refresh: { retryBaseMs: 20 } });
    const srv = await start('e');
    try {
      await srv.control({ templates: 2, fail: ['error', 'error'] });
      const e = await catalog.refresh('s', srv.client).then(
        () => assert.fail('expected server_error'),
        (err) => err,
      );
      assert.ok(e instanceof McplensError);
      assert.deepEqual([e.code, e.rpcCode], ['server_error', -32603]);
      assert.equal(catalog.status('s').status, 'failed');
      // Nobody asks again: the timer retries (failing once more), then recovers.
      await until(() => catalog.status('s').status === 'ok', 'the recovery');
      const status = catalog.status('s');
      assert.deepEqual([status.templates, status.generation, status.lastError], [2, 1, null]);
      assert.equal(srv.count('resources/list'), 3);
    } finally {
      await srv.close();
    }
    srv.assertOnlyDiscovery();
  });
});
