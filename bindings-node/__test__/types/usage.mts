// A typed usage example, checked by `tsc --noEmit` (make lint-node) against the package's own
// entry point and the real SDK types. It is never run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  McplensError,
  Pager,
  listResources,
  listResourceTemplates,
  type Diagnostics,
  type Limits,
  type Listing,
  type Resource,
  type ResourceTemplate,
} from 'mcplens';

export async function discover(): Promise<string[]> {
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: 'node', args: ['server.js'] }));
  const limits: Limits = { maxPages: 10, deadlineMs: 5_000 };
  try {
    const templates: Listing<ResourceTemplate> = await listResourceTemplates(client, {
      server: 'docs',
      limits,
      signal: AbortSignal.timeout(10_000),
    });
    const resources: Listing<Resource> = await listResources(client, { server: 'docs' });
    const diagnostics: Diagnostics = templates.diagnostics;
    console.log(diagnostics.droppedFields, templates.support, resources.items[0]?.size);
    return templates.items.map((t) => `${t.server}: ${t.uriTemplate} (${t.title ?? t.name})`);
  } catch (e) {
    if (e instanceof McplensError) {
      const code: string = e.code;
      console.error(code, e.server, e.rpcCode);
    }
    throw e;
  } finally {
    await client.close();
  }
}

// Another host drives the sans-IO pager with its own I/O and clock.
export function drive(fetchPage: (params: { cursor: string } | undefined) => string): Listing {
  const pager = new Pager({ kind: 'resource_templates', server: 'x', resourcesCapability: true, now: performance.now() });
  for (let req = pager.nextRequest(); req !== null; req = pager.nextRequest()) {
    const budgetMs: number = pager.remaining(performance.now());
    console.log(req.method, budgetMs);
    pager.acceptPage(fetchPage(req.params), performance.now());
  }
  return pager.finish();
}
