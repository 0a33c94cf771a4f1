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
  let at = 1;
  const next = (): string => text.slice(n[at++], n[at++]);
  for (let i = 0; i < items.length; i++) {
    const mask = n[at++];
    const item: Record<string, unknown> = kind === 'resources' ? { uri: next() } : { uriTemplate: next() };
    item.name = next();
    if (mask & 1) item.title = next();
    if (mask & 2) item.description = next();
    if (mask & 4) item.mimeType = next();
    const lastModified = mask & 128 ? next() : undefined;
    if (mask & 8) item.size = n[at++];
    if (mask & 16) {
      const a: Record<string, unknown> = {};
      if (mask & 32) {
        a.audience = Array.from({ length: n[at++] }, () => ROLES[n[at++]]);
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

