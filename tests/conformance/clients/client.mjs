// Client-mode smoke test (Node): `conformance client --command "node client.mjs" --scenario S`.
//
// The suite starts a mock server and runs this with its URL as the last argument and the scenario in
// MCP_CONFORMANCE_SCENARIO. The client connects with the SDK, runs mcplens' discovery helpers
// (`listResourceTemplates`, `listResources`), calls `add_numbers` in `tools_call`, and prints one
// JSON report line (the suite saves stdout; the driver reads it). A discovery failure is reported,
// never fatal: the mock servers have no resources, and the helpers must not break the session.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McplensError, listResourceTemplates, listResources } from 'mcplens';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const client = new Client({ name: 'mcplens-conformance-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const report = { client: 'node', scenario, discovery: {} };
for (const [kind, list] of [
  ['resourceTemplates', listResourceTemplates],
  ['resources', listResources],
]) {
  try {
    const listing = await list(client, { server: 'conformance-mock' });
    report.discovery[kind] = { support: listing.support, items: listing.items.length, requests: listing.diagnostics.requests };
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    report.discovery[kind] = { error: e.code };
  }
}
if (scenario === 'tools_call') {
  const result = await client.callTool({ name: 'add_numbers', arguments: { a: 2, b: 3 } });
  report.toolsCall = result.content[0]?.text;
}
await client.close();
console.log(JSON.stringify(report));
