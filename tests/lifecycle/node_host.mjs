// A Node host, as the TypeScript SDK's hosts are: its StdioClientTransport spawns the command given
// (one of mcplens' three `proxy` commands in front of lifecycle_server.py) with stderr piped, lists
// the tools, calls the server's `echo` and the proxy's read tool (before any listing), then closes
// the transport as such a host ends a server (stdin closed; SIGTERM after 2 s; SIGKILL after 2 s
// more), or first sends the proxy SIGTERM or SIGINT (NODE_HOST_END=sigterm|sigint). Prints one JSON
// line: the tools, the two answers, how long the end took, what reached the piped stderr.
//   node node_host.mjs COMMAND [ARGS...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
let stderr = '';
transport.stderr?.on('data', (chunk) => {
  stderr += chunk;
});
const client = new Client({ name: 'lifecycle-node-host', version: '1.0.0' });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const echo = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
const read = await client.callTool({ name: 'mcplens_ReadMcpResourceTool_2', arguments: { uri: 'notes://first' } });
const started = performance.now();
const end = process.env.NODE_HOST_END ?? 'close';
if (end !== 'close') {
  // A host that ends its server with a signal, then closes (the SDK's sequence finds it gone).
  const exited = new Promise((resolve) => {
    transport.onclose = resolve;
  });
  process.kill(transport.pid, end === 'sigterm' ? 'SIGTERM' : 'SIGINT');
  await exited;
}
await client.close();
const closeMs = performance.now() - started;
console.log(JSON.stringify({ tools, echo: echo.content[0].text, read: read.content[0].text, closeMs, stderr }));
