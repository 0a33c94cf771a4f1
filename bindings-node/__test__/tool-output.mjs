// Cross-language hook: the Node catalog's tool output for a stdio server, for another language's
// test to compare byte for byte (the Python catalog over the same server must print the same lines).
//
//   node bindings-node/__test__/tool-output.mjs NAME 'INPUTS_JSON' COMMAND [ARGS...]
//
// Connects to `COMMAND ARGS` over stdio with the SDK Client, refreshes a Catalog under NAME (both
// lists, default limits), then prints one line per input of the INPUTS_JSON array: the tool's
// output text, or `{"error":"<code>","message":"<message>"}`. Exit status 0 unless the hook itself fails.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, McplensError } from 'mcplens';

const [name, inputsJson, command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.error("usage: tool-output.mjs NAME 'INPUTS_JSON' COMMAND [ARGS...]");
  process.exit(2);
}
const client = new Client({ name: 'mcplens-cross-language', version: '0.0.0' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
const catalog = new Catalog();
await catalog.refresh(name, client).catch((e) => {
  if (!(e instanceof McplensError)) throw e; // a failed refresh shows in the tool's "failures"
});
for (const input of JSON.parse(inputsJson)) {
  try {
    console.log(catalog.callListTemplatesTool(input));
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    console.log(JSON.stringify({ error: e.code, message: e.message }));
  }
}
await client.close();
