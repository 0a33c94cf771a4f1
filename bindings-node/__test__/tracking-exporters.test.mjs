// The HTTP exporters against loopback receivers: OTLP/HTTP protobuf (decoded here) and the
// MCPcat-compatible events API.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';

import { Tracker, mcpcatExporter, otlpExporter, track } from 'mcplens';

import { decodeMetrics, decodeTraces } from './otlp-decode.mjs';
import { EXPECTED, createScenarioServer, runScenario } from './servers/scenario-server.mjs';
import { collector, connectMemory } from './tracking-helpers.mjs';

/** A loopback HTTP receiver answering `status`; `requests` holds `{method, path, headers, body}`. */
async function receiver(status) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method, path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    requests,
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test('OTLP/HTTP: one SERVER span per request (semantic-convention attributes) and the duration histogram', async () => {
  const otlp = await receiver(200);
  const { events, exporter } = collector();
  const tracker = new Tracker({ exporters: [otlpExporter({ endpoint: otlp.url, headers: { 'x-api-key': 'k-123' } }), exporter] });
  const { client, close } = await connectMemory(track(createScenarioServer(), tracker));
  await runScenario(client);
  await tracker.flush(10_000);
  await close();

  const names = tracker.stats().exporters.map((e) => [e.name, e.exported, e.failed]);
  assert.deepEqual(names, [
    ['otlp', EXPECTED.length, 0],
    ['otlp-metrics', EXPECTED.length, 0],
    ['callback', EXPECTED.length, 0],
  ]);
  for (const r of otlp.requests) {
    assert.equal(r.method, 'POST');
    assert.equal(r.headers['content-type'], 'application/x-protobuf');
    assert.equal(r.headers['x-api-key'], 'k-123');
  }
  const spans = otlp.requests
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) => decodeTraces(r.body))
    .flatMap((rs) => {
      assert.equal(rs.resource['service.name'], 'scenario-server');
      assert.equal(rs.resource['service.version'], '1.0.0');
      return rs.scopes.flatMap((s) => s.spans);
    });
  assert.equal(spans.length, EXPECTED.length);
  const bySpanId = new Map(spans.map((s) => [s.spanId, s]));
  for (const e of events) {
    const span = bySpanId.get(e.spanId);
    assert.ok(span, `a span for ${e.type}`);
    assert.equal(span.traceId, e.traceId);
    assert.equal(span.kind, 2, 'SERVER');
    const method = e.type.slice('mcp:'.length);
    assert.equal(span.name, ['tools/call', 'prompts/get'].includes(method) ? `${method} ${e.resourceName}` : method, 'never the URI');
    assert.equal(span.attributes['mcp.method.name'], method);
    assert.equal(span.attributes['mcp.session.id'], e.sessionId);
    assert.equal(span.attributes['jsonrpc.request.id'], String(e.requestId));
    assert.equal(span.attributes['mcp.resource.uri'], method === 'resources/read' || method.endsWith('subscribe') ? e.resourceName : undefined);
    assert.equal(span.attributes['error.type'], e.error?.type);
    assert.equal(span.attributes['rpc.response.status_code'], e.error?.code === undefined ? undefined : String(e.error.code));
    assert.equal(span.endNanos - span.startNanos >= 0n, true);
  }
  assert.equal(bySpanId.get(events[2].spanId).attributes['gen_ai.tool.name'], 'echo');

  const metrics = otlp.requests.filter((r) => r.path === '/v1/metrics').flatMap((r) => decodeMetrics(r.body));
  const duration = metrics.filter((m) => m.name === 'mcp.server.operation.duration');
  assert.ok(duration.length > 0);
  assert.equal(duration[0].unit, 's');
  const points = duration.flatMap((m) => m.points);
  assert.equal(
    points.reduce((n, p) => n + p.count, 0),
    EXPECTED.length,
  );
  for (const p of points) assert.equal(p.attributes['mcp.resource.uri'], undefined, 'no URI on metrics');
  await tracker.shutdown(5_000);
  await otlp.close();
});

test('MCPcat API: one snake_case event per request, POSTed to {baseUrl}/v1/public/events/', async () => {
  const api = await receiver(202);
  const tracker = new Tracker({ exporters: [mcpcatExporter({ projectId: 'proj_test', baseUrl: api.url, apiKey: 'key-1' })] });
  const { client, close } = await connectMemory(track(createScenarioServer(), tracker), { name: 'cat-client', version: '9' });
  await runScenario(client);
  await tracker.flush(10_000);
  await close();
  assert.equal(api.requests.length, EXPECTED.length);
  const bodies = api.requests.map((r) => {
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/v1/public/events/');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers.authorization, 'Token key-1');
    return JSON.parse(r.body.toString('utf8'));
  });
  assert.deepEqual(
    bodies.map((b) => b.event_type),
    EXPECTED.map((e) => e.type),
  );
  for (const [i, b] of bodies.entries()) {
    assert.equal(b.project_id, 'proj_test');
    assert.equal(b.sdk_language, 'TypeScript', 'as agentcat\'s own TypeScript SDK says');
    assert.equal(b.agentcat_version.startsWith('mcplens '), true);
    assert.equal(b.server_name, 'scenario-server');
    assert.equal(b.client_name, 'cat-client');
    assert.match(b.id, /^evt_/);
    assert.match(b.session_id, /^ses_/);
    assert.equal(b.resource_name, EXPECTED[i].resourceName);
    assert.equal(b.is_error, EXPECTED[i].error !== undefined);
    assert.equal(Number.isInteger(b.duration), true);
  }
  assert.equal(bodies[8].error.code, -32002);
  assert.deepEqual(bodies[7].parameters, { uri: 'note://1' });
  assert.deepEqual(tracker.stats().exporters, [{ name: 'mcpcat', exported: EXPECTED.length, dropped: 0, failed: 0, skipped: 0, pending: 0 }]);
  await tracker.shutdown(5_000);
  await api.close();
});

test('exporter options are checked by the core when the tracker is made: McplensError invalid_argument naming the option', () => {
  for (const [exporter, option] of [
    [otlpExporter({ endpoint: 'not a url' }), 'exporters[0].endpoint'],
    [mcpcatExporter({ projectId: '' }), 'exporters[0].projectId'],
  ]) {
    assert.throws(
      () => new Tracker({ exporters: [exporter] }),
      (e) => e.name === 'McplensError' && e.code === 'invalid_argument' && e.option === option,
    );
  }
});
