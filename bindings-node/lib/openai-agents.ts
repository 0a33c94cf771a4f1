/**
 * `mcplens/openai-agents`: the resource tools for OpenAI Agents JS (`@openai/agents` 0.20).
 *
 * A converter: the tools' names, descriptions, strict schemas, answers, caps and visibility are the
 * Rust core's (the tool specs' `strictInputSchema`, `Catalog.callTool`, `Catalog.visibleTools` as
 * each tool's `isEnabled`, asked every turn). A refusal or failed read is a `McplensError` whose
 * message is safe for the model: `errorFunction` gives it to the model and the run goes on.
 */
import { tool, type FunctionTool, type MCPServer } from '@openai/agents';

import { Catalog, McplensError, resourceToolSpecs, type WatchableClient } from './index.js';

/**
 * The resource tools (for an `Agent`'s `tools`) over `catalog` (default: a new one), once the watch
 * of each of `clients` stands: TS SDK 1.x or v2 `Client`s, or Agents `MCPServer`s
 * (`MCPServerStdio`, `MCPServerStreamableHttp`, `MCPServerSSE`), connected, by server name. An
 * `MCPServer`'s v2 SDK `Client` is its non-public `underlying.session` (checked against
 * `@openai/agents` 0.20 by the tests).
 */
export async function resourceTools(options: { catalog?: Catalog; clients?: Readonly<Record<string, WatchableClient | MCPServer>> } = {}) {
  const catalog = options.catalog ?? new Catalog();
  const session = (c: object) => ((c as { underlying?: { session?: WatchableClient } }).underlying?.session ?? c) as WatchableClient;
  await Promise.all(Object.entries(options.clients ?? {}).map(([server, c]) => catalog.watch(server, session(c))));
  const tools: FunctionTool[] = resourceToolSpecs.map(({ name, description, strictInputSchema }) =>
    tool({
      name,
      description,
      parameters: strictInputSchema as never,
      strict: true,
      execute: (args: unknown) => catalog.callTool(name, args as Record<string, unknown>),
      isEnabled: () => catalog.visibleTools().includes(name),
      errorFunction: (_context, error) => {
        if (error instanceof McplensError) return error.message;
        throw error; // not a refusal: a defect, which ends the run
      },
    }) as FunctionTool,
  );
  return { catalog, tools };
}
