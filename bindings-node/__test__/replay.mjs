// Drives the package's Pager over canned answers in the shared vector format (tests/vectors/README.md);
// used by the discovery and catalog vector replays.
import { McplensError, Pager, hasResourcesCapability } from 'mcplens';

/** A `synth` page: `count` items numbered from `start`, compact JSON. */
export function synth(kind, { count, start = 0, nextCursor }) {
  const items = [];
  for (let n = start; n < start + count; n++) {
    items.push(
      kind === 'resources'
        ? { uri: `mem://item/${n}`, name: `item-${n}` }
        : { uriTemplate: `mem://item/${n}/{id}`, name: `item-${n}` },
    );
  }
  const page = { [kind === 'resources' ? 'resources' : 'resourceTemplates']: items };
  if (nextCursor !== undefined) page.nextCursor = nextCursor;
  return JSON.stringify(page);
}

/**
 * One traversal over `answers`: loops nextRequest / accept until the pager stops asking, then
 * finish. Returns `{requests, used, ranOut, listing, error}` (`error` a McplensError).
 */
export function drive({ kind, server, capabilities, limits, startMs, answers }) {
  let now = startMs;
  const requests = [];
  let used = 0;
  let ranOut = false;
  let listing;
  let error;
  try {
    const pager = new Pager({ kind, server, resourcesCapability: hasResourcesCapability(capabilities), limits, now });
    for (let req = pager.nextRequest(); req !== null; req = pager.nextRequest()) {
      requests.push(req);
      const a = answers[used];
      if (a === undefined) {
        ranOut = true;
        break;
      }
      used += 1;
      if (a.atMs !== undefined) now = a.atMs;
      try {
        if (typeof a.page === 'string') pager.acceptPage(a.page, now);
        else if (a.synth) pager.acceptPage(synth(kind, a.synth), now);
        else if (a.rpcError) pager.acceptRpcError(a.rpcError.code, now);
        else if (a.transport) pager.acceptTransportError(now);
        else if (a.timedOut) pager.acceptTimeout(now);
        else if (a.malformed) pager.acceptMalformed(now);
        else throw new Error(`unknown answer ${JSON.stringify(a)}`);
      } catch (e) {
        if (!(e instanceof McplensError)) throw e;
        error = e; // the pager has failed; finish() reports the same error (without the rpcCode)
        break;
      }
    }
    listing = pager.finish();
  } catch (e) {
    if (!(e instanceof McplensError)) throw e;
    error ??= e;
  }
  return { requests, used, ranOut, listing, error };
}
