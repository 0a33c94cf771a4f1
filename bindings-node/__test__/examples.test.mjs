// The examples run as they are, and the README's quickstarts are the tested files, verbatim.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { EVERYTHING_SERVER, FASTMCP_SERVER, PYTHON_FASTMCP4, PYTHON_MCP2, SDK_SERVER } from './helpers.mjs';
import { V2_SERVER } from './v2-helpers.mjs';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');

test('README quickstart = examples/quickstart.mjs, and it lists server-everything over stdio', async () => {
  const source = readFileSync(join(ROOT, 'examples', 'quickstart.mjs'), 'utf8');
  assert.ok(readFileSync(join(ROOT, 'README.md'), 'utf8').includes('```js\n' + source + '```'), 'README is stale');
  const { stdout } = await run(process.execPath, [join(ROOT, 'examples', 'quickstart.mjs'), process.execPath, EVERYTHING_SERVER, 'stdio'], {
    timeout: 30_000,
  });
  const lines = stdout.trim().split('\n');
  assert.equal(lines[0], '2 templates, 7 resources');
  assert.equal(lines[1], 'demo://resource/dynamic/text/{resourceId} - Dynamic Text Resource');
  const tool = JSON.parse(lines.at(-1));
  assert.equal(tool.total, 2);
  assert.equal(tool.nextOffset, 1);
  assert.equal(tool.resourceTemplates[0].server, 'docs');
});

test('README quickstart (v2) = examples/quickstart-v2.mjs: 2026-07-28 with a v2 server, fastmcp 4 and mcp 2.3 (no listChanged), the legacy handshake with server-everything', async () => {
  const source = readFileSync(join(ROOT, 'examples', 'quickstart-v2.mjs'), 'utf8');
  assert.ok(readFileSync(join(ROOT, 'README.md'), 'utf8').includes('```js\n' + source + '```'), 'README is stale');
  const quickstart = (command, ...server) => run(process.execPath, [join(ROOT, 'examples', 'quickstart-v2.mjs'), command, ...server], { timeout: 30_000 });
  const v2 = (await quickstart(process.execPath, V2_SERVER, 'stdio', 'pages')).stdout.trim().split('\n');
  assert.deepEqual(v2.slice(0, 4), ['protocol 2026-07-28', 'change notifications: listening', '4 templates, 2 resources', 'file:///{path} - files']);
  assert.deepEqual(JSON.parse(v2.at(-1)).resourceTemplates, [{ uriTemplate: 'file:///{path}', name: 'files', title: 'Files', mimeType: 'text/plain', server: 'docs' }]);
  // Servers that negotiate 2026-07-28 without advertising resources.listChanged (and answer
  // subscriptions/listen with -32601): the watch stands without a stream; the quickstart exits 0.
  const fastmcp = (await quickstart(PYTHON_FASTMCP4, FASTMCP_SERVER, 'stdio')).stdout.trim().split('\n');
  assert.deepEqual(fastmcp.slice(0, 4), ['protocol 2026-07-28', 'change notifications: not_offered', '5 templates, 3 resources', 'note://{id} - note']);
  assert.deepEqual(JSON.parse(fastmcp.at(-1)), {
    resourceTemplates: [{ uriTemplate: 'note://{id}', name: 'note', mimeType: 'text/plain', server: 'docs' }],
    failures: [],
    total: 5,
    nextOffset: 1,
  });
  const lowLevel = (await quickstart(PYTHON_MCP2, SDK_SERVER, 'paged')).stdout.trim().split('\n');
  assert.deepEqual(lowLevel.slice(0, 4), ['protocol 2026-07-28', 'change notifications: not_offered', '8 templates, 2 resources', 'mem://t0/{id} - t0']);
  const everything = (await quickstart(process.execPath, EVERYTHING_SERVER, 'stdio')).stdout.trim().split('\n');
  assert.deepEqual(everything.slice(0, 4), [
    'protocol 2025-11-25',
    'change notifications: unsolicited',
    '2 templates, 7 resources',
    'demo://resource/dynamic/text/{resourceId} - Dynamic Text Resource',
  ]);
});

test('examples/agent-tool.mjs registers the tool (deferred) and answers the model', async () => {
  const { stdout } = await run(process.execPath, [join(ROOT, 'examples', 'agent-tool.mjs')], { timeout: 30_000 });
  assert.deepEqual(stdout.trim().split('\n'), [
    'tools: Read | deferred: ListMcpResourceTemplatesTool',
    '{"resourceTemplates":[{"uriTemplate":"docs://pages/{slug}","name":"page","title":"Doc page","server":"docs"},' +
      '{"uriTemplate":"docs://api/{symbol}","name":"api","mimeType":"text/markdown","server":"docs"}],"failures":[],"total":2}',
    'Server "wiki" not found. Available servers: docs',
  ]);
});

test('the cross-language hook prints the tool output per input (the Python catalog must print the same)', async () => {
  const hook = join(import.meta.dirname, 'tool-output.mjs');
  const server = join(import.meta.dirname, 'servers', 'paging-server.mjs');
  const inputs = [{}, { limit: 1, offset: 3 }, { server: 'nope' }];
  const { stdout } = await run(process.execPath, [hook, 'pg', JSON.stringify(inputs), process.execPath, server, 'pages'], {
    timeout: 30_000,
  });
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 3);
  assert.equal(JSON.parse(lines[0]).total, 4);
  assert.equal(lines[1], '{"resourceTemplates":[{"uriTemplate":"search://{?q}","name":"search","server":"pg"}],"failures":[],"total":4}');
  assert.deepEqual(JSON.parse(lines[2]), { error: 'unknown_server', message: 'Server "nope" not found. Available servers: pg' });
});

