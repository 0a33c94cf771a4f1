// The listing handed back as parts (`NativeListing.toParts`, src/convert/listing.rs, assembled by
// lib/convert.ts) is the listing its JSON text gives: the same items, keys in the same order.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

import { Pager } from 'mcplens';

const native = createRequire(import.meta.url)('../native.js');

const item = (extra = {}) => ({ uriTemplate: 'mem://x/{id}', name: 'x', ...extra });
const page = (items, extra = {}) => ({ resourceTemplates: items, ...extra });

const SANITIZED = [
  item({ title: 'T\u0007', description: 'd\n\u202e', mimeType: 'text/plain', annotations: { audience: ['assistant', 'user', 'user'], priority: 0.25, lastModified: '2025-01-01T00:00:00Z' } }),
  item({ uriTemplate: 'bad {', name: 'dropped' }),
  item({ annotations: { priority: 1, audience: 'user' } }),
  item({ title: ' spaced\t', annotations: {} }),
];
const CASES = {
  // The listing's own buffer, handed over as one external string the items slice.
  'ASCII (the listing buffer, shared)': [SANITIZED, true],
  // Every string copied into one string, its bounds in UTF-16 units.
  'not ASCII (a copy)': [[...SANITIZED, item({ name: 'é中😀', annotations: {} })], false],
  'no items': [[item({ uriTemplate: 'bad {' })], false],
};

for (const [name, [items, shared]] of Object.entries(CASES)) {
  test(`a listing handed back as parts is the listing its JSON text gives: ${name}`, () => {
    for (const kind of ['resource_templates', 'resources']) {
      const list = kind === 'resources' ? { resources: items.map(({ uriTemplate, ...i }, n) => ({ uri: uriTemplate === 'bad {' ? '' : `mem://${n}`, size: n, ...i })) } : page(items);
      const text = JSON.stringify({ ...list, ttlMs: 5, cacheScope: 'public' });
      const feed = (p) => (p.nextRequest(), p.acceptPage(text, 1), p.finish());
      const listing = feed(new Pager({ kind, server: 'sérver', resourcesCapability: true, now: 0 }));
      const nativeListing = feed(new native.Pager(kind, 'sérver', true, undefined, 0, undefined));
      const json = JSON.parse(nativeListing.toJson());
      assert.deepEqual(listing, json);
      assert.equal(JSON.stringify(listing), JSON.stringify(json), 'the same keys in the same order');
      assert.equal(listing.items.length, items.filter((i) => i.uriTemplate !== 'bad {').length);
      assert.equal(nativeListing.toParts().shared, shared);
    }
  });
}

test('items sliced from a shared listing buffer outlive the listing', () => {
  // In a process with gc exposed: listings made and dropped, their buffers let go by V8's
  // finalizers, while the items of the first are kept and read after every collection.
  const script = `
    const { Pager } = require(${JSON.stringify(createRequire(import.meta.url).resolve('mcplens'))});
    const page = (round) => JSON.stringify({ resourceTemplates: Array.from({ length: 200 }, (_, i) =>
      ({ uriTemplate: 'mem://r' + round + '/{id}/' + i, name: 'n' + round + '-' + i, description: String(round).repeat(300) })) });
    const list = (round) => { const p = new Pager({ kind: 'resource_templates', server: 's', resourcesCapability: true, now: 0 });
      p.nextRequest(); p.acceptPage(page(round), 1); return p.finish().items; };
    const kept = list(7);
    const expected = JSON.stringify(kept);
    for (let round = 0; round < 50; round++) { list(round); globalThis.gc(); }
    if (JSON.stringify(kept) !== expected) throw new Error('a kept item changed');
    console.log(kept.length);
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.equal(out.trim(), '200');
});
