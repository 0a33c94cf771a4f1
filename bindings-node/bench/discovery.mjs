// bench-node: mcplens' bounded traversal (`listResourceTemplates`) vs the SDK's own walk, on both
// SDK lines: the 1.x `client.listResourceTemplates({cursor})` loop and the v2 client's own walk
// (`listResourceTemplates()` without a cursor, cache bypassed), each against mcplens over that same
// client; one server per client, every variant in every round (order rotated), in memory and
// over stdio, on the baseline-discovery workloads; every variant reads every field of every template
// before its clock stops. Prints the median ms per complete traversal,
// µs per page, and mcplens ÷ SDK; under `make bench` writes the summary rows (the worse line's ratio).
// Two floors, in the same rounds, ÷ the 1.x loop: what any traversal that applies the rules in the
// core pays before its first rule, over the same 1.x client with the results passed through
// unvalidated: (text) each page handed over as JSON text (JSON.stringify, as this package does), and
// (bytes) each string of each template copied out of V8 as UTF-8 once (TextEncoder.encodeInto: what
// a native reader walking the objects instead copies, node-api having no zero-copy string access).
// In memory, three more variants drive the addon's pager over the same raw 1.x loop and justify the
// convert module (src/convert/) in the same rounds: each page handed over as text and the listing
// back by JSON.parse of its text (the plain path) or assembled from its parts (listing.rs), and each
// page read in place from its tape (tape.rs) with the listing from its parts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { coreVersion, listResourceTemplates } from 'mcplens';

import { WORKLOADS, createWorkloadServer } from './workload-server.mjs';

const WARMUP = 5;
const ROUNDS = { S: 30, M: 60 };
/** Limits raised so the whole workload is in bounds (S is 10,000 items and ~4 MB projected). */
const LIMITS = { maxPages: 1_000, maxItems: 1_000_000, maxBytes: 100_000_000, deadlineMs: 600_000 };

/** Reads every field of every template (a lazy listing would be timed as used): how many have a name. */
function touched(templates) {
  let named = 0;
  let chars = 0;
  for (const t of templates) {
    chars += t.uriTemplate.length + (t.title?.length ?? 0) + (t.description?.length ?? 0) + (t.mimeType?.length ?? 0) + (t.server?.length ?? 0);
    const a = t.annotations;
    if (a !== undefined) chars += (a.audience?.length ?? 0) + (a.priority ?? 0) + (a.lastModified?.length ?? 0);
    if (t.name.length > 0) named += 1;
  }
  return chars > 0 ? named : -1;
}

