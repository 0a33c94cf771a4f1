// ReadMcpResourceTool through Catalog.callTool against real servers: server-everything (SDK 1.x
// client over stdio) and the hostile server (SDK 1.x and v2 clients over stdio). A URI filled in
// from the template listing is read; an unlisted one is refused before anything is sent; a
// hostile text arrives sanitized and a 1 MiB one capped with the truncation stated.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, McplensError, completeTemplateTool, expand, readResourceTool, resourceToolSpecs, toolSpec } from 'mcplens';

import { EVERYTHING_SERVER, connectStdio, readOutput, record } from './helpers.mjs';

const HOSTILE = join(import.meta.dirname, '..', '..', 'tests', 'servers', 'hostile', 'server.py');
const LIST = 'ListMcpResourceTemplatesTool';
const READ = 'ReadMcpResourceTool';

async function rejects(promise, code, server) {
  const e = await promise.then(
    () => assert.fail(`expected ${code}`),
    (err) => err,
  );
  assert.ok(e instanceof McplensError, `${e?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  assert.equal(e.server, server);
  return e;
}

/** The hostile server (`--case good`) over stdio, to an SDK 1.x or v2 client. */
async function hostile(line) {
  const [ClientClass, Transport] = line === 'v2' ? [V2Client, V2Stdio] : [Client, StdioClientTransport];
  const transport = new Transport({ command: 'python3', args: [HOSTILE, '--case', 'good'], stderr: 'ignore' });
  const sent = record(transport);
  const client = new ClientClass({ name: 'mcplens-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, sent };
}

describe('the read tool', () => {
  test("its spec is the core's; the strict forms require every property", () => {
    assert.equal(readResourceTool.name, READ);
    assert.deepEqual(readResourceTool.inputSchema.required, ['server', 'uri']);
    assert.deepEqual(readResourceTool.strictInputSchema, readResourceTool.inputSchema);
    assert.deepEqual(toolSpec('ListMcpResourcesTool').strictInputSchema.required, ['limit', 'offset', 'server']);
    assert.equal(toolSpec('Other'), undefined);
    // The list the adapters register is the core's, in its order.
    assert.deepEqual(resourceToolSpecs.map((s) => s.name), [LIST, 'ListMcpResourcesTool', READ, 'CompleteMcpResourceTemplateTool']);
    assert.deepEqual(resourceToolSpecs[2], readResourceTool);
    assert.deepEqual(resourceToolSpecs[3], completeTemplateTool);
    assert.throws(() => new Catalog({ read: { maxOutputChars: 10 } }), (e) => e instanceof McplensError && e.code === 'invalid_argument');
  });

  test('input that cannot be JSON is refused alike by every tool (the core\'s words, as in Python)', async () => {
    const catalog = new Catalog();
    catalog.addServer('docs');
    for (const [name, args] of [[READ, { server: 'docs', uri: 1n }], [LIST, { server: 'docs', limit: 1n }]]) {
      const e = await rejects(catalog.callTool(name, args), 'invalid_argument', 'docs');
      assert.equal(e.message, 'invalid input: the input is not a JSON object');
    }
  });

  test('server-everything: a template filled in from the listing is read; an unlisted URI is refused', async () => {
    const { client, sent, close } = await connectStdio([EVERYTHING_SERVER, 'stdio']);
    try {
      const catalog = new Catalog();
      catalog.watch('everything', client);
      assert.deepEqual(catalog.visibleTools(), [LIST, 'ListMcpResourcesTool', READ]);
      const listing = JSON.parse(await catalog.callTool(LIST, { server: 'everything' }));
      const text = listing.resourceTemplates.find((t) => t.uriTemplate.includes('/text/'));
      const uri = expand(text.uriTemplate, { resourceId: '7' });
      const out = readOutput(await catalog.callTool(READ, { server: text.server, uri }));
      assert.equal(out.server, 'everything');
      assert.equal(out.contents[0].uri, uri);
      assert.match(out.contents[0].text, /7/);
      const blob = listing.resourceTemplates.find((t) => t.uriTemplate.includes('/blob/'));
      const summarized = readOutput(await catalog.callTool(READ, JSON.stringify({ server: 'everything', uri: expand(blob.uriTemplate, { resourceId: '2' }) })));
      assert.ok(summarized.contents[0].blobBytes > 0 && !('blob' in summarized.contents[0]), JSON.stringify(summarized));

      const reads = sent.filter((m) => m.method === 'resources/read').length;
      const e = await rejects(catalog.callTool(READ, { server: 'everything', uri: 'https://example.com/?key=s3cret' }), 'unlisted_uri', 'everything');
      assert.ok(!e.message.includes('s3cret'), e.message);
      assert.equal(sent.filter((m) => m.method === 'resources/read').length, reads, 'nothing sent for a refused URI');
      await rejects(catalog.callTool(READ, { server: 'nope', uri }), 'unknown_server', 'nope');
      await rejects(catalog.callTool('Other', {}), 'invalid_argument', undefined);
    } finally {
      await close();
    }
  });

  test('a URI the model knows reads on the first call, before any listing (the read makes the server current)', async () => {
    const { client, sent, close } = await connectStdio([EVERYTHING_SERVER, 'stdio']);
    try {
      const catalog = new Catalog();
      catalog.watch('everything', client);
      const out = readOutput(await catalog.callTool(READ, { server: 'everything', uri: 'demo://resource/dynamic/text/7' }));
      assert.equal(out.contents[0].uri, 'demo://resource/dynamic/text/7');
      assert.deepEqual(
        sent.map((m) => m.method).filter((m) => m?.startsWith('resources/')),
        ['resources/list', 'resources/templates/list', 'resources/read'],
      );
      const gone = new Catalog();
      gone.addServer('gone');
      const e = await rejects(gone.callTool(READ, { server: 'gone', uri: 'demo://x' }), 'unlisted_uri', 'gone');
      assert.match(e.message, /^Server "gone"'s resources could not be listed, .* no connection is attached$/);
    } finally {
      await close();
    }
  });

  for (const line of ['1.x', 'v2']) {
    test(`the hostile server over an SDK ${line} client: text sanitized, 1 MiB capped, -32002 named`, async () => {
      const { client } = await hostile(line);
      try {
        const catalog = new Catalog({ read: { maxOutputChars: 50_000 } });
        catalog.watch('evil', client);
        const listing = JSON.parse(await catalog.callTool(LIST, null));
        const files = listing.resourceTemplates.find((t) => t.uriTemplate.startsWith('file:'));
        const dirty = readOutput(await catalog.callTool(READ, { server: 'evil', uri: expand(files.uriTemplate, { path: 'a' }) }));
        assert.deepEqual(dirty.contents, [{ uri: 'file:///a', mimeType: 'text/plain', textChars: 26, text: 'contents of file:///a\n\tend' }]);
        assert.ok(dirty.removedChars > 0);

        const text = await catalog.callTool(READ, { server: 'evil', uri: expand(files.uriTemplate, { path: 'big.txt' }) });
        assert.ok(text.length <= 50_000, `${text.length} characters`);
        assert.ok(text.startsWith('{"truncated":{"textChars":1048576,'), 'the note comes first');
        const big = readOutput(text);
        assert.ok(big.contents[0].text.startsWith('BEGIN 0123'));
        assert.equal(big.truncated.textChars, 1_048_576);
        assert.equal(big.truncated.shownChars, big.contents[0].text.length);

        const any = new Catalog({ read: { anyUri: true } });
        any.watch('evil', client);
        const e = await rejects(any.callTool(READ, { server: 'evil', uri: 'mem://nothing' }), 'server_error', 'evil');
        assert.equal(e.rpcCode, -32002);
        assert.match(e.message, /JSON-RPC error -32002 \(resource not found\)\.$/);
        await client.close();
        await rejects(any.callTool(READ, { server: 'evil', uri: 'file:///a' }), 'transport_error', 'evil');
      } finally {
        await client.close();
      }
    });
  }
});
