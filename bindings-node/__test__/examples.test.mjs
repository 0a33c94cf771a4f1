// The examples run as they are, and the README's quickstart is the tested file, verbatim.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { EVERYTHING_SERVER } from './helpers.mjs';

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
