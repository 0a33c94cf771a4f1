// bench-node-tracking: what tracking a TypeScript MCP server costs.
//  (a) the hot path at the handler: the wrapped handler vs the bare one (a trivial async handler put
//      in the SDK's request-handler map), with and without response capture;
//  (b) end to end: tools/call and resources/read p50/p99 through an SDK Client ↔ McpServer in
//      memory, untracked vs mcplens vs the `agentcat`, `mcpcat` and `@posthog/mcp` npm packages,
//      same server (bench/tracking-server.mjs), same process, interleaved; under `make bench` the
//      tools/call row (mcplens' added p50) is written;
//  (c) the same over stdio, each variant's server in a process of its own (the client here).
// Network off: mcplens exports to a JSONL file; agentcat, mcpcat and @posthog/mcp (its posthog-node
// client) post to a loopback sink in a child process.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';

const SCRATCH = mkdtempSync(join(tmpdir(), 'mcplens-bench-tracking-'));
// agentcat and mcpcat append their logs to ~/agentcat.log, ~/mcpcat.log and may phone home for
// diagnostics: keep both local.
process.env.HOME = SCRATCH;
process.env.DISABLE_DIAGNOSTICS = 'true';

const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
const { Tracker, coreVersion, jsonlExporter, track } = await import('mcplens');
const { VARIANTS, trackedServer } = await import('./tracking-server.mjs');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const fmt = (x, d = 0) => x.toFixed(d).padStart(8);

// ---------------------------------------------------------------------------------------------
// (a) The hot path at the handler.

const BURST = 2_000;
const CALLS = 50 * BURST;
const RUNS = 7;
const TEXT_1K = 'x'.repeat(1024);
const WORKLOADS = {
  'tools/call': {
    params: { name: 'echo', arguments: { text: 'hello world' } },
    result: { content: [{ type: 'text', text: 'hello world' }] },
  },
  'resources/read': {
    params: { uri: 'note://1' },
    result: { contents: [{ uri: 'note://1', mimeType: 'text/plain', text: TEXT_1K }] },
  },
};

function handlerFor(method, tracker) {
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {}, resources: {} } });
  if (tracker !== undefined) track(server, tracker);
  const { result } = WORKLOADS[method];
  server._requestHandlers.set(method, async () => result); // wrapped by the tracked map's `set`
  return server._requestHandlers.get(method);
}

/**
 * ns per call over CALLS calls, in bursts of BURST (as a server sees them, within the queue bound);
 * between bursts, outside the timing, the tracker's worker catches up (`flush`).
 */
async function loop(handler, method, tracker) {
  const { params } = WORKLOADS[method];
  const signal = new AbortController().signal;
  let total = 0;
  let id = 0;
  for (let b = 0; b < CALLS / BURST; b++) {
    const start = performance.now();
    for (let i = 0; i < BURST; i++, id++) {
      await handler({ jsonrpc: '2.0', id, method, params }, { requestId: id, signal });
    }
    total += performance.now() - start;
    await tracker.flush(30_000);
  }
  return (total * 1e6) / CALLS;
}

async function hotPath() {
  const rows = [];
  for (const method of Object.keys(WORKLOADS)) {
    for (const capture of [false, true]) {
      const tracker = new Tracker({
        exporters: [jsonlExporter({ path: join(SCRATCH, `hot-${method.replace('/', '-')}-${capture}.jsonl`) })],
        captureResponses: capture,
      });
      const bare = handlerFor(method, undefined);
      const wrapped = handlerFor(method, tracker);
      await loop(bare, method, tracker); // warm up both
      await loop(wrapped, method, tracker);
      const b = [];
      const w = [];
      for (let r = 0; r < RUNS; r++) {
        // ABBA
        if (r % 2 === 0) {
          b.push(await loop(bare, method, tracker));
          w.push(await loop(wrapped, method, tracker));
        } else {
          w.push(await loop(wrapped, method, tracker));
          b.push(await loop(bare, method, tracker));
        }
      }
      await tracker.flush(30_000).catch(() => {});
      const stats = tracker.stats();
      await tracker.shutdown(30_000).catch(() => {});
      rows.push({ method, capture, bare: median(b), wrapped: median(w), stats });
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// (b) End to end.

const WARMUP = 300;
const ROUNDS = 100;
const PER_ROUND = 150;

function startSink() {
  const code = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.writeHead(202, {'content-type': 'application/json'}).end('{"status":"accepted"}')); }).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    child.stdout.once('data', (d) => resolve({ url: `http://127.0.0.1:${String(d).trim()}`, child }));
  });
}

async function connected(mcp) {
  const [ct, st] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  await Promise.all([mcp.connect(st), client.connect(ct)]);
  return client;
}

