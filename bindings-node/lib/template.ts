/**
 * RFC 6570 URI templates for the model (`docs/templates.md`): `variables`, `expand` (level 4) and
 * `matches`, and the shapes of `Catalog.matchUri`'s answer. Every rule
 * is the Rust core's (`mcplens::template`); this file converts values and maps errors.
 */
import * as native from '../native.js';
import { rethrow } from './discovery.js';

/** A value as `matches` returns it: a string, a list, or an associative array (in order). */
export type TemplateValue = string | string[] | Record<string, string>;

/** One variable of a template, as `variables` lists it. */
export interface TemplateVariable {
  /** The name, as written (it may hold `.` and pct-encoded triplets). */
  name: string;
  /** The expression's operator (`''` for simple expansion). */
  operator: '' | '+' | '#' | '.' | '/' | ';' | '?' | '&';
  /** The explode modifier (`*`). */
  explode: boolean;
  /** The prefix modifier (`:n`), in characters. */
  prefix: number | null;
}

/** One cached template a URI fits: route the read to `server`. */
export interface TemplateMatch {
  server: string;
  /** The template, exactly as the server sent it. */
  uriTemplate: string;
  name: string;
  values: Record<string, TemplateValue>;
}

/** What `Catalog.matchUri` found: matches most specific first; `skipped` templates gave up (`match_limit`). */
export interface CatalogMatches {
  matches: TemplateMatch[];
  skipped: number;
}

function call<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    rethrow(e, '');
  }
}

/** Each variable of `template`, in order of appearance. Throws `invalid_uri_template`. */
export function variables(template: string): TemplateVariable[] {
  return JSON.parse(call(() => native.templateVariables(template))) as TemplateVariable[];
}

/**
 * Expands `template` (RFC 6570 level 4) with `values`: strings, numbers, arrays and plain objects
 * (their order is kept); `null`/`undefined` mean undefined. Throws `invalid_uri_template`,
 * `invalid_value`, `prefix_on_composite` or `output_too_large` (over 8,192 bytes).
 */
export function expand(template: string, values: Readonly<Record<string, unknown>>): string {
  let json = ''; // what cannot be JSON text stays '', which the core refuses as not valid JSON
  try {
    json = JSON.stringify(values) ?? '';
  } catch {}
  return call(() => native.expandTemplate(template, json));
}

/** The values under which `template` expands to `uri`, or `null` (the readings of ambiguous URIs: `docs/templates.md`). */
export function matches(template: string, uri: string): Record<string, TemplateValue> | null {
  const found = call(() => native.matchTemplate(template, uri));
  return found === null ? null : (JSON.parse(found) as Record<string, TemplateValue>);
}
