/**
 * Discovery: the sans-IO `Pager` and the traversals over an MCP TypeScript SDK `Client` — 1.x
 * (`@modelcontextprotocol/sdk`) or v2 (`@modelcontextprotocol/client`), either era.
 *
 * Every rule lives in the Rust core (the napi addon's loader, `../native.js`). This facade only drives the
 * SDK's I/O, reads the clock, converts values (a page crosses as one tape, or as JSON text when it
 * holds what its text carries otherwise; a listing comes back as parts, `convert-tape.ts`, `convert.ts`) and maps errors.
 */
import { performance } from 'node:perf_hooks';
import * as native from '../native.js';
import { withTape } from './convert-tape.js';
import { itemsOf } from './convert.js';

/** Which list a traversal reads. */
export type ListKind = 'resources' | 'resource_templates';

/** Bounds on one traversal; missing keys take the defaults. Every bound fails the whole traversal. */
export interface Limits {
  /** Requests per traversal; page `maxPages` must end it (default 100). */
  maxPages?: number;
  /** Items per traversal; exactly `maxItems` is allowed (default 10,000). */
  maxItems?: number;
  /** UTF-8 bytes of projected metadata, `server` included (default 1,000,000). */
  maxBytes?: number;
  /** Milliseconds for the complete traversal (default 60,000). */
  deadlineMs?: number;
  /**
   * What a cursor already sent does: `by_era` (default: fails before 2026-07-28; followed on
   * 2026-07-28, whose spec forbids judging a cursor's value), `fail` or `follow` (the other bounds
   * end the traversal; repeats counted in `diagnostics.repeatedCursors`).
   */
  repeatedCursors?: 'by_era' | 'fail' | 'follow';
  /** The longest `nextCursor`, in UTF-8 bytes (default 65,536); a longer one is `malformed_result`. */
  maxCursorBytes?: number;
}

/** Kept annotations of an item; each field validated on its own. */
export interface Annotations {
  audience?: Array<'user' | 'assistant'>;
  /** In `0..=1`. */
  priority?: number;
  /** An RFC 3339 date-time, as the server sent it. */
  lastModified?: string;
}

/** A projected, sanitized resource template. */
export interface ResourceTemplate {
  /** The RFC 6570 URI template, exactly as the server sent it. */
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
  /** The host's name for the server the item came from. */
  server: string;
}

/** A projected, sanitized concrete resource. */
export interface Resource {
  /** The resource URI, exactly as the server sent it. */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Annotations;
  /** The host's name for the server the item came from. */
  server: string;
}

/** Why a listing is what it is. */
export type Support = 'listed' | 'no_capability' | 'method_not_found';

/** What a traversal counted. Carries no cursor, URI, name or description. */
export interface Diagnostics {
  requests: number;
  pages: number;
  items: number;
  bytes: number;
  /** Invalid optional fields dropped, by field (`title`, `annotations.lastModified`, …). */
  droppedFields: Record<string, number>;
  /** Items dropped, by reason (`invalid_uri_template`, `invalid_uri`). */
  droppedItems: Record<string, number>;
  sanitizedStrings: number;
  ignoredKeys: number;
  /** Cursors followed although already sent (`repeatedCursors: follow`, or `by_era` on 2026-07-28). */
  repeatedCursors: number;
}

/** A complete traversal's result. */
export interface Listing<T extends ResourceTemplate | Resource = ResourceTemplate | Resource> {
  kind: ListKind;
  server: string;
  /** Projected, sanitized items in server order. */
  items: T[];
  support: Support;
  /** The smallest `ttlMs` any page gave. */
  ttlMs?: number;
  /** The first page's `cacheScope`. */
  cacheScope?: string;
  diagnostics: Diagnostics;
}

/** The stable error codes (the same in Rust, Python and Node; see `docs/errors.md`; the core's
 * `ErrorCode`, in its order: core/tests/rules/error_codes.rs checks it, `errorCodes` lists them at run time). */