async function sdkLoop(client) {
  let count = 0;
  let cursor;
  do {
    const page = await client.listResourceTemplates(cursor === undefined ? {} : { cursor });
    count += touched(page.resourceTemplates);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return count;
}

/** The 1.x client's request with the result passed through as the server sent it (no schema). */
const RAW = { safeParse: (data) => ({ success: true, data }) };

async function rawLoop(client, each) {
  let count = 0;
  let cursor;
  do {
    const page = await client.request({ method: 'resources/templates/list', params: cursor === undefined ? {} : { cursor } }, RAW);
    each(page);
    count += touched(page.resourceTemplates);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return count;
}

let sink = 0;
const textFloor = (client) => rawLoop(client, (page) => (sink += JSON.stringify(page).length));

const scratch = new Uint8Array(1 << 16);
const encoder = new TextEncoder();
/** Every string of a template, copied out as UTF-8 (strings longer than the scratch are read in full by encode). */
function copyOut(value) {
  if (typeof value === 'string') {
    sink += value.length * 3 <= scratch.length ? encoder.encodeInto(value, scratch).written : encoder.encode(value).length;
  } else if (Array.isArray(value)) {
    for (const v of value) copyOut(v);
  } else if (value !== null && typeof value === 'object') {
    for (const k in value) copyOut(value[k]);
  }
}
const bytesFloor = (client) => rawLoop(client, (page) => copyOut(page.resourceTemplates));

const native = createRequire(import.meta.url)('../native.js');
const { itemsOf } = createRequire(import.meta.url)('../dist/convert.js');
const { withTape } = createRequire(import.meta.url)('../dist/convert-tape.js');
const NATIVE_LIMITS = JSON.stringify(LIMITS);

/** The addon's pager over the raw 1.x loop: pages as a `tape` or text, the listing from its `parts` or its text. */
async function addonLoop(client, { tape, parts }) {
  const pager = new native.Pager('resource_templates', 'bench', true, NATIVE_LIMITS, performance.now(), undefined);
  for (let request = pager.nextRequest(); request !== null; request = pager.nextRequest()) {
    const params = request.params === undefined ? {} : JSON.parse(request.params);
    const page = await client.request({ method: request.method, params }, RAW);
    const now = performance.now();
    if (!(tape && withTape(page, (t) => pager.acceptPageTape(t.bytes, t.tape, now)))) pager.acceptPage(JSON.stringify(page), now);
  }
  const listing = pager.finish();
  return touched(parts ? itemsOf(listing.toParts(), 'resource_templates', 'bench') : JSON.parse(listing.toJson()).items);
}
const asText = (client) => addonLoop(client, { tape: false, parts: false });
const fromParts = (client) => addonLoop(client, { tape: false, parts: true });
const fromTape = (client) => addonLoop(client, { tape: true, parts: true });

async function v2Walk(client) {
  const page = await client.listResourceTemplates(undefined, { cacheMode: 'bypass' });
  if (page.nextCursor !== undefined) throw new Error('the v2 walk stopped early');
  return touched(page.resourceTemplates);
}

async function mcplens(client) {
  const listing = await listResourceTemplates(client, { server: 'bench', limits: LIMITS });
  return touched(listing.items);
}

async function connect(workload, transport, line) {
  const client =
    line === 'v2' ? new ClientV2({ name: 'bench', version: '0.0.0' }, { listMaxPages: 0 }) : new Client({ name: 'bench', version: '0.0.0' });
  if (transport === 'memory') {
    const server = createWorkloadServer(workload);
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(st), client.connect(ct)]);
    return { client, close: async () => (await client.close(), await server.close()) };
  }
  const script = join(import.meta.dirname, 'workload-server.mjs');
  const Stdio = line === 'v2' ? StdioClientTransportV2 : StdioClientTransport;
  await client.connect(new Stdio({ command: process.execPath, args: [script, workload], stderr: 'inherit' }));
  return { client, close: () => client.close() };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function timed(f, client, expected) {
  const start = performance.now();
  const n = await f(client);
  const ms = performance.now() - start;
  if (n !== expected) throw new Error(`expected ${expected} templates, got ${n}`);
  return ms;
}

/** The four variants: [name, SDK line, traversal]. */
const VARIANTS = [
  ['sdk1', '1.x', sdkLoop],
  ['ours1', '1.x', mcplens],
  ['sdk2', 'v2', v2Walk],
  ['ours2', 'v2', mcplens],
  ['text', '1.x', textFloor],
  ['bytes', '1.x', bytesFloor],
  ['asText', '1.x', asText, 'memory'],
  ['fromParts', '1.x', fromParts, 'memory'],
  ['fromTape', '1.x', fromTape, 'memory'],
];

async function bench(workload, transport) {
  const { pages, pageSize } = WORKLOADS[workload];
  const expected = pages * pageSize;
  const clients = { '1.x': await connect(workload, transport, '1.x'), v2: await connect(workload, transport, 'v2') };
  try {
    const variants = VARIANTS.filter(([, , , only]) => only === undefined || only === transport);
    const times = Object.fromEntries(variants.map(([name]) => [name, []]));
    for (let round = 0; round < WARMUP + ROUNDS[workload]; round++) {
      // Every variant each round; the order rotates (and reverses every other round).
      const order = variants.map((_, i) => variants[(i + round) % variants.length]);
      if (round % 2 === 1) order.reverse();
      for (const [name, line, f] of order) {
        const ms = await timed(f, clients[line].client, expected);
        if (round >= WARMUP) times[name].push(ms);
      }
    }
    const m = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, median(xs)]));
    const floors = { text: m.text / m.sdk1, bytes: m.bytes / m.sdk1 };
    return { workload, transport, pages, rounds: times.sdk1.length, m, ratio1: m.ours1 / m.sdk1, ratio2: m.ours2 / m.sdk2, floors };
  } finally {
    await clients['1.x'].close();
    await clients.v2.close();
  }
}

