// Replays every shared vector in tests/vectors/catalog/ and tests/vectors/catalog_tools/ (format:
// tests/vectors/README.md) through the package's Catalog and its Refresher (the machine that owns the
// catalog's state: `refresh` completes the server's traversal in flight, else attaches the server if
// it has no connection and asks for one, then completes it), with the core's traversal pair performed
// through `Pager.pair` and again by `Refresher.traverse` over a TypeScript SDK v2 `Client` (legacy
// handshake and 2026-07-28, replay.mjs `pairTraversed`), mirroring core/tests/rules/vectors.rs
// `run_catalog_case`: the same completions, statuses, errors and byte-identical tool output.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Catalog, McplensError, Refresher, ToolCall } from 'mcplens';

import { pairTraversed, perDriver } from './replay.mjs';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'catalog');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const TOOL_DIR = join(DIR, '..', 'catalog_tools');
const toolFiles = readdirSync(TOOL_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const READ_DIR = join(DIR, '..', 'read_tool');
const readFiles = readdirSync(READ_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const COMPLETE_DIR = join(DIR, '..', 'complete_tool');
const completeFiles = readdirSync(COMPLETE_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** A `read` or `complete` op: the model's call through `ToolCall` (its request checked), finished with the vector's outcome. */
function callOp(catalog, op, now) {
  const name = op.op === 'read' ? 'ReadMcpResourceTool' : 'CompleteMcpResourceTemplateTool';
  const read = new ToolCall(catalog, name, JSON.stringify(op.input), op.config ?? {}, now);
  const request =
    op.op === 'read'
      ? { server: read.server, uri: read.params.uri, params: read.paramsJson() }
      : { server: read.server, method: read.method, params: read.paramsJson() };
  assert.deepStrictEqual(request, op.expectRequest);
  assert.equal(read.remaining(now), op.config?.timeoutMs ?? (op.op === 'read' ? 30_000 : 10_000));
  const { result, resultText, rpcError, transport, timedOut } = op.outcome;
  if (result !== undefined || resultText !== undefined) read.acceptPage(resultText ?? JSON.stringify(result), now);
  else if (rpcError !== undefined) read.acceptRpcError(rpcError, now);
  else if (transport) read.acceptTransportError(now);
  else if (timedOut) read.acceptTimeout(now);
  else read.acceptMalformed(now);
  return read.finish();
}

/** The core's pair performed and handed back; a failure's code as the catalog recorded it. */
async function complete(machine, catalog, server, traversal, op, now, via) {
  const disposition = await pairTraversed(machine, traversal, server, op, now, via);
  return disposition === 'failed' ? { disposition, failure: catalog.status(server, now).lastError.code } : { disposition };
}

/** Runs one case; returns the list of mismatches. */
async function runCase(c, via) {
  const bad = [];
  const catalog = new Catalog();
  const machine = new Refresher(catalog, 0n);
  const pending = new Map(); // the traversal in flight per server, from the Traverse actions
  const takeTraversals = () => {
    for (const a of machine.pollActions()) if ('traverse' in a) pending.set(a.traverse.server, a.traverse.traversal);
  };
  let now = 0;
  for (const [i, op] of c.ops.entries()) {
    if (op.atMs !== undefined) now = op.atMs;
    const server = op.server ?? '';
    const check = (what, got) => {
      try {
        assert.deepStrictEqual(got, op.expect);
      } catch {
        bad.push(`op ${i} (${what}): got ${JSON.stringify(got)}, want ${JSON.stringify(op.expect ?? null)}`);
      }
    };
    const checkError = (e) => {
      if (!(e instanceof McplensError)) throw e;
      if (op.expectError !== e.code) bad.push(`op ${i}: error ${e.code} (${e.message}), want ${op.expectError}`);
      if (op.expectMessage !== undefined && e.message !== op.expectMessage) {
        bad.push(`op ${i}: message ${JSON.stringify(e.message)}, want ${JSON.stringify(op.expectMessage)}`);
      }
    };
    const capabilities = op.resources?.capabilities ?? { resources: {} };
    if ((op.op === 'begin' || op.op === 'refresh') && !(op.op === 'refresh' && pending.has(server))) {
      if (machine.epoch(server) === null) machine.attachCapabilities(server, capabilities);
      machine.request(server, 'refresh', now);
      if (op.op === 'refresh') takeTraversals();
    }
    switch (op.op) {
      case 'add':
        machine.addServer(server);
        break;
      case 'begin':
        break;
      case 'refresh': {
        const traversal = pending.get(server);
        pending.delete(server);
        check('refresh', await complete(machine, catalog, server, traversal, op, now, via));
        break;
      }
      case 'abandon': {
        const traversal = pending.get(server);
        pending.delete(server);
        check('abandon', { disposition: machine.traversalAbandoned(traversal, now) });
        break;
      }
      case 'listChanged':
        check('listChanged', machine.onListChanged(server, machine.epoch(server) ?? 0, now));
        break;
      case 'invalidate':
        machine.invalidate(server, op.reason, now);
        break;
      case 'remove':
        check('remove', machine.remove(server));
        break;
      case 'clear':
        machine.clear();
        break;
      case 'needsRefresh':
        check('needsRefresh', catalog.needsRefresh(server, now));
        break;
      case 'status':
        try {
          const { server: _, lastError, ...rest } = catalog.status(server, now);
          check('status', { ...rest, lastError: lastError?.code ?? null });
        } catch (e) {
          checkError(e);
        }
        break;
      case 'tool':
        try {
          check('tool', catalog.callListTemplatesTool(op.input));
        } catch (e) {
          checkError(e);
        }
        break;
      case 'resourcesTool':
        try {
          check('resourcesTool', catalog.callListResourcesTool(op.input));
        } catch (e) {
          checkError(e);
        }
        break;
      case 'read':
      case 'complete':
        try {
          check(op.op, callOp(catalog, op, now));
        } catch (e) {
          checkError(e);
        }
        break;
      case 'visible':
        check('visible', catalog.visibleTools());
        break;
      case 'matchUri':
        try {
          check('matchUri', catalog.matchUri(op.uri));
        } catch (e) {
          checkError(e);
        }
        break;
      default:
        throw new Error(`unknown op ${op.op}`);
    }
    takeTraversals();
  }
  return bad;
}

test('the shared catalog vectors are there', () => {
  assert.ok(files.length >= 30, `only ${files.length} catalog vectors in ${DIR}`);
  assert.ok(toolFiles.length >= 15, `only ${toolFiles.length} catalog tool vectors in ${TOOL_DIR}`);
  assert.ok(readFiles.length >= 18, `only ${readFiles.length} read tool vectors in ${READ_DIR}`);
  assert.ok(completeFiles.length >= 10, `only ${completeFiles.length} completion tool vectors in ${COMPLETE_DIR}`);
});

const every = [
  ...files.map((f) => [DIR, f]),
  ...toolFiles.map((f) => [TOOL_DIR, f]),
  ...readFiles.map((f) => [READ_DIR, f]),
  ...completeFiles.map((f) => [COMPLETE_DIR, f]),
];
for (const [dir, file] of every) {
  perDriver(test, `catalog vector ${file}`, join(dir, file), runCase);
}
