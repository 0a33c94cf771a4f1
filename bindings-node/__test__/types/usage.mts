// A typed usage example, checked by `tsc --noEmit` (make lint-node) against the package's own
// entry point and the real SDK types. It is never run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  Catalog,
  McplensError,
  Pager,
  ToolCall,
  Refresher,
  listResources,
  listResourceTemplates,
  listResourceTemplatesTool,
  readResourceTool,
  toolSpec,
  type Diagnostics,
  type ErrorCode,
  type ListKind,
  type Limits,
  type Disposition,
  type ListChangedDecision,
  type Listing,
  type RefresherAction,
  type Resource,
  type ResourceTemplate,
  type ServerStatus,
  type Status,
  type ToolSpec,
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

// An agent: one catalog for every connected server, kept current, and the model-facing tool.
export async function agent(clients: Map<string, Client>): Promise<string> {
  const catalog = new Catalog({ limits: { deadlineMs: 10_000 }, refresh: { retryBaseMs: 500, minTtlMs: 30_000 } });
  for (const [server, client] of clients) {
    catalog.watch(server, client); // the SDK Client is accepted as it is
    try {
      const status: ServerStatus = await catalog.refresh(server, client);
      const s: Status = status.status;
      console.log(s, status.generation, status.lastError?.code, status.templates, status.refreshing);
    } catch (e) {
      if (e instanceof McplensError) console.error(e.code satisfies ErrorCode, e.server);
    }
  }
  const spec: ToolSpec = listResourceTemplatesTool;
  const tools = [{ name: spec.name, description: spec.description, input_schema: spec.inputSchema }];
  console.log(tools, spec.annotations.readOnlyHint, spec.deferred);
  const templates: ResourceTemplate[] = catalog.templates({ server: 'docs' });
  const resources: Resource[] = catalog.resources();
  console.log(templates.length, resources.length, catalog.servers(), catalog.needsRefresh('docs'));
  const modelArgs: Record<string, unknown> = { server: 'docs', limit: 10 };
  await catalog.ensureFresh();
  const offered: string[] = catalog.visibleTools();
  console.log(offered, catalog.generation, (await catalog.refresh('docs', clients.get('docs')!, { force: true })).status);
  catalog.invalidate('docs', 'configuration_changed');
  const removed: boolean = catalog.remove('old');
  console.log(removed);
  await catalog.settled();
  const read: string = await catalog.callTool(readResourceTool.name, { server: 'docs', uri: 'file:///a' });
  const strict = toolSpec(offered[0] ?? '')?.strictInputSchema.required;
  console.log(read, strict, await catalog.callTool('ListMcpResourcesTool', null));
  return catalog.callListTemplatesTool(modelArgs) + catalog.callListTemplatesTool('{"offset": 10}');
}

// A host with its own I/O reads a resource with the sans-IO read call.
export function hostRead(catalog: Catalog, send: (method: string, params: Record<string, unknown>) => string): string {
  const call = new ToolCall(catalog, 'ReadMcpResourceTool', { server: 'docs', uri: 'file:///a' }, { maxOutputChars: 5000, timeoutMs: 1000 });
  call.acceptPage(send(call.method, call.params), performance.now());
  return call.finish();
}

// A host with its own I/O drives the catalog's machine with the sans-IO pager.
export function hostRefresh(fetchPage: (method: string) => string, now: number): Disposition {
  const catalog = new Catalog({ refresh: { shrinkMinItems: 20 } });
  const machine = new Refresher(catalog);
  machine.attach('x', true);
  machine.request('x', 'refresh', now);
  const [action] = machine.pollActions();
  if (action === undefined || !('traverse' in action)) throw new Error('no traversal');
  const pair: Pager = Pager.pair(action.traverse.traversal, { server: 'x', capabilities: { resources: {} }, now });
  for (let req = pair.nextRequest(); req !== null; req = pair.nextRequest()) {
    const kind: ListKind | null = pair.kind;
    pair.acceptPage(fetchPage(kind === 'resources' ? 'resources/list' : req.method), now);
  }
  const decision: ListChangedDecision = machine.onListChanged('x', action.traverse.epoch, now);
  console.log(decision, catalog.status('x').refreshing);
  return machine.traversed(pair, now);
}

// A host on the TypeScript SDK performs the pair over its client.
export async function sdkHost(catalog: Catalog, client: Client): Promise<Disposition> {
  const machine = new Refresher(catalog);
  machine.attach('x', true);
  machine.request('x', 'refresh');
  const [action] = machine.pollActions();
  if (action === undefined || !('traverse' in action)) throw new Error('no traversal');
  return await machine.traverse(client, action.traverse.traversal, { server: 'x', limits: { maxPages: 5 } });
}

// A host on another SDK drives the refresh state machine itself.
export function otherHost(catalog: Catalog, perform: (epoch: number, pair: Pager) => void): Disposition[] {
  const machine = new Refresher(catalog, 7n);
  machine.invalidate('x', 'configuration_changed');
  const epoch: number = machine.attach('x', true);
  const caller: number = machine.request('x', 'current');
  const done: Disposition[] = [];
  for (const action of machine.pollActions() satisfies RefresherAction[]) {
    if ('traverse' in action) {
      const { server, epoch, traversal } = action.traverse;
      const pair = Pager.pair(traversal, { server, capabilities: null, now: performance.now() });
      perform(epoch, pair);
      done.push(machine.traversed(pair));
    } else if (action.resolve.callers.includes(caller) && typeof action.resolve.outcome === 'object') {
      console.error(action.resolve.outcome.failed.failure.code, action.resolve.outcome.failed.rpcCode);
    }
  }
  console.log(machine.pollTimeout(), machine.isBusy('x'), machine.onListChanged('x', epoch), machine.detach('x', epoch));
  return done;
}
