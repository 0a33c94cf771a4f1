// `make test-platforms`, the Node half of the smoke suite, run by each Node line (x64 and arm64)
// from a fresh folder where the npm packages of dist/ are installed:
//
//   node smoke.mjs COMMAND [ARGS...]      (a stdio MCP server: server-everything)
//
// Over one stdio connection (the TypeScript SDK's client): both bounded traversals, then the
// catalog's refresh and the model-facing tool answered from it. Prints one JSON object, with the
// native addon that loaded; tests/platforms/run.py holds it to what the pinned server offers.
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, listResources, listResourceTemplates } from 'mcplens';

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: 'platforms', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args }));
const limits = { deadlineMs: 60_000 }; // arm64 runs under qemu: slow, not stuck
const templates = await listResourceTemplates(client, { server: 'everything', limits });
const resources = await listResources(client, { server: 'everything', limits });
const catalog = new Catalog({ limits });
const status = await catalog.refresh('everything', client);
const tool = JSON.parse(catalog.callListTemplatesTool({ server: 'everything' }));
await client.close();

// The addon the loader picked (CommonJS modules loaded under ESM share require's cache).
const require = createRequire(import.meta.url);
console.log(
  JSON.stringify({
    node: process.version,
    arch: process.arch,
    addons: Object.keys(require.cache).filter((f) => f.endsWith('.node')),
    templates: templates.items.map((t) => t.uriTemplate),
    resources: resources.items.length,
    status: { status: status.status, templates: status.templates, resources: status.resources },
    tool: { total: tool.total, templates: tool.resourceTemplates.map((t) => t.uriTemplate) },
  }),
);
