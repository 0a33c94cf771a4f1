// A page handed over as its parsed value (`Pager.acceptPageValue`, src/convert/values.rs): read in
// place exactly as its JSON.stringify text reads, or declined (false, nothing applied) when the text
// would carry it otherwise; the listing handed back as parts (src/convert/listing.rs) is the one
// its JSON text gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createRequire } from 'node:module';

import { Pager } from 'mcplens';

const native = createRequire(import.meta.url)('../native.js');

const item = (extra = {}) => ({ uriTemplate: 'mem://x/{id}', name: 'x', ...extra });
const page = (items, extra = {}) => ({ resourceTemplates: items, ...extra });

function pager() {
  const p = new Pager({ kind: 'resource_templates', server: 'srv', resourcesCapability: true, now: 0 });
  p.nextRequest();
  return p;
}

/** The listing or error code of one page handed over as `value` in place, and as its text. */
function both(value) {
  const run = (feed) => {
    const p = pager();
    try {
      const taken = feed(p);
      return { taken, listing: p.finish() };
    } catch (e) {
      return { error: e.code };
    }
  };
  const inPlace = run((p) => p.acceptPageValue(value, 1));
  const text = run((p) => (p.acceptPage(JSON.stringify(value), 1), true));
  return { inPlace, text };
}

const TAKEN = {
  'keys whose value is undefined, a function or a symbol are skipped': page([item({ title: undefined, description: () => 1, mimeType: Symbol('s') })]),
  'undefined, functions and symbols in arrays are null': page([item({ annotations: { audience: ['user', undefined, () => 1, Symbol('s')] } })]),
  'an object without a prototype': page([Object.assign(Object.create(null), item())]),
  'numbers as their text reads them': page([item({ annotations: { priority: -0 } })], { ttlMs: 3.0, other: [1e21, 2 ** 64, -(2 ** 63), -(2 ** 64), 0.1] }),
  'a toJSON that is not a function is a key like any': page([item({ toJSON: 5 })]),
  'a page with nextCursor, an empty string and non-ASCII text': page([item({ title: 'é中😀', description: '' })], { nextCursor: null }),
  'a page that breaks a rule fails as its text does': page([item({ name: 5 })]),
  'not an object': [page([item()])],
};

for (const [name, value] of Object.entries(TAKEN)) {
  test(`read in place: ${name}`, () => {
    const { inPlace, text } = both(value);
    assert.notEqual(inPlace.taken, false, 'taken');
    assert.deepEqual(inPlace, text);
  });
}

class Item {
  constructor() {
    Object.assign(this, item());
  }
}
class Roles extends Array {}
const circular = item();
circular.self = circular;
let deep = {};
for (let i = 0; i < 200; i++) deep = { deep };

const DECLINED = {
  'a BigInt (JSON.stringify throws)': page([item({ _meta: { n: 10n } })]),
  'a non-finite number (the text has null)': page([item({ annotations: { priority: NaN } })]),
  'an infinite number': page([item()], { ttlMs: Infinity }),
  'a lone surrogate (the text carries its escape)': page([item({ name: 'a\uD800b' })]),
  'a lone low surrogate in a key': page([item({ ['k\uDC00']: 1 })]),
  'a toJSON method': page([item({ toJSON: () => ({}) })]),
  'a Date (its toJSON)': page([item({ annotations: { lastModified: new Date(0) } })]),
  "a class's instance": page([new Item()]),
  'a boxed string': page([item({ name: new String('x') })]),
  'an Array subclass': page(Roles.from([item()])),
  'a Map': page([item({ _meta: new Map() })]),
  'nesting past the core bound': page([item({ _meta: deep })]),
  'a circular reference': page([circular]),
  'a getter that throws': page([
    Object.defineProperty(item(), 'title', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    }),
  ]),
};

for (const [name, value] of Object.entries(DECLINED)) {
  test(`declined: ${name}`, () => {
    const p = pager();
    assert.equal(p.acceptPageValue(value, 1), false);
    // Nothing applied: the pager still waits for this page's answer.
    p.acceptPage(JSON.stringify(page([item()])), 1);
    assert.equal(p.finish().items.length, 1);
  });
}

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
