// mcplens/openai-agents in OpenAI Agents JS's own loop: `run()` of an `Agent` whose model is the
// SDK's `ScriptedModel` (@openai/agents/testing), each move made from the tool output it received,
// tracing off, against real MCP servers (server-everything, servers/reads-server.mjs) over TS SDK
// 1.x and v2 clients and an Agents `MCPServerStdio`. Node 22 (`make test-node-agents`).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';

import { Agent, MCPServerStdio, run, setTracingDisabled, tool } from '@openai/agents';
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing';
import { Catalog, expand } from 'mcplens';
import { resourceTools } from 'mcplens/openai-agents';

import {
  EVERYTHING_SERVER,
  NOTE_BODY,
  READS_SERVER,
  REFUSED_URI,
  SDKS,
  assertCapped,
  assertClean,
  fillFirstTemplate,
  listedUri,
  readOutput,
} from './helpers.mjs';

setTracingDisabled(true);

const TOOLS = ['ListMcpResourceTemplatesTool', 'ListMcpResourcesTool', 'ReadMcpResourceTool'];
// A strict schema requires every property: the model sends null for the ones it leaves out.
const ALL = { offset: null, limit: null };

/**
 * A `ScriptedModel` playing `moves` in order: each gets the output of the previous tool call (a
 * string, or undefined) and the tools offered this turn, and returns `{tool, input}` or `{text}`.
 * `offered` records the tools of every turn.
 */
function scriptedModel(moves) {
  const offered = [];
  const model = new ScriptedModel(
    moves.map((move, i) =>
      modelResponder(({ request }) => {
        offered.push(request.tools.map((t) => t.name).sort());
        for (const t of request.tools) {
          assert.equal(t.strict, true, `${t.name} is not strict`);
          assert.deepEqual(new Set(t.parameters.required), new Set(Object.keys(t.parameters.properties)));
        }
        const last = Array.isArray(request.input) ? request.input.at(-1) : undefined;
        const output = last?.type === 'function_call_result' ? last.output : undefined;
        const next = move(typeof output === 'object' ? output.text : output, offered.at(-1));
        return 'tool' in next ? [functionCall(next.tool, next.input, { callId: `call-${i}` })] : [assistantMessage(next.text)];
      }),
    ),
  );
  return { model, offered };
}

async function runAgent(tools, moves) {
  const { model, offered } = scriptedModel(moves);
  const result = await run(new Agent({ name: 'reader', instructions: 'Read resources.', model, tools }), 'Read a resource.', { maxTurns: 10 });
  model.assertComplete();
  return { result, offered };
}

/** The model lists server-everything's templates, fills the first in, reads it and quotes it. */
async function readsEverything(tools) {
  let read;
  const { result, offered } = await runAgent(tools, [
    () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'everything', ...ALL } }),
    (out) => ({ tool: 'ReadMcpResourceTool', input: { server: 'everything', uri: (read = fillFirstTemplate(out, 'everything')) } }),
    (out) => ({ text: `It says: ${readOutput(out).contents[0].text}` }),
  ]);
  assert.equal(read, 'demo://resource/dynamic/text/7');
  assert.deepEqual(offered[0], TOOLS);
  assert.match(result.finalOutput, /^It says: Resource 7: This is a plaintext resource created at /);
}

