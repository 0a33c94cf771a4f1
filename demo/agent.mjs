// The demo's agent: discovers a tracked Python server's templates through an mcplens Catalog,
// shows the model-facing ListMcpResourceTemplatesTool output, reads a concrete URI built from a
// template, then triggers list_changed and shows the refreshed catalog.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Catalog, listResourceTemplatesTool } from 'mcplens';

const [python, serverScript] = process.argv.slice(2);
const say = (line = '') => console.log(line);

const client = new Client({ name: 'mcplens-demo-agent', version: '0.1.0' });
await client.connect(new StdioClientTransport({ command: python, args: [serverScript], stderr: 'inherit' }));

const catalog = new Catalog();
catalog.watch('notes', client);
const status = await catalog.refresh('notes', client);
say(`agent: connected to notes-demo; catalog status ${status.status}, ${status.templates} templates, ${status.resources} resources`);

say(`agent: the model sees the tool ${listResourceTemplatesTool.name} (readOnlyHint ${listResourceTemplatesTool.annotations.readOnlyHint})`);
const output = catalog.callListTemplatesTool({});
say(`agent: ${listResourceTemplatesTool.name} {} →`);
say(output);

// What a model does next: fill a template's variables, then read the URI with its read tool.
const template = JSON.parse(output).resourceTemplates.find((t) => t.uriTemplate === 'notes://{topic}/{id}');
const uri = template.uriTemplate.replace('{topic}', 'rust').replace('{id}', '1');
const read = await client.readResource({ uri });
say(`agent: read ${uri} → ${JSON.stringify(read.contents[0].text)}`);

// The server adds a template and sends notifications/resources/list_changed; the catalog refreshes.
await client.callTool({ name: 'add_topic', arguments: { name: 'meetings' } });
await catalog.settled('notes');
const after = catalog.status('notes');
say(`agent: after list_changed: catalog status ${after.status}, ${after.templates} templates (generation ${after.generation})`);
say(catalog.callListTemplatesTool({ server: 'notes' }));

await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
await client.close();
say('agent: done');
