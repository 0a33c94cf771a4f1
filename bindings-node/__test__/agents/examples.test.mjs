// The agent-framework examples run as they are, offline (their stand-in models; no key in the
// environment), against server-everything, and the READMEs' quickstarts are those files verbatim.
// Node 22 (`make test-node-agents`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { EVERYTHING_SERVER } from './helpers.mjs';

const run = promisify(execFile);
const PACKAGE = join(import.meta.dirname, '..', '..');
const READMES = [join(PACKAGE, 'README.md'), join(PACKAGE, '..', 'README.md')];
// Offline whatever the caller's environment holds; OpenAI Agents' tracing off.
const { AI_GATEWAY_API_KEY, OPENAI_API_KEY, ...env } = process.env;
env.OPENAI_AGENTS_DISABLE_TRACING = '1';

for (const [example, first] of [
  ['ai-sdk.mjs', 'ListMcpResourceTemplatesTool {"server":"docs"}'],
  ['openai-agents.mjs', 'ListMcpResourceTemplatesTool {"server":"docs","offset":null,"limit":null}'],
]) {
  test(`examples/${example} = the READMEs' quickstart; offline it lists server-everything's templates, fills the first in, reads it and quotes it`, async () => {
    const path = join(PACKAGE, 'examples', example);
    const source = readFileSync(path, 'utf8');
    for (const readme of READMES) assert.ok(readFileSync(readme, 'utf8').includes('```js\n' + source + '```'), `${readme} is stale`);
    const { stdout } = await run(process.execPath, [path, process.execPath, EVERYTHING_SERVER, 'stdio'], { env, timeout: 60_000 });
    const lines = stdout.trim().split('\n');
    assert.deepEqual(lines.slice(0, 2), [first, 'ReadMcpResourceTool {"server":"docs","uri":"demo://resource/dynamic/text/1"}']);
    assert.match(lines[2], /^It says: Resource 1: This is a plaintext resource created at /);
    assert.equal(lines.length, 3);
  });
}

test("the offline stand-ins the examples import are in both READMEs, verbatim: the examples run as they are printed", () => {
  for (const model of ['ai-offline-model.mjs', 'openai-agents-offline-model.mjs']) {
    const source = readFileSync(join(PACKAGE, 'examples', model), 'utf8');
    for (const readme of READMES) assert.ok(readFileSync(readme, 'utf8').includes(`${source}\`\`\``), `${readme} lacks ${model}`);
  }
});
