// Catalog.watch over a TypeScript SDK v2 Client against real servers that negotiate 2026-07-28
// without advertising `resources.listChanged` — community fastmcp 4 and a Python `mcp` 2.3
// low-level Server, as most Python servers are — and that send `ttlMs: 0`:
// - the watch stands without a `subscriptions/listen` stream (`not_offered`), none is sent;
// - `refresh()` right after success reports `ok` (ttlMs 0 is floored at minTtlMs), never `stale`;
// - the connection's end still clears the pair.
// The same servers on the legacy handshake take list_changed unasked (`unsolicited`).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Catalog } from 'mcplens';

import { FASTMCP_SERVER, PYTHON_FASTMCP4, PYTHON_MCP2, SDK_SERVER, record, until } from './helpers.mjs';

const SERVERS = [
  { name: 'fastmcp 4', python: PYTHON_FASTMCP4, args: [FASTMCP_SERVER, 'stdio'], templates: 5, resources: 3 },
  { name: 'mcp 2.3 low-level Server', python: PYTHON_MCP2, args: [SDK_SERVER, 'paged'], templates: 8, resources: 2 },
];

async function connect(server, mode) {
  const client = new Client({ name: 'mcplens-test', version: '0.0.0' }, { versionNegotiation: { mode } });
  const transport = new StdioClientTransport({ command: server.python, args: server.args, stderr: 'ignore' });
  const sent = record(transport);
  await client.connect(transport);
  return { client, sent };
}

test('the Python servers are installed (.build/venv-mcp2 and venv-fastmcp4, made by make)', () => {
  for (const python of [PYTHON_MCP2, PYTHON_FASTMCP4]) assert.ok(existsSync(python), `${python} is missing: run make test-node`);
});

for (const server of SERVERS) {
  test(`${server.name}, 2026-07-28 without listChanged: watch stands with no stream (not_offered), refresh reports ok, close clears`, async () => {
    const { client, sent } = await connect(server, 'auto');
    const catalog = new Catalog();
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.notEqual(client.getServerCapabilities()?.resources?.listChanged, true);
      assert.deepEqual(await catalog.watch('docs', client), { server: 'docs', notifications: 'not_offered' });
      const status = await catalog.refresh('docs', client);
      assert.deepEqual([status.status, status.templates, status.resources, status.lastError], ['ok', server.templates, server.resources, null]);
      assert.equal(catalog.status('docs').status, 'ok');
      // ensureFresh right after: answered from the catalog (ttlMs 0 counts as minTtlMs, 10 s).
      const listRequests = () => sent.filter((m) => m.method?.startsWith('resources/')).length;
      const before = listRequests();
      await catalog.ensureFresh('docs');
      assert.equal(listRequests(), before);
      assert.ok(!sent.some((m) => m.method === 'subscriptions/listen'), 'no subscriptions/listen was sent');
    } finally {
      await client.close();
    }
    await until(() => catalog.status('docs').status === 'unknown');
    assert.deepEqual([catalog.status('docs').templates, catalog.templates({ server: 'docs' })], [0, []]);
  });

  test(`${server.name}, legacy handshake: list_changed comes unasked (unsolicited)`, async () => {
    const { client, sent } = await connect(server, 'legacy');
    const catalog = new Catalog();
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
      assert.deepEqual(await catalog.watch('docs', client), { server: 'docs', notifications: 'unsolicited' });
      assert.equal((await catalog.refresh('docs', client)).status, 'ok');
      assert.ok(!sent.some((m) => m.method === 'subscriptions/listen'));
    } finally {
      await client.close();
    }
  });
}
