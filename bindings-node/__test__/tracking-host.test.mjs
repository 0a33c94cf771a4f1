// Replays the tracker's host contract (tests/vectors/tracking-host/contract.json) through the public
// Node API: what the Python and Node bindings once answered differently (an identity whose id/name
// is not a string, isError when responses are not captured, a negative flush timeout), decided once
// in the core (core/src/tracking/pipeline/host.rs); bindings-python/tests/test_tracking_host.py replays the
// same file through the Python package.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McplensError, Tracker, callbackExporter, track } from 'mcplens';

import { collector } from './tracking-helpers.mjs';

const CONTRACT = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'tracking-host', 'contract.json'), 'utf8'));

for (const c of CONTRACT.identify) {
  test(`identify answering ${JSON.stringify(c.answer)}`, async () => {
    const { events, exporter } = collector();
    const tracker = new Tracker({ exporters: [exporter] });
    const session = tracker.openSession({ transport: 'memory' });
    session.identify(() => c.answer);
    session.record('tools/list', { id: 1 }, { result: { tools: [] } }, Date.now(), 1);
    await tracker.flush(10_000);
    assert.deepEqual(events.map((e) => e.identity ?? null), [c.identity]);
    assert.equal(tracker.stats().unidentified, c.unidentified ? 1 : 0);
    await tracker.shutdown(5_000);
  });
}

for (const c of CONTRACT.toolsCallResponsesOff) {
  test(`tools/call with responses not captured, isError ${JSON.stringify(c.isError)}`, async () => {
    const { events, exporter } = collector();
    const tracker = new Tracker({ exporters: [exporter], captureResponses: false });
    const session = tracker.openSession({ transport: 'memory' });
    const result = { content: [{ type: 'text', text: 'not kept' }], isError: c.isError };
    session.record('tools/call', { id: 1, params: { name: 'divide', arguments: { a: 1 } } }, { result }, Date.now(), 1);
    await tracker.flush(10_000);
    assert.equal(events.length, 1);
    const [e] = events;
    assert.deepEqual([e.isError, e.error ?? null, 'response' in e], [c.error !== null, c.error, false]);
    await tracker.shutdown(5_000);
  });
}

for (const c of CONTRACT.timeouts) {
  test(`flush and shutdown with a timeout of ${c.value}`, async () => {
    const tracker = new Tracker({ exporters: [collector().exporter] });
    tracker.openSession();
    for (const call of [(t) => tracker.flush(t), (t) => tracker.shutdown(t)]) {
      const e = await call(c.value).then(() => assert.fail('expected an error'), (err) => err);
      assert.ok(e instanceof McplensError, String(e));
      assert.deepEqual([e.code, e.option], [c.expectError.code, c.expectError.option.node]);
    }
    await tracker.shutdown(5_000);
  });
}

for (const c of CONTRACT.hookTimeouts) {
  test(`a ${c.hook} hook ${c.lateMs} ms late under ${JSON.stringify(c.options)}`, async () => {
    const late = () => new Promise((resolve) => setTimeout(resolve, c.lateMs));
    const { events, exporter } = collector();
    const hooks =
      c.hook === 'redact'
        ? { exporters: [exporter], redact: async (text) => (await late(), text) }
        : { exporters: [callbackExporter(async (batch) => (await late(), void events.push(...batch)))] };
    const tracker = new Tracker({ ...hooks, ...c.options });
    const session = tracker.openSession({ transport: 'memory' });
    for (let i = 0; i < c.requests; i++) {
      session.record('tools/call', { id: i, params: { name: 'echo' } }, { result: { content: [] } }, Date.now(), 1);
    }
    await tracker.flush(10_000);
    const s = tracker.stats();
    const seen = { recorded: s.recorded, redactionFailed: s.redactionFailed, failed: s.exporters[0].failed };
    assert.deepEqual(Object.fromEntries(Object.keys(c.stats).map((k) => [k, seen[k]])), c.stats);
    await tracker.shutdown(5_000);
    await late(); // the late call ends before the test does
  });
}

for (const c of CONTRACT.transportNames) {
  test(`a server on a transport named ${JSON.stringify(c.typeName)}: its events say ${c.transport}`, async () => {
    const { events, exporter } = collector();
    const tracker = new Tracker({ exporters: [exporter] });
    const server = new Server({ name: 'named', version: '1.0.0' }, { capabilities: {} });
    track(server, tracker);
    const sent = [];
    const Named = {
      [c.typeName]: class {
        async start() {}
        async send(message) {
          sent.push(message);
        }
        async close() {}
      },
    }[c.typeName];
    const transport = new Named();
    await server.connect(transport);
    transport.onmessage({ jsonrpc: '2.0', id: 1, method: 'ping' });
    while (sent.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await tracker.flush(10_000);
    assert.deepEqual(events.map((e) => e.transport ?? null), [c.transport]);
    await tracker.shutdown(5_000);
  });
}

