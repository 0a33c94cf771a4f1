// A tracker's native state lives as long as something can use it: once its `Tracker`, sessions and
// tracked servers are garbage-collected, the addon frees it (its threads end, its memory goes), and
// the final drop never runs on the JS thread. In child processes with --expose-gc. (Freed memory is
// checked by what the addon holds, not by RSS: V8's heap sizing and glibc's thread-stack cache move
// RSS by tens of MiB over 10,000 trackers either way.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import test from 'node:test';
import { promisify } from 'node:util';

import { tempDir } from './tracking-helpers.mjs';

const run = promisify(execFile);

/** Runs `body` (ES module text with `Tracker`, `jsonlExporter`, the addon as `native`, `path` and
 * `settle()` in scope) in a child with --expose-gc; returns what it printed, parsed. */
async function child(body) {
  const script = `
    import { createRequire } from 'node:module';
    import { Tracker, jsonlExporter } from 'mcplens';
    const native = createRequire(import.meta.url)(${JSON.stringify(join(import.meta.dirname, '..', 'native.js'))});
    const path = process.argv[1];
    // Collect, then let the finalizers and the release threads run.
    async function settle() {
      for (let i = 0; i < 10; i++) {
        globalThis.gc();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    ${body}
  `;
  const { stdout, stderr } = await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', script, join(tempDir(), 'events.jsonl')], {
    cwd: import.meta.dirname,
    timeout: 300_000,
  });
  assert.equal(stderr, '');
  return JSON.parse(stdout);
}

test('10,000 trackers created and shut down, then collected: the addon holds none of them', async () => {
  const { before, during, after } = await child(`
    await settle();
    const before = native.trackingLive();
    let during = 0;
    for (let i = 0; i < 10000; i++) {
      const t = new Tracker({ exporters: [jsonlExporter({ path })] });
      t.openSession();
      await t.shutdown(5000);
      if (i === 0) during = native.trackingLive();
    }
    await settle();
    console.log(JSON.stringify({ before, during, after: native.trackingLive() }));
  `);
  assert.equal(during, before + 1, 'a started tracker is held while it is referenced');
  assert.equal(after, before);
});

test('300 trackers dropped without shutdown: once collected, their threads are gone', { skip: process.platform !== 'linux' && 'reads /proc/self/task' }, async () => {
  const { before, started, after } = await child(`
    const { readdirSync } = await import('node:fs');
    const threads = () => readdirSync('/proc/self/task').length;
    await settle();
    const before = threads();
    for (let i = 0; i < 300; i++) new Tracker({ exporters: [jsonlExporter({ path })] }).openSession();
    const started = threads();
    let after = started;
    for (let round = 0; round < 100 && after > before + 4; round++) {
      await settle();
      after = threads();
    }
    console.log(JSON.stringify({ before, started, after }));
  `);
  assert.ok(started >= before + 600, `each tracker runs a worker and an exporter thread (${before} → ${started})`);
  assert.ok(after <= before + 4, `${after - before} more threads than before the trackers`);
});

test('each JS worker thread’s request-path scratch is freed with the thread', async () => {
  const { before, during, after } = await child(`
    const { Worker } = await import('node:worker_threads');
    const work = \`
      const { Tracker, jsonlExporter } = await import('mcplens');
      const t = new Tracker({ exporters: [jsonlExporter({ path: \${JSON.stringify(path)} })] });
      t.openSession().record('tools/call', { id: 1, params: { name: 'echo' } }, { result: {} }, Date.now(), 1);
      const { parentPort } = await import('node:worker_threads');
      parentPort.postMessage('recorded');
      await new Promise((resolve) => parentPort.once('message', resolve));
      await t.shutdown(5000);
    \`;
    await settle();
    const before = native.trackingScratches();
    let during = 0;
    for (let i = 0; i < 40; i++) {
      const w = new Worker(work, { eval: true });
      await new Promise((resolve) => w.once('message', resolve));
      during = Math.max(during, native.trackingScratches()); // the worker's own, while it runs
      w.postMessage('go');
      await new Promise((resolve, reject) => w.once('exit', resolve).once('error', reject));
    }
    let after = native.trackingScratches();
    for (let round = 0; round < 50 && after > before; round++) {
      await settle();
      after = native.trackingScratches();
    }
    console.log(JSON.stringify({ before, during, after }));
  `);
  assert.ok(before >= 1, 'this thread has its own');
  assert.ok(during > before, `the workers made their own (${JSON.stringify({ before, during, after })})`);
  assert.ok(after <= before, `${after - before} worker scratches left after 40 workers (${JSON.stringify({ before, during, after })})`);
});
