// The hostile-server matrix from Node: `Catalog` over the SDK's StdioClientTransport against
// tests/servers/hostile/server.py (Python 3, standard library), one test per row of
// tests/servers/hostile/cases.json (the table the Rust and Python runners read too); rows marked
// `http` run again over the SDK's StreamableHTTPClientTransport against `server.py --http`.
//
// Each case: refresh once against the well-formed server, then again against the misbehaving one;
// the outcome must be the table's code (or `ok`) within the deadline plus slack, this process's
// peak RSS (VmHWM, reset per case) must grow by at most the table's bound, and after a failure the
// previous good templates must survive. Rows are written to .build/hostile/node.json (stdio) and
// node-http.json (streamable HTTP) for tests/servers/hostile/summary.py.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Catalog, McplensError } from 'mcplens';

const ROOT = join(import.meta.dirname, '..', '..');
const HOSTILE = join(ROOT, 'tests', 'servers', 'hostile');
const TABLE = JSON.parse(readFileSync(join(HOSTILE, 'cases.json'), 'utf8'));
// The interpreter that runs server.py (over either transport), and how long it may take to listen.
const PYTHON = 'python3';
const LISTEN_TIMEOUT_MS = 10_000;
// Rows per transport, and the summary.py column each is written as.
const RESULTS = { stdio: [], http: [] };
const COLUMNS = { stdio: 'node', http: 'node-http' };

/** `VmRSS` / `VmHWM` of this process in KiB (0 without /proc). */
function rssKb(field) {
  try {
    const line = readFileSync('/proc/self/status', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line === undefined ? 0 : Number.parseInt(line.split(/\s+/)[1], 10);
  } catch {
    return 0;
  }
}

/** Resets the peak-RSS mark to the current RSS (Linux clear_refs 5); returns the RSS in KiB. */
function resetPeakRss() {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // not Linux: growth reads as an upper bound
  }
  return rssKb('VmRSS');
}

/** Traversals of `method` the server saw (requests without a cursor), from its --log. */
function traversals(log, method) {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return 0;
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((e) => e.method === method && !e.cursor).length;
}

/** `expect` or this language's override: one code, or any of several. */
function expectations(c) {
  const e = c.expect_node ?? c.expect;
  return Array.isArray(e) ? e : [e];
}

/**
 * Starts `server.py --case` for `kind` ('stdio' or 'http'): resolves to the SDK client transport
 * and `stop()`, which ends the server process (over stdio the transport owns the process and its
 * close ends it; over HTTP the server is a child of this test, listening on a port it picks).
 */
