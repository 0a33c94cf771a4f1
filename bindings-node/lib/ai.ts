/**
 * `mcplens/ai`: the resource tools for the Vercel AI SDK (`ai` 7.x, `generateText`/`streamText`).
 *
 * A converter: the tools' names, descriptions, schemas, answers, caps and visibility are the Rust
 * core's (the tool specs, `Catalog.callTool`, `Catalog.visibleTools`). A refusal or failed read
 * rejects `execute` with a `McplensError` whose message is safe for the model: the AI SDK gives it
 * to the model as a tool error and the loop goes on.
 *
 * `@ai-sdk/mcp`'s client is not an MCP SDK `Client` (no `request` with a result schema, no
 * notification handlers, no cursor for templates): attach a TS SDK client to the same server.
 */
import { jsonSchema, tool, type PrepareStepFunction, type Tool, type ToolSet } from 'ai';

import { Catalog, resourceToolSpecs, type WatchableClient } from './index.js';

/**
 * The resource tools over `catalog` (default: a new one), once the watch of each of `clients` (TS
 * SDK 1.x or v2 `Client`s, connected, by server name) stands:
 * - `tools`: every resource tool, by name, for `generateText`/`streamText`;
 * - `prepareStep(keep?)`: a `prepareStep` whose `activeTools` are `keep` (your own tools' names)
 *   and the resource tools visible at that step (none while no attached server has resources).
 */
export async function resourceTools(options: { catalog?: Catalog; clients?: Readonly<Record<string, WatchableClient>> } = {}) {
  const catalog = options.catalog ?? new Catalog();
  await Promise.all(Object.entries(options.clients ?? {}).map(([server, client]) => catalog.watch(server, client)));
  const tools: Record<string, Tool> = {};
  for (const { name, description, inputSchema } of resourceToolSpecs) {
    const execute = (args: Record<string, unknown>) => catalog.callTool(name, args);
    tools[name] = tool({ description, inputSchema: jsonSchema<Record<string, unknown>>(inputSchema), execute });
  }
  const prepareStep = <T extends ToolSet = ToolSet>(keep: readonly (keyof T & string)[] = []): PrepareStepFunction<T> =>
    () => ({ activeTools: [...keep, ...(catalog.visibleTools() as (keyof T & string)[])] });
  return { catalog, tools, prepareStep };
}
