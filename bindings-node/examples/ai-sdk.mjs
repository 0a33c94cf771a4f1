// A Vercel AI SDK agent (`ai` 7.x, Node >= 22) that finds an MCP server's resource templates, fills
// one in and reads it, with mcplens' resource tools over a TS SDK client.
//   node ai-sdk.mjs COMMAND [ARGS...]   e.g. node ai-sdk.mjs npx -y @modelcontextprotocol/server-everything
// With AI_GATEWAY_API_KEY set a real model answers (MODEL, default openai/gpt-5-mini, through the AI
// Gateway); without it, the offline stand-in of ai-offline-model.mjs plays the model.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { gateway, generateText, isStepCount } from 'ai';
import { resourceTools } from 'mcplens/ai';

import { offlineModel } from './ai-offline-model.mjs';

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: 'ai-sdk-example', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
await client.connect(new StdioClientTransport({ command, args }));

const resources = await resourceTools({ clients: { docs: client } }); // or { catalog } you already have
const { text, steps } = await generateText({
  model: process.env.AI_GATEWAY_API_KEY ? gateway(process.env.MODEL ?? 'openai/gpt-5-mini') : offlineModel(),
  tools: resources.tools, // spread your own tools in too, and name them: prepareStep(['myTool'])
  prepareStep: resources.prepareStep(), // offers the resource tools only while a server has resources
  stopWhen: isStepCount(6),
  prompt: 'Read resource 1 of the "docs" server from its first resource template, and quote it.',
});
for (const step of steps) for (const call of step.toolCalls) console.log(`${call.toolName} ${JSON.stringify(call.input)}`);
console.log(text);
await client.close();