export type ErrorCode =
  | 'malformed_result'
  | 'repeated_cursor'
  | 'page_limit'
  | 'item_limit'
  | 'byte_limit'
  | 'deadline'
  | 'server_error'
  | 'transport_error'
  | 'message_too_large'
  | 'invalid_argument'
  | 'invalid_state'
  | 'unknown_server'
  | 'output_too_large'
  | 'unlisted_uri'
  | 'not_offered'
  | 'invalid_uri_template'
  | 'invalid_value'
  | 'prefix_on_composite'
  | 'match_limit'
  | 'io_error'
  | 'timeout'
  | 'hook_failed'
  | 'export_failed'
  | 'exporter_panicked';

/** Every stable error code, from the core (`ErrorCode::ALL`). */
export const errorCodes: readonly ErrorCode[] = Object.freeze(native.errorCodes() as ErrorCode[]);

/** Every mcplens failure. The message names the server and the bound, never a cursor or server text. */
export class McplensError extends Error {
  /** The stable code. */
  readonly code: ErrorCode;
  /** The host's name for the server the error is about (`undefined`: the error concerns no server). */
  readonly server: string | undefined;
  /** For `server_error`: the JSON-RPC error code the server answered with. */
  readonly rpcCode?: number;
  /** For a tracker's `invalid_argument`: the option, as its path in the core's configuration. */
  readonly option?: string;

  constructor(
    code: ErrorCode,
    server: string | undefined,
    message: string,
    options?: { rpcCode?: number; option?: string; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McplensError';
    this.code = code;
    this.server = server;
    if (options?.rpcCode !== undefined) this.rpcCode = options.rpcCode;
    if (options?.option !== undefined) this.option = options.option;
  }
}

/**
 * The addon throws plain `Error`s whose `code` is a core code (snake_case), or, when napi could not
 * convert an argument, a napi status (`StringExpected`, `InvalidArg`, …).
 */
export function rethrow(e: unknown, server: string | undefined, rpcCode?: number): never {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  const named = server || undefined;
  if (typeof code === 'string' && /^[a-z]+(_[a-z]+)*$/.test(code)) {
    throw new McplensError(code as ErrorCode, named, message, code === 'server_error' ? { rpcCode } : undefined);
  }
  // An argument the native layer refused by its type (napi's own message).
  throw new McplensError('invalid_argument', named, `${named ? `server "${named}": ` : ''}invalid argument: ${message}`);
}

/** `f()`, its error rethrown as a `McplensError` about `server`. */
export function call<T>(server: string | undefined, f: () => T, rpcCode?: number): T {
  try {
    return f();
  } catch (e) {
    rethrow(e, server, rpcCode);
  }
}

/** The request a `Pager` wants sent. Page 1 has no `params` at all. */
export interface PagerRequest {
  method: string;
  params?: { cursor: string };
}

/** Options of `new Pager`. */
export interface PagerOptions {
  kind: ListKind;
  /** The host's name for the server. */
  server: string;
  /** `hasResourcesCapability(serverCapabilities)`; when false nothing is asked. */
  resourcesCapability: boolean;
  limits?: Limits;
  /** The host's monotonic clock in milliseconds (`performance.now()`). */
  now: number;
  /** The protocol revision the connection negotiated (`client.getNegotiatedProtocolVersion()`). */
  protocolVersion?: string;
}

/** What a refresher's traversal pair (`Pager.pair`) needs besides the traversal's id. */
export interface PairOptions {
  /** The host's name for the server (the `traverse` action's). */
  server: string;
  /** The server's capabilities (`client.getServerCapabilities()`); `null`/`undefined`: not initialized. */
  capabilities: object | null | undefined;
  limits?: Limits;
  /** The host's monotonic clock in milliseconds (`performance.now()`). */
  now: number;
  /** The protocol revision the connection negotiated (`client.getNegotiatedProtocolVersion()`). */
  protocolVersion?: string;
}

/** `pager.finish()` without leaving Rust (the package's own traversals). */
let finishNative: (pager: Pager) => native.NativeListing;
/** The native pager of a facade `Pager` (for `Refresher.traversed`). */
export let nativePager: (pager: Pager) => native.Pager;

/**
 * The sans-IO pager, for hosts that drive their own I/O. Time is passed in (milliseconds of any
 * monotonic clock). Call order: `nextRequest()` → send it, waiting at most `remaining(now)` →
 * exactly one `accept*` → … until `nextRequest()` returns `null` → `finish()`.
 * Errors are `McplensError`s; any failure ends the traversal.
 */
export class Pager {
  readonly #native: native.Pager;
  /** The host's name for the server. */
  readonly server: string;

