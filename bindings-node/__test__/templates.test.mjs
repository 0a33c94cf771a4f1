// RFC 6570 templates from Node: the external uritemplate-test suite (tests/uritemplate-test/,
// unmodified) and the shared template vectors (tests/vectors/templates/), as Rust runs them
// (core/tests/rules/templates.rs).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import { McplensError, expand, listResourceTemplatesTool, listResourcesTool, matches, variables } from 'mcplens';

const TESTS = join(import.meta.dirname, '..', '..', 'tests');
const SUITE = join(TESTS, 'uritemplate-test');
const VECTORS = join(TESTS, 'vectors', 'templates');
const vectorFiles = readdirSync(VECTORS)
  .filter((f) => f.endsWith('.json'))
  .sort();

function suiteCases(file) {
  const doc = JSON.parse(readFileSync(join(SUITE, file), 'utf8'));
  return Object.entries(doc).flatMap(([group, body]) => body.testcases.map(([t, want]) => ({ group, values: body.variables, t, want })));
}

for (const [file, atLeast] of [['spec-examples.json', 60], ['extended-tests.json', 50], ['negative-tests.json', 30]]) {
  test(`uritemplate-test ${file}: every case`, () => {
    const cases = suiteCases(file);
    const bad = [];
    for (const { group, values, t, want } of cases) {
      let got = null;
      try {
        got = expand(t, values);
      } catch (e) {
        if (!(e instanceof McplensError)) throw e;
      }
      const ok = want === false ? got === null : (typeof want === 'string' ? [want] : want).includes(got);
      if (!ok) bad.push(`${file} / ${group}: ${JSON.stringify(t)} gave ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
    console.log(`${file}: ${cases.length - bad.length}/${cases.length} cases passed`);
    assert.ok(cases.length >= atLeast);
    assert.deepEqual(bad, [], bad.join('\n'));
  });
}

// A JavaScript object puts integer-like keys first ({"12": …, "11": …} becomes {"11", "12"}), so here a
// matched associative array may expand to another accepted order of the same case (Rust and Python
// keep the order: they require the very URI).
test('uritemplate-test: every expected URI matches back to values that expand to an accepted URI', () => {
  const bad = [];
  for (const file of ['spec-examples.json', 'extended-tests.json']) {
    for (const { group, t, want } of suiteCases(file)) {
      const accepted = typeof want === 'string' ? [want] : want;
      for (const uri of accepted) {
        const found = matches(t, uri);
        if (found === null || !accepted.includes(expand(t, found))) bad.push(`${group}: ${JSON.stringify(t)} on ${JSON.stringify(uri)} gave ${JSON.stringify(found)}`);
      }
    }
  }
  assert.deepEqual(bad, [], bad.join('\n'));
});

function runVectorCase(c) {
  let got;
  try {
    if (c.op === 'variables') got = variables(c.template);
    else if (c.op === 'expand') got = expand(c.template, c.values);
    else if (c.op === 'matches') got = matches(c.template, c.uri);
    else return `unknown op ${c.op}`;
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    if (c.expectError !== e.code) return `${c.op} ${JSON.stringify(c.template)}: error ${e.code} (${e.message}), want ${c.expectError}`;
    if (c.expectMessage !== undefined && e.message !== c.expectMessage) {
      return `${c.op} ${JSON.stringify(c.template)}: message ${JSON.stringify(e.message)}, want ${JSON.stringify(c.expectMessage)}`;
    }
    return null;
  }
  if (c.expectError !== undefined) return `${c.op} ${JSON.stringify(c.template)}: got ${JSON.stringify(got)}, want error ${c.expectError}`;
  // Compared as JSON text: the order of an associative array counts.
  if (JSON.stringify(got) !== JSON.stringify(c.expect)) {
    return `${c.op} ${JSON.stringify(c.template)}: got ${JSON.stringify(got)}, want ${JSON.stringify(c.expect)}`;
  }
  return null;
}

test('the shared template vectors are there', () => {
  assert.ok(vectorFiles.length >= 10, `only ${vectorFiles.length} template vectors`);
});

for (const file of vectorFiles) {
  test(`template vector ${file}`, () => {
    const doc = JSON.parse(readFileSync(join(VECTORS, file), 'utf8'));
    assert.equal(doc.name, basename(file, '.json'));
    const bad = doc.cases.map(runVectorCase).filter((p) => p !== null);
    assert.deepEqual(bad, [], bad.join('\n'));
  });
}

test('JavaScript values: 6.0 is 6, undefined is undefined, a BigInt or a cycle is invalid_value', () => {
  assert.equal(expand('{x}', { x: 6.0 }), '6');
  assert.equal(expand('{?a,b}', { a: undefined, b: 'x' }), '?b=x');
  for (const bad of [{ x: 1n }, (() => { const o = {}; o.x = o; return o; })(), undefined]) {
    assert.throws(() => expand('{x}', bad), (e) => e instanceof McplensError && e.code === 'invalid_value');
  }
});

test("the resources tool's spec is the core's; both descriptions say what an empty listing means", () => {
  assert.equal(listResourcesTool.name, 'ListMcpResourcesTool');
  assert.equal(listResourcesTool.deferred, true);
  assert.equal(listResourcesTool.annotations.readOnlyHint, true);
  assert.ok(Object.isFrozen(listResourcesTool.inputSchema.properties));
  for (const spec of [listResourcesTool, listResourceTemplatesTool]) {
    assert.match(spec.description, /An empty listing means the connected servers offer no .*, not that a server has no tools\./);
  }
});
