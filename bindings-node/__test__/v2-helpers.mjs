// Connects a TypeScript SDK v2 `Client` to one of our v2 servers (servers/v2-server.mjs) and records
// every message the client sends.
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { record } from './helpers.mjs';
import { createV2Server, newState, serveHttp, serveMemory } from './servers/v2-server.mjs';

export { record };

export const V2_SERVER = new URL('./servers/v2-server.mjs', import.meta.url).pathname;

/** The client's version negotiation: the legacy handshake, or pinned to 2026-07-28. */
export const ERAS = { legacy: 'legacy', modern: { pin: '2026-07-28' } };

/** What `getNegotiatedProtocolVersion()` says on each era. */
export const REVISIONS = { legacy: '2025-11-25', modern: '2026-07-28' };

/** The `resources/*` requests sent, as `{method, params?}`, without the 2026-07-28 `_meta` envelope. */
export function listRequests(sent) {
  return sent
    .filter((m) => typeof m.method === 'string' && m.method.startsWith('resources/') && 'id' in m)
    .map((m) => {
      if (m.params === undefined) return { method: m.method };
      const { _meta, ...params } = m.params;
      return _meta !== undefined && Object.keys(params).length === 0 ? { method: m.method } : { method: m.method, params };
    });
}

/**
 * A v2 client on `era` ('legacy' | 'modern') to our v2 server `scenario` over `kind`:
 * - `memory`: serveStdio over an in-memory transport (the factory serves both eras);
 * - `memory-plain`: `server.connect(InMemoryTransport)` (the legacy era only);
 * - `stdio`: `node v2-server.mjs stdio` (serveStdio in a child process);
 * - `http`: createMcpHandler on a loopback port (an instance per request).
 * `stats()` gives `{requests, cancelled}`; `serverClose()` ends the server side.
 */
export async function connectV2(kind, era, { scenario = 'pages', clientOptions = {}, mode = ERAS[era] } = {}) {
  const client = new Client({ name: 'mcplens-test', version: '0.0.0' }, { versionNegotiation: { mode }, ...clientOptions });
  const state = newState();
  let transport;
  let serverClose;
  if (kind === 'memory' || kind === 'memory-plain') {
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    transport = clientTransport;
    if (kind === 'memory') {
      const { handle } = serveMemory(scenario, state, serverTransport);
      serverClose = () => handle.close();
    } else {
      const server = createV2Server(scenario, state);
      await server.connect(serverTransport);
      serverClose = () => server.close();
    }
  } else if (kind === 'stdio') {
    transport = new StdioClientTransport({ command: process.execPath, args: [V2_SERVER, 'stdio', scenario], stderr: 'ignore' });
    serverClose = () => client.callTool({ name: 'control', arguments: { exit: true } }).catch(() => {}); // the answer may not outlive the process
  } else {
    const http = await serveHttp(scenario, state);
    transport = new StreamableHTTPClientTransport(http.url);
    serverClose = () => http.close();
  }
  const sent = record(transport);
  try {
    await client.connect(transport);
  } catch (e) {
    await serverClose().catch(() => {});
    throw e;
  }
  const stats = async () => {
    if (kind !== 'stdio') return { requests: { ...state.requests }, cancelled: state.cancelled };
    const result = await client.callTool({ name: 'stats', arguments: {} });
    return JSON.parse(result.content[0].text);
  };
  const control = (args) => client.callTool({ name: 'control', arguments: args });
  const close = async () => {
    await client.close();
    if (kind !== 'stdio') await serverClose().catch(() => {});
  };
  return { client, sent, state, stats, control, close, serverClose };
}
