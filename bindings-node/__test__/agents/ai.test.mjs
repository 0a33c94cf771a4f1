// mcplens/ai in the Vercel AI SDK's own loop: `generateText` with `stopWhen`, driven by the mock
// language model of `ai/test` whose scripted moves are made from the tool output it received,
// against real MCP servers (server-everything, servers/reads-server.mjs) over TS SDK 1.x and v2
// clients. Node 22 (`make test-node-agents`).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';

import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { generateText, isStepCount, jsonSchema, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { Catalog, McplensError, expand } from 'mcplens';
import { resourceTools } from 'mcplens/ai';

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

const TOOLS = ['ListMcpResourceTemplatesTool', 'ListMcpResourcesTool', 'ReadMcpResourceTool'];
const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/**
 * A mock language model playing `moves` in order: each gets the tool result of the previous step
 * (`{toolName, output: {type, value}}`, or undefined) and the names of the tools offered, and
 * returns `{tool, input}` (a tool call) or `{text}` (the answer). `offered` records the tools of
 * every call.
 */
function scriptedModel(moves) {
  const offered = [];
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt, tools }) => {
      const names = (tools ?? []).map((t) => t.name).sort();
      offered.push(names);
      const move = moves[offered.length - 1];
      assert.ok(move, `the model was called ${offered.length} times, more than scripted`);
      const last = prompt.at(-1);
      const result = last.role === 'tool' ? last.content.find((p) => p.type === 'tool-result') : undefined;
      const next = move(result, names);
      const content =
        'tool' in next
          ? [{ type: 'tool-call', toolCallId: `call-${offered.length}`, toolName: next.tool, input: JSON.stringify(next.input) }]
          : [{ type: 'text', text: next.text }];
      return { content, finishReason: { unified: 'tool' in next ? 'tool-calls' : 'stop', raw: undefined }, usage: USAGE, warnings: [] };
    },
  });
  return { model, offered };
}

/** A text tool output (not an error) as the model received it. */
function text(result) {
  assert.equal(result?.output.type, 'text', `a ${result?.output.type} reached the model: ${JSON.stringify(result?.output).slice(0, 300)}`);
  return result.output.value;
}

async function run(resources, moves, keep) {
  const { model, offered } = scriptedModel(moves);
  const result = await generateText({
    model,
    tools: resources.tools,
    prepareStep: resources.prepareStep(keep),
    stopWhen: isStepCount(10),
    prompt: 'Read a resource.',
  });
  assert.equal(offered.length, moves.length, 'the model was not called as often as scripted');
  return { result, offered };
}

for (const [sdk, connect] of Object.entries(SDKS)) {
  describe(`mcplens/ai over a TS SDK ${sdk} client`, () => {
    test('a URI the model knows reads on its first call, before any listing (server-everything)', async () => {
      const client = await connect([EVERYTHING_SERVER, 'stdio']);
      try {
        const resources = await resourceTools({ clients: { everything: client } });
        const { result } = await run(resources, [
          () => ({ tool: 'ReadMcpResourceTool', input: { server: 'everything', uri: 'demo://resource/dynamic/text/7' } }),
          (r) => ({ text: `It says: ${readOutput(text(r)).contents[0].text}` }),
        ]);
        assert.match(result.text, /^It says: Resource 7: This is a plaintext resource created at /);
      } finally {
        await client.close();
      }
    });

    test('the model lists templates, fills one in from the listing, reads it, and its answer holds the text (server-everything)', async () => {
      const client = await connect([EVERYTHING_SERVER, 'stdio']);
      try {
        const resources = await resourceTools({ clients: { everything: client } });
        let read;
        const { result, offered } = await run(resources, [
          () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'everything' } }),
          (r) => ({ tool: 'ReadMcpResourceTool', input: { server: 'everything', uri: (read = fillFirstTemplate(text(r), 'everything')) } }),
          (r) => ({ text: `It says: ${readOutput(text(r)).contents[0].text}` }),
        ]);
        assert.equal(read, 'demo://resource/dynamic/text/7');
        assert.deepEqual(offered[0], TOOLS);
        assert.match(result.text, /^It says: Resource 7: This is a plaintext resource created at /);
        assert.equal(result.steps.length, 3);
      } finally {
        await client.close();
      }
    });

    test('the model lists templates, completes a variable, fills the template with the suggestion and reads it (server-everything)', async () => {
      const client = await connect([EVERYTHING_SERVER, 'stdio']);
      try {
        const resources = await resourceTools({ clients: { everything: client } });
        let template;
        let uri;
        const { result, offered } = await run(resources, [
          () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'everything' } }),
          (r) => {
            template = JSON.parse(text(r)).resourceTemplates[0].uriTemplate;
            return { tool: 'CompleteMcpResourceTemplateTool', input: { server: 'everything', uriTemplate: template, variable: 'resourceId', value: '5' } };
          },
          (r) => ({ tool: 'ReadMcpResourceTool', input: { server: 'everything', uri: (uri = expand(template, { resourceId: JSON.parse(text(r)).values[0] })) } }),
          (r) => ({ text: `It says: ${readOutput(text(r)).contents[0].text}` }),
        ]);
        assert.equal(uri, 'demo://resource/dynamic/text/5');
        assert.ok(offered[1].includes('CompleteMcpResourceTemplateTool'), JSON.stringify(offered));
        assert.match(result.text, /^It says: Resource 5: This is a plaintext resource created at /);
      } finally {
        await client.close();
      }
    });

    test('a hostile server: its strings arrive sanitized, 1 MiB arrives capped with the truncation stated, a refused URI is a tool error and the loop goes on', async () => {
      const client = await connect([READS_SERVER, 'hostile']);
      try {
        const { tools, prepareStep } = await resourceTools({ clients: { notes: client } });
        let refusal;
        const { result } = await run({ tools, prepareStep }, [
          () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'notes' } }),
          (r) => {
            assertClean(text(r));
            assert.equal(JSON.parse(text(r)).resourceTemplates[0].uriTemplate, 'notes://{id}');
            return { tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: fillFirstTemplate(text(r), 'notes') } };
          },
          (r) => {
            assertClean(text(r));
            const read = readOutput(text(r));
            assert.equal(read.contents[0].text, `Note 7: ${NOTE_BODY}`);
            assert.ok(read.removedChars > 0);
            return { tool: 'ListMcpResourcesTool', input: { server: 'notes' } };
          },
          (r) => ({ tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: listedUri(text(r), 'big') } }),
          (r) => {
            assertCapped(text(r));
            return { tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: REFUSED_URI } };
          },
          (r) => {
            assert.equal(r.output.type, 'error-text');
            refusal = r.output.value;
            return { text: `Done: ${NOTE_BODY}` };
          },
        ]);
        assert.ok(refusal.length > 0 && !refusal.includes('hunter2'), refusal);
        assert.match(refusal, /notes/);
        assert.equal(result.text, `Done: ${NOTE_BODY}`);
        const errors = result.steps[4].content.filter((p) => p.type === 'tool-error');
        assert.equal(errors.length, 1);
        assert.ok(errors[0].error instanceof McplensError);
      } finally {
        await client.close();
      }
    });

    test('per step: no resource tool while no server offers resources (your own tools kept); all three once one does', async () => {
      const plain = await connect([READS_SERVER, 'tools-only']);
      const notes = await connect([READS_SERVER, 'hostile']);
      try {
        const catalog = new Catalog();
        const resources = await resourceTools({ catalog, clients: { plain } });
        assert.equal(resources.catalog, catalog);
        const clock = tool({ description: 'The time.', inputSchema: jsonSchema({ type: 'object', properties: {} }), execute: async () => 'noon' });
        const withClock = { tools: { clock, ...resources.tools }, prepareStep: resources.prepareStep };
        const before = await run(withClock, [() => ({ text: 'nothing to read' })], ['clock']);
        assert.deepEqual(before.offered, [['clock']]);
        await catalog.watch('notes', notes);
        const after = await run(withClock, [() => ({ text: 'now I can read' })], ['clock']);
        assert.deepEqual(after.offered, [[...TOOLS, 'clock'].sort()]);
      } finally {
        await plain.close();
        await notes.close();
      }
    });
  });
}