const OPS = {
  'tools/call': (c, i) => c.callTool({ name: 'echo', arguments: { text: `hello ${i}` } }),
  'resources/read': (c, i) => c.readResource({ uri: `note://${i}` }),
};

/** p50/p99 samples (µs) per `op|variant`: warmed, then interleaved rounds (ABBA by variant). */
async function sample(clients) {
  const samples = { rounds: {} }; // rounds: the p50 of each round, per `op|variant`
  let n = 0;
  for (const [name, client] of Object.entries(clients)) {
    for (const [op, call] of Object.entries(OPS)) {
      for (let i = 0; i < WARMUP; i++) await call(client, n++);
      samples[`${op}|${name}`] = [];
    }
  }
  const names = Object.keys(clients);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      for (const [op, call] of Object.entries(OPS)) {
        const xs = samples[`${op}|${name}`];
        const round = [];
        for (let i = 0; i < PER_ROUND; i++) {
          const t0 = performance.now();
          await call(clients[name], n++);
          round.push((performance.now() - t0) * 1000);
        }
        xs.push(...round);
        (samples.rounds[`${op}|${name}`] ??= []).push(quantile(round.sort((a, b) => a - b), 0.5));
      }
    }
  }
  for (const client of Object.values(clients)) await client.close();
  return samples;
}

/** (b): every variant's server in this process, over the SDK's in-memory transport. */
async function inMemory(sinkUrl) {
  const tracker = new Tracker({ exporters: [jsonlExporter({ path: join(SCRATCH, 'e2e.jsonl') })] });
  const clients = {};
  for (const name of VARIANTS) clients[name] = await connected(await trackedServer(name, { sinkUrl, tracker }));
  const samples = await sample(clients);
  await tracker.flush(30_000).catch(() => {});
  const stats = tracker.stats();
  await tracker.shutdown(30_000).catch(() => {});
  return { samples, stats };
}

/** (c): every variant's server in a process of its own (bench/tracking-server.mjs), over stdio. */
async function overStdio(sinkUrl) {
  const clients = {};
  for (const name of VARIANTS) {
    const events = join(SCRATCH, `stdio-${name.replace(/\W/g, '')}.jsonl`);
    const args = [join(import.meta.dirname, 'tracking-server.mjs'), name, sinkUrl, events];
    const transport = new StdioClientTransport({ command: process.execPath, args, env: { ...process.env }, stderr: 'inherit' });
    clients[name] = new Client({ name: 'bench-client', version: '1.0.0' });
    await clients[name].connect(transport);
  }
  return sample(clients);
}

/** Prints one section's rows; returns the tools/call p50s added over untracked, by variant. */
function report(title, samples) {
  console.log(`\n${title}: µs per request (${ROUNDS} interleaved rounds × ${PER_ROUND} = ${ROUNDS * PER_ROUND} each)`);
  console.log('    method            tracker           p50       p99      mean   added p50  added mean');
  const added = {};
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const op of Object.keys(OPS)) {
    const base = quantile([...samples[`${op}|untracked`]].sort((a, b) => a - b), 0.5);
    const baseMean = mean(samples[`${op}|untracked`]);
    if (op === 'tools/call') added.base = base;
    for (const name of VARIANTS) {
      const xs = [...samples[`${op}|${name}`]].sort((a, b) => a - b);
      const p50 = quantile(xs, 0.5);
      const m = mean(xs);
      if (op === 'tools/call') {
        added[name] = p50 - base;
        added[`${name} mean`] = m - baseMean;
      }
      const extra = name === 'untracked' ? '' : `${fmt(p50 - base, 1)}    ${fmt(m - baseMean, 1)}`;
      console.log(`    ${op.padEnd(16)}  ${name.padEnd(13)}${fmt(p50, 1)}  ${fmt(quantile(xs, 0.99), 1)}  ${fmt(m, 1)}    ${extra}`);
    }
  }
  // The stdio row's figure (issue 47's decision): the median over rounds of each round's added p50 ÷
  // that round's untracked p50 — tracked and untracked alternate, so each ratio shares its moment.
  const base = samples.rounds['tools/call|untracked'];
  const perRound = samples.rounds['tools/call|mcplens'].map((p50, r) => (p50 - base[r]) / base[r]);
  added.roundRatio = quantile(perRound.sort((a, b) => a - b), 0.5);
  console.log(`    tools/call, mcplens: median over ${perRound.length} rounds of (round's added p50 ÷ its untracked p50) ${added.roundRatio.toFixed(3)}`);
  return added;
}

// ---------------------------------------------------------------------------------------------

