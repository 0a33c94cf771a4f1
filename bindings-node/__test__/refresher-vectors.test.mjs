// Replays every shared vector in tests/vectors/refresher/ (format: tests/vectors/README.md) through
// the package's Refresher, with the core's traversal pair performed through `Pager.pair` and again by
// `Refresher.traverse` over a TypeScript SDK v2 `Client` (legacy handshake and 2026-07-28, replay.mjs
// `pairTraversed`),
// mirroring core/tests/rules/vectors.rs `run_refresher_case`: the exact actions, timeouts, statuses and
// byte-identical tool output.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Catalog, McplensError, Pager, Refresher, errorCodes } from 'mcplens';

import { pairTraversed, perDriver } from './replay.mjs';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'refresher');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** The core's pair performed over the step's answers and handed back; `abandoned`: handed back
 *  with its first request unanswered. */
async function traversed(machine, server, step, now, via) {
  if (!step.abandoned) return pairTraversed(machine, step.traversed, server, step, now, via);
  const pair = Pager.pair(step.traversed, { server, capabilities: { resources: {} }, now });
  assert.notEqual(pair.nextRequest(), null);
  return machine.traversed(pair, now);
}

function statusValue(catalog, server, now) {
  const { server: _, lastError, ...rest } = catalog.status(server, now);
  return { ...rest, lastError: lastError?.code ?? null };
}

async function runCase(c, via) {
  const bad = [];
  const catalog = new Catalog({ refresh: c.config ?? {} });
  const machine = new Refresher(catalog, BigInt(c.seed ?? 0));
  const callers = new Map();
  const traversals = new Map();
  let now = 0;
  for (const [i, step] of c.steps.entries()) {
    if (step.atMs !== undefined) now = step.atMs;
    const expect = (what, got, want) => {
      try {
        assert.deepStrictEqual(got, want);
      } catch {
        bad.push(`step ${i} (${what}): got ${JSON.stringify(got)}, want ${JSON.stringify(want ?? null)}`);
      }
    };
    if ('attach' in step) expect('attach', machine.attach(step.attach, step.resources), step.epoch);
    else if ('detach' in step) expect('detach', machine.detach(step.detach, step.epoch), step.detached);
    else if ('request' in step) {
      try {
        const caller = machine.request(step.request, step.want, now);
        expect('request', 'expectError' in step, false);
        callers.set(caller, step.caller);
      } catch (e) {
        if (!(e instanceof McplensError)) throw e;
        expect('error', [e.code, e.message], [step.expectError, step.expectMessage]);
      }
    } else if ('watch' in step) {
      expect('watch', machine.watch(step.watch, step.epoch, step.protocolVersion, step.capabilities), step.notifications);
    } else if ('listenAcknowledged' in step) {
      expect('listenAcknowledged', machine.listenAcknowledged(step.listenAcknowledged, step.epoch), step.acknowledged);
    } else if ('listenClosed' in step) {
      const e = machine.listenClosed(step.listenClosed, step.epoch, step.rpcCode ?? undefined, step.liveness, undefined, now);
      const got = e instanceof Error ? [e instanceof McplensError, e.code, e.server, e.message, e.rpcCode ?? null] : e;
      const want = step.expectError === null ? step.closed : [true, step.expectError, step.listenClosed, step.expectMessage, step.rpcCode];
      expect('listenClosed', got, want);
    } else if ('listChanged' in step) {
      expect('listChanged', machine.onListChanged(step.listChanged, step.epoch, now), step.decision);
    } else if ('traversed' in step) {
      const server = traversals.get(step.traversed) ?? 'a';
      expect('traversed', await traversed(machine, server, step, now, via), step.disposition);
    } else if ('timeout' in step) machine.handleTimeout(now);
    else if ('remove' in step) expect('remove', machine.remove(step.remove), step.removed);
    else if ('clear' in step) machine.clear();
    if ('actions' in step) {
      const actions = machine.pollActions();
      for (const action of actions) {
        if ('traverse' in action) traversals.set(action.traverse.traversal, action.traverse.server);
        else action.resolve.callers = action.resolve.callers.map((id) => callers.get(id));
      }
      expect('actions', actions, step.actions);
    }
    if ('timeoutMs' in step) expect('timeoutMs', machine.pollTimeout(), step.timeoutMs);
    for (const [server, want] of Object.entries(step.status ?? {})) {
      expect(`status ${server}`, statusValue(catalog, server, now), want);
    }
    if ('tool' in step) expect('tool', catalog.callListTemplatesTool(step.tool), step.expect);
    if ('visible' in step) expect('visible', catalog.visibleTools(), step.visible);
    for (const [server, want] of Object.entries(step.watching ?? {})) {
      expect(`watching ${server}`, machine.notifications(server), want);
    }
  }
  return bad;
}

