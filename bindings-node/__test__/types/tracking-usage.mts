// A typed usage example of server tracking, checked by `tsc --noEmit` (make lint-node) against the
// package's entry point and the real SDK types. It is never run.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  McplensError,
  Tracker,
  callbackExporter,
  jsonlExporter,
  mcpcatExporter,
  otlpExporter,
  track,
  type Exporter,
  type Identity,
  type JsonRpcRequest,
  type TrackedEvent,
  type TrackerOptions,
  type TrackerStats,
} from 'mcplens';

export async function tracked(): Promise<TrackerStats> {
  const exporters: Exporter[] = [
    jsonlExporter({ path: 'events.jsonl' }),
    jsonlExporter(),
    otlpExporter({ endpoint: 'http://localhost:4318', headers: { 'x-api-key': 'k' } }),
    mcpcatExporter({ projectId: 'proj_1', baseUrl: 'http://localhost:8080' }),
    callbackExporter((events: TrackedEvent[]) => {
      for (const e of events) console.error(e.type, e.resourceName, e.durationMs, e.error?.code);
    }),
    callbackExporter(async () => {}),
  ];
  const options: TrackerOptions = {
    exporters,
    enableTracing: true,
    captureParameters: true,
    captureResponses: false,
    captureResourceText: false,
    redact: (text) => text.replaceAll('secret', '***'),
    identify: async (request: JsonRpcRequest): Promise<Identity | null> =>
      request.method === 'initialize' ? { id: 'u1', name: 'Ada', data: { plan: 'pro' } } : null,
    queueCapacity: 1_000,
  };
  const tracker = new Tracker(options);
  const mcp: McpServer = track(new McpServer({ name: 'a', version: '1' }), tracker);
  const low: Server = track(new Server({ name: 'b', version: '1' }, { capabilities: {} }));
  console.error(mcp.isConnected(), low.getClientVersion());
  try {
    await tracker.flush(1_000);
  } catch (e) {
    if (e instanceof McplensError && e.code === 'timeout') console.error(e.message);
  }
  const stats: TrackerStats = tracker.stats();
  await tracker.shutdown(5_000);
  return stats;
}
