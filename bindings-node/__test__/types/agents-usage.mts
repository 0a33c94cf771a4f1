// A typed usage example of the agent-framework adapters, checked by `tsc --noEmit` (make lint-node)
// against the package's own subpaths and the pinned frameworks' types: the tool set and
// `prepareStep` fit `generateText`/`streamText`, the tools fit an Agents `Agent`, and SDK 1.x and v2
// clients and an Agents `MCPServer` are accepted. It is never run.
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Agent, MCPServerStdio, run } from '@openai/agents';
import { generateText, isStepCount, jsonSchema, streamText, tool, type LanguageModel } from 'ai';
import { Catalog } from 'mcplens';
import { resourceTools } from 'mcplens/ai';
import { resourceTools as agentsResourceTools } from 'mcplens/openai-agents';

export async function aiSdk(model: LanguageModel, v1: Client, v2: ClientV2): Promise<string> {
  const resources = await resourceTools({ catalog: new Catalog({ read: { maxOutputChars: 20_000 } }), clients: { docs: v1, wiki: v2 } });
  const clock = tool({ description: 'The time.', inputSchema: jsonSchema<{ zone?: string }>({ type: 'object', properties: { zone: { type: 'string' } } }), execute: async () => 'noon' });
  const { text } = await generateText({
    model,
    tools: { clock, ...resources.tools },
    prepareStep: resources.prepareStep(['clock']),
    stopWhen: isStepCount(5),
    prompt: 'Read the docs.',
  });
  const stream = streamText({ model, tools: resources.tools, prepareStep: resources.prepareStep(), prompt: 'Read the docs.' });
  return text + (await stream.text) + resources.catalog.visibleTools().join();
}

export async function openaiAgents(v2: ClientV2): Promise<unknown> {
  const server = new MCPServerStdio({ name: 'docs', command: 'node', args: ['server.js'] });
  await server.connect();
  const { tools, catalog } = await agentsResourceTools({ clients: { docs: server, wiki: v2 } });
  const result = await run(new Agent({ name: 'reader', instructions: 'Read the docs.', tools }), 'Read the docs.');
  return [result.finalOutput, catalog.servers()];
}