test('the shared refresher vectors are there', () => {
  assert.ok(files.length >= 40, `only ${files.length} refresher vectors in ${DIR}`);
});

for (const file of files) perDriver(test, `refresher vector ${file}`, join(DIR, file), runCase);

test('listenClosed: bad input throws invalid_argument (it is never returned as the watch error)', () => {
  const machine = new Refresher(new Catalog());
  const epoch = machine.attach('a', true);
  machine.watch('a', epoch, '2026-07-28', { resources: { listChanged: true } });
  for (const args of [['a', 'x'], ['a', epoch, 'refused'], ['a', epoch, undefined, 'gone']]) {
    assert.throws(
      () => machine.listenClosed(...args),
      (e) => e instanceof McplensError && e.code === 'invalid_argument' && e.server === 'a',
      JSON.stringify(args),
    );
  }
  const cause = new Error('refused');
  const e = machine.listenClosed('a', epoch, -32603, 'unknown', cause);
  assert.deepEqual([e.code, e.rpcCode, e.cause], ['server_error', -32603, cause]);
  machine.watch('a', epoch, '2026-07-28', { resources: { listChanged: true } });
  assert.equal(machine.listenClosed('a', epoch, -32601, 'unknown', cause), 'not_offered');
});

test('errorCodes come from the core', () => {
  assert.equal(errorCodes.length, 24);
  assert.deepEqual(errorCodes.slice(0, 3), ['malformed_result', 'repeated_cursor', 'page_limit']);
});

test('a pair goes back to its refresher once; it fails into itself and is not finished like a pager', () => {
  const catalog = new Catalog();
  const machine = new Refresher(catalog);
  machine.attach('a', true);
  machine.request('a', 'refresh', 0);
  const [{ traverse }] = machine.pollActions();
  const pair = Pager.pair(traverse.traversal, { server: 'a', capabilities: { resources: {} }, now: 0 });
  assert.deepEqual([pair.kind, pair.nextRequest()], ['resources', { method: 'resources/list' }]);
  pair.acceptTransportError(0); // the pair's end, not an exception
  assert.deepEqual([pair.isDone(), pair.kind, pair.nextRequest()], [true, null, null]);
  const invalidState = (e) => e instanceof McplensError && e.code === 'invalid_state';
  assert.throws(() => pair.finish(), invalidState);
  assert.throws(() => machine.traversed(new Pager({ kind: 'resources', server: 'a', resourcesCapability: true, now: 0 })), invalidState);
  assert.equal(machine.traversed(pair, 0), 'failed');
  assert.deepEqual(machine.pollActions().map((a) => a.resolve.outcome.failed.failure.code), ['transport_error']);
  assert.throws(() => machine.traversed(pair, 0), invalidState);
  // Not initialized: the pair ends at once with the core's error, asking nothing.
  machine.request('a', 'refresh', 0);
  const [{ traverse: again }] = machine.pollActions();
  const uninitialized = Pager.pair(again.traversal, { server: 'a', capabilities: null, now: 0 });
  assert.deepEqual([uninitialized.isDone(), uninitialized.nextRequest()], [true, null]);
  assert.equal(machine.traversed(uninitialized, 0), 'failed');
  assert.equal(catalog.status('a', 0).lastError.code, 'invalid_argument');
});

test('one machine drives a catalog: a second Refresher, or the Catalog driving a catalog a Refresher has, throws', async () => {
  const message = 'invalid argument: this catalog already has its refresher (one refresher drives a catalog)';
  const catalog = new Catalog();
  const machine = new Refresher(catalog, 1n);
  assert.throws(() => new Refresher(catalog), (e) => e instanceof McplensError && e.code === 'invalid_argument' && e.message === message);
  assert.throws(() => catalog.addServer('a'), (e) => e.code === 'invalid_argument' && e.message === message);
  await assert.rejects(catalog.settled(), (e) => e.code === 'invalid_argument' && e.message === message);
  // The catalog is still read as usual: the machine's state.
  machine.addServer('a');
  assert.deepEqual(catalog.servers(), ['a']);
  // A Catalog that drove its own first has it.
  const driven = new Catalog();
  driven.addServer('b');
  assert.throws(() => new Refresher(driven), (e) => e.code === 'invalid_argument' && e.message === message);
  // The catalog-level refresh API is gone.
  for (const gone of ['beginRefresh', 'commit', 'fail', 'abandon', 'onListChanged', 'declareResources']) {
    assert.equal(gone in driven, false, gone);
  }
});
