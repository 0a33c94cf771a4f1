// Replays every shared vector in tests/vectors/catalog/ and tests/vectors/catalog_tools/ (format:
// tests/vectors/README.md) through the package's Catalog (its sans-IO API), with the traversals run
// by the Pager and again by the package's traversal over a TypeScript SDK v2 `Client` (legacy
// handshake and 2026-07-28, replay.mjs `driveClient`), mirroring core/tests/vectors.rs
// `run_catalog_case`: the same completions, statuses, errors and byte-identical tool output.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Catalog, McplensError } from 'mcplens';

import { perDriver, traverse } from './replay.mjs';

const DIR = join(import.meta.dirname, '..', '..', 'tests', 'vectors', 'catalog');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const TOOL_DIR = join(DIR, '..', 'catalog_tools');
const toolFiles = readdirSync(TOOL_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

/** Both traversals, then commit both or fail with the first error (resources first). */
async function complete(catalog, ticket, op, now, via) {
  const res = await traverse('resources', ticket.server, op.resources, now, via);
  const tpl = await traverse('resource_templates', ticket.server, op.templates, now, via);
  const error = res.error ?? tpl.error;
  if (error === undefined) return [catalog.commit(ticket, res.listing, tpl.listing, now), undefined];
  return [catalog.fail(ticket, { code: error.code, message: error.message }), error.code];
}

/** Runs one case; returns the list of mismatches. */
async function runCase(c, via) {
  const bad = [];
  const catalog = new Catalog();
  const tickets = new Map();
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
    const completion = ([c, failure]) => {
      const v = { ...c };
      if (failure !== undefined && c.applied) v.failure = failure;
      return v;
    };
    switch (op.op) {
      case 'add':
        catalog.addServer(server);
        break;
      case 'begin':
        tickets.set(op.ticket, catalog.beginRefresh(server));
        break;
      case 'complete':
        check('complete', completion(await complete(catalog, tickets.get(op.ticket), op, now, via)));
        break;
      case 'refresh':
        check('refresh', completion(await complete(catalog, catalog.beginRefresh(server), op, now, via)));
        break;
      case 'listChanged':
        check('listChanged', catalog.onListChanged(server));
        break;
      case 'abandon':
        check('abandon', catalog.abandon(tickets.get(op.ticket)));
        break;
      case 'invalidate':
        catalog.invalidate(server, op.reason);
        break;
      case 'remove':
        check('remove', catalog.remove(server));
        break;
      case 'clear':
        catalog.clear();
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
  }
  return bad;
}

test('the shared catalog vectors are there', () => {
  assert.ok(files.length >= 30, `only ${files.length} catalog vectors in ${DIR}`);
  assert.ok(toolFiles.length >= 15, `only ${toolFiles.length} catalog tool vectors in ${TOOL_DIR}`);
});

for (const [dir, file] of [...files.map((f) => [DIR, f]), ...toolFiles.map((f) => [TOOL_DIR, f])]) {
  perDriver(test, `catalog vector ${file}`, join(dir, file), runCase);
}