const require = createRequire(import.meta.url);
/** A package's version: the nearest package.json named `name` above its entry point. */
function version(name, entry) {
  for (let dir = dirname(require.resolve(entry)); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (pkg.name === name) return pkg.version;
    } catch {
      // no package.json here
    }
  }
  return '?';
}
const agentcatVersion = version('agentcat', 'agentcat');
const mcpcatVersion = version('mcpcat', 'mcpcat');
const posthogVersion = version('@posthog/mcp', '@posthog/mcp');
const sdkVersion = version('@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/server/index.js');
console.log(`mcplens ${coreVersion} · @modelcontextprotocol/sdk ${sdkVersion} · agentcat ${agentcatVersion} · mcpcat ${mcpcatVersion} · @posthog/mcp ${posthogVersion} · Node ${process.versions.node}`);

console.log(
  `\n(a) hot path at the handler: ns per request (median of ${RUNS} runs × ${CALLS.toLocaleString('en')} calls in bursts of ${BURST.toLocaleString('en')}, ABBA)`,
);
console.log('    method            response   bare   wrapped     added   events exported/dropped');
let hot = NaN; // tools/call, response not captured: the request thread's added ns
for (const r of await hotPath()) {
  const ex = r.stats.exporters[0];
  if (r.method === 'tools/call' && !r.capture) hot = r.wrapped - r.bare;
  console.log(
    `    ${r.method.padEnd(16)} ${(r.capture ? 'captured' : 'not').padEnd(9)}${fmt(r.bare)}  ${fmt(r.wrapped)}  ${fmt(r.wrapped - r.bare)}   ${ex.exported}/${r.stats.dropped + ex.dropped}`,
  );
}

// agentcat and mcpcat post on their own schedule and reject unhandled when a post fails: count, never crash.
let catFailures = 0;
process.on('unhandledRejection', () => void (catFailures += 1));
const sink = await startSink();
const { samples, stats } = await inMemory(sink.url);
const added = report('(b) end to end, SDK Client ↔ McpServer in memory', samples);
const ex = stats.exporters[0];
console.log(`    mcplens events: recorded ${stats.recorded}, exported ${ex.exported}, dropped ${stats.dropped + ex.dropped}`);
const stdio = report('(c) end to end over stdio, the server in a process of its own', await overStdio(sink.url));
await new Promise((resolve) => setTimeout(resolve, 2_000)); // let the incumbents' queues drain into the sink
console.log(
  '    (agentcat and mcpcat track tools/call only, @posthog/mcp tools and resources; they post to a loopback sink; mcplens records every request and writes JSONL)',
);
if (catFailures > 0) console.log(`    agentcat/mcpcat: ${catFailures} failed posts`);
const results = process.env.MCPLENS_BENCH_RESULTS;
if (results !== undefined) {
  mkdirSync(results, { recursive: true });
  const others = (a) => `agentcat +${a.agentcat.toFixed(1)} µs, @posthog/mcp +${a['@posthog/mcp'].toFixed(1)} µs`;
  const means = (a) => `mean added mcplens +${a['mcplens mean'].toFixed(1)}, agentcat +${a['agentcat mean'].toFixed(1)}, @posthog/mcp +${a['@posthog/mcp mean'].toFixed(1)} µs`;
  const detail =
    `in memory: p50 ${added.base.toFixed(1)} µs untracked, ${others(added)} (${means(added)}); over stdio: mcplens +${stdio.mcplens.toFixed(1)} µs ` +
    `of ${stdio.base.toFixed(1)} µs, ${others(stdio)} (${means(stdio)}); hot path ${hot.toFixed(0)} ns at the handler`;
  const below = (a) => ['agentcat', '@posthog/mcp'].map((other) => [`below ${other} (+${a[other].toFixed(1)} µs)`, a.mcplens < a[other]]);
  writeFileSync(join(results, 'node_tracking.json'), JSON.stringify({ row: 'node_tracking', figure: Number(added.mcplens.toFixed(2)), detail, also: below(added) }));
  const stdioDetail = `mcplens +${stdio.mcplens.toFixed(1)} µs of ${stdio.base.toFixed(1)} µs untracked, ${others(stdio)} (${means(stdio)})`;
  writeFileSync(
    join(results, 'node_tracking_stdio.json'),
    JSON.stringify({ row: 'node_tracking_stdio', figure: Number(stdio.roundRatio.toFixed(3)), detail: `${stdioDetail}; pooled p50 ratio ${(stdio.mcplens / stdio.base).toFixed(3)}`, also: below(stdio) }),
  );
}
sink.child.kill();
rmSync(SCRATCH, { recursive: true, force: true });
process.exit(0); // mcpcat's beforeExit drain would wait for its sink
