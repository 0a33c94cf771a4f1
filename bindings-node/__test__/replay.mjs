// Drives the package's Pager over canned answers in the shared vector format (tests/vectors/README.md);
// used by the discovery and catalog vector replays.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

import { McplensError, Pager, hasResourcesCapability } from 'mcplens';

/** A `synth` page: `count` items numbered from `start`, compact JSON. */
export function synth(kind, { count, start = 0, nextCursor }) {
  const items = [];
  for (let n = start; n < start + count; n++) {
    items.push(
      kind === 'resources'
        ? { uri: `mem://item/${n}`, name: `item-${n}` }
        : { uriTemplate: `mem://item/${n}/{id}`, name: `item-${n}` },
    );
  }
  const page = { [kind === 'resources' ? 'resources' : 'resourceTemplates']: items };
  if (nextCursor !== undefined) page.nextCursor = nextCursor;
  return JSON.stringify(page);
}

/**
 * One traversal over `answers`: loops nextRequest / accept until the pager stops asking, then
 * finish. Returns `{requests, used, ranOut, listing, error}` (`error` a McplensError).
 */
export function drive({ kind, server, capabilities, limits, startMs, answers, protocolVersion, inPlace }) {
  let now = startMs;
  const requests = [];
  let used = 0;
  let declined = 0;
  let ranOut = false;
  let listing;
  let error;
  try {
    const resourcesCapability = hasResourcesCapability(capabilities);
    const pager = new Pager({ kind, server, resourcesCapability, limits, now, protocolVersion });
    for (let req = pager.nextRequest(); req !== null; req = pager.nextRequest()) {
      requests.push(req);
      const a = answers[used];
      if (a === undefined) {
        ranOut = true;
        break;
      }
      used += 1;
      if (a.atMs !== undefined) now = a.atMs;
      try {
        if (!inPlace || !acceptValue(pager, kind, a, now)) accept(pager, kind, a, now);
        else declined += a.declined ?? 0;
      } catch (e) {
        if (!(e instanceof McplensError)) throw e;
        error = e; // the pager has failed; finish() reports the same error (without the rpcCode)
        break;
      }
    }
    listing = pager.finish();
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    error ??= e;
  }
  return { requests, used, ranOut, listing, error, declined };
}

/**
 * `inPlace`: a page answer that is JSON is handed over as its parsed value (`acceptPageParsed`), and
 * as its text only when declined (as `{declined: 1}` counts). False when the answer is not such a page.
 */
function acceptValue(pager, kind, a, now) {
  const text = typeof a.page === 'string' ? a.page : a.synth ? synth(kind, a.synth) : undefined;
  if (text === undefined) return false;
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (pager.acceptPageParsed(value, now)) return true;
  a.declined = 1;
  return false;
}

/** What the answers are once they cross as JSON-RPC messages (a real transport parses JSON). */
export function carried(kind, answers) {
  // (driveClient's transport does the same with the answers it is given)
  return answers.map((a) => {
    const text = typeof a.page === 'string' ? a.page : a.synth ? synth(kind, a.synth) : undefined;
    if (text === undefined) return a;
    const at = a.atMs === undefined ? {} : { atMs: a.atMs };
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      return { ...at, timedOut: true }; // no transport delivers it: only the deadline ends the wait
    }
    try {
      return { ...at, page: JSON.stringify(value) };
    } catch {
      return { ...at, malformed: true }; // JSON.stringify cannot go that deep: the host refuses it
    }
  });
}

const ENVELOPE = /^io\.modelcontextprotocol\//;

/**
 * One test per vector file and per driver: the Pager (`via` undefined), then a v2 Client on the
 * legacy handshake and on 2026-07-28 (`via`: `driveClient`'s `era` and fake `timers`).
 */
export function perDriver(test, label, path, runCase) {
  for (const era of [undefined, 'legacy', 'modern']) {
    test(`${label}${era === undefined ? '' : ` through a v2 Client (${era})`}`, async (t) => {
      const text = readFileSync(path, 'utf8');
      const c = JSON.parse(text);
      assert.equal(c.name, basename(path, '.json'), 'name must match the file');
      if (era !== undefined && text.includes('"timedOut"')) t.mock.timers.enable({ apis: ['setTimeout'] });
      const bad = await runCase(c, era === undefined ? undefined : { era, timers: t.mock.timers });
      assert.deepEqual(bad, [], bad.join('\n'));
    });
  }
}