test('README server quickstart = examples/server-quickstart.mjs; as a stdio server it writes one event per request', async () => {
  const source = readFileSync(join(ROOT, 'examples', 'server-quickstart.mjs'), 'utf8');
  assert.ok(readFileSync(join(ROOT, 'README.md'), 'utf8').includes('```js\n' + source + '```'), 'README is stale');
  const cwd = mkdtempSync(join(tmpdir(), 'mcplens-quickstart-'));
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, 'examples', 'server-quickstart.mjs')], cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'quickstart-client', version: '1.0.0' });
  await client.connect(transport);
  assert.deepEqual(await client.readResource({ uri: 'note://42' }), { contents: [{ uri: 'note://42', text: 'Note 42' }] });
  assert.deepEqual(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }), { content: [{ type: 'text', text: '5' }] });
  await client.close(); // the server exits; beforeExit flushes
  const events = readFileSync(join(cwd, 'mcplens-events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(
    events.map((e) => [e.type, e.resourceName, e.client.name, e.server.name, e.transport]),
    [
      ['mcp:initialize', undefined, 'quickstart-client', 'notes', 'stdio'],
      ['mcp:resources/read', 'note://42', 'quickstart-client', 'notes', 'stdio'],
      ['mcp:tools/call', 'add', 'quickstart-client', 'notes', 'stdio'],
    ],
  );
  assert.equal(events[1].response.contents[0].textBytes, 7);
  assert.equal(stderr, '');
});

test('README server quickstart (v2) = examples/server-quickstart-v2.mjs; over stdio, both eras, one event per request', async () => {
  const source = readFileSync(join(ROOT, 'examples', 'server-quickstart-v2.mjs'), 'utf8');
  assert.ok(readFileSync(join(ROOT, 'README.md'), 'utf8').includes('```js\n' + source + '```'), 'README is stale');
  const cwd = mkdtempSync(join(tmpdir(), 'mcplens-quickstart-v2-'));
  for (const mode of ['legacy', { pin: '2026-07-28' }]) {
    const client = new ClientV2({ name: 'quickstart-client', version: '2.0.0' }, { versionNegotiation: { mode } });
    await client.connect(new StdioClientTransportV2({ command: process.execPath, args: [join(ROOT, 'examples', 'server-quickstart-v2.mjs')], cwd }));
    assert.equal((await client.readResource({ uri: 'note://42' })).contents[0].text, 'Note 42');
    assert.equal((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).content[0].text, '5');
    await client.close();
  }
  const events = readFileSync(join(cwd, 'mcplens-events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const row = (e) => [e.type, e.resourceName, e.protocolVersion, e.sessionId === undefined ? 'sessionless' : 'session', e.client.name, e.server.name];
  // The pinned client's server/discover went to a sibling process it SIGTERMed (and SIGKILLs 1 s
  // later): that process writes its event at SIGTERM, in its own time.
  const probe = events.filter((e) => e.type === 'mcp:server/discover');
  assert.ok(probe.length <= 1);
  for (const e of probe) assert.deepEqual(row(e), ['mcp:server/discover', undefined, '2026-07-28', 'sessionless', 'quickstart-client', 'notes']);
  assert.deepEqual(events.filter((e) => !probe.includes(e)).map(row), [
    ['mcp:initialize', undefined, '2025-11-25', 'session', 'quickstart-client', 'notes'],
    ['mcp:resources/read', 'note://42', '2025-11-25', 'session', 'quickstart-client', 'notes'],
    ['mcp:tools/call', 'add', '2025-11-25', 'session', 'quickstart-client', 'notes'],
    ['mcp:resources/read', 'note://42', '2026-07-28', 'sessionless', 'quickstart-client', 'notes'],
    ['mcp:tools/call', 'add', '2026-07-28', 'sessionless', 'quickstart-client', 'notes'],
  ]);
});

test('the cross-language tracking scenario: run-scenario.mjs prints its expected.jsonl (the Python side must print the same)', async () => {
  const dir = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'tracking', 'scenario');
  const hook = join(dir, 'run-scenario.mjs');
  const { stdout } = await run(process.execPath, [hook], { timeout: 30_000 });
  assert.equal(stdout, readFileSync(join(dir, 'expected.jsonl'), 'utf8'));
  await run(process.execPath, [hook, '--check'], { timeout: 30_000 });
});

test('examples/agent-templates.mjs fills a listed template from the server\'s completions and routes the read back', async () => {
  const { stdout } = await run(process.execPath, [join(ROOT, 'examples', 'agent-templates.mjs')], { timeout: 30_000 });
  assert.deepEqual(stdout.trim().split('\n'), [
    '{"resources":[{"uri":"crm://index","name":"index","mimeType":"text/plain","server":"crm"}],"failures":[],"total":1}',
    'crm://customers/1001 -> crm {"id":"1001"}',
    'customer {"id":"1001"}',
  ]);
});
