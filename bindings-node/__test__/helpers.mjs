// Connects an SDK Client to a test server and records every message the client sends.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

import { createServer } from './servers/paging-server.mjs';

export const PAGING_SERVER = join(import.meta.dirname, 'servers', 'paging-server.mjs');

/** `@modelcontextprotocol/server-everything`'s entry point, from node_modules (never npx). */
export const EVERYTHING_SERVER = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

const REPO = join(import.meta.dirname, '..', '..');
const PY_SERVERS = join(REPO, 'bindings-python', 'tests', 'servers');

/** Python `mcp` 2.3 (.build/venv-mcp2) and community fastmcp 4 on it (.build/venv-fastmcp4), made by make. */
export const PYTHON_MCP2 = join(REPO, '.build', 'venv-mcp2', 'bin', 'python');
export const PYTHON_FASTMCP4 = join(REPO, '.build', 'venv-fastmcp4', 'bin', 'python');
/** `sdk_server.py SCENARIO`: a low-level `mcp` Server (no `listChanged` on 2026-07-28). */
export const SDK_SERVER = join(PY_SERVERS, 'sdk_server.py');
/** `fastmcp_server.py stdio`: a community fastmcp server (4.x: 2026-07-28, `listChanged: false`). */
export const FASTMCP_SERVER = join(PY_SERVERS, 'fastmcp_server.py');

/** Records every message sent on `transport` (a copy of each). */
export function record(transport) {
  const sent = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(structuredClone(message));
    return send(message, options);
  };
  return sent;
}

/** The `resources/*` requests the client sent, as `{method, params?}` exactly as sent. */
export function listRequests(sent) {
  return sent
    .filter((m) => typeof m.method === 'string' && m.method.startsWith('resources/'))
    .map((m) => ('params' in m ? { method: m.method, params: m.params } : { method: m.method }));
}

/** Our paginating server over an in-memory transport pair. */
export async function connectMemory(scenario) {
  const server = createServer(scenario);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const sent = record(clientTransport);
  const client = new Client({ name: 'mcplens-test', version: '0.0.0' });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    client,
    server,
    sent,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** A server started over stdio with `node <args>`. */
export async function connectStdio(args) {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' });
  const sent = record(transport);
  const client = new Client({ name: 'mcplens-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, sent, close: () => client.close() };
}

/** Waits until `predicate()` is true (polling), or fails after `timeoutMs`. */
export async function until(predicate, what, timeoutMs = 10_000) {
  const start = performance.now();
  while (!(await predicate())) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `ReadMcpResourceTool`'s output (docs/tools.md) as one object: the header line's JSON, each shown
 * text put in its content's summary as `text`. Separators name the characters (Unicode scalar
 * values) after them, so a text that holds a separator line is still read whole.
 */
export function readOutput(output) {
  const nl = output.indexOf('\n');
  const header = JSON.parse(nl < 0 ? output : output.slice(0, nl));
  if (nl < 0) return header;
  const rest = Array.from(output.slice(nl + 1));
  let pos = 0;
  while (pos < rest.length) {
    const end = rest.indexOf('\n', pos);
    const sep = rest.slice(pos, end).join('');
    const m = /^--- content (\d+) text \((\d+) of (\d+) characters\) ---$/.exec(sep);
    if (m === null) throw new Error(`not a separator line: ${JSON.stringify(sep)}`);
    const shown = Number(m[2]);
    header.contents[Number(m[1]) - 1].text = rest.slice(end + 1, end + 1 + shown).join('');
    pos = end + 1 + shown;
    if (pos < rest.length) {
      if (rest[pos] !== '\n') throw new Error('each section begins on a new line');
      pos += 1;
    }
  }
  return header;
}