/**
 * The same traversal through the package's `listResources`/`listResourceTemplates` over a real
 * TypeScript SDK v2 `Client`, on the legacy handshake or pinned to 2026-07-28 (`era: 'modern'`),
 * over a scripted raw transport (`scripted`). Returns what `drive` returns.
 */
export async function driveClient({ kind, server, capabilities, limits, startMs, answers, era, timers }) {
  const { listResources, listResourceTemplates } = await import('mcplens');
  const list = kind === 'resources' ? listResources : listResourceTemplates;
  const run = await scripted({ capabilities, startMs, answers: { [kind]: answers }, era, timers }, (client) =>
    list(client, { server, limits }),
  );
  return { requests: run.requests, used: run.used[kind], ranOut: run.ranOut, listing: run.value, error: run.error };
}

const METHOD_KIND = { 'resources/list': 'resources', 'resources/templates/list': 'resource_templates' };

/**
 * A real TypeScript SDK v2 `Client`, on the legacy handshake or pinned to 2026-07-28 (`era:
 * 'modern'`), over a scripted raw transport (a real v2 server validates what it sends; the vectors'
 * sloppy pages need one that does not), handed to `body`. The transport answers the handshake
 * with `capabilities`, then each list request with the next answer of its kind (`answers`:
 * `{resources?, resource_templates?}`) as a JSON-RPC message a microtask later: a page as its
 * parsed JSON (one that is not JSON is dropped, as a transport drops such a line), `rpcError` as
 * an error response, `transport` as a failed send, `timedOut` by never answering (the fake clock
 * stands at `atMs` and `mock.timers` fires the deadline), `malformed` as an error response without
 * an integer code (the only answer the Node host refuses itself). The clock (`performance.now`) is
 * the vector's. Returns `{requests, used, ranOut, value, error}`: `requests` without the era's
 * `_meta` envelope (checked to hold only envelope keys, and to be absent on the legacy handshake),
 * `used` per kind, `value` what `body` returned, `error` the McplensError it threw.
 */
export async function scripted({ capabilities, startMs, answers, era, timers }, body) {
  const { Client } = await import('@modelcontextprotocol/client');
  const real = performance.now;
  let now = startMs;
  const requests = [];
  const used = { resources: 0, resource_templates: 0 };
  let ranOut = false;
  const transport = {
    async start() {},
    async close() {
      this.onclose?.();
    },
    send(message) {
      const reply = (body) =>
        queueMicrotask(() => {
          try {
            transport.onmessage?.({ jsonrpc: '2.0', id: message.id, ...body });
          } catch (e) {
            transport.onerror?.(e); // what a transport's read loop does when the client throws
          }
        });
      if (!('id' in message)) return Promise.resolve(); // notifications/initialized, notifications/cancelled
      const info = { name: 'scripted', version: '0.0.0' };
      if (message.method === 'initialize') {
        reply({ result: { protocolVersion: message.params.protocolVersion, capabilities, serverInfo: info } });
      } else if (message.method === 'server/discover') {
        const meta = { 'io.modelcontextprotocol/serverInfo': info };
        reply({ result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities, ttlMs: 0, cacheScope: 'private', _meta: meta } });
      } else {
        const { _meta, ...params } = message.params ?? {};
        if (era === 'modern') {
          for (const key of Object.keys(_meta ?? {})) if (!ENVELOPE.test(key)) throw new Error(`_meta key ${key} sent`);
        } else if (_meta !== undefined) throw new Error('_meta sent on the legacy handshake');
        requests.push(message.params === undefined || Object.keys(params).length === 0 && era === 'modern' ? { method: message.method } : { method: message.method, params });
        const kind = METHOD_KIND[message.method];
        const a = answers[kind]?.[used[kind]];
        if (a === undefined) {
          ranOut = true;
          return Promise.reject(new Error('ran out of answers'));
        }
        used[kind] += 1;
        if (a.atMs !== undefined) now = a.atMs;
        const text = typeof a.page === 'string' ? a.page : a.synth ? synth(kind, a.synth) : undefined;
        if (text !== undefined) {
          let result;
          try {
            result = JSON.parse(text);
          } catch (e) {
            // What a transport does with a line that is not JSON: report it, drop it.
            queueMicrotask(() => transport.onerror?.(e));
            queueMicrotask(() => timers.tick(2 ** 31 - 1));
            return Promise.resolve();
          }
          reply({ result });
        } else if (a.rpcError) reply({ error: a.rpcError });
        else if (a.transport) return Promise.reject(new Error('the pipe broke'));
        else if (a.malformed) reply({ error: { code: 'not-a-code', message: 'x' } });
        else if (a.timedOut) queueMicrotask(() => timers.tick(2 ** 31 - 1));
        else throw new Error(`unknown answer ${JSON.stringify(a)}`);
      }
      return Promise.resolve();
    },
  };
  const mode = era === 'modern' ? { pin: '2026-07-28' } : 'legacy';
  const client = new Client({ name: 'mcplens-replay', version: '0.0.0' }, { versionNegotiation: { mode } });
  let value;
  let error;
  performance.now = () => now;
  try {
    await client.connect(transport);
    if (client.getProtocolEra() !== (era ?? 'legacy')) throw new Error(`negotiated ${client.getProtocolEra()}`);
    now = startMs;
    value = await body(client);
  } catch (e) {
    if (e?.name !== 'McplensError') throw e;
    error = e;
  } finally {
    performance.now = real;
    await client.close();
  }
  return { requests, used, ranOut, value, error };
}