for (const [sdk, connect] of Object.entries(SDKS)) {
  describe(`mcplens/openai-agents over a TS SDK ${sdk} client`, () => {
    test('a URI the model knows reads on its first call, before any listing (server-everything)', async () => {
      const client = await connect([EVERYTHING_SERVER, 'stdio']);
      try {
        const { tools } = await resourceTools({ clients: { everything: client } });
        const { result } = await runAgent(tools, [
          () => ({ tool: 'ReadMcpResourceTool', input: { server: 'everything', uri: 'demo://resource/dynamic/text/7' } }),
          (out) => ({ text: `It says: ${readOutput(out).contents[0].text}` }),
        ]);
        assert.match(result.finalOutput, /^It says: Resource 7: This is a plaintext resource created at /);
      } finally {
        await client.close();
      }
    });

    test('the model lists templates, fills one in from the listing, reads it, and the final output holds the text (server-everything)', async () => {
      const client = await connect([EVERYTHING_SERVER, 'stdio']);
      try {
        await readsEverything((await resourceTools({ clients: { everything: client } })).tools);
      } finally {
        await client.close();
      }
    });

    test('the model lists templates, completes a variable (strict schema: the context as pairs), fills the template and reads it (server-everything)', async () => {
      const client = await connect([EVERYTHING_SERVER, 'stdio']);
      try {
        const { tools } = await resourceTools({ clients: { everything: client } });
        let template;
        let uri;
        const { result, offered } = await runAgent(tools, [
          () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'everything', ...ALL } }),
          (out) => {
            template = JSON.parse(out).resourceTemplates[0].uriTemplate;
            const input = { server: 'everything', uriTemplate: template, variable: 'resourceId', value: '5', arguments: [] };
            return { tool: 'CompleteMcpResourceTemplateTool', input };
          },
          (out) => ({ tool: 'ReadMcpResourceTool', input: { server: 'everything', uri: (uri = expand(template, { resourceId: JSON.parse(out).values[0] })) } }),
          (out) => ({ text: `It says: ${readOutput(out).contents[0].text}` }),
        ]);
        assert.equal(uri, 'demo://resource/dynamic/text/5');
        assert.ok(offered[1].includes('CompleteMcpResourceTemplateTool'), JSON.stringify(offered));
        assert.match(result.finalOutput, /^It says: Resource 5: This is a plaintext resource created at /);
      } finally {
        await client.close();
      }
    });

    test('a hostile server: its strings arrive sanitized, 1 MiB arrives capped with the truncation stated, a refused URI is a tool error and the run goes on', async () => {
      const client = await connect([READS_SERVER, 'hostile']);
      try {
        const { tools } = await resourceTools({ clients: { notes: client } });
        let refusal;
        const { result } = await runAgent(tools, [
          () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'notes', ...ALL } }),
          (out) => {
            assertClean(out);
            assert.equal(JSON.parse(out).resourceTemplates[0].uriTemplate, 'notes://{id}');
            return { tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: fillFirstTemplate(out, 'notes') } };
          },
          (out) => {
            assertClean(out);
            const read = readOutput(out);
            assert.equal(read.contents[0].text, `Note 7: ${NOTE_BODY}`);
            assert.ok(read.removedChars > 0);
            return { tool: 'ListMcpResourcesTool', input: { server: 'notes', ...ALL } };
          },
          (out) => ({ tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: listedUri(out, 'big') } }),
          (out) => {
            assertCapped(out);
            return { tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: REFUSED_URI } };
          },
          (out) => {
            refusal = out;
            return { text: `Done: ${NOTE_BODY}` };
          },
        ]);
        assert.ok(!refusal.includes('hunter2'), refusal);
        assert.match(refusal, /notes/);
        assert.notEqual(refusal, 'An error occurred while running the tool. Please try again.', "the core's message, not the SDK's generic one");
        assert.equal(result.finalOutput, `Done: ${NOTE_BODY}`);
      } finally {
        await client.close();
      }
    });

    test('isEnabled, asked every run: no resource tool while no server offers resources (your own tools kept); all three once one does', async () => {
      const plain = await connect([READS_SERVER, 'tools-only']);
      const notes = await connect([READS_SERVER, 'hostile']);
      try {
        const catalog = new Catalog();
        const resources = await resourceTools({ catalog, clients: { plain } });
        assert.equal(resources.catalog, catalog);
        const clock = tool({ name: 'clock', description: 'The time.', parameters: { type: 'object', properties: {}, required: [], additionalProperties: false }, execute: async () => 'noon' });
        const before = await runAgent([clock, ...resources.tools], [() => ({ text: 'nothing to read' })]);
        assert.deepEqual(before.offered, [['clock']]);
        await catalog.watch('notes', notes);
        const after = await runAgent([clock, ...resources.tools], [() => ({ text: 'now I can read' })]);
        assert.deepEqual(after.offered, [[...TOOLS, 'clock'].sort()]);
      } finally {
        await plain.close();
        await notes.close();
      }
    });
  });
}

test("an Agents MCPServerStdio, connected, stands for its client (its v2 SDK session)", async () => {
  const server = new MCPServerStdio({ name: 'everything', command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] });
  await server.connect();
  try {
    await readsEverything((await resourceTools({ clients: { everything: server } })).tools);
  } finally {
    await server.close();
  }
});

test('mcplens/openai-agents: the CommonJS entry gives the very objects of the ES module one', async () => {
  const require = createRequire(import.meta.url);
  assert.equal(require('mcplens/openai-agents').resourceTools, resourceTools);
});
