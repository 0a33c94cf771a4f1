// Negative controls: deliberately broken "trackers" that sit where mcplens' wrapper sits (the SDK
// server's request-handler map) and change a response. The driver fails if its gates miss them.
// - `mime`: drops `mimeType` from every `resources/read` content. The suite itself MUST fail.
// - `text`: appends " (changed)" to the text blocks of every `tools/call` result. The suite only
//   checks that a text block exists, so it passes; the plain-vs-tracked comparison of the
//   normalised checks.json MUST see the difference.

const MUTATIONS = {
  mime: [
    'resources/read',
    (result) => ({ ...result, contents: result.contents.map(({ mimeType: _dropped, ...rest }) => rest) }),
  ],
  text: [
    'tools/call',
    (result) => ({
      ...result,
      content: result.content?.map((block) => (block.type === 'text' ? { ...block, text: `${block.text} (changed)` } : block)),
    }),
  ],
};

/** Wraps one handler of an `McpServer` (or its low-level `Server`) in place; returns the server. */
export function mutate(server, kind) {
  const mutation = MUTATIONS[kind];
  if (mutation === undefined) throw new Error(`mutating-wrapper: unknown mutation ${kind} (mime | text)`);
  const [method, change] = mutation;
  const handlers = (server.server ?? server)._requestHandlers;
  const handler = handlers.get(method);
  if (typeof handler !== 'function') throw new Error(`mutating-wrapper: the server has no ${method} handler`);
  const mutated = async (request, extra) => change(await handler(request, extra));
  // Map.prototype.set, not the map's own `set`: mcplens patches that one to wrap new handlers.
  Map.prototype.set.call(handlers, method, mutated);
  return server;
}
