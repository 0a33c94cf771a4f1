// List an MCP server's resource templates through the catalog, as the model sees them, with the
// TypeScript SDK v2 client: protocol 2026-07-28 where the server offers it, else the legacy handshake.
//   node quickstart-v2.mjs COMMAND [ARGS...]   e.g. node quickstart-v2.mjs npx -y @modelcontextprotocol/server-everything
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Catalog, McplensError } from 'mcplens';

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: 'quickstart', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
await client.connect(new StdioClientTransport({ command, args }));
console.log(`protocol ${client.getNegotiatedProtocolVersion()}`);

const catalog = new Catalog({ limits: { deadlineMs: 10_000 } });
// list_changed → refresh; closed → invalidate. On 2026-07-28 changes come on subscriptions/listen, and
// only from a server that advertises resources.listChanged: else `not_offered` (ttlMs still applies).
const { notifications } = await catalog.watch('docs', client);
console.log(`change notifications: ${notifications}`); // unsolicited | listening | not_offered
try {
  const status = await catalog.refresh('docs', client); // both lists, committed together
  console.log(`${status.templates} templates, ${status.resources} resources`);
} catch (e) {
  if (!(e instanceof McplensError)) throw e;
  console.error(`discovery failed: ${e.code}`); // the previous listing, if any, is kept
}
for (const t of catalog.templates({ server: 'docs' })) console.log(t.uriTemplate, '-', t.name);
// What ListMcpResourceTemplatesTool returns to the model (compact JSON, at most 100,000 chars):
console.log(catalog.callListTemplatesTool({ server: 'docs', limit: 1 }));
await client.close();