/** Feeds one answer of the shared format to `pager` as its text (a page) or its outcome. */
function accept(pager, kind, a, now) {
  if (typeof a.page === 'string') pager.acceptPage(a.page, now);
  else if (a.synth) pager.acceptPage(synth(kind, a.synth), now);
  else if (a.rpcError) pager.acceptRpcError(a.rpcError.code, now);
  else if (a.transport) pager.acceptTransportError(now);
  else if (a.timedOut) pager.acceptTimeout(now);
  else if (a.malformed) pager.acceptMalformed(now);
  else throw new Error(`unknown answer ${JSON.stringify(a)}`);
}

/**
 * The core's traversal pair (`Pager.pair`) over a catalog or refresher step's
 * `{resources, templates}` answers (each `{capabilities?, answers}`; core/tests/rules/vectors.rs
 * `perform_pair`): each request is answered from the list of its kind; every answer must be used.
 */
export function performPair(traversal, server, step, now) {
  const capabilities = step.resources?.capabilities ?? { resources: {} };
  const pair = Pager.pair(traversal, { server, capabilities, now });
  const lists = { resources: step.resources?.answers ?? [], resource_templates: step.templates?.answers ?? [] };
  const used = { resources: 0, resource_templates: 0 };
  while (pair.nextRequest() !== null) {
    const kind = pair.kind;
    const a = lists[kind][used[kind]];
    assert.ok(a !== undefined, `${server}: out of ${kind} answers`);
    used[kind] += 1;
    if (a.atMs !== undefined) now = a.atMs;
    accept(pair, kind, a, now);
  }
  assert.deepEqual(used, { resources: lists.resources.length, resource_templates: lists.resource_templates.length }, `${server}: answers do not match the requests`);
  return pair;
}

/**
 * A refresher's traversal pair over a catalog or refresher step's answers, performed and handed
 * back: through `Pager.pair` (`via` undefined, `performPair`), or by `Refresher.traverse` over a v2
 * client (`via`: its era and fake timers; the steps' answers follow the legacy rule for a repeated
 * cursor, which a 2026-07-28 client pins). Returns the disposition.
 */
export async function pairTraversed(machine, traversal, server, step, now, via) {
  if (via === undefined) return machine.traversed(performPair(traversal, server, step, now), now);
  const capabilities = step.resources?.capabilities ?? { resources: {} };
  const answers = { resources: step.resources?.answers ?? [], resource_templates: step.templates?.answers ?? [] };
  const limits = via.era === 'modern' ? { repeatedCursors: 'fail' } : undefined;
  const run = await scripted({ capabilities, startMs: now, answers, ...via }, (client) =>
    machine.traverse(client, traversal, { server, limits }),
  );
  const counts = { resources: answers.resources.length, resource_templates: answers.resource_templates.length };
  assert.ok(!run.ranOut, `${server}: ran out of answers`);
  assert.deepEqual(run.used, counts, `${server}: answers do not match the requests`);
  assert.equal(run.error, undefined);
  return run.value;
}
