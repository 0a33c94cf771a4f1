// The Node half of test_cross_language.py: the Node package's Catalog over the TypeScript SDK.
//
//   node node_catalog.mjs SERVER_NAME INPUTS_JSON COMMAND [ARGS...]
//
// Connects to the stdio server, refreshes the catalog once, answers the listing tool for each input
// and prints one JSON array: {"output": text} or {"code", "message"} per input, then the tool
// spec as JSON text.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, listResourceTemplatesTool } from 'mcplens';

const [server, inputsJson, command, ...args] = process.argv.slice(2);
const client = new Client({ name: 'mcplens-cross-language', version: '1' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
const catalog = new Catalog({ limits: { deadlineMs: 20000 } });
const answers = [];
try {
  await catalog.refresh(server, client);
} catch (e) {
  answers.push({ refresh: e.code });
}
for (const input of JSON.parse(inputsJson)) {
  try {
    answers.push({ output: catalog.callListTemplatesTool(input) });
  } catch (e) {
    answers.push({ code: e.code, message: e.message });
  }
}
answers.push({ spec: JSON.stringify(listResourceTemplatesTool) });
await client.close();
process.stdout.write(JSON.stringify(answers));
