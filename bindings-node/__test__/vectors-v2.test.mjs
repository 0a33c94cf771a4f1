// Replays every shared discovery vector (tests/vectors/discovery/) through the package's traversal
// over a real TypeScript SDK v2 `Client`, on the legacy handshake and pinned to 2026-07-28, over a
// scripted raw transport (replay.mjs `driveClient`). The client must change nothing: the outcome —
// requests, items, diagnostics, error code and message — is the Pager's on the same answers as a
// JSON-RPC transport carries them (`carried`), and that is the vector's own outcome except for the
// few pages no JSON transport can carry byte for byte (listed below).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { carried, drive, driveClient } from './replay.mjs';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'discovery');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/**
 * The vectors whose pages do not survive a JSON parse: not JSON (the transport drops the line, the
 * deadline ends the wait), duplicate keys (the last one wins), nesting deeper than JSON.stringify
 * goes (the host refuses the page).
 */
const NOT_CARRIED = [
  'deeply_nested_meta_ignored',
  'deeply_nested_optional_field_dropped',
  'duplicate_annotation_key',
  'duplicate_item_key',
  'duplicate_list_key',
  'invalid_json',
  'trailing_garbage',
];

/** Capabilities a v2 client refuses in the handshake (`resources` must be an object): it never connects. */
const REFUSED_HANDSHAKE = ['no_capability_not_object', 'no_capability_null'];

/** Everything a traversal's outcome shows. */
function outcome({ requests, used, ranOut, listing, error }) {
  if (error !== undefined) return { requests, used, ranOut, error: [error.code, error.message, error.rpcCode] };
  const { kind, server, items, support, ttlMs, cacheScope, diagnostics } = listing;
  return { requests, used, ranOut, listing: { kind, server, items, support, ttlMs, cacheScope, diagnostics } };
}

function setup(c) {
  return {
    kind: c.kind,
    server: c.server ?? 'srv',
    capabilities: 'capabilities' in c ? c.capabilities : { resources: {} },
    limits: c.limits,
    startMs: c.startMs ?? 0,
    answers: c.answers ?? [],
    protocolVersion: c.protocolVersion,
  };
}

/**
 * The limits for a client of `era`: the eras differ in discovery only by what a repeated cursor
 * does (`repeatedCursors: by_era`), so a client of the other era than the vector's pins the
 * vector's rule and everything else is compared as it is.
 */
function limitsFor(c, era) {
  const vectorEra = (c.protocolVersion ?? '') >= '2026-07-28' ? 'modern' : 'legacy';
  if (era === vectorEra || c.limits?.repeatedCursors !== undefined) return c.limits;
  return { ...c.limits, repeatedCursors: vectorEra === 'modern' ? 'follow' : 'fail' };
}

for (const file of files) {
  test(`vector ${file} through a v2 Client (legacy handshake, 2026-07-28)`, async (t) => {
    const c = JSON.parse(readFileSync(join(DIR, file), 'utf8'));
    const run = setup(c);
    const answers = carried(c.kind, run.answers);
    const want = outcome(drive({ ...run, answers }));
    if (NOT_CARRIED.includes(c.name)) {
      assert.notDeepEqual(want, outcome(drive(run)), 'a JSON transport changes these answers');
    } else {
      assert.deepEqual(want, outcome(drive(run)), 'a JSON transport carries these answers unchanged');
    }
    if (answers.some((a) => a.timedOut)) t.mock.timers.enable({ apis: ['setTimeout'] });
    for (const era of ['legacy', 'modern']) {
      if (REFUSED_HANDSHAKE.includes(c.name)) {
        const code = era === 'legacy' ? 'INVALID_RESULT' : 'ERA_NEGOTIATION_FAILED';
        await assert.rejects(driveClient({ ...run, era }), { name: 'SdkError', code });
        continue;
      }
      const got = outcome(await driveClient({ ...run, limits: limitsFor(c, era), era, timers: t.mock.timers }));
      assert.deepEqual(got, want, `${era}: the v2 client's traversal differs from the core's`);
    }
  });
}

test('the shared vectors are there, the listed ones among them', () => {
  assert.ok(files.length >= 60, `only ${files.length} discovery vectors`);
  for (const name of [...NOT_CARRIED, ...REFUSED_HANDSHAKE]) assert.ok(files.includes(`${name}.json`), name);
});
