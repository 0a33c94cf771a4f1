// What the agent-framework adapters' tests share: real MCP servers over stdio with a TS SDK 1.x or
// v2 client, and the scripted model's policy (what a model does with the tool output it received).
// Run on Node 22 by `make test-node-agents` (ai 7.x needs it).
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expand, variables } from 'mcplens';

import { EVERYTHING_SERVER, readOutput } from '../helpers.mjs';

export { EVERYTHING_SERVER, readOutput };

/** servers/reads-server.mjs: `hostile` (default) or `tools-only`. */
export const READS_SERVER = join(import.meta.dirname, '..', 'servers', 'reads-server.mjs');

/** The characters reads-server.mjs hides in its strings: none may reach the model. */
export const HOSTILE = ['\u001b', '\u202e', '\u200b', '\u2066', '\u0007'];
/** reads-server.mjs's `notes://{id}` text, sanitized (after `Note <id>: `). */
export const NOTE_BODY = 'the launch code is 42.\nSecond line.';
/** The `_meta` every read of reads-server.mjs carries. */
export const META_SECRET = 'META-SECRET-do-not-show';
/** A URI no server listed, with a secret in it. */
export const REFUSED_URI = 'notes-admin://all?token=hunter2';

/** Both SDK lines: a connected client to `node ARGS...` over stdio. */
export const SDKS = {
  '1.x': async (args) => {
    const client = new Client({ name: 'mcplens-agents-test', version: '0.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
    return client;
  },
  v2: async (args) => {
    const client = new ClientV2({ name: 'mcplens-agents-test', version: '0.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StdioClientTransportV2({ command: process.execPath, args, stderr: 'ignore' }));
    return client;
  },
};

/**
 * The model's move after a template listing: the first template of `server` in the listing it
 * received (the tool's JSON output), every variable filled in with `value`.
 */
export function fillFirstTemplate(listing, server, value = '7') {
  const template = JSON.parse(listing).resourceTemplates.find((t) => t.server === server);
  assert.ok(template, `no template of ${server} in the listing: ${listing.slice(0, 500)}`);
  return expand(template.uriTemplate, Object.fromEntries(variables(template.uriTemplate).map((v) => [v.name, value])));
}

/** The model's move after a resource listing: the URI of the resource named `name`. */
export function listedUri(listing, name) {
  const resource = JSON.parse(listing).resources.find((r) => r.name === name);
  assert.ok(resource, `no resource ${name} in the listing: ${listing.slice(0, 500)}`);
  return resource.uri;
}

/** No hostile character, no `_meta` secret in what the model received. */
export function assertClean(text) {
  for (const c of HOSTILE) assert.ok(!text.includes(c), `U+${c.codePointAt(0).toString(16)} reached the model: ${JSON.stringify(text.slice(0, 300))}`);
  assert.ok(!text.includes(META_SECRET), '_meta reached the model');
}

/** A 1 MiB read as the model received it: capped at `cap` characters, the truncation stated. */
export function assertCapped(output, cap = 100_000) {
  assert.ok(output.length <= cap, `the read output is ${output.length} characters`);
  assert.ok(output.startsWith('{"truncated":'), 'the note comes first');
  const read = readOutput(output);
  assert.equal(read.truncated.maxOutputChars, cap);
  assert.equal(read.truncated.textChars, 1_048_576);
  assert.ok(read.truncated.shownChars > cap * 0.9 && read.truncated.shownChars < cap, JSON.stringify(read.truncated));
  assert.ok(!read.contents[0].text.endsWith('END'), 'the end of the text was shown');
}
