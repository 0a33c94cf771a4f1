// List an MCP server's resource templates through the catalog, as the model sees them:
//   node quickstart.mjs COMMAND [ARGS...]   e.g. node quickstart.mjs npx -y @modelcontextprotocol/server-everything
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, McplensError } from 'mcplens';

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: 'quickstart', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args }));

const catalog = new Catalog({ limits: { deadlineMs: 10_000 } });
catalog.watch('docs', client); // list_changed → refresh; connection closed → invalidate
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
