// Replays the shared tracking vectors (`tests/vectors/tracking*/`, format in tests/vectors/README.md)
// through the public Node tracker: each event vector's operation goes through `Tracker.openSession()`
// and `TrackingSession.record()` as a Node host hands it over (params and result as JS values,
// `JSON.stringify`ed by the facade), to a JSONL file whose line must be byte for byte the one Rust
// and Python write; each config vector builds `new Tracker({...})` from its options.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Tracker, callbackExporter, jsonlExporter, mcpcatExporter, otlpExporter } from 'mcplens';

const VECTORS = new URL('../../tests/vectors/', import.meta.url).pathname;

function cases(sub) {
  return readdirSync(join(VECTORS, sub))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(VECTORS, sub, f), 'utf8')));
}

const maskDigits = (s) => s.replace(/[0-9]/g, '#');

function exporter(spec, dir) {
  const { type, ...rest } = spec;
  if (type === 'jsonl') return jsonlExporter(rest.path === undefined ? {} : { path: rest.path === '' ? '' : join(dir, rest.path) });
  if (type === 'otlp') return otlpExporter({ endpoint: rest.endpoint, headers: Object.fromEntries(rest.headers ?? []) });
  if (type === 'mcpcat') return mcpcatExporter(rest);
  assert.equal(type, 'callback');
  return callbackExporter(() => {});
}

function trackerOptions(options, dir) {
  const out = { ...options };
  if (options.exporters !== undefined) out.exporters = options.exporters.map((e) => exporter(e, dir));
  return out;
}

test('there are vectors', () => {
  assert.ok(cases('tracking').length >= 40);
  assert.ok(cases('tracking-config').length >= 10);
});

for (const c of cases('tracking')) {
  test(`event vector ${c.name}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcplens-vec-'));
    const out = join(dir, 'events.jsonl');
    const tracker = new Tracker({
      ...trackerOptions(c.options ?? {}, dir),
      exporters: [jsonlExporter({ path: out })],
      redact: c.redact === undefined ? undefined : (assert.equal(c.redact, 'mask-digits'), maskDigits),
      server: c.server,
      seed: c.seed,
    });
    const s = c.session;
    const session = tracker.openSession({ transportSessionId: s.transportSessionId, transport: s.transport });
    if (s.client !== undefined || s.protocolVersion !== undefined) session.setClient(s.client, s.protocolVersion);
    if (s.identity !== undefined) {
      session.identify(() => s.identity);
    }
    const op = c.operation;
    const request = {};
    if (op.requestId !== undefined) request.id = op.requestId;
    if (op.params !== undefined) request.params = op.params;
    const outcome = op.error !== undefined ? { error: op.error } : { result: op.result };
    session.record(op.method, request, outcome, op.startedAtMs, op.durationUs / 1000);
    await tracker.flush(30_000);
    await tracker.shutdown(30_000);
    const lines = existsSync(out) ? readFileSync(out, 'utf8').split('\n').slice(0, -1) : [];
    assert.deepEqual(lines, c.expect === null ? [] : [c.expect]);
  });
}

for (const c of cases('tracking-config')) {
  test(`config vector ${c.name}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcplens-cfg-'));
    let tracker;
    try {
      tracker = new Tracker(trackerOptions(c.options, dir));
    } catch (e) {
      assert.ok(c.expectError, String(e));
      assert.equal(e.name, 'McplensError');
      assert.deepEqual([e.code, e.option], [c.expectError.code, c.expectError.option]);
      return;
    }
    assert.equal(c.expectError, undefined);
    assert.deepEqual(
      tracker.stats().exporters.map((e) => e.name),
      c.expect.exporters,
    );
    if (c.expect.sessionId !== undefined) {
      assert.equal(tracker.openSession({ transportSessionId: c.transportSessionId }).id, c.expect.sessionId);
      await tracker.shutdown(5_000);
    }
  });
}
