// Our own low-level SDK `Server` that paginates templates the way the tests need (no SDK server
// paginates templates/list by itself). Used in memory (`createServer`) and over stdio (run this
// file with the scenario name as its argument).
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

/** Opaque cursors: slashes, spaces, unicode, JSON-looking text, and the empty string. */
export const CURSOR_1 = 'opaque/➜ page 2?x={"a":1}&y=%20';
export const CURSOR_2 = '';

const t = (uriTemplate, name, extra = {}) => ({ uriTemplate, name, ...extra });

/** Page by cursor; `undefined` key = page 1 (no cursor). */
const TEMPLATE_PAGES = new Map([
  [
    undefined,
    {
      resourceTemplates: [
        t('file:///{path}', 'files', { title: 'Files', mimeType: 'text/plain', _meta: { x: 1 }, icons: [] }),
        t('db://{table}/{id}', 'rows', {
          description: 'A row\u001b[31m in red',
          annotations: { audience: ['assistant'], priority: 0.5, lastModified: '2025-01-02T03:04:05Z' },
        }),
      ],
      nextCursor: CURSOR_1,
    },
  ],
  [
    CURSOR_1,
    {
      resourceTemplates: [
        // Sloppy optional fields: each is dropped, the item is kept.
        t('mem://sloppy/{id}', 'sloppy', {
          title: 5,
          annotations: { lastModified: '2025-01-02', priority: 2, audience: ['system'] },
          xUnknown: true,
        }),
      ],
      nextCursor: CURSOR_2,
    },
  ],
  [CURSOR_2, { resourceTemplates: [t('search://{?q}', 'search')], nextCursor: null }],
]);

const RESOURCE_PAGES = new Map([
  [undefined, { resources: [{ uri: 'mem://a', name: 'a', size: 3 }], nextCursor: 'r2' }],
  ['r2', { resources: [{ uri: 'mem://b', name: 'b', size: -1, mimeType: 'text/plain' }] }],
]);

/** `storm`: how many traversals get list_changed notifications. */
export const STORM_TRAVERSALS = 4;

const HOSTILE_PAGE = {
  resourceTemplates: [
    t('evil://{id}', 'evil\u202Ename\u200B\u001b[2J', {
      title: 'T\u0007i\u0085tle\u{E0041}',
      description: 'x'.repeat(5_000),
      _meta: { blob: 'y'.repeat(100_000) },
    }),
    t('bad://{unclosed', 'bad-template'),
    t('bidi://\u202E{id}', 'bidi-template'),
    t('ok://{+path}{?q,r}', 'ok'),
  ],
};

function paged(pages, cursor) {
  const page = pages.get(cursor);
  if (page === undefined) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
  return page;
}

/**
 * Scenarios:
 * - `pages`: 3 template pages (opaque cursor, then ""), 2 resource pages, sloppy optional fields;
 * - `repeat`: page 2 sends back the cursor it was sent;
 * - `no-templates`: resources capability, no templates/list handler (-32601);
 * - `no-resources`: tools capability only;
 * - `slow`: templates/list answers after 30 s (or never, once cancelled);
 * - `error`: templates/list fails with -32603;
 * - `malformed`: page 2 has an item without a name;
 * - `crash`: the process exits while page 2 is asked (stdio only);
 * - `hostile`: escape sequences, bidi and zero-width characters, a 5,000-char description,
 *   invalid URI templates, a large `_meta`;
 * - `endless`: a fresh cursor on every page, forever;
 * - `storm`: the hostile page, and during each of the first `STORM_TRAVERSALS` traversals three
 *   `notifications/resources/list_changed` before page 1's answer.
 *
 * In memory, `server.stats` counts requests (`traversals` = page-1 requests, `inFlight`/`maxInFlight`
 * per list) and `server.control` changes the `pages` scenario at run time: `delayMs` before each
 * templates/list answer, `fail` to answer templates/list with -32603.
 */
export function createServer(scenario) {
  const capabilities = scenario === 'no-resources' ? { tools: {} } : { resources: {} };
  const server = new Server({ name: `paging-${scenario}`, version: '1.0.0' }, { capabilities });
  const stats = {
    resources: { requests: 0, traversals: 0, inFlight: 0, maxInFlight: 0 },
    templates: { requests: 0, traversals: 0, inFlight: 0, maxInFlight: 0 },
  };
  server.stats = stats;
  server.control = { delayMs: 0, fail: false };
  if (scenario === 'no-resources') return server;

  const counted = (s, handler) => async (req, extra) => {
    s.requests += 1;
    if (req.params?.cursor === undefined) s.traversals += 1;
    s.inFlight += 1;
    s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
    try {
      return await handler(req, extra);
    } finally {
      s.inFlight -= 1;
    }
  };

  server.setRequestHandler(
    ListResourcesRequestSchema,
    counted(stats.resources, (req) => paged(RESOURCE_PAGES, req.params?.cursor)),
  );
  if (scenario === 'no-templates') return server;

  server.setRequestHandler(ListResourceTemplatesRequestSchema, counted(stats.templates, async (req, extra) => {
    const cursor = req.params?.cursor;
    switch (scenario) {
      case 'repeat':
        return { resourceTemplates: [t(`mem://r/${cursor ?? 0}/{id}`, 'r')], nextCursor: 'same-cursor' };
      case 'slow':
        await sleep(30_000, undefined, { signal: extra.signal }).catch(() => {});
        return { resourceTemplates: [] };
      case 'error':
        throw new McpError(ErrorCode.InternalError, 'boom');
      case 'malformed':
        if (cursor === undefined) return { resourceTemplates: [t('a://{x}', 'a')], nextCursor: 'p2' };
        return { resourceTemplates: [{ uriTemplate: 'b://{x}' }] };
      case 'hostile':
        return HOSTILE_PAGE;
      case 'storm':
        if (cursor === undefined && stats.templates.traversals <= STORM_TRAVERSALS) {
          for (let i = 0; i < 3; i++) await server.sendResourceListChanged();
        }
        return HOSTILE_PAGE;
      case 'endless':
        return { resourceTemplates: [t(`mem://e/${cursor ?? 0}/{id}`, 'e')], nextCursor: String(Number(cursor ?? 0) + 1) };
      case 'crash':
        if (cursor === undefined) return { resourceTemplates: [t('a://{x}', 'a')], nextCursor: 'p2' };
        process.exit(3);
      // falls through (unreachable)
      default:
        if (server.control.delayMs > 0) {
          await sleep(server.control.delayMs, undefined, { signal: extra.signal }).catch(() => {});
        }
        if (server.control.fail) throw new McpError(ErrorCode.InternalError, 'boom');
        return paged(TEMPLATE_PAGES, cursor);
    }
  }));
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createServer(process.argv[2] ?? 'pages');
  await server.connect(new StdioServerTransport());
}