  /** `adopted`: internal (`Pager.pair`). */
  constructor(options: PagerOptions, adopted?: native.Pager) {
    this.server = options.server;
    if (adopted !== undefined) {
      this.#native = adopted;
      return;
    }
    const limits = options.limits === undefined ? undefined : JSON.stringify(options.limits);
    try {
      this.#native = new native.Pager(
        options.kind,
        options.server,
        options.resourcesCapability,
        limits,
        options.now,
        options.protocolVersion,
      );
    } catch (e) {
      rethrow(e, String(options.server));
    }
  }

  /**
   * The traversal pair of a refresher's `traverse` action: resources, then templates, as the core
   * decides. Perform it like a pager, then hand it back with `Refresher.traversed` (a pair handed
   * back before it ended was abandoned). A pair fails into itself: its `accept*` throw only on
   * misuse, and `finish()` refuses it.
   */
  static pair(traversal: number, options: PairOptions): Pager {
    const caps = options.capabilities == null ? null : JSON.stringify(options.capabilities);
    const limits = options.limits === undefined ? undefined : JSON.stringify(options.limits);
    const made = call(options.server, () =>
      native.Pager.pair(traversal, options.server, caps, limits, options.now, options.protocolVersion),
    );
    return new Pager({ server: options.server } as PagerOptions, made);
  }

  /** The list being read (`null` once a pair ended). */
  get kind(): ListKind | null {
    return this.#native.kind as ListKind | null;
  }

  /** The next request to send, or `null` when the traversal is over. */
  nextRequest(): PagerRequest | null {
    const request = this.#native.nextRequest();
    if (request === null) return null;
    return request.params === undefined
      ? { method: request.method }
      : { method: request.method, params: JSON.parse(request.params) };
  }

