// The listing handed back as parts (`NativeListing.toParts`, src/convert/listing.rs, assembled by
// lib/convert.ts) is the listing its JSON text gives: the same items, keys in the same order.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createRequire } from 'node:module';

import { Pager } from 'mcplens';

const native = createRequire(import.meta.url)('../native.js');

const item = (extra = {}) => ({ uriTemplate: 'mem://x/{id}', name: 'x', ...extra });
const page = (items, extra = {}) => ({ resourceTemplates: items, ...extra });

test('a listing handed back as parts is the listing its JSON text gives', () => {
  const items = [
    item({ title: 'T\u0007', description: 'd\n\u202e', mimeType: 'text/plain', annotations: { audience: ['assistant', 'user', 'user'], priority: 0.25, lastModified: '2025-01-01T00:00:00Z' } }),
    item({ name: 'é中😀', annotations: {} }),
    item({ uriTemplate: 'bad {', name: 'dropped' }),
    item({ annotations: { priority: 1, audience: 'user' } }),
  ];
  for (const kind of ['resource_templates', 'resources']) {
    const list = kind === 'resources' ? { resources: items.map(({ uriTemplate, ...i }, n) => ({ uri: n === 2 ? '' : `mem://${n}`, size: n, ...i })) } : page(items);
    const text = JSON.stringify({ ...list, ttlMs: 5, cacheScope: 'public' });
    const feed = (p) => (p.nextRequest(), p.acceptPage(text, 1), p.finish());
    const listing = feed(new Pager({ kind, server: 'sérver', resourcesCapability: true, now: 0 }));
    const json = JSON.parse(feed(new native.Pager(kind, 'sérver', true, undefined, 0, undefined)).toJson());
    assert.deepEqual(listing, json);
    assert.equal(JSON.stringify(listing), JSON.stringify(json), 'the same keys in the same order');
    assert.equal(listing.items.length, 3);
  }
});
