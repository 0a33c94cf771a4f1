// The baseline-discovery workload server (shared/reference/baseline-discovery.md): an SDK 1.x
// low-level Server paginating `resources/templates/list`, templates built once, each request a
// slice; opaque cursors base64url("o:<offset>"), no nextCursor on the last page.
// In process: `createWorkloadServer(workload)`; over stdio: `node workload-server.mjs <S|M>`.
import { pathToFileURL } from 'node:url';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListResourceTemplatesRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** S: 100 pages × 100 templates, 200-char descriptions; M: 5 × 100, 2,000-char descriptions (~1 MB). */
export const WORKLOADS = {
  S: { pages: 100, pageSize: 100, descChars: 200 },
  M: { pages: 5, pageSize: 100, descChars: 2_000 },
};

const LOREM =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ';

function template(i, descChars) {
  let description = `Template ${i} resolves files under {path}; `;
  while (description.length < descChars) description += LOREM;
  return {
    uriTemplate: `file:///{path}/x${i}`,
    name: `template-${i}`,
    title: `Template ${i}`,
    description: description.slice(0, descChars),
    mimeType: 'text/plain',
    annotations: { audience: ['user', 'assistant'], priority: 0.5, lastModified: '2025-01-01T00:00:00Z' },
  };
}

const cursorOf = (offset) => Buffer.from(`o:${offset}`).toString('base64url');
const offsetOf = (cursor) => Number(Buffer.from(cursor, 'base64url').toString().slice(2));

export function createWorkloadServer(name) {
  const { pages, pageSize, descChars } = WORKLOADS[name];
  const all = Array.from({ length: pages * pageSize }, (_, i) => template(i + 1, descChars));
  const server = new Server({ name: `workload-${name}`, version: '1.0.0' }, { capabilities: { resources: {} } });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (req) => {
    const cursor = req.params?.cursor;
    const offset = cursor === undefined ? 0 : offsetOf(cursor);
    const end = offset + pageSize;
    const page = { resourceTemplates: all.slice(offset, end) };
    if (end < all.length) page.nextCursor = cursorOf(end);
    return page;
  });
  return server;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await createWorkloadServer(process.argv[2] ?? 'S').connect(new StdioServerTransport());
}