  /** Milliseconds left for the whole traversal at `now`: the in-flight request's timeout. */
  remaining(now: number): number {
    return call(this.server, () => this.#native.remaining(now));
  }

  /** True once the traversal has finished or failed. */
  isDone(): boolean {
    return this.#native.isDone();
  }

  /** The JSON-RPC `result`, as JSON text, received at `now`. */
  acceptPage(page: string, now: number): void {
    call(this.server, () => this.#native.acceptPage(page, now));
  }

  /**
   * The JSON-RPC `result` as the SDK parsed it, received at `now`, read in place by the rules of
   * its JSON text (handed over as one tape, `convert-tape.ts`, not as text). `false`, nothing applied,
   * when it holds what its text carries otherwise (a `toJSON` method, an object or array that is
   * not plain, a BigInt, a lone surrogate, nesting past the bound): call `acceptPage` with its text.
   */
  acceptPageParsed(page: unknown, now: number): boolean {
    const read = withTape(page, (t) => call(this.server, () => this.#native.acceptPageTape(t.bytes, t.tape, now)));
    return read ?? false;
  }

  /**
   * What the SDK reported instead of a result, as facts the core classifies (`SdkFailure`):
   * `error_answer` (the server's error answer, `code` its code when a number), `sdk_error` (the
   * SDK's protocol error with `code`; `connectionHeld` when the host can tell), `schema_refused`,
   * `lost` (anything else the SDK threw).
   */
  acceptFailure(kind: SdkFailureKind, code: number | undefined, connectionHeld: boolean | undefined, now: number): void {
    call(this.server, () => this.#native.acceptFailure(kind, code ?? null, connectionHeld ?? null, now), code);
  }

  /** A JSON-RPC error answer (only the code is used; the message is server text). */
  acceptRpcError(code: number, now: number): void {
    call(this.server, () => this.#native.acceptRpcError(code, now), code);
  }

  /** The host's client refused the result's shape. */
  acceptMalformed(now: number): void {
    call(this.server, () => this.#native.acceptMalformed(now));
  }

  /** The transport failed. */
  acceptTransportError(now: number): void {
    call(this.server, () => this.#native.acceptTransportError(now));
  }

  /** The host's timeout for the in-flight request (`remaining(now)`) fired. */
  acceptTimeout(now: number): void {
    call(this.server, () => this.#native.acceptTimeout(now));
  }

  /**
   * The listing of the complete traversal, or throws the error that ended it. The listing can be
   * committed to a `Catalog` as is.
   */
  finish(): Listing {
    return fromNative(call(this.server, () => this.#native.finish()));
  }

  /** What the traversal counted so far (also after a failure). */
  diagnostics(): Diagnostics {
    return JSON.parse(call(this.server, () => this.#native.diagnostics())) as Diagnostics;
  }

  static {
    finishNative = (pager) => call(pager.server, () => pager.#native.finish());
    nativePager = (pager) => pager.#native;
  }
}

/** Does a server's `capabilities` object (e.g. `client.getServerCapabilities()`) declare `resources`? */
export function hasResourcesCapability(capabilities: object | null | undefined): boolean {
  return native.hasResourcesCapability(JSON.stringify(capabilities ?? null));
}

/**
 * Is `client` initialized — does its host hold the server's capabilities, from `initialize` (or
 * `server/discover` on a sessionless 2026-07-28 connection)? And does its server declare
 * `resources`? Throws the core's `invalid_argument` when it is not initialized.
 */
export function initialized(server: string, client: McpClient): boolean {
  const caps = JSON.stringify(client.getServerCapabilities() ?? null); // a host bug throws as it is
  try {
    return native.initialized(server, caps);
  } catch (e) {
    rethrow(e, server);
  }
}

/** The version of the Rust core (one version for every mcplens package). */
export const coreVersion: string = native.coreVersion();

/**
 * What a traversal needs of a `Client`: SDK 1.x (`@modelcontextprotocol/sdk`) and v2
 * (`@modelcontextprotocol/client`) clients satisfy it as they are.
 */
export interface McpClient {
  request(
    request: { method: string; params?: Record<string, unknown> },
    resultSchema: unknown,
    options?: { timeout?: number; signal?: AbortSignal },
  ): Promise<unknown>;
  getServerCapabilities(): object | undefined;
  /** Unset by the SDK once the connection has closed. */
  readonly transport?: unknown;
  /** v2 only: `'legacy'` (the `initialize` handshake) or `'modern'` (2026-07-28). */
  getProtocolEra?(): string | undefined;
  /** v2: the negotiated protocol version (1.x clients speak revisions before 2026-07-28). */
  getNegotiatedProtocolVersion?(): string | undefined;
}

/** Options of `listResourceTemplates` / `listResources`. */
export interface ListOptions {
  /** The host's name for the server (it goes into every item and every error). */
  server: string;
  limits?: Limits;
  /** Cancels the traversal: the promise rejects with `signal.reason`, and the in-flight request is cancelled. */
  signal?: AbortSignal;
}

/**
 * Lists the server's resource templates: every page validated, strings sanitized, the traversal
 * bounded. Rejects with a `McplensError` (never a zod error or `McpError`), or with
 * `options.signal.reason` when cancelled.
 */
export async function listResourceTemplates(
  client: McpClient,
  options: ListOptions,
): Promise<Listing<ResourceTemplate>> {
  return fromNative(await traverse('resource_templates', client, options)) as Listing<ResourceTemplate>;
}

/** Lists the server's concrete resources; see `listResourceTemplates`. */
export async function listResources(client: McpClient, options: ListOptions): Promise<Listing<Resource>> {
  return fromNative(await traverse('resources', client, options)) as Listing<Resource>;
}

/** Every listing this package returned → the core's own listing, so a commit never re-validates. */
/** The JS listing of a core listing. */
export function fromNative(handle: native.NativeListing): Listing {
  const parts = handle.toParts();
  const listing = JSON.parse(parts.head) as Listing; // `items: []`, in its place
  listing.items = itemsOf(parts, listing.kind, listing.server) as Listing['items'];
  return listing;
}

/**
 * Passes the result through untouched, so the core validates what the server sent: SDK 1.x calls
 * `safeParse` (a zod 3 shape), v2 a Standard Schema's `validate`. No zod needed.
 */
const RAW_RESULT = {
  safeParse: (data: unknown) => ({ success: true, data }),
  '~standard': { version: 1, vendor: 'mcplens', validate: (value: unknown) => ({ value }) },
} as never;

/** Node's timers overflow past this many milliseconds (and would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One bounded traversal; the core's listing stays in Rust (a catalog commits it as is). */
export async function traverse(kind: ListKind, client: McpClient, options: ListOptions): Promise<native.NativeListing> {
  const { server, limits, signal } = options;
  signal?.throwIfAborted();
  const pager = new Pager({
    kind,
    server,
    resourcesCapability: initialized(server, client),
    limits,
    now: performance.now(),
    protocolVersion: client.getNegotiatedProtocolVersion?.(),
  });
  await perform(client, pager, signal);
  return finishNative(pager);
}

/** The core's traversal pair of a refresher's `traverse` action over `client`. */
export function pairOver(client: McpClient, traversal: number, options: ListOptions): Pager {
  return Pager.pair(traversal, {
    server: options.server,
    capabilities: client.getServerCapabilities(),
    limits: options.limits,
    now: performance.now(),
    protocolVersion: client.getNegotiatedProtocolVersion?.(),
  });
}

/** Sends the pager's requests over `client` and feeds it what came back, until it asks no more. */
export async function perform(client: McpClient, pager: Pager, signal?: AbortSignal): Promise<void> {
  for (let request = pager.nextRequest(); request !== null; request = pager.nextRequest()) {
    await send(client, pager, request, signal);
  }
}

/** What a sent request's outcome is fed to: a `Pager` (a page read in place), or the core's read call (its text). */
export type Sink = Pick<Pager, 'remaining' | 'acceptPage' | 'acceptFailure' | 'acceptMalformed' | 'acceptTimeout'> &
  Partial<Pick<Pager, 'acceptPageParsed'>>;

/** What an SDK reported instead of a result (`Pager.acceptFailure`). */
export type SdkFailureKind = 'error_answer' | 'sdk_error' | 'schema_refused' | 'lost';

/** Sends one request, waiting at most the sink's remaining time, and feeds the outcome back. */
export async function send(client: McpClient, pager: Sink, request: OneRequest, signal?: AbortSignal): Promise<void> {
  const timeout = Math.min(Math.ceil(pager.remaining(performance.now())), MAX_TIMER_MS);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeout);
  let answer: JsonRpcAnswer;
  try {
    answer = await exchange(client, request, {
      timeout,
      signal: signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]),
    });
  } catch (e) {
    const now = performance.now();
    if (signal?.aborted) throw signal.reason;
    if (deadline.signal.aborted) return pager.acceptTimeout(now);
    return pager.acceptFailure(...sdkFailureOf(client, e), now);
  } finally {
    clearTimeout(timer);
  }
  const now = performance.now();
  if (answer.error !== undefined) {
    const code = (answer.error as { code?: unknown } | null)?.code;
    return pager.acceptFailure('error_answer', typeof code === 'number' ? code : undefined, undefined, now);
  }
  if (pager.acceptPageParsed?.(answer.result, now)) return;
  let page: string;
  try {
    page = JSON.stringify(answer.result) ?? 'null';
  } catch {
    return pager.acceptMalformed(now); // deeper than JSON.stringify can go: the host cannot hand it over
  }
  pager.acceptPage(page, now);
}

/** What the SDK threw for `client`'s request, as the facts the core classifies (`SdkFailure`). */
function sdkFailureOf(client: McpClient, e: unknown): [SdkFailureKind, number | undefined, boolean | undefined] {
  if (Array.isArray((e as { issues?: unknown } | null)?.issues)) return ['schema_refused', undefined, undefined];
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'number') return ['lost', undefined, undefined];
  // McpError: the SDK also throws it for a closed connection (then no transport is left).
  return ['sdk_error', code, !('transport' in client) || client.transport !== undefined];
}

/** The JSON-RPC code of an error the server answered `client` with (the core's); undefined for anything else. */
export function rpcCodeOf(client: McpClient, e: unknown): number | undefined {
  const [kind, code, held] = sdkFailureOf(client, e);
  return native.sdkRpcCode(kind, code ?? null, held ?? null) ?? undefined;
}

/** A request the package sends: a page's, or a read's. */
type OneRequest = { method: string; params?: Record<string, unknown> };

/** A JSON-RPC answer as the server sent it: `result`, or `error` (`{code, message}`). */
interface JsonRpcAnswer {
  result?: unknown;
  error?: unknown;
}

/** The part of a transport (both SDK lines') that mcplens taps. */
interface TapTransport {
  send(message: { id?: unknown }, options?: unknown): Promise<void>;
  onmessage?: ((message: JsonRpcAnswer & { id?: unknown }, extra?: unknown) => void) | undefined;
}

/** Per tapped transport: who waits for the answer to which request id, and the id being sent. */
interface Tap {
  waiting: Map<unknown, (message: JsonRpcAnswer) => void>;
  sending?: ((id: unknown) => void) | undefined;
}

const TAPS = new WeakMap<object, Tap>();

/**
 * One request over the client, answered with what the server sent. A v2 client decodes every result
 * against its era's schema before any result schema sees it (on 2026-07-28 it refuses a page whose
 * optional field is sloppy; it strips `resultType`), so over v2 the answer is read off the
 * transport's public `onmessage`/`send` callbacks, by the request id the client gave it. Over 1.x
 * the pass-through schema already gives the raw result.
 */
async function exchange(client: McpClient, request: OneRequest, options: { timeout: number; signal: AbortSignal }): Promise<JsonRpcAnswer> {
  const transport = client.getProtocolEra === undefined ? undefined : (client.transport as TapTransport | undefined);
  if (transport === undefined) return { result: await client.request(request, RAW_RESULT, options) };
  const tap = tapOf(transport);
  const done = new AbortController();
  let id: unknown;
  let raw: Promise<JsonRpcAnswer> | undefined;
  tap.sending = (sent) => {
    tap.sending = undefined;
    id = sent;
    raw = new Promise((resolve) => tap.waiting.set(sent, resolve));
  };
  // allowInputRequired: an `input_required` answer is the core's to judge, never fulfilled and retried
  const sdk = client.request(request, RAW_RESULT, { ...options, signal: AbortSignal.any([options.signal, done.signal]), allowInputRequired: true } as never);
  tap.sending = undefined;
  if (raw === undefined) return { result: await sdk };
  try {
    return await Promise.race([raw, sdk.then(() => raw!)]);
  } finally {
    tap.waiting.delete(id);
    done.abort(); // a no-op once the client has the answer; else (a result it cannot parse) it stops waiting
  }
}

function tapOf(transport: TapTransport): Tap {
  let tap = TAPS.get(transport);
  if (tap !== undefined) return tap;
  const t: Tap = (tap = { waiting: new Map() });
  const { send, onmessage } = transport;
  transport.send = function (this: unknown, message, options) {
    t.sending?.(message?.id);
    return send.call(this, message, options);
  };
  transport.onmessage = function (this: unknown, message, extra) {
    if (message !== null && typeof message === 'object' && !('method' in message)) t.waiting.get(message.id)?.(message);
    return onmessage?.call(this, message, extra);
  };
  TAPS.set(transport, tap);
  return tap;
}