async function startServer(kind, c, log) {
  const args = [join(HOSTILE, 'server.py'), '--case', c.case, '--log', log];
  if (kind === 'stdio') {
    const transport = new StdioClientTransport({ command: PYTHON, args, stderr: 'ignore' });
    return { transport, stop: async () => {} };
  }
  const server = spawn(PYTHON, [...args, '--http', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => {
    server.once('close', resolve);
    server.once('error', resolve); // never started: there is nothing to wait for
  });
  const stop = async () => {
    server.kill('SIGKILL');
    await exited;
  };
  try {
    // server.py prints "listening on http://127.0.0.1:PORT/mcp" on stderr once it accepts.
    const url = await new Promise((resolve, reject) => {
      let text = '';
      const timer = setTimeout(
        () => reject(new Error(`server.py not listening after ${LISTEN_TIMEOUT_MS} ms`)),
        LISTEN_TIMEOUT_MS,
      );
      server.stderr.setEncoding('utf8');
      server.stderr.on('data', function onData(chunk) {
        text += chunk;
        const m = /listening on (\S+)/.exec(text);
        if (m === null) return;
        clearTimeout(timer);
        server.stderr.off('data', onData);
        server.stderr.resume(); // drain (and drop) anything it prints later
        resolve(m[1]);
      });
      exited.then((code) => reject(new Error(`server.py exited (${code}) before listening: ${text}`)));
    });
    return { transport: new StreamableHTTPClientTransport(new URL(url)), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

after(() => {
  const out = process.env.MCPLENS_HOSTILE_RESULTS ?? join(ROOT, '.build', 'hostile');
  mkdirSync(out, { recursive: true });
  for (const [kind, rows] of Object.entries(RESULTS)) {
    if (rows.length === 0) continue;
    const column = COLUMNS[kind];
    writeFileSync(join(out, `${column}.json`), `${JSON.stringify({ column, rows }, null, 1)}\n`);
  }
});

describe('hostile-server matrix (stdio)', () => {
  for (const c of TABLE.cases) test(c.case, () => runCase(c, 'stdio'));
});

describe('hostile-server matrix (streamable HTTP)', () => {
  for (const c of TABLE.cases.filter((c) => c.http)) test(c.case, () => runCase(c, 'http'));
});

/** One row of the table over `kind` ('stdio' or 'http'); the checks are the same for both. */
async function runCase(c, kind) {
  const settings = { ...TABLE.defaults, ...c };
  const expect = expectations(c);
  const row = { case: c.case, expect: expect.join('|'), got: null, passed: false };
  RESULTS[kind].push(row);
  const dir = mkdtempSync(join(tmpdir(), 'mcplens-hostile-'));
  const log = join(dir, 'requests.jsonl');
  const server = await startServer(kind, c, log);
  const client = new Client({ name: 'mcplens-hostile', version: '0.0.0' });
  const catalog = new Catalog({ limits: { deadlineMs: settings.deadlineMs, ...c.limits } });
  let got;
  let error;
  let elapsed;
  let growthMb;
  let status;
  let templates;
  try {
    await client.connect(server.transport);
    const first = await catalog.refresh('hostile', client);
    assert.deepEqual([first.status, first.templates], ['ok', 2]);
    if (c.storm) catalog.watch('hostile', client);
    const before = resetPeakRss();
    const started = performance.now();
    try {
      await catalog.refresh('hostile', client);
      if (c.storm) await catalog.settled('hostile');
      got = 'ok';
    } catch (e) {
      assert.ok(e instanceof McplensError, `not a McplensError: ${e?.name}: ${e?.message}`);
      error = e;
      got = e.code;
    }
    elapsed = performance.now() - started;
    growthMb = Math.max(0, rssKb('VmHWM') - before) / 1024;
    // Read before the client closes (a watched client's close invalidates the server).
    status = catalog.status('hostile');
    templates = catalog.templates({ server: 'hostile' });
  } finally {
    await client.close().catch(() => {});
    await server.stop();
  }
  const storm = traversals(log, 'resources/templates/list');
  rmSync(dir, { recursive: true, force: true });
  Object.assign(row, { got, elapsedMs: Math.round(elapsed), rssGrowthMb: Math.round(growthMb * 10) / 10 });

  assert.ok(expect.includes(got), `${c.case}: got ${got}, expected ${expect.join(' or ')}`);
  assert.ok(elapsed <= settings.deadlineMs + settings.slackMs, `${c.case}: took ${Math.round(elapsed)} ms`);
  assert.ok(growthMb <= settings.maxRssGrowthMb, `${c.case}: peak RSS grew ${Math.round(growthMb)} MB`);
  const uris = templates.map((t) => t.uriTemplate);
  if (error !== undefined) {
    assert.equal(error.server, 'hostile');
    if (c.rpcCode !== undefined) assert.equal(error.rpcCode, c.rpcCode);
    // Fail closed: the previous good pair survives (or the closed connection invalidated it),
    // never a prefix of the failed traversal.
    if (status.status === 'stale' || !c.closes) {
      assert.equal(status.status, 'stale');
      assert.equal(status.lastError?.code, got);
      assert.deepEqual(uris, TABLE.goodTemplates);
    } else {
      assert.ok(['unknown', 'failed'].includes(status.status) && uris.length === 0, JSON.stringify(status));
    }
  } else {
    assert.equal(status.status, 'ok');
    assert.equal(templates.length, c.templates);
    for (const t of templates) {
      assert.ok([...t.name].length <= 2048 && [...(t.description ?? '')].length <= 2048);
    }
  }
  if (c.storm) {
    row.traversals = storm;
    assert.equal(storm, 3, 'a list_changed burst during a refresh causes exactly one more');
  }
  row.passed = true;
}
