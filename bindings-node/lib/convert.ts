/**
 * A listing assembled from the parts the addon hands over (`src/convert/listing.rs`: its strings as
 * one JS string, sliced here, their bounds and numbers as one `Float64Array`), instead of
 * `JSON.parse` of its whole text. Row `node_convert_listing` (`make bench-node`).
 */
import type * as native from '../native.js';

const ROLES = ['user', 'assistant'] as const;

/** The listing's items as plain objects, in the key order of its JSON. */
export function itemsOf(parts: native.ListingParts, kind: string, server: string): object[] {
  const { text, numbers: n } = parts;
  const items = new Array<object>(n[0]);
  const resources = kind === 'resources';
  // Inline slices, no closure and no `Array.from` (each cost more than the item's other work).
  let at = 1;
  for (let i = 0; i < items.length; i++) {
    const mask = n[at++];
    const id = text.slice(n[at++], n[at++]);
    const item: Record<string, unknown> = resources ? { uri: id } : { uriTemplate: id };
    item.name = text.slice(n[at++], n[at++]);
    if (mask & 1) item.title = text.slice(n[at++], n[at++]);
    if (mask & 2) item.description = text.slice(n[at++], n[at++]);
    if (mask & 4) item.mimeType = text.slice(n[at++], n[at++]);
    const lastModified = mask & 128 ? text.slice(n[at++], n[at++]) : undefined;
    if (mask & 8) item.size = n[at++];
    if (mask & 16) {
      const a: Record<string, unknown> = {};
      if (mask & 32) {
        const audience = (a.audience = new Array<string>(n[at++])) as string[];
        for (let r = 0; r < audience.length; r++) audience[r] = ROLES[n[at++]];
      }
      if (mask & 64) a.priority = n[at++];
      if (mask & 128) a.lastModified = lastModified;
      item.annotations = a;
    }
    item.server = server;
    items[i] = item;
  }
  return items;
}
