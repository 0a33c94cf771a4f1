/**
 * `mcplens/ai`: the resource tools for the Vercel AI SDK (`ai` 7.x, `generateText`/`streamText`).
 *
 * A converter: the tools' names, descriptions, schemas, answers, caps and visibility are the Rust
 * core's (the tool specs, `Catalog.callTool`, `Catalog.visibleTools`). A refusal or failed read rejects
 * `execute` with a `McplensError` whose message is safe for the model: the AI SDK gives it to the
 * model as a tool error and the loop goes on.
 *
 * `@ai-sdk/mcp`'s client is not an MCP SDK `Client` (no `request` with a result schema, no
 * notification handlers, no cursor for templates): attach a TS SDK client to the same server.
 */
import { jsonSchema, tool, type PrepareStepFunction, type Tool, type ToolSet } from 'ai';

import { Catalog, listResourceTemplatesTool, listResourcesTool, readResourceTool, type WatchableClient } from './index.js';

/** Where the tools find their servers: an existing catalog, and/or clients to watch by server name. */
export interface ResourceToolsOptions {
  catalog?: Catalog;
  /** TS SDK 1.x (`@modelcontextprotocol/sdk`) or v2 (`@modelcontextprotocol/client`) clients, connected. */
  clients?: Readonly<Record<string, WatchableClient>>;
}

/** The resource tools of a catalog, for `tools` and `prepareStep`. */
export interface ResourceTools {
  readonly catalog: Catalog;
  /** Every resource tool by name; `prepareStep` offers the model those visible at each step. */
  readonly tools: Record<string, Tool>;
  /** A `prepareStep` whose `activeTools` are `keep` (your other tools) and the resource tools visible now. */
  prepareStep<T extends ToolSet = ToolSet>(keep?: readonly (keyof T & string)[]): PrepareStepFunction<T>;
}

/** The resource tools over `options.catalog` (or a new one), once each client's watch stands. */
export async function resourceTools(options: ResourceToolsOptions = {}): Promise<ResourceTools> {
  const catalog = options.catalog ?? new Catalog();
  await Promise.all(Object.entries(options.clients ?? {}).map(([server, client]) => catalog.watch(server, client)));
  const tools: Record<string, Tool> = {};
  for (const { name, description, inputSchema } of [listResourceTemplatesTool, listResourcesTool, readResourceTool]) {
    const execute = (args: Record<string, unknown>) => catalog.callTool(name, args);
    tools[name] = tool({ description, inputSchema: jsonSchema<Record<string, unknown>>(inputSchema), execute });
  }
  const activeTools = (keep: readonly string[] = []) => () => ({ activeTools: [...keep, ...catalog.visibleTools()] });
  return { catalog, tools, prepareStep: activeTools as ResourceTools['prepareStep'] };
}
