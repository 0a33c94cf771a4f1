// `mcplens proxy` (the npm package's command) between real hosts — the TypeScript SDK's 1.x and v2
// clients — and @modelcontextprotocol/server-everything: everything the server offers works as it
// does directly, the resource tools are added and answer, and every request is an event.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import test from 'node:test';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { EVERYTHING_SERVER, readOutput } from './helpers.mjs';
import { tempDir } from './tracking-helpers.mjs';

const MCPLENS = join(import.meta.dirname, '..', 'bin', 'mcplens.cjs');
const SERVER = [process.execPath, EVERYTHING_SERVER, 'stdio'];
// server-everything declares `completions` and lists templates: its first tools/list (held until
// the proxy's first listing of it) has the completion tool too.
const OURS = [
  'mcplens_ListMcpResourceTemplatesTool',
  'mcplens_ListMcpResourcesTool',
  'mcplens_ReadMcpResourceTool',
  'mcplens_CompleteMcpResourceTemplateTool',
];

const v1 = (name) => new Client({ name, version: '1.0.0' });
const v2 = (name) => new ClientV2({ name, version: '2.0.0' });
const transport1 = (command, args) => new StdioClientTransport({ command, args, stderr: 'ignore' });
const transport2 = (command, args) => new StdioClientTransportV2({ command, args, stderr: 'ignore' });

/** What a host sees of the server: its tools, prompts, first resources page, an echo and a read. */
async function survey(client) {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  const resources = (await client.listResources()).resources;
  const echo = await client.callTool({ name: 'echo', arguments: { message: 'through' } });
  const read = await client.readResource({ uri: resources[0].uri });
  return { tools, prompts, resources, echo, read };
}

/** Through the proxy, the host sees the server as it does directly, plus the resource tools. */
function assertAsDirect(proxied, plain) {
  assert.deepEqual(proxied.tools, [...plain.tools, ...OURS]);
  assert.deepEqual(proxied.prompts, plain.prompts);
  assert.deepEqual(proxied.resources, plain.resources);
  assert.deepEqual(proxied.echo, plain.echo);
  assert.deepEqual(proxied.read, plain.read);
}

for (const [sdk, client, transport] of [
  ['1.x', v1, transport1],
  ['v2', v2, transport2],
]) {
  test(`TS SDK ${sdk} host: server-everything through the proxy works as directly, plus the resource tools`, async () => {
    const direct = client('direct');
    await direct.connect(transport(SERVER[0], SERVER.slice(1)));
    const plain = await survey(direct);
    await direct.close();

    const events = join(tempDir(), 'events.jsonl');
    const host = client('proxied');
    await host.connect(transport(process.execPath, [MCPLENS, 'proxy', '--server', 'everything', '--events', events, '--', ...SERVER]));
    assertAsDirect(await survey(host), plain);

    const listing = await host.callTool({ name: 'mcplens_ListMcpResourcesTool', arguments: {} });
    assert.notEqual(listing.isError, true, listing.content[0].text);
    const listed = JSON.parse(listing.content[0].text).resources;
    assert.ok(listed.some((r) => r.uri === plain.resources[0].uri && r.server === 'everything'));
    const templates = await host.callTool({ name: 'mcplens_ListMcpResourceTemplatesTool', arguments: {} });
    assert.notEqual(templates.isError, true, templates.content[0].text);
    const uri = plain.resources[0].uri;
    const read = await host.callTool({ name: 'mcplens_ReadMcpResourceTool', arguments: { server: 'everything', uri } });
    assert.notEqual(read.isError, true, read.content[0].text);
    const shown = readOutput(read.content[0].text);
    assert.equal(shown.uri, uri);
    assert.equal(shown.contents[0].uri, uri);
    const refused = await host.callTool({ name: 'mcplens_ReadMcpResourceTool', arguments: { server: 'everything', uri: 'file:///etc/passwd' } });
    assert.equal(refused.isError, true);
    assert.ok(!refused.content[0].text.includes('passwd'), 'a refusal never echoes the URI');
    await host.close();

    const types = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const e of types) {
      assert.equal(e.client.name, 'proxied');
      assert.equal(e.transport, 'stdio');
    }
    const count = (type) => types.filter((e) => e.type === type).length;
    assert.equal(count('mcp:tools/call'), 5, 'echo and the four resource-tool calls');
    assert.equal(count('mcp:resources/read'), 1, 'the host read (the proxy\'s own read is its tools/call)');
    assert.equal(count('mcp:prompts/list'), 1);
  });
}

test('the README host configuration (examples/proxy-mcp-servers.json), launched as a host does: the server with the resource tools, events beside', async () => {
  const config = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'examples', 'proxy-mcp-servers.json'), 'utf8'));
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  assert.ok(readme.includes(readFileSync(join(import.meta.dirname, '..', 'examples', 'proxy-mcp-servers.json'), 'utf8')), 'README is stale');
  const { command, args } = config.mcpServers.everything;
  // What `npm install -g mcplens @modelcontextprotocol/server-everything` puts on PATH.
  const bin = join(import.meta.dirname, '..', '..', 'node_modules', '.bin');
  const cwd = tempDir();
  const host = v1('configured');
  await host.connect(new StdioClientTransport({ command, args, cwd, env: { PATH: `${bin}:${process.env.PATH}` }, stderr: 'ignore' }));
  const tools = (await host.listTools()).tools.map((t) => t.name);
  assert.deepEqual(tools.slice(-OURS.length), OURS);
  assert.ok(tools.includes('echo'));
  const templates = await host.callTool({ name: 'mcplens_ListMcpResourceTemplatesTool', arguments: {} });
  const listed = JSON.parse(templates.content[0].text).resourceTemplates;
  assert.ok(listed.length > 0, templates.content[0].text);
  assert.equal(new Set(listed.map((t) => t.server)).size, 1, 'one server, named by its serverInfo');
  await host.close();
  const events = readFileSync(join(cwd, 'everything-events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(
    events.map((e) => e.type),
    ['mcp:initialize', 'mcp:tools/list', 'mcp:tools/call'],
  );
});

test('--url: server-everything over Streamable HTTP through the proxy works as directly, plus the resource tools', async () => {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  const server = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let said = '';
    for await (const chunk of server.stderr) {
      said += chunk;
      if (said.includes('listening')) break;
    }
    const url = `http://127.0.0.1:${port}/mcp`;
    const direct = v1('direct');
    await direct.connect(new StreamableHTTPClientTransport(new URL(url)));
    const plain = await survey(direct);
    await direct.close();

    const events = join(tempDir(), 'events.jsonl');
    const host = v1('proxied');
    await host.connect(transport1(process.execPath, [MCPLENS, 'proxy', '--server', 'everything', '--events', events, '--url', url]));
    assertAsDirect(await survey(host), plain);
    const uri = plain.resources[0].uri;
    const read = await host.callTool({ name: 'mcplens_ReadMcpResourceTool', arguments: { server: 'everything', uri } });
    assert.notEqual(read.isError, true, read.content[0].text);
    assert.equal(readOutput(read.content[0].text).contents[0].uri, uri);
    await host.close();

    const types = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l).type);
    assert.deepEqual(
      types.filter((t) => t === 'mcp:tools/call' || t === 'mcp:resources/read'),
      ['mcp:tools/call', 'mcp:resources/read', 'mcp:tools/call'],
    );
  } finally {
    server.kill();
  }
});
