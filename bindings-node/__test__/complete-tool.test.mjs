// `CompleteMcpResourceTemplateTool` through `Catalog.callTool` (what both Node adapters call) over
// real SDK clients: server-everything's `resourceId` completion fills a template that is then read,
// and the hostile server (tests/servers/hostile/server.py --completions) answers too much, the wrong
// types, unsafe text, lies about total/hasMore, -32601, -32603, or never: every output is bounded and
// sanitized (the same expectations as bindings-python/tests/test_complete_tool.py).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, McplensError, completeTemplateTool, expand, listResourceTemplatesTool, readResourceTool } from 'mcplens';

import { EVERYTHING_SERVER, connectStdio, readOutput } from './helpers.mjs';
import { ERAS, connectV2 } from './v2-helpers.mjs';

const HOSTILE = join(import.meta.dirname, '..', '..', 'tests', 'servers', 'hostile', 'server.py');
const COMPLETE = completeTemplateTool.name;
const FILES = 'file:///{path}';

async function hostile(...flags) {
  const transport = new StdioClientTransport({ command: 'python3', args: [HOSTILE, '--case', 'good', ...flags], stderr: 'ignore' });
  const client = new Client({ name: 'mcplens-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

async function refused(promise, code) {
  await assert.rejects(promise, (e) => e instanceof McplensError && e.code === code && e.server === 'srv' && !/secret|\x1b/.test(e.message));
}

test('the hostile server: every answer bounded and sanitized, every failure typed', async () => {
  const client = await hostile('--completions');
  try {
    const catalog = new Catalog({ complete: { timeoutMs: 500 } });
    catalog.watch('srv', client);
    const listing = JSON.parse(await catalog.callTool(listResourceTemplatesTool.name, {}));
    assert.deepEqual(listing.completion, ['srv']);
    assert.ok(catalog.visibleTools().includes(COMPLETE));
    const out = async (value) =>
      JSON.parse(await catalog.callTool(COMPLETE, { server: 'srv', uriTemplate: FILES, variable: 'path', value }));
    const head = { server: 'srv', uriTemplate: FILES, variable: 'path' };
    assert.deepEqual(await out('in'), { ...head, values: ['intro', 'install'] });
    const many = Array.from({ length: 100 }, (_, i) => `v${i}`);
    assert.deepEqual(await out('many'), { ...head, values: many, total: 10_000, hasMore: false, omitted: { cut: 9_900 } });
    assert.deepEqual(await out('huge'), { ...head, values: ['ok'], omitted: { tooLong: 1 } });
    assert.deepEqual(await out('evil'), { ...head, values: ['fine'], omitted: { unsafe: 4 } });
    assert.deepEqual(await out('types'), { ...head, values: ['fine'], omitted: { notString: 5 } });
    assert.deepEqual(await out('lies'), { ...head, values: ['a'], ignored: ['total', 'hasMore'] });
    await refused(out('mnf'), 'not_offered');
    await refused(out('boom'), 'server_error');
    await refused(out('hang'), 'deadline');
    // Refused before anything is sent.
    await refused(catalog.callTool(COMPLETE, { server: 'srv', uriTemplate: 'file:///{x}', variable: 'x' }), 'unlisted_uri');
  } finally {
    await client.close();
  }
});

test('a server without completions is not asked, nor offered the tool', async () => {
  const client = await hostile();
  try {
    const catalog = new Catalog();
    catalog.watch('srv', client);
    const listing = JSON.parse(await catalog.callTool(listResourceTemplatesTool.name, {}));
    assert.equal(listing.completion, undefined);
    assert.ok(!catalog.visibleTools().includes(COMPLETE));
    await refused(catalog.callTool(COMPLETE, { server: 'srv', uriTemplate: FILES, variable: 'path', value: 'in' }), 'not_offered');
  } finally {
    await client.close();
  }
});

test('server-everything: list the templates, complete resourceId, read the filled URI', async () => {
  const { client, sent, close } = await connectStdio([EVERYTHING_SERVER, 'stdio']);
  try {
    const catalog = new Catalog();
    catalog.watch('everything', client);
    const listing = JSON.parse(await catalog.callTool(listResourceTemplatesTool.name, {}));
    assert.deepEqual(listing.completion, ['everything']);
    const template = listing.resourceTemplates[0].uriTemplate;
    const args = { server: 'everything', uriTemplate: template, variable: 'resourceId', value: '3' };
    const completed = JSON.parse(await catalog.callTool(COMPLETE, args));
    assert.deepEqual(completed.values, ['3']);
    const request = sent.find((m) => m.method === 'completion/complete');
    assert.deepEqual(request.params, { ref: { type: 'ref/resource', uri: template }, argument: { name: 'resourceId', value: '3' } });
    const uri = expand(template, { resourceId: completed.values[0] });
    const out = readOutput(await catalog.callTool(readResourceTool.name, { server: 'everything', uri }));
    assert.match(out.contents[0].text, /Resource 3: This is a plaintext resource/);
  } finally {
    await close();
  }
});

for (const era of Object.keys(ERAS)) {
  test(`a TS SDK v2 McpServer's complete callbacks through a v2 Client (${era})`, async () => {
    const { client, close } = await connectV2('memory', era, { scenario: 'complete' });
    try {
      const catalog = new Catalog();
      catalog.watch('docs', client);
      const listing = JSON.parse(await catalog.callTool(listResourceTemplatesTool.name, {}));
      assert.deepEqual(listing.completion, ['docs']);
      const args = { server: 'docs', uriTemplate: 'docs://pages/{slug}', variable: 'slug', value: 'in' };
      const completed = JSON.parse(await catalog.callTool(COMPLETE, args));
      assert.deepEqual(completed.values, ['intro', 'install']);
      const uri = expand(args.uriTemplate, { slug: completed.values[1] });
      const out = readOutput(await catalog.callTool(readResourceTool.name, { server: 'docs', uri }));
      assert.equal(out.contents[0].text, 'page install');
    } finally {
      await close();
    }
  });
}
