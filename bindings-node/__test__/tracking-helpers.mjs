// Helpers of the tracking tests: in-memory connections that record what the server sends, event
// collection, and the checks every transport shares.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { callbackExporter } from 'mcplens';

/** A fresh temporary directory. */
export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'mcplens-tracking-'));
}

/** A callback exporter and the events it received, in order. */
export function collector() {
  const events = [];
  return { events, exporter: callbackExporter((batch) => void events.push(...batch)) };
}

/**
 * Connects a client to `server` in memory. `sent` holds every message the server sent, as the JSON
 * text the transport would write, and `results` the `result` objects themselves.
 */
export async function connectMemory(server, clientInfo = { name: 'tracking-test', version: '0.0.1' }) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const sent = [];
  const results = [];
  const send = serverTransport.send.bind(serverTransport);
  serverTransport.send = (message, options) => {
    sent.push(JSON.stringify(message));
    if ('result' in message) results.push(message.result);
    return send(message, options);
  };
  const client = new Client(clientInfo);
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return { client, sent, results, close: () => client.close() };
}

/** The events match the expected list, request by request (ids 0, 1, … in order). */
export function checkEvents(events, expected, { firstId = 0 } = {}) {
  assert.deepEqual(
    events.map((e) => e.type),
    expected.map((e) => e.type),
  );
  for (const [i, want] of expected.entries()) {
    const e = events[i];
    const where = `event ${i} (${e.type})`;
    assert.equal(e.requestId, firstId + i, where);
    assert.equal(e.resourceName, want.resourceName, where);
    assert.equal(e.isError, want.error !== undefined, where);
    if (want.error?.code !== undefined) {
      assert.equal(e.error.code, want.error.code, where);
      assert.equal(e.error.type, String(want.error.code), where);
    }
    if (want.error?.type !== undefined) assert.equal(e.error.type, want.error.type, where);
    assert.ok(typeof e.durationMs === 'number' && e.durationMs >= 0 && e.durationMs < 10_000, where);
    assert.match(e.id, /^evt_[0-9A-Za-z]{27}$/, where);
    assert.match(e.sessionId, /^ses_[0-9A-Za-z]{27}$/, where);
    assert.ok(Math.abs(Date.parse(e.timestamp) - Date.now()) < 600_000, where);
  }
}