test("the catalog's read settings are the tools' (maxOutputChars 5,000: the adapter adds no cap of its own)", async () => {
  const client = await SDKS.v2([READS_SERVER, 'hostile']);
  try {
    const resources = await resourceTools({ catalog: new Catalog({ read: { maxOutputChars: 5_000 } }), clients: { notes: client } });
    const { result } = await run(resources, [
      () => ({ tool: 'ListMcpResourcesTool', input: { server: 'notes' } }),
      (r) => ({ tool: 'ReadMcpResourceTool', input: { server: 'notes', uri: listedUri(text(r), 'big') } }),
      (r) => {
        assertCapped(text(r), 5_000);
        return { text: 'capped' };
      },
    ]);
    assert.equal(result.text, 'capped');
  } finally {
    await client.close();
  }
});

test("@ai-sdk/mcp's client is not an MCP SDK Client: refused (attach a TS SDK client to the same server)", async () => {
  const client = await createMCPClient({ transport: new Experimental_StdioMCPTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' }) });
  try {
    await assert.rejects(resourceTools({ clients: { everything: client } }), (e) => e instanceof McplensError && e.code === 'invalid_argument');
  } finally {
    await client.close();
  }
});

test('mcplens/ai: the CommonJS entry gives the very objects of the ES module one', async () => {
  const require = createRequire(import.meta.url);
  assert.equal(require('mcplens/ai').resourceTools, resourceTools);
});

test('a hostile completion server (tests/servers/hostile/server.py --completions): what reaches the model is bounded and clean, a -32603 is a tool error and the loop goes on', async () => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const hostile = new URL('../../../tests/servers/hostile/server.py', import.meta.url).pathname;
  const client = new Client({ name: 'mcplens-agents-test', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: 'python3', args: [hostile, '--case', 'good', '--completions'], stderr: 'ignore' }));
  try {
    const resources = await resourceTools({ clients: { srv: client } });
    const asked = { server: 'srv', uriTemplate: 'file:///{path}', variable: 'path' };
    const seen = [];
    const { result } = await run(resources, [
      () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'srv' } }),
      () => ({ tool: 'CompleteMcpResourceTemplateTool', input: { ...asked, value: 'many' } }),
      (r) => (seen.push(text(r)), { tool: 'CompleteMcpResourceTemplateTool', input: { ...asked, value: 'evil' } }),
      (r) => (seen.push(text(r)), { tool: 'CompleteMcpResourceTemplateTool', input: { ...asked, value: 'boom' } }),
      (r) => (seen.push(r.output), { text: 'done' }),
    ]);
    assert.equal(result.text, 'done');
    const [many, evil, boom] = seen;
    assert.equal(JSON.parse(many).values.length, 100);
    assert.deepEqual(JSON.parse(many).omitted, { cut: 9_900 });
    assert.deepEqual(JSON.parse(evil).values, ['fine']);
    assertClean(evil);
    assert.equal(boom.type, 'error-text', JSON.stringify(boom));
    assert.match(boom.value, /JSON-RPC error -32603/);
  } finally {
    await client.close();
  }
});
