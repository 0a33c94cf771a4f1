// Conformance through `mcplens proxy`: the suite speaks Streamable HTTP, the proxy serves its host
// over stdio, so this bridge stands where a stdio host would. It serves stateful Streamable HTTP on
// 127.0.0.1 (the fixture servers' `serveSessions`, DNS-rebinding protection included) and, for each
// session, starts the child command and relays every JSON-RPC message between the two unchanged.
//
//   node bridge.mjs --port N [--events FILE] -- <child command …>
//   node bridge.mjs --port N [--events FILE] --http -- <HTTP server command …>
//
// - without `--events`: the child is the command itself (the "plain" run: the fixture server over
//   stdio);
// - with `--events FILE`: the child is `mcplens proxy --events FILE.<n> -- <command …>` (the npm
//   package's command), one events file per session (the "tracked" run).
// - `--http` (with `--events`): the command is a Streamable HTTP server, started once (with
//   `--port P`); each session's child is `mcplens proxy --events FILE.<n> --url
//   http://127.0.0.1:P/mcp`. (Its plain counterpart is the stdio run: the same fixtures, the same
//   bridge.)
// Both runs go through this same bridge, so where their checks differ, the proxy made the
// difference. A message the child sends while one request is in flight (progress, a log line, an
// elicitation) goes on that request's stream, as a server in the bridge's place would send it; a
// progress notification goes with the request that gave its token.
// SIGINT/SIGTERM: close the sessions, wait for every child to exit (events delivered), exit 0.
import { spawn as spawnProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

import { serveSessions } from './fixtures.mjs';

const MCPLENS = join(import.meta.dirname, '..', '..', '..', 'bindings-node', 'bin', 'mcplens.cjs');
const { values: args, positionals: child } = parseArgs({
  options: { port: { type: 'string' }, events: { type: 'string' }, http: { type: 'boolean' } },
  allowPositionals: true,
});
const PORT = Number(args.port);
if (!Number.isInteger(PORT) || PORT <= 0 || child.length === 0 || (args.http && args.events === undefined)) {
  throw new Error('usage: bridge.mjs --port N [--events FILE] -- <command …> | --port N --events FILE --http -- <command …>');
}

const children = new Map(); // each session's child → the promise of its exit
let sessions = 0;

/** `--http`: the server, started once on a free port; its URL. */
async function startHttpServer() {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  const server = spawnProcess(child[0], [...child.slice(1), '--port', String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(server.stdout, 'data'); // "listening on …"
  server.stdout.resume();
  return { server, url: `http://127.0.0.1:${port}/mcp` };
}
const upstream = args.http ? await startHttpServer() : undefined;

/** The child of one session: the command, or the proxy in front of it (or of the HTTP server). */
function spawn() {
  sessions += 1;
  const target = upstream !== undefined ? ['--url', upstream.url] : ['--', ...child];
  const [command, ...rest] =
    args.events === undefined ? child : [process.execPath, MCPLENS, 'proxy', '--events', `${args.events}.${sessions}`, ...target];
  return new StdioClientTransport({ command, args: rest, stderr: 'inherit' });
}

/** One session's relay, in the place of an `McpServer`: `connect(transport)` as `serveSessions` calls it. */
function build() {
  return {
    async connect(http) {
      const stdio = spawn();
      const inFlight = new Set(); // ids of the suite's requests not yet answered
      const progress = new Map(); // progressToken → the request that gave it
      let ended;
      children.set(stdio, new Promise((resolve) => (ended = resolve)));
      http.onmessage = (message) => {
        if (message.method !== undefined && message.id !== undefined) {
          inFlight.add(message.id);
          const token = message.params?._meta?.progressToken;
          if (token !== undefined) progress.set(token, message.id);
        }
        stdio.send(message).catch((e) => console.error('bridge: to the child:', e));
      };
      stdio.onmessage = (message) => {
        let relatedRequestId;
        if (message.method === undefined) {
          inFlight.delete(message.id); // an answer goes where its request came from
        } else if (message.method === 'notifications/progress' && progress.has(message.params?.progressToken)) {
          relatedRequestId = progress.get(message.params.progressToken);
        } else if (inFlight.size === 1) {
          [relatedRequestId] = inFlight;
        }
        http.send(message, { relatedRequestId }).catch((e) => console.error('bridge: to the suite:', e));
      };
      stdio.onclose = () => {
        ended();
        http.close().catch(() => {});
      };
      http.onclose = () => stdio.close().catch(() => {});
      await stdio.start();
      await http.start();
    },
  };
}

// `serveSessions` shuts its tracker down before it exits: here, every child ends — those of sessions
// never initialized too (the suite's DNS-rebinding request is refused before it reaches one) — and
// the bridge waits for them (the proxy delivers its events as its host's end ends it).
async function shutdown() {
  await Promise.all([...children].map(([stdio, exit]) => stdio.close().then(() => exit)));
  upstream?.server.kill('SIGINT');
}
serveSessions({ port: PORT, Transport: StreamableHTTPServerTransport, build, tracker: { shutdown }, name: 'bridge.mjs' });
