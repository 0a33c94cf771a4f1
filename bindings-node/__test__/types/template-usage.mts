// A typed usage example of the template API, checked by `tsc --noEmit` (make lint-node) against the
// package's own entry point. It is never run.
import {
  Catalog,
  McplensError,
  expand,
  listResourcesTool,
  matches,
  variables,
  type CatalogMatches,
  type TemplateMatch,
  type TemplateValue,
  type TemplateVariable,
  type ToolSpec,
} from 'mcplens';

export function route(catalog: Catalog, template: string): TemplateMatch | undefined {
  const vars: TemplateVariable[] = variables(template);
  const uri: string = expand(template, Object.fromEntries(vars.map((v) => [v.name, v.prefix ?? 'x'])));
  const values: Record<string, TemplateValue> | null = matches(template, uri);
  console.log(values?.['x'], vars[0]?.operator === '+');
  const found: CatalogMatches = catalog.matchUri(uri);
  const spec: ToolSpec = listResourcesTool;
  try {
    console.log(spec.name, catalog.callListResourcesTool({ server: 'docs', limit: 5 }), found.skipped);
  } catch (e) {
    if (e instanceof McplensError && (e.code === 'unknown_server' || e.code === 'match_limit')) return undefined;
    throw e;
  }
  return found.matches[0];
}
