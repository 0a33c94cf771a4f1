// The host's OpenTelemetry context: an app with @opentelemetry/api (an OpenTelemetry SDK, spans in
// memory) opens a span around each request's handling, as HTTP instrumentation does; mcplens' OTLP
// span for the same request is its INTERNAL child in the same trace. Its own file: the SDK's tracer
// provider and context manager are process-wide.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SpanKind, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Tracker, otlpExporter, track } from 'mcplens';
import * as z from 'zod';

import { decodeTraces } from './otlp-decode.mjs';

/** A loopback OTLP receiver: the spans of every `/v1/traces` POST. */
async function receiver() {
  const spans = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        spans.push(...decodeTraces(Buffer.concat(chunks)).flatMap((rs) => rs.scopes.flatMap((s) => s.spans)));
      }
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { spans, url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

test('under the app’s own span for a request, mcplens’ span is its INTERNAL child: one trace per request', async () => {
  const memory = new InMemorySpanExporter();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }));
  const tracer = trace.getTracer('app');
  const otlp = await receiver();
  const tracker = new Tracker({ exporters: [otlpExporter({ endpoint: otlp.url })] });
  const server = new McpServer({ name: 'otel-app', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerResource('note', 'note://1', {}, async (uri) => ({ contents: [{ uri: uri.href, text: 'one' }] }));
  track(server, tracker);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  // The app's span around each request's delivery (the handler runs in its context).
  const deliver = serverSide.onmessage;
  serverSide.onmessage = (message, extra) => {
    if (!('method' in message) || !('id' in message)) return deliver(message, extra);
    return tracer.startActiveSpan(`handle ${message.method}`, { kind: SpanKind.SERVER }, (span) => {
      try {
        return deliver(message, extra);
      } finally {
        span.end();
      }
    });
  };
  const client = new Client({ name: 'otel-test', version: '1.0.0' });
  await client.connect(clientSide);
  await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  await client.readResource({ uri: 'note://1' });
  await client.close();
  await tracker.flush(10_000);
  await tracker.shutdown(10_000);
  await otlp.close();

  const app = new Map(memory.getFinishedSpans().map((s) => [s.name, s.spanContext()]));
  const ours = new Map(otlp.spans.map((s) => [s.name, s]));
  for (const [name, handled] of [
    ['tools/call echo', 'handle tools/call'],
    ['resources/read', 'handle resources/read'],
  ]) {
    const [mine, theirs] = [ours.get(name), app.get(handled)];
    assert.ok(mine && theirs, `${name}: ${[...ours.keys()]} / ${[...app.keys()]}`);
    assert.deepEqual([mine.traceId, mine.parentSpanId, mine.kind], [theirs.traceId, theirs.spanId, 1], `${name}: INTERNAL, the app span's child`);
  }
  assert.notEqual(app.get('handle tools/call').traceId, app.get('handle resources/read').traceId, 'one trace per request');
});
