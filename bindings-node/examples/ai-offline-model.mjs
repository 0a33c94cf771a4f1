// The offline stand-in for a model in ai-sdk.mjs (the AI SDK's MockLanguageModelV4): it lists the
// resource templates, fills the first one in from the listing it received (every variable = "1"),
// reads it and quotes the text it read.
import { MockLanguageModelV4 } from 'ai/test';
import { expand, variables } from 'mcplens';

const usage = { inputTokens: { total: 0 }, outputTokens: { total: 0 } };

/** The next move, from the tool result the model received last (undefined at the start). */
function move(result) {
  if (result === undefined) return { tool: 'ListMcpResourceTemplatesTool', input: { server: 'docs' } };
  if (result.output.type !== 'text') return { text: `The tool failed: ${result.output.value}` };
  if (result.toolName === 'ListMcpResourceTemplatesTool') {
    const { uriTemplate } = JSON.parse(result.output.value).resourceTemplates[0];
    const values = Object.fromEntries(variables(uriTemplate).map((v) => [v.name, '1']));
    return { tool: 'ReadMcpResourceTool', input: { server: 'docs', uri: expand(uriTemplate, values) } };
  }
  // The read's output: a header line, then each text under its own `--- content N text … ---` line.
  return { text: `It says: ${result.output.value.split(/\n--- content \d+ text .* ---\n/)[1]}` };
}

export function offlineModel() {
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      const next = move(last.role === 'tool' ? last.content.find((p) => p.type === 'tool-result') : undefined);
      const call = 'tool' in next && { type: 'tool-call', toolCallId: `call-${prompt.length}`, toolName: next.tool, input: JSON.stringify(next.input) };
      const content = call ? [call] : [{ type: 'text', text: next.text }];
      return { content, finishReason: { unified: call ? 'tool-calls' : 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
}
