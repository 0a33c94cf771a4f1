// Replays every shared vector in tests/vectors/discovery/ (format: tests/vectors/README.md) through
// the package's Pager. Rust (core/tests/rules/vectors.rs) and Python replay the same files and must agree.
// Each vector also runs with its pages handed over as their parsed values (`acceptPageParsed`, read
// in place): the outcome must be the text's for the same answers as a JSON transport carries them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import { carried, drive } from './replay.mjs';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'discovery');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** Every cursor of 3+ chars in the answers, plus expect.secrets: none may appear in an error message. */
function secrets(c) {
  const out = [...(c.expect.secrets ?? [])];
  for (const a of c.answers ?? []) {
    let cursor;
    if (typeof a.page === 'string') {
      try {
        cursor = JSON.parse(a.page)?.nextCursor;
      } catch {
        cursor = undefined;
      }
    } else {
      cursor = a.synth?.nextCursor;
    }
    if (typeof cursor === 'string' && cursor.length >= 3) out.push(cursor);
  }
  return out;
}

/** Runs one case the way the README says; returns what happened. */
function replay(c) {
  const server = c.server ?? 'srv';
  const run = drive({
    kind: c.kind,
    server,
    capabilities: 'capabilities' in c ? c.capabilities : { resources: {} },
    limits: c.limits,
    startMs: c.startMs ?? 0,
    answers: c.answers ?? [],
    protocolVersion: c.protocolVersion,
  });
  return { ...run, server };
}

test('the shared vectors are there', () => {
  assert.ok(files.length >= 60, `only ${files.length} discovery vectors in ${DIR}`);
});

for (const file of files) {
  test(`vector ${file}`, () => {
    const c = JSON.parse(readFileSync(join(DIR, file), 'utf8'));
    assert.equal(c.name, basename(file, '.json'), 'name must match the file');
    const { requests, used, ranOut, listing, error, server } = replay(c);
    const want = c.expect;
    assert.ok(!ranOut, `ran out of answers at request ${requests.length}`);
    assert.equal(used, (c.answers ?? []).length, 'every answer must be used');
    if (want.requests !== undefined) assert.deepEqual(requests, want.requests, 'requests');
    if (want.error !== undefined) {
      assert.ok(error, `expected error ${want.error}, got success`);
      assert.equal(error.code, want.error, `error code (${error.message})`);
      assert.equal(error.server, server);
      assert.ok(error.message.includes(server), `the message names the server: ${error.message}`);
      for (const s of secrets(c)) assert.ok(!error.message.includes(s), `the message leaks ${JSON.stringify(s)}`);
      return;
    }
    assert.equal(error, undefined, `unexpected error ${error?.code} (${error?.message})`);
    if (want.items !== undefined) assert.deepEqual(listing.items, want.items, 'items');
    if (want.itemCount !== undefined) assert.equal(listing.items.length, want.itemCount, 'itemCount');
    for (const key of ['support', 'ttlMs', 'cacheScope', 'diagnostics']) {
      if (key in want) assert.deepEqual(listing[key] ?? null, want[key], key);
    }
  });
}

/** Everything a traversal's outcome shows. */
function outcome({ requests, used, ranOut, listing, error }) {
  if (error !== undefined) return { requests, used, ranOut, error: [error.code, error.message] };
  return { requests, used, ranOut, listing };
}

for (const file of files) {
  test(`vector ${file} read in place`, () => {
    const c = JSON.parse(readFileSync(join(DIR, file), 'utf8'));
    const run = {
      kind: c.kind,
      server: c.server ?? 'srv',
      capabilities: 'capabilities' in c ? c.capabilities : { resources: {} },
      limits: c.limits,
      startMs: c.startMs ?? 0,
      answers: carried(c.kind, c.answers ?? []),
      protocolVersion: c.protocolVersion,
    };
    const inPlace = drive({ ...run, answers: run.answers.map((a) => ({ ...a })), inPlace: true });
    assert.deepEqual(outcome(inPlace), outcome(drive(run)), 'the same outcome as the text');
    // Only a string with U+FFFD is declined (perhaps a lone surrogate, which the text carries as its escape).
    const lone = run.answers.some((a) => typeof a.page === 'string' && /\\u[dD][89a-fA-F]|\\u[fF]{3}[dD]|\uFFFD/.test(a.page));
    if (!lone) assert.equal(inPlace.declined, 0, 'every page read in place');
  });
}