const GOAL = { 'S|stdio': 1.1, 'S|memory': 1.5, 'M|stdio': 1.1, 'M|memory': 1.5 };
const ROW = { 'S|stdio': 'node_discovery_stdio', 'S|memory': 'node_discovery_memory', 'M|stdio': 'node_discovery_long_stdio', 'M|memory': 'node_discovery_long_memory' };
const results = process.env.MCPLENS_BENCH_RESULTS;
console.log(`bench-node: mcplens ${coreVersion} (Node ${process.version}); median ms per complete traversal (µs per page)`);
console.log('workload  transport  rounds   1.x loop       mcplens/1.x        ÷  v2 walk        mcplens/v2         ÷  goal    floors ÷ 1.x: text  bytes');
const convert = [];
for (const workload of ['S', 'M']) {
  for (const transport of ['memory', 'stdio']) {
    const r = await bench(workload, transport);
    if (transport === 'memory') convert.push(r);
    const cell = (ms) => `${ms.toFixed(2)} (${((ms * 1000) / r.pages).toFixed(0)})`.padEnd(15);
    const key = `${workload}|${transport}`;
    console.log(
      `${workload.padEnd(9)} ${transport.padEnd(10)} ${String(r.rounds).padStart(6)}   ${cell(r.m.sdk1)}${cell(r.m.ours1)}${r.ratio1.toFixed(2).padStart(5)}×  ` +
        `${cell(r.m.sdk2)}${cell(r.m.ours2)}${r.ratio2.toFixed(2).padStart(5)}×  ≤ ${GOAL[key].toFixed(1)}×` +
        `${r.floors.text.toFixed(2).padStart(20)}× ${r.floors.bytes.toFixed(2).padStart(5)}×`,
    );
    if (results !== undefined) {
      mkdirSync(results, { recursive: true });
      const figure = Math.max(r.ratio1, r.ratio2);
      const detail =
        `mcplens ÷ 1.x loop ${r.ratio1.toFixed(2)}×, ÷ v2 walk ${r.ratio2.toFixed(2)}×; medians of ${r.rounds} rounds; ` +
        `floors ÷ 1.x loop: pages as text ${r.floors.text.toFixed(2)}×, strings copied out ${r.floors.bytes.toFixed(2)}×`;
      writeFileSync(join(results, `${ROW[key]}.json`), JSON.stringify({ row: ROW[key], figure: Number(figure.toFixed(3)), detail, floor: `text ${r.floors.text.toFixed(2)}×, bytes ${r.floors.bytes.toFixed(2)}×` }));
    }
  }
}
/** Each converter's variant ÷ the same traversal without it. */
const CONVERT = {
  fromParts: ['node_convert_listing', 'the listing from its parts', 'asText', 'the listing by JSON.parse of its text'],
  fromTape: ['node_convert_page', 'pages read from their tapes', 'fromParts', 'pages as JSON.stringify\'d text'],
};
for (const [variant, [row, what, plain, plainWhat]] of Object.entries(CONVERT)) {
  const ratios = convert.map((r) => [r.workload, r.m[variant] / r.m[plain]]);
  const [workload, worst] = ratios.reduce((a, b) => (b[1] > a[1] ? b : a));
  const each = ratios.map(([w, x]) => `${w} ${x.toFixed(2)}×`).join(', ');
  console.log(`${row}: ${what} ÷ ${plainWhat}, addon's pager over the raw 1.x loop in memory: ${each}`);
  if (results !== undefined) {
    const detail = `${what} ÷ ${plainWhat}, in memory: ${each} (worst ${workload})`;
    writeFileSync(join(results, `${row}.json`), JSON.stringify({ row, figure: Number(worst.toFixed(3)), detail }));
  }
}
console.log(`(checksum ${sink % 10})`);
console.log('S = 100 pages × 100 templates, 200-char descriptions (4.1 MiB on the wire); M = 5 × 100, 2,000-char (1.06 MiB).');
