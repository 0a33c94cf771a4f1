// How a tracked process ends, in real child processes: `process.exit()` and SIGTERM lose no event
// recorded before them (native exporters; the exit flush runs on the JS thread, so a JS callback
// exporter or redact hook cannot run then — docs/tracking.md), and a signal the app listens for
// stays the app's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';

import { tempDir } from './tracking-helpers.mjs';
import { EXPECTED } from './servers/scenario-server.mjs';

const SCENARIO_SERVER = join(import.meta.dirname, 'servers', 'scenario-server.mjs');
const HELPERS = join(import.meta.dirname, 'tracking-helpers.mjs');

/** A child that tracks the scenario server in memory with a JSONL exporter, runs the scenario, then
 * `ending` (JS text); `before` runs first. Resolves with its exit code, signal, output and events. */
function child(ending, { before = '', onReady } = {}) {
  const path = join(tempDir(), 'events.jsonl');
  const script = `
    ${before}
    import { Tracker, track, jsonlExporter } from 'mcplens';
    import { createScenarioServer, runScenario } from ${JSON.stringify(SCENARIO_SERVER)};
    import { connectMemory } from ${JSON.stringify(HELPERS)};
    const tracker = new Tracker({ exporters: [jsonlExporter({ path: process.argv[1] })] });
    const c = await connectMemory(track(createScenarioServer(), tracker));
    await runScenario(c.client);
    ${ending}
  `;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script, path], { cwd: import.meta.dirname });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => {
    stdout += d;
    if (stdout.includes('ready\n') && onReady) {
      onReady(proc);
      onReady = undefined;
    }
  });
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code, signal) => {
      const events = existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean) : [];
      resolve({ code, signal, stdout, stderr, events: events.map((l) => JSON.parse(l).type) });
    });
  });
}

const TYPES = EXPECTED.map((e) => e.type);

test('process.exit() right after the last request: every event is in the file', async () => {
  const r = await child('process.exit(3);');
  assert.equal(r.stderr, '');
  assert.equal(r.code, 3);
  assert.deepEqual(r.events, TYPES);
});

test('SIGTERM with no listener of the app: flushed, then the signal ends the process as it would have', async () => {
  const r = await child(`console.log('ready'); setInterval(() => {}, 1000);`, { onReady: (p) => p.kill('SIGTERM') });
  assert.equal(r.stderr, '');
  assert.deepEqual([r.code, r.signal], [null, 'SIGTERM']);
  assert.deepEqual(r.events, TYPES);
});

test("SIGTERM the app listens for, before or after track(): the app's listener decides, the exit flush delivers", async () => {
  const listener = `process.on('SIGTERM', () => { console.log('the app ends'); process.exit(0); });`;
  for (const [before, after] of [[listener, ''], ['', listener]]) {
    const r = await child(`${after} console.log('ready'); setInterval(() => {}, 1000);`, {
      before,
      onReady: (p) => p.kill('SIGTERM'),
    });
    assert.equal(r.stderr, '');
    assert.deepEqual([r.code, r.signal], [0, null]);
    assert.equal(r.stdout, 'ready\nthe app ends\n');
    assert.deepEqual(r.events, TYPES);
  }
});
