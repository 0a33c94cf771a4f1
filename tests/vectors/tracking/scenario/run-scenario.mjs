// The Node half of the cross-language tracking check: runs scenario.json against a tracked Node
// server (in memory) and prints its events normalized, one JSON object per line (see README.md).
//
//   node tests/vectors/tracking/scenario/run-scenario.mjs            print the normalized events
//   node tests/vectors/tracking/scenario/run-scenario.mjs --check    compare with expected.jsonl (exit 1 if not equal)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Tracker, callbackExporter, track } from 'mcplens';
import * as z from 'zod';

import { SCENARIO, createScenarioServer } from '../../../../bindings-node/__test__/servers/scenario-server.mjs';
import { connectMemory } from '../../../../bindings-node/__test__/tracking-helpers.mjs';

/** Ids, times and SDK names out; `initialize`'s SDK-specific payloads out; keys sorted. */
export function normalize(event) {
  const e = { ...event };
  for (const k of ['id', 'timestamp', 'durationMs', 'sessionId', 'requestId', 'traceId', 'spanId', 'parentSpanId', 'client', 'server']) {
    delete e[k];
  }
  if (e.type === 'mcp:initialize') {
    delete e.parameters;
    delete e.response;
  }
  return sortKeys(e);
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys(v[k])]),
  );
}

const events = [];
const tracker = new Tracker({ exporters: [callbackExporter((batch) => void events.push(...batch))] });
const { client, close } = await connectMemory(track(createScenarioServer(), tracker), SCENARIO.client);
for (const { method, params } of SCENARIO.steps) {
  await client.request(params === undefined ? { method } : { method, params }, z.any()).catch(() => undefined);
}
await close();
await tracker.shutdown(10_000);
events.sort((a, b) => a.requestId - b.requestId);
const lines = events.map((e) => JSON.stringify(normalize(e)));

if (process.argv.includes('--check')) {
  const expected = readFileSync(join(import.meta.dirname, 'expected.jsonl'), 'utf8').trimEnd().split('\n');
  if (JSON.stringify(lines) !== JSON.stringify(expected)) {
    process.stderr.write(`normalized events differ from expected.jsonl:\n${lines.join('\n')}\n`);
    process.exit(1);
  }
} else {
  process.stdout.write(lines.join('\n') + '\n');
}
