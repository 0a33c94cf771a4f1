// bench-node: mcplens' bounded traversal (`listResourceTemplates`) vs the SDK's own
// `client.listResourceTemplates({cursor})` loop, same server, same client, same process,
// interleaved (ABBA), in memory and over stdio, on the baseline-discovery workloads.
// Prints the median ms per complete traversal, µs per page, and mcplens ÷ SDK.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { coreVersion, listResourceTemplates } from 'mcplens';

import { WORKLOADS, createWorkloadServer } from './workload-server.mjs';

const WARMUP = 5;
const ROUNDS = { S: 30, M: 60 };
/** Limits raised so the whole workload is in bounds (S is 10,000 items and ~4 MB projected). */
const LIMITS = { maxPages: 1_000, maxItems: 1_000_000, maxBytes: 100_000_000, deadlineMs: 600_000 };

async function sdkLoop(client) {
  const items = [];
  let cursor;
  do {
    const page = await client.listResourceTemplates(cursor === undefined ? {} : { cursor });
    items.push(...page.resourceTemplates);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return items.length;
}

async function mcplens(client) {
  const listing = await listResourceTemplates(client, { server: 'bench', limits: LIMITS });
  return listing.items.length;
}

async function connect(workload, transport) {
  const client = new Client({ name: 'bench', version: '0.0.0' });
  if (transport === 'memory') {
    const server = createWorkloadServer(workload);
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(st), client.connect(ct)]);
    return { client, close: async () => (await client.close(), await server.close()) };
  }
  const script = join(import.meta.dirname, 'workload-server.mjs');
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [script, workload], stderr: 'inherit' }));
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

async function bench(workload, transport) {
  const { pages, pageSize } = WORKLOADS[workload];
  const expected = pages * pageSize;
  const { client, close } = await connect(workload, transport);
  try {
    const sdk = [];
    const ours = [];
    const ratios = [];
    for (let round = 0; round < WARMUP + ROUNDS[workload]; round++) {
      // ABBA: alternate who goes first.
      let a;
      let b;
      if (round % 2 === 0) {
        a = await timed(sdkLoop, client, expected);
        b = await timed(mcplens, client, expected);
      } else {
        b = await timed(mcplens, client, expected);
        a = await timed(sdkLoop, client, expected);
      }
      if (round < WARMUP) continue;
      sdk.push(a);
      ours.push(b);
      ratios.push(b / a);
    }
    const s = median(sdk);
    const m = median(ours);
    return { workload, transport, pages, sdk: s, ours: m, ratio: m / s, roundRatio: median(ratios), rounds: sdk.length };
  } finally {
    await close();
  }
}

const GOAL = { memory: 1.0, stdio: 1.1 };
const rows = [];
console.log(`bench-node: mcplens ${coreVersion} (Node ${process.version}); median ms per complete traversal`);
console.log('workload  transport  rounds   SDK loop ms (µs/page)   mcplens ms (µs/page)   mcplens÷SDK  (median per-round)  goal');
for (const workload of ['S', 'M']) {
  for (const transport of ['memory', 'stdio']) {
    const r = await bench(workload, transport);
    rows.push(r);
    const cell = (ms) => `${ms.toFixed(2).padStart(8)} (${((ms * 1000) / r.pages).toFixed(0).padStart(5)})`;
    console.log(
      `${workload.padEnd(9)} ${transport.padEnd(10)} ${String(r.rounds).padStart(6)}   ${cell(r.sdk).padEnd(22)}  ${cell(r.ours).padEnd(21)}  ` +
        `${r.ratio.toFixed(2).padStart(10)}×  ${r.roundRatio.toFixed(2).padStart(10)}×          ≤ ${GOAL[transport].toFixed(1)}×`,
    );
  }
}
console.log('S = 100 pages × 100 templates, 200-char descriptions (4.1 MiB on the wire); M = 5 × 100, 2,000-char (1.06 MiB).');
