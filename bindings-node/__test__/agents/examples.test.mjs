// The agent-framework examples run as they are, offline (their stand-in models; no key in the
// environment), against server-everything, and the READMEs' quickstarts are those files verbatim.
// Node 22 (`make test-node-agents`).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** The README's code block that follows `<!-- file: bindings-node/examples/NAME -->`, as printed. */
function printed(readme, name) {
  const marker = `<!-- file: bindings-node/examples/${name} -->\n\`\`\`js\n`;
  const start = readme.indexOf(marker);
  assert.ok(start >= 0, `the README prints ${name}`);
  const body = readme.slice(start + marker.length);
  return body.slice(0, body.indexOf('```'));
}

for (const [example, model, first] of [
  ['ai-sdk.mjs', 'ai-offline-model.mjs', 'ListMcpResourceTemplatesTool {"server":"docs"}'],
  ['openai-agents.mjs', 'openai-agents-offline-model.mjs', 'ListMcpResourceTemplatesTool {"server":"docs","offset":null,"limit":null}'],
]) {
  test(`README's ${example}, copied as printed into an empty folder with its offline model, runs with only the installed packages`, async () => {
    const readme = readFileSync(join(PACKAGE, '..', 'README.md'), 'utf8');
    // A folder of the repository's build tree: packages resolve from the installed node_modules, nothing else is there.
    mkdirSync(join(PACKAGE, '..', '.build'), { recursive: true });
    const folder = mkdtempSync(join(PACKAGE, '..', '.build', 'readme-agents-'));
    try {
      for (const name of [example, model]) writeFileSync(join(folder, name), printed(readme, name));
      const { stdout } = await run(process.execPath, [join(folder, example), process.execPath, EVERYTHING_SERVER, 'stdio'], { cwd: folder, env, timeout: 60_000 });
      const lines = stdout.trim().split('\n');
      assert.deepEqual(lines.slice(0, 2), [first, 'ReadMcpResourceTool {"server":"docs","uri":"demo://resource/dynamic/text/1"}']);
      assert.match(lines[2], /^It says: Resource 1: This is a plaintext resource created at /);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
}
