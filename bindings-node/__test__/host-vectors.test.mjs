// Replays every shared vector in tests/vectors/host/ (format: tests/vectors/README.md, "host")
// through the package's public API with real SDK clients — the TypeScript SDK 1.x `Client` and the v2
// `Client` — as bindings-python/tests/test_host_vectors.py does through the Python API: each call
// must fail with the vector's code, server (`undefined` when the error concerns no server) and message,
// byte for byte: every one the core's.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { Catalog, McplensError, Pager, Refresher, listResourceTemplates, listResources } from 'mcplens';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'host');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** The vector's call through the public API; a synchronous throw counts as a rejection. */
async function perform(call, catalog, Client) {
  const server = call.server;
  switch (call.op) {
    case 'tool':
      return catalog.callListTemplatesTool(call.input);
    case 'second_refresher':
      new Refresher(catalog);
      return new Refresher(catalog);
    case 'catalog_invalidate':
      return catalog.invalidate(server, call.reason);
    case 'refresher_request':
      return new Refresher(catalog).request(server, call.want);
    case 'pager':
      return new Pager({ kind: call.kind, server, resourcesCapability: true, now: 0 });
    case 'sdk_failure': {
      const pager = new Pager({ kind: 'resources', server, resourcesCapability: true, now: 0 });
      assert.ok(pager.nextRequest() !== null);
      return pager.acceptFailure(call.kind, call.code ?? undefined, call.connectionHeld ?? undefined, 0);
    }
  }
  assert.equal(call.client, 'uninitialized');
  // A real client that never connected: no initialize (or server/discover) result.
  const client = new Client({ name: 'mcplens-host-vectors', version: '0.0.0' });
  switch (call.op) {
    case 'list_resource_templates':
      return listResourceTemplates(client, { server });
    case 'list_resources':
      return listResources(client, { server });
    case 'catalog_refresh':
      return catalog.refresh(server, client);
    case 'catalog_watch':
      return catalog.watch(server, client);
    default:
      throw new Error(`unknown call ${call.op}`);
  }
}

test('the shared host vectors are there', () => {
  assert.ok(files.length >= 9, `only ${files.length} host vectors in ${DIR}`);
});

for (const file of files) {
  const c = JSON.parse(readFileSync(join(DIR, file), 'utf8'));
  for (const [sdk, Client] of [
    ['SDK 1.x', ClientV1],
    ['SDK v2', ClientV2],
  ]) {
    test(`host vector ${file} (${sdk} Client)`, async () => {
      assert.equal(c.name, file.replace(/\.json$/, ''), 'name must match the file');
      const catalog = new Catalog();
      const error = await (async () => perform(c.call, catalog, Client))().then(
        () => assert.fail('expected an error'),
        (e) => e,
      );
      assert.ok(error instanceof McplensError, String(error));
      const want = c.expectError;
      assert.deepEqual([error.code, error.server, error.message], [want.code, want.server ?? undefined, want.message]);
      if (c.expectServers !== undefined) assert.deepEqual(catalog.servers(), c.expectServers);
    });
  }
}

// The listen stream's refusal takes the same table (the addon's sdkRpcCode): the server's code
// exactly when the pager's error is server_error.
const native = createRequire(import.meta.url)(join(import.meta.dirname, '..', 'native.js'));
for (const file of files.filter((f) => f.startsWith('sdk_failure_'))) {
  const { call, expectError } = JSON.parse(readFileSync(join(DIR, file), 'utf8'));
  test(`sdkRpcCode agrees with host vector ${file}`, () => {
    const args = [call.kind, call.code ?? null, call.connectionHeld ?? null];
    if (expectError.code === 'invalid_argument') {
      assert.throws(() => native.sdkRpcCode(...args), (e) => e.code === 'invalid_argument');
      return;
    }
    assert.equal(native.sdkRpcCode(...args) ?? null, expectError.code === 'server_error' ? call.code : null);
  });
}
