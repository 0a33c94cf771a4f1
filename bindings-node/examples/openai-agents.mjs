// An OpenAI Agents JS agent (`@openai/agents` 0.20) that finds an MCP server's resource templates,
// fills one in and reads it, with mcplens' resource tools over the agent's own MCP server object.
//   node openai-agents.mjs COMMAND [ARGS...]   e.g. node openai-agents.mjs npx -y @modelcontextprotocol/server-everything
// With OPENAI_API_KEY set a real model answers (MODEL, default gpt-5-mini); without it, the offline
// stand-in of openai-agents-offline-model.mjs plays the model.
import { Agent, MCPServerStdio, run } from '@openai/agents';
import { resourceTools } from 'mcplens/openai-agents';

import { offlineModel } from './openai-agents-offline-model.mjs';

const [command, ...args] = process.argv.slice(2);
const docs = new MCPServerStdio({ name: 'docs', command, args }); // or a TS SDK 1.x / v2 Client
await docs.connect();

const { tools } = await resourceTools({ clients: { docs } }); // strict schemas; hidden while no server has resources
const agent = new Agent({
  name: 'reader',
  instructions: 'Answer from the MCP resources you can list and read.',
  model: process.env.OPENAI_API_KEY ? (process.env.MODEL ?? 'gpt-5-mini') : offlineModel(),
  tools,
});
const result = await run(agent, 'Read resource 1 of the "docs" server from its first resource template, and quote it.');
for (const item of result.newItems) if (item.type === 'tool_call_item') console.log(`${item.rawItem.name} ${item.rawItem.arguments}`);
console.log(result.finalOutput);
await docs.close();
