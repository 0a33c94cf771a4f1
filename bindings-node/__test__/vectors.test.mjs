// Replays every shared vector in tests/vectors/discovery/ (format: tests/vectors/README.md) through
// the package's Pager. Rust (core/tests/vectors.rs) and Python replay the same files and must agree.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import { McplensError, Pager, hasResourcesCapability } from 'mcplens';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'discovery');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

function synth(kind, { count, start = 0, nextCursor }) {
  const items = [];
  for (let n = start; n < start + count; n++) {
    items.push(
      kind === 'resources'
        ? { uri: `mem://item/${n}`, name: `item-${n}` }
        : { uriTemplate: `mem://item/${n}/{id}`, name: `item-${n}` },
    );
  }
  const page = { [kind === 'resources' ? 'resources' : 'resourceTemplates']: items };
  if (nextCursor !== undefined) page.nextCursor = nextCursor;
  return JSON.stringify(page);
}

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
  const answers = c.answers ?? [];
  const server = c.server ?? 'srv';
  const capabilities = 'capabilities' in c ? c.capabilities : { resources: {} };
  let now = c.startMs ?? 0;
  const requests = [];
  let used = 0;
  let ranOut = false;
  let listing;
  let error;
  try {
    const pager = new Pager({
      kind: c.kind,
      server,
      resourcesCapability: hasResourcesCapability(capabilities),
      limits: c.limits,
      now,
    });
    for (let req = pager.nextRequest(); req !== null; req = pager.nextRequest()) {
      requests.push(req);
      const a = answers[used];
      if (a === undefined) {
        ranOut = true;
        break;
      }
      used += 1;
      if (a.atMs !== undefined) now = a.atMs;
      try {
        if (typeof a.page === 'string') pager.acceptPage(a.page, now);
        else if (a.synth) pager.acceptPage(synth(c.kind, a.synth), now);
        else if (a.rpcError) pager.acceptRpcError(a.rpcError.code, now);
        else if (a.transport) pager.acceptTransportError(now);
        else if (a.timedOut) pager.acceptTimeout(now);
        else if (a.malformed) pager.acceptMalformed(now);
        else throw new Error(`unknown answer ${JSON.stringify(a)}`);
      } catch (e) {
        if (!(e instanceof McplensError)) throw e;
        break; // the pager has failed; finish() reports the same error
      }
    }
    listing = pager.finish();
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    error = e;
  }
  return { requests, used, ranOut, listing, error, server };
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
