// A page handed over as its parsed value (`Pager.acceptPageParsed`: a tape, lib/convert.ts and
// src/convert/tape.rs): read in place exactly as its JSON.stringify text reads, or declined (false,
// nothing applied) when the text would carry it otherwise.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Pager } from 'mcplens';

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
  const inPlace = run((p) => p.acceptPageParsed(value, 1));
  const text = run((p) => (p.acceptPage(JSON.stringify(value) ?? 'null', 1), true));
  return { inPlace, text };
}

const TAKEN = {
  'keys whose value is undefined, a function or a symbol are skipped': page([item({ title: undefined, description: () => 1, mimeType: Symbol('s') })]),
  'undefined, functions and symbols in arrays are null': page([item({ annotations: { audience: ['user', undefined, () => 1, Symbol('s')] } })]),
  'an object without a prototype': page([Object.assign(Object.create(null), item())]),
  'numbers as their text reads them': page([item({ annotations: { priority: -0 } })], { ttlMs: 3.0, other: [2 ** 53 - 1, -(2 ** 53 - 1), 0.1, -2.5e-300, 1.5] }),
  'non-finite numbers are null, as in the text': page([item({ annotations: { priority: NaN } })], { ttlMs: Infinity, other: [-Infinity] }),
  'an undefined page is null, as the facade hands its text': undefined,
  'strings past the scratch buffer, long and short, ASCII or not': page(
    Array.from({ length: 300 }, (_, i) => item({ name: `n${i}é`, title: 'ü'.repeat(i), description: 'd'.repeat(40 * i) + '中😀' })),
  ),
  'short strings past one batch, long ones between them, ASCII or not': page(
    Array.from({ length: 2_000 }, (_, i) => item({ title: 'é😀'.repeat(i % 50), description: 'x'.repeat(i % 700) })),
  ),
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
  'an integer past 2^53 (its text reads back as another)': page([item()], { other: [2 ** 64] }),
  'a negative integer past 2^53': page([item()], { other: [-(2 ** 63)] }),
  'a large integral number written with an exponent': page([item()], { other: [1e21] }),
  'a U+FFFD (as a lone surrogate reaches the addon)': page([item({ title: 'a\uFFFDb' })]),
  'a lone surrogate (the text carries its escape)': page([item({ name: 'a\uD800b' })]),
  'a lone low surrogate in a key': page([item({ ['k\uDC00']: 1 })]),
  'two lone surrogates in neighbouring strings (joined, a pair)': page([item({ name: 'x\uD83D', ['\uDE00k']: 1 })]),
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
    assert.equal(p.acceptPageParsed(value, 1), false);
    // Nothing applied: the pager still waits for this page's answer.
    p.acceptPage(JSON.stringify(page([item()])), 1);
    assert.equal(p.finish().items.length, 1);
  });
}

for (const [name, value] of Object.entries(DECLINED)) {
  test(`declined, then read as text: ${name}`, () => {
    const p = pager();
    assert.equal(p.acceptPageParsed(value, 1), false);
    let text;
    try {
      text = JSON.stringify(value) ?? 'null';
    } catch {
      return; // JSON.stringify throws too: the facade reports it as malformed
    }
    const { text: expected } = both(value);
    const run = () => {
      try {
        return { taken: true, listing: (p.acceptPage(text, 1), p.finish()) };
      } catch (e) {
        return { error: e.code };
      }
    };
    assert.deepEqual(run(), expected);
  });
}

test('declined while Object.prototype has an enumerable key (the walk would read it; the text does not)', () => {
  Object.prototype.polluted = 1;
  try {
    const p = pager();
    assert.equal(p.acceptPageParsed(page([item()]), 1), false);
    // Nothing applied: the same page as text gives the same listing as with no key inherited.
    p.acceptPage(JSON.stringify(page([item()])), 1);
    const listing = p.finish();
    delete Object.prototype.polluted;
    assert.deepEqual(listing, both(page([item()])).text.listing);
  } finally {
    delete Object.prototype.polluted;
  }
  assert.equal(pager().acceptPageParsed(page([item()]), 1), true);
});

test('pages after a large one read from the reused buffers alone', () => {
  const large = page(Array.from({ length: 2_000 }, (_, i) => item({ name: `large-${i}`, description: 'x'.repeat(3_000) })), { nextCursor: 'c1' });
  const small = page([item({ name: 'small' })]);
  const run = (feed) => {
    const p = new Pager({ kind: 'resource_templates', server: 'srv', resourcesCapability: true, limits: { maxBytes: 100_000_000 }, now: 0 });
    for (const [at, value] of [large, small].entries()) {
      p.nextRequest();
      feed(p, value, at + 1);
    }
    return p.finish();
  };
  const parsed = run((p, value, now) => assert.equal(p.acceptPageParsed(value, now), true));
  assert.deepEqual(parsed, run((p, value, now) => p.acceptPage(JSON.stringify(value), now)));
  assert.equal(parsed.items.length, 2_001);
  assert.equal(parsed.items[2_000].name, 'small');
});

test('a tape that is not one value is declined by the addon, nothing applied', async () => {
  const { createRequire } = await import('node:module');
  const native = createRequire(import.meta.url)('../native.js');
  const bytes = new TextEncoder().encode('resourceTemplatesuriTemplatemem://x/{id}namex');
  // The strings hold 45 UTF-16 units.
  const head = [45];
  const good = [...head, 6, 1, 17, 5, 1, 6, 2, 28, 4, 40, 44, 4, 45];
  const bad = {
    'no head': [],
    'an unknown entry': [...head, 9],
    'a count past the tape': [...head, 6, 1, 17, 5, 50, 6, 2, 28, 4, 40, 44, 4, 45],
    'a negative count': [...head, 5, -1],
    'a fractional count': [...head, 5, 0.5],
    'a string past the bytes': [...head, 4, 400],
    'a string ending before it starts': [...head, 6, 1, 17, 4, 3],
    'a string end that is not an integer': [...head, 4, 2.5],
    'an entry missing': [...head, 6, 1],
    'a number missing': [...head, 3],
    'a non-finite number': [...head, 3, Infinity],
    'nesting past the bound (under a key the rules skip)': [...head, 6, 2, 17, 5, 0, 28, ...Array(130).fill([5, 1]).flat(), 0],
  };
  // Strings of their own bytes: [the bytes, the tape].
  const inside = {
    'a string ending inside a character (two lone surrogates joined)': ['😀', [2, 4, 1]],
    'a string ending inside a character, said to be ASCII': ['é', [2, 4, 1]],
  };
  const fresh = () => {
    const p = new native.Pager('resource_templates', 'srv', true, undefined, 0, undefined);
    p.nextRequest();
    return p;
  };
  const cases = [...Object.entries(bad).map(([name, tape]) => [name, bytes, tape])];
  for (const [name, [text, tape]] of Object.entries(inside)) cases.push([name, new TextEncoder().encode(text), tape]);
  for (const [name, text, tape] of cases) {
    const p = fresh();
    assert.equal(p.acceptPageTape(text, new Float64Array(tape), 1), false, name);
    p.acceptPage('{"resourceTemplates":[]}', 1);
    assert.deepEqual(JSON.parse(p.finish().toJson()).items, [], name);
  }
  const p = fresh();
  assert.equal(p.acceptPageTape(bytes, new Float64Array(good), 1), true);
  assert.deepEqual(JSON.parse(p.finish().toJson()).items.map((t) => [t.uriTemplate, t.name]), [['mem://x/{id}', 'x']]);
});
