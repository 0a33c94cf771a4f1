// The offline stand-in for a model in openai-agents.mjs (the Agents SDK's ScriptedModel): it lists
// the resource templates, fills the first one in from the listing it received (every variable =
// "1"), reads it and quotes the text it read.
import { ScriptedModel, assistantMessage, functionCall, modelResponder } from '@openai/agents/testing';
import { expand, variables } from 'mcplens';

/** The model's moves, each from the tool output it received last. */
const moves = [
  () => ({ tool: 'ListMcpResourceTemplatesTool', input: { server: 'docs', offset: null, limit: null } }),
  (listing) => {
    const { uriTemplate } = JSON.parse(listing).resourceTemplates[0];
    const values = Object.fromEntries(variables(uriTemplate).map((v) => [v.name, '1']));
    return { tool: 'ReadMcpResourceTool', input: { server: 'docs', uri: expand(uriTemplate, values) } };
  },
  // The read's output: a header line, then each text under its own `--- content N text … ---` line.
  (read) => ({ text: `It says: ${read.split(/\n--- content \d+ text .* ---\n/)[1]}` }),
];

export function offlineModel() {
  return new ScriptedModel(
    moves.map((move, i) =>
      modelResponder(({ request }) => {
        const output = request.input.at(-1)?.output;
        const next = move(typeof output === 'object' ? output.text : output);
        return 'tool' in next ? [functionCall(next.tool, next.input, { callId: `call-${i}` })] : [assistantMessage(next.text)];
      }),
    ),
  );
}
