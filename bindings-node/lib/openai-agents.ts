/**
 * `mcplens/openai-agents`: the resource tools for OpenAI Agents JS (`@openai/agents` 0.20).
 *
 * A converter: the tools' names, descriptions, strict schemas, answers, caps and visibility are the
 * Rust core's (the tool specs' `strictInputSchema`, `Catalog.callTool`, `Catalog.visibleTools` as
 * each tool's `isEnabled`, asked every turn). A refusal or failed read is a `McplensError` whose
 * message is safe for the model: `errorFunction` gives it to the model and the run goes on.
 *
 * An Agents `MCPServer` (`MCPServerStdio`, `MCPServerStreamableHttp`, `MCPServerSSE`), connected,
 * is accepted in place of a client: its v2 SDK `Client` is read from the non-public
 * `underlying.session` (checked against @openai/agents 0.20 by the tests).
 */
import { tool, type FunctionTool, type MCPServer } from '@openai/agents';

import { Catalog, McplensError, listResourceTemplatesTool, listResourcesTool, readResourceTool, type WatchableClient } from './index.js';

/** Where the tools find their servers: an existing catalog, and/or clients to watch by server name. */
export interface ResourceToolsOptions {
  catalog?: Catalog;
  /** TS SDK 1.x or v2 clients, or Agents `MCPServer`s, connected. */
  clients?: Readonly<Record<string, WatchableClient | MCPServer>>;
}

/** The resource tools of a catalog, for an `Agent`'s `tools`. */
export interface ResourceTools {
  readonly catalog: Catalog;
  readonly tools: FunctionTool[];
}

/** The SDK client of an Agents `MCPServer`, or the client itself. */
const sessionOf = (c: WatchableClient | MCPServer) => ((c as { underlying?: { session?: WatchableClient } }).underlying?.session ?? c) as WatchableClient;

/** The resource tools over `options.catalog` (or a new one), once each client's watch stands. */
export async function resourceTools(options: ResourceToolsOptions = {}): Promise<ResourceTools> {
  const catalog = options.catalog ?? new Catalog();
  await Promise.all(Object.entries(options.clients ?? {}).map(([server, c]) => catalog.watch(server, sessionOf(c))));
  const tools = [listResourceTemplatesTool, listResourcesTool, readResourceTool].map(({ name, description, strictInputSchema }) =>
    tool({
      name,
      description,
      parameters: strictInputSchema as never,
      strict: true,
      execute: (args: unknown) => catalog.callTool(name, args as Record<string, unknown>),
      isEnabled: () => catalog.visibleTools().includes(name),
      errorFunction: (_context, error) => {
        if (error instanceof McplensError) return error.message;
        throw error;
      },
    }) as FunctionTool,
  );
  return { catalog, tools };
}
