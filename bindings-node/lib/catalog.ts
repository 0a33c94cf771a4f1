/**
 * The catalog: each server's last complete resources + templates pair, refreshed as one
 * transaction over an MCP SDK `Client` (1.x or v2, either era), kept current by list_changed, and
 * the model-facing listing tool rendered from it.
 *
 * Every rule — joining, queueing, connection epochs, retries with backoff, `ttlMs`, the shrink
 * guard, commits, staleness, rendering — is the Rust core's (`mcplens::catalog::Refresher`,
 * `mcplens::tool`). This facade performs the refresher's actions: it runs the traversals, wakes the
 * waiting callers, arms one timer, reads the clock, and hooks the SDK client's notifications and
 * `onclose`.
 */
import { performance } from 'node:perf_hooks';

import * as native from '../native.js';
import {
  McplensError,
  call,
  initialized,
  rethrow,
  rpcCodeOf,
  send,
  nativePager,
  pairOver,
  perform,
  type Pager,
  type ErrorCode,
  type Limits,
  type ListOptions,
  type McpClient,
  type Resource,
  type ResourceTemplate,
} from './discovery.js';
import type { CatalogMatches } from './template.js';

/** A server's catalog status (see `docs/catalog.md`). */
export type Status = 'unknown' | 'ok' | 'unsupported' | 'outdated' | 'failed' | 'stale';

/** A failed refresh as the catalog keeps it: a stable code and mcplens' own message. */
export interface Failure {
  code: string;
  message: string;
}

/** A snapshot of one server's entry. */
export interface ServerStatus {
  server: string;
  status: Status;
  /** Commits so far (0 = never). */
  generation: number;
  /** The last failure, kept until the next successful commit. */
  lastError: Failure | null;
  /** Cached resources. */
  resources: number;
  /** Cached templates. */
  templates: number;
  /** True while a refresh is running. */
  refreshing: boolean;
}

/** The refresher's answer to a list_changed; `ignored`: not the server's current connection. */
export type ListChangedDecision = 'refresh_now' | 'queued' | 'already_queued' | 'ignored';

/** Why a server's entries are invalidated: `list_changed` keeps its pair (outdated) and refreshes;
 * `connection_closed` and `disabled` end its connection; the others clear both lists and keep it. */
export type InvalidateReason = 'list_changed' | 'connection_closed' | 'configuration_changed' | 'disabled' | 'other';

/** The listing tool's input (the model's arguments). */
export interface ListTemplatesToolInput {
  /** Only this server's templates. */
  server?: string;
  /** Templates to skip (default 0). */
  offset?: number;
  /** Templates to return, 1..=1000 (default 100). */
  limit?: number;
}

/** A JSON Schema of a tool's input. */
export interface ToolInputSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly required?: readonly string[];
  readonly additionalProperties: boolean;
}

/** A resource tool's spec, from the Rust core: the same text in every language. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input. */
  readonly inputSchema: ToolInputSchema;
  /** The same schema in the strict form (OpenAI strict function calling): every property required, optional ones also `null`. */
  readonly strictInputSchema: ToolInputSchema;
  /** MCP tool annotations (`readOnlyHint: true`). */
  readonly annotations: { readonly title?: string; readonly readOnlyHint: boolean; readonly openWorldHint?: boolean };
  /** Hosts that load rarely used tools on demand should defer this one. */
  readonly deferred: boolean;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The spec of the resource tool named `name` (`catalog.visibleTools()` names them); `undefined` for any other. */
export function toolSpec(name: string): ToolSpec | undefined {
  const spec = native.toolSpec(name);
  return spec === null ? undefined : deepFreeze(JSON.parse(spec) as ToolSpec);
}

/** Every resource tool's spec, in the core's order: what an adapter registers (which to offer now is `catalog.visibleTools()`). */
export const resourceToolSpecs: readonly ToolSpec[] = deepFreeze(native.toolSpecs().map((s) => JSON.parse(s) as ToolSpec));

/** `ListMcpResourceTemplatesTool`: register it in the agent's tool list; answer it with `catalog.callListTemplatesTool(args)`. */
export const listResourceTemplatesTool: ToolSpec = toolSpec('ListMcpResourceTemplatesTool')!;

/** `ListMcpResourcesTool`, the concrete-resources twin: answer it with `catalog.callListResourcesTool(args)`. */
export const listResourcesTool: ToolSpec = toolSpec('ListMcpResourcesTool')!;

/** `ReadMcpResourceTool`: answer it with `await catalog.callTool(readResourceTool.name, args)`. */
export const readResourceTool: ToolSpec = toolSpec('ReadMcpResourceTool')!;

/** `CompleteMcpResourceTemplateTool`: answer it with `await catalog.callTool(completeTemplateTool.name, args)`. */
export const completeTemplateTool: ToolSpec = toolSpec('CompleteMcpResourceTemplateTool')!;

/** The completion tool's settings; missing keys take the defaults. */
export interface CompleteOptions {
  /** The output cap in characters, 1,000 to 100,000 (default 10,000). */
  maxOutputChars?: number;
  /** How long a completion may take, up to 600,000 ms (default 10,000). */
  timeoutMs?: number;
}

/** The read tool's settings; missing keys take the defaults. */
export interface ReadOptions {
  /** Read URIs the server did not list nor fit one of its templates (default false). */
  anyUri?: boolean;
  /** The output cap in characters, 1,000 to 10,000,000 (default 100,000). */
  maxOutputChars?: number;
  /** How long a read may take, up to 600,000 ms (default 30,000). */
  timeoutMs?: number;
}

/** A v2 client's `subscriptions/listen` stream (2026-07-28). */
interface Subscription {
  readonly honoredFilter: { resourcesListChanged?: boolean };
  readonly closed: Promise<unknown>;
  close(): Promise<void>;
}

/** What `watch` needs of a `Client` besides requests (SDK 1.x and v2 clients satisfy it). */
export interface WatchableClient extends McpClient {
  onclose?: (() => void) | undefined;
  /** v2, 2026-07-28: opens a `subscriptions/listen` stream. */
  listen?(filter: { resourcesListChanged: boolean }): Promise<Subscription>;
  /** v2: the stream the client's own `listChanged` option opened. */
  readonly autoOpenedSubscription?: Subscription | undefined;
}

/** The refresher's settings (milliseconds); missing keys take the defaults. */
export interface RefreshOptions {
  /** The ceiling of the first retry after a transient failure (default 1,000); doubles per failure. */
  retryBaseMs?: number;
  /** The largest retry ceiling (default 300,000). */
  retryMaxMs?: number;
  /** The shortest `ttlMs` honoured when deciding to traverse (default 10,000). */
  minTtlMs?: number;
  /** The shrink guard applies to lists of at least this many items (default 10). */
  shrinkMinItems?: number;
}

/** Options of `new Catalog`. */
export interface CatalogOptions {
  /** Bounds on every traversal the catalog runs (both lists of every refresh). */
  limits?: Limits;
  /** The refresher's settings: retry backoff (full jitter), the `ttlMs` floor, the shrink guard. */
  refresh?: RefreshOptions;
  /** The read tool's settings. */
  read?: ReadOptions;
  /** The completion tool's settings. */
  complete?: CompleteOptions;
}

const { resourcesListChanged: LIST_CHANGED } = native.protocol();

/** What became of a caller's request (the refresher's `resolve` outcome). */
export type RefreshOutcome = 'cached' | 'committed' | 'discarded' | { failed: { failure: Failure; rpcCode?: number } };

/** What the host must do: run both traversals over that epoch's connection, or wake those callers. */
export type RefresherAction =
  | { traverse: { server: string; epoch: number; traversal: number } }
  | { resolve: { server: string; callers: number[]; outcome: RefreshOutcome; traversal?: number } };

/** What the refresher did with a traversal's result. */
export type Disposition = 'committed' | 'confirming' | 'failed' | 'discarded' | 'ignored';

/** What a caller asks for: a current listing (a tool call), a refresh (joins one under way), or a fresh traversal. */
export type Want = 'current' | 'refresh' | 'force';

/**
 * How a watch learns of changes: `unsolicited` — before 2026-07-28, list_changed arrives unasked;
 * `listening` — 2026-07-28, on a `subscriptions/listen` stream (the server advertises
 * `resources.listChanged`); `not_offered` — 2026-07-28, the server offers none (no
 * `resources.listChanged`, or it answered the stream with -32601): no change notifications will
 * come, and the pair is kept current by requests and its `ttlMs`.
 */
export type Notifications = 'unsolicited' | 'listening' | 'not_offered';

/** What a host knows of its connection when a watch's `subscriptions/listen` stream closed. */
export type Liveness = 'open' | 'closed' | 'unknown';

/** What became of a watch whose `subscriptions/listen` stream closed (`Refresher.listenClosed`). */
export type ListenClosed = 'not_offered' | 'relisting' | 'detached';

/** What `Catalog.watch` resolves with once the watch stands. */
export interface WatchState {
  server: string;
  /** How the watch learns of changes. */
  notifications: Notifications;
}

/** The core's catalog behind a `Catalog` (for `Refresher`). */
let nativeCatalog: (catalog: Catalog) => native.NativeCatalog;

/** The core's `invalid_argument` error of a misuse. */
function misuse(kind: 'not_an_sdk_client', server?: string): McplensError {
  return new McplensError('invalid_argument', server, native.misuseMessage(kind, server ?? ''));
}

/**
 * The refresh state machine of a `Catalog` (sans-IO; `mcplens::catalog::Refresher`): events in,
 * actions out (`pollActions`), `pollTimeout` for the one timer; `now` is `performance.now()` unless
 * given. The catalog is its state, and a catalog has one machine: `Catalog` drives its own over SDK
 * clients (1.x and v2) once one of its driving methods is used; a host on another SDK makes a
 * `Refresher` for a catalog it does not drive that way, and reads the catalog as usual.
 */
export class Refresher {
  readonly #native: native.NativeRefresher;

  /**
   * The machine of `catalog` (with the catalog's `refresh` settings); `seed` feeds the retry
   * jitter (default: random). Throws `invalid_argument` when the catalog already has one.
   */
  constructor(catalog: Catalog, seed?: bigint) {
    this.#native = call(undefined, () => new native.NativeRefresher(nativeCatalog(catalog), seed));
  }

  /** Registers `server` without a connection (idempotent): listed, status `unknown`. */
  addServer(server: string): void {
    this.#native.addServer(server);
  }

  /**
   * Invalidates `server`: `list_changed` (as a list_changed on its connection), `connection_closed`
   * or `disabled` (its connection ends), any other reason clears both lists and keeps the connection.
   */
  invalidate(server: string, reason: InvalidateReason = 'other', now: number = performance.now()): void {
    call(server, () => this.#native.invalidate(server, reason, now));
  }

  /** A connection of `server` (registering it): its epoch; it replaces the server's previous connection. */
  attach(server: string, resourcesCapability: boolean): number {
    return this.#native.attach(server, resourcesCapability);
  }

  /** `attach` from the server's capabilities (`client.getServerCapabilities()`): the core reads what it declares — `resources` and `completions`. */
  attachCapabilities(server: string, capabilities: object): number {
    return this.#native.attachCapabilities(server, JSON.stringify(capabilities));
  }

  /** Connection `epoch` of `server` ended (closed, disabled, replaced: every end clears alike): both lists cleared. False for an old epoch. */
  detach(server: string, epoch: number): boolean {
    return this.#native.detach(server, epoch);
  }

  /**
   * A watch of connection `epoch`, which negotiated `protocolVersion` and declared `capabilities`:
   * how change notifications will reach it (`listening`: open `subscriptions/listen` now); null
   * for an old epoch.
   */
  watch(server: string, epoch: number, protocolVersion: string, capabilities: object | null | undefined): Notifications | null {
    const caps = JSON.stringify(capabilities ?? null);
    return (call(server, () => this.#native.watch(server, epoch, protocolVersion, caps)) ?? null) as Notifications | null;
  }

  /** How the watch of `server`'s current connection learns of changes; null when unwatched. */
  notifications(server: string): Notifications | null {
    return (this.#native.notifications(server) ?? null) as Notifications | null;
  }

  /** The server acknowledged the watch's `subscriptions/listen` stream; false for an old epoch or a watch not listening. */
  listenAcknowledged(server: string, epoch: number): boolean {
    return this.#native.listenAcknowledged(server, epoch);
  }

  /**
   * The watch's `subscriptions/listen` stream was refused (`rpcCode`, the answer's JSON-RPC code) or
   * ended, the host knowing its `connection` then. The core's rule: before the acknowledgement,
   * -32601 is `'not_offered'` (the watch stands without a stream) and anything else the error to
   * fail the watch with (`server_error` with the code, or `transport_error`; the connection and
   * its pair stay); after it, `'relisting'` when the connection is `open` (the pair is re-listed),
   * else `'detached'` (the connection's end). Null for an old epoch or a watch not listening.
   */
  listenClosed(
    server: string,
    epoch: number,
    rpcCode?: number,
    connection: Liveness = 'unknown',
    cause?: unknown,
    now: number = performance.now(),
  ): McplensError | ListenClosed | null {
    const f = call(server, () => this.#native.listenClosed(server, epoch, rpcCode ?? null, connection, now));
    if (f == null) return null;
    if (f.closed != null) return f.closed as ListenClosed;
    return new McplensError(f.code as ErrorCode, server, f.message ?? '', { rpcCode, cause });
  }

  /** `server`'s current connection, if any. */
  epoch(server: string): number | null {
    return this.#native.epoch(server) ?? null;
  }

  /** A list_changed on connection `epoch` of `server`. */
  onListChanged(server: string, epoch: number, now: number = performance.now()): ListChangedDecision {
    return call(server, () => this.#native.onListChanged(server, epoch, now)) as ListChangedDecision;
  }

  /** A caller wants `server`'s listing: its id, answered by a `resolve` action. */
  request(server: string, want: Want = 'refresh', now: number = performance.now()): number {
    return call(server, () => this.#native.request(server, want, now));
  }

  /** A pair (`Pager.pair`) handed back, performed: ended (committed, failed…) or not (abandoned). */
  traversed(pair: Pager, now: number = performance.now()): Disposition {
    return call(pair.server, () => this.#native.traversed(nativePager(pair), now)) as Disposition;
  }

  /**
   * Performs `traverse` action `traversal` over an SDK `client` (1.x or v2): the core's pair
   * (`Pager.pair`), its requests sent by the package, then handed back (`traversed`). A host error
   * (the client threw past its SDK, `signal` aborted) hands it back unfinished: abandoned.
   */
  async traverse(client: McpClient, traversal: number, options: ListOptions): Promise<Disposition> {
    const pair = pairOver(client, traversal, options);
    try {
      await perform(client, pair, options.signal);
    } catch {
      // handed back unfinished: the core records nothing of it
    }
    return this.traversed(pair);
  }

  /** Traversal `traversal` will not complete (a host error). */
  traversalAbandoned(traversal: number, now: number = performance.now()): Disposition {
    return call(undefined, () => this.#native.traversalAbandoned(traversal, now)) as Disposition;
  }

  /** Starts the retries that are due. */
  handleTimeout(now: number = performance.now()): void {
    call(undefined, () => this.#native.handleTimeout(now));
  }

  /** Every pending action, in order (drain after every event). */
  pollActions(): RefresherAction[] {
    return JSON.parse(this.#native.pollActions()) as RefresherAction[];
  }

  /** When `handleTimeout` is due next (`performance.now()` milliseconds), or null. */
  pollTimeout(): number | null {
    return this.#native.pollTimeout() ?? null;
  }

  /** True while a traversal of `server` (or of any server) is in flight or queued. */
  isBusy(server?: string): boolean {
    return this.#native.isBusy(server);
  }

  /** Forgets `server` (catalog entry included). */
  remove(server: string): boolean {
    return this.#native.remove(server);
  }

  /** Forgets every server. */
  clear(): void {
    this.#native.clear();
  }
}

/** Where a client's chained list_changed handler and `onclose` send their events. */
type Hook = Record<'listChanged' | 'closed', () => void>;

/** One client of one server: the refresher's epoch. */
interface Connection {
  server: string;
  epoch: number;
  client: McpClient;
  /** The current `watch` of this connection (a newer one replaces it). */
  watch?: object;
  /** The `subscriptions/listen` stream mcplens opened for it (2026-07-28). */
  listen?: Subscription;
}

/** The model's arguments as the core takes them (JSON text; `undefined` when they cannot be JSON:
 * a `BigInt`, a cycle), and the server they name. */
function modelInput(args: unknown): { input: string | undefined; asked: string | undefined } {
  const asked = typeof args === 'object' && args !== null ? (args as { server?: unknown }).server : undefined;
  let input: string | undefined;
  try {
    input = typeof args === 'string' ? args : (JSON.stringify(args ?? null) ?? 'null');
  } catch {}
  return { input, asked: typeof asked === 'string' ? asked : undefined };
}

/** `input`, or the core's refusal of input that is not JSON (thrown). */
function jsonInput(input: string | undefined): string {
  if (input === undefined) native.toolInputNotJson();
  return input as string;
}

/**
 * One `ReadMcpResourceTool` call, validated against a catalog (sans-IO, like `Pager`), for hosts
 * that send requests themselves: send `method` with `params` to `server`, waiting at most
 * `remaining(now)`, feed exactly one `accept*`, then `finish()` gives the model's output or throws
 * the tool's `McplensError`. `Catalog.callTool` does all of this over an SDK client.
 */
export class ToolCall extends native.NativeToolCall {
  /** `options`: that tool's settings (default: the catalog's). */
  constructor(
    catalog: Catalog,
    name: string,
    args: Readonly<Record<string, unknown>> | string | null,
    options?: ReadOptions | CompleteOptions,
    now = performance.now(),
  ) {
    const { input, asked } = modelInput(args);
    try {
      super(nativeCatalog(catalog), name, jsonInput(input), options && JSON.stringify(options), now);
    } catch (e) {
      rethrow(e, asked);
    }
  }

  /** The request's params. */
  get params(): Record<string, unknown> {
    return JSON.parse(this.paramsJson()) as Record<string, unknown>;
  }

  /** The model's output (compact JSON), or throws the tool's `McplensError`. */
  override finish(): string {
    return call(this.server, () => super.finish(), this.rpcCode ?? undefined);
  }
}

/**
 * The per-server catalog, over SDK clients (1.x and v2).
 *
 * ```js
 * const catalog = new Catalog();
 * await catalog.refresh('docs', client);   // both lists, committed together, or the error
 * catalog.watch('docs', client);           // list_changed → refresh; onclose → both lists cleared
 * await catalog.ensureFresh();             // before answering the model: traverses what is due
 * catalog.callListTemplatesTool({ server: 'docs' });   // the model's listing, compact JSON
 * ```
 *
 * The catalog's state has one owner, its refresh machine: this class drives it over SDK clients;
 * hosts on other SDKs drive a `Refresher` of the catalog themselves (then this class's driving
 * methods throw `invalid_argument`).
 */
export class Catalog {
  readonly #native: native.NativeCatalog;
  #ownMachine: Refresher | undefined;
  readonly #limits: Limits | undefined;
  readonly #connections = new Map<number, Connection>();
  readonly #waiters = new Map<number, (outcome: RefreshOutcome) => void>();
  #timer: { due: number; handle: ReturnType<typeof setTimeout> } | undefined;
  #settled: Array<() => void> = [];
  /** Per client: what this catalog chained onto it, and where it sends the events now. */
  readonly #hooks = new WeakMap<object, Hook & { handler?: unknown; onclose?: (() => void) | undefined }>();

  static {
    nativeCatalog = (catalog) => catalog.#native;
  }

  constructor(options: CatalogOptions = {}) {
    this.#limits = options.limits;
    // Limits out of shape are the caller's mistake, said now (every traversal would fail with it).
    if (options.limits !== undefined) {
      const limits = JSON.stringify(options.limits);
      call(undefined, () => new native.Pager('resources', '', false, limits, 0, undefined));
    }
    this.#native = call(undefined, () =>
      new native.NativeCatalog(JSON.stringify(options.refresh ?? {}), JSON.stringify(options.read ?? {}), JSON.stringify(options.complete ?? {})),
    );
  }

  /** The machine this catalog drives (made on first use; throws when a host's `Refresher` has it). */
  get #machine(): Refresher {
    return (this.#ownMachine ??= new Refresher(this));
  }

  /**
   * Refreshes `server` over `client` (another client under that name replaces the previous
   * connection): joins a refresh under way, else starts one; `force` asks for one that begins
   * after this call. Resolves with the status once both lists committed (or nothing came of it:
   * the connection closed); rejects with the `McplensError` of a failed traversal (the catalog keeps
   * the previous pair, status `stale`).
   */
  async refresh(server: string, client: McpClient, options: { force?: boolean } = {}): Promise<ServerStatus> {
    this.#connect(server, client);
    return this.#wait(server, options.force ? 'force' : 'refresh');
  }

  /**
   * Makes `server`'s listing (or every server's) current: traverses only a server that has no pair
   * yet, is outdated by list_changed, or whose `ttlMs` ran out. Failures show in the status and the
   * tool's `failures`.
   */
  async ensureFresh(server?: string): Promise<void> {
    const servers = server === undefined ? this.servers() : [server];
    const waits = servers.map((s) => this.#wait(s, 'current').catch((e: unknown) => {
      if (!(e instanceof McplensError) || e.code === 'unknown_server') throw e;
    }));
    await Promise.all(waits);
  }

  /**
   * Keeps `server` current on `client`: a `notifications/resources/list_changed` goes to the
   * refresher (which keeps the last pair listed, outdated, and refreshes); the connection closing
   * clears both lists. Chains onto the client's existing list_changed handler and `onclose` (both
   * still run, after mcplens'). Call it after `client.connect()` and after the app's own
   * `setNotificationHandler` for that method. It does not refresh by itself.
   *
   * On a v2 client's 2026-07-28 connection, list_changed comes only on a `subscriptions/listen`
   * stream, and only from a server that advertises `resources.listChanged`: mcplens opens one for
   * such a server (unless the client's own `listChanged` subscription has it) and treats its end
   * like the connection closing. A server that does not advertise it — or answers the stream with
   * -32601 — sends no change notifications: the watch stands without a stream (`not_offered`), the
   * pair is kept current by refreshes and its `ttlMs`, and `onclose` still clears it. The promise
   * resolves with the watch's `notifications` once it stands (at once on the legacy handshake and
   * without a stream; after the server's acknowledgement of the stream). It rejects with the core's
   * `server_error` (`rpcCode` set) when the server refuses the stream otherwise, or
   * `transport_error` when the stream failed before the acknowledgement; the connection and its
   * lists stay (`Refresher.listenClosed`).
   */
  watch(server: string, client: WatchableClient): Promise<WatchState> {
    const handlers = (client as { _notificationHandlers?: unknown })._notificationHandlers;
    if (!(handlers instanceof Map)) throw misuse('not_an_sdk_client', server);
    const conn = this.#connect(server, client);
    const watch = (conn.watch = {});
    const current = () => conn.watch === watch && this.#connections.get(conn.epoch) === conn;
    const closed = () => {
      if (current() && this.#machine.detach(server, conn.epoch)) this.#drop(conn);
      this.#drive();
    };
    const listChanged = () => {
      if (current()) this.#machine.onListChanged(server, conn.epoch);
      this.#drive();
    };
    this.#hook(client, handlers, { listChanged, closed });
    const version = client.getNegotiatedProtocolVersion?.() ?? '';
    const notifications = this.#machine.watch(server, conn.epoch, version, client.getServerCapabilities());
    if (notifications !== 'listening') return Promise.resolve({ server, notifications: notifications ?? 'unsolicited' });
    return this.#listen(conn, client, current);
  }

  /**
   * Chains this catalog's list_changed handler and `onclose` onto `client` once: a later watch of
   * the same client retargets them (no growing chain); they are chained again only when the app
   * replaced them since.
   */
  #hook(client: WatchableClient, handlers: Map<unknown, unknown>, hook: Hook): void {
    const hooked = this.#hooks.get(client);
    const now = { ...hook, handler: hooked?.handler, onclose: hooked?.onclose };
    this.#hooks.set(client, now);
    const route = (event: 'listChanged' | 'closed') => {
      try {
        this.#hooks.get(client)?.[event]();
      } catch {
        // never throws into the SDK
      }
    };
    if (hooked === undefined || handlers.get(LIST_CHANGED) !== hooked.handler) {
      const previous = handlers.get(LIST_CHANGED) as ((...args: unknown[]) => unknown) | undefined;
      now.handler = (...args: unknown[]) => (route('listChanged'), previous?.(...args)); // v2 passes the era's codec too
      handlers.set(LIST_CHANGED, now.handler);
    }
    if (hooked === undefined || client.onclose !== hooked.onclose) {
      const previous = client.onclose;
      client.onclose = now.onclose = () => (route('closed'), previous?.call(client));
    }
  }

  /** 2026-07-28: the `subscriptions/listen` stream that carries list_changed; its end detaches. */
  async #listen(conn: Connection, client: WatchableClient, current: () => boolean): Promise<WatchState> {
    const server = conn.server;
    let sub = client.autoOpenedSubscription;
    if (sub?.honoredFilter.resourcesListChanged !== true) {
      try {
        sub = await client.listen!({ resourcesListChanged: true });
      } catch (e) {
        const refused = this.#machine.listenClosed(server, conn.epoch, rpcCodeOf(client, e), 'unknown', e);
        if (refused instanceof McplensError) throw refused;
        return { server, notifications: refused === null ? 'listening' : 'not_offered' }; // or an old connection
      }
      if (!current()) {
        void sub.close();
        return { server, notifications: 'listening' };
      }
      void conn.listen?.close().catch(() => {}); // an earlier watch's stream
      conn.listen = sub;
    }
    if (current()) this.#machine.listenAcknowledged(server, conn.epoch);
    // Its end: the core decides (an SDK client cannot tell whether the connection outlives it).
    void sub.closed.then(() => {
      if (current() && this.#machine.listenClosed(server, conn.epoch) === 'detached') this.#drop(conn);
      this.#drive();
    });
    return { server, notifications: 'listening' };
  }

  /**
   * Invalidates `server`: `list_changed` keeps the pair (outdated) and refreshes; `connection_closed`
   * and `disabled` end its connection (both lists cleared); any other reason clears both lists and
   * keeps the connection (the next request traverses).
   */
  invalidate(server: string, reason: InvalidateReason = 'other'): void {
    this.#machine.invalidate(server, reason);
    const current = this.#machine.epoch(server);
    for (const conn of this.#connections.values()) if (conn.server === server && conn.epoch !== current) this.#drop(conn);
    this.#drive();
  }

  /** Forgets `server` (entries, connection, watch); a refresh still waiting rejects with `unknown_server`. Returns whether it was known. */
  remove(server: string): boolean {
    for (const conn of this.#connections.values()) if (conn.server === server) this.#drop(conn);
    const known = this.#machine.remove(server);
    this.#drive();
    return known;
  }

  /** Forgets every server. */
  clear(): void {
    for (const conn of this.#connections.values()) this.#drop(conn);
    this.#machine.clear();
    this.#drive();
  }

  /** The registered servers, in registration order. */
  servers(): string[] {
    return this.#native.servers();
  }

  /** Registers a server without refreshing it (idempotent); the tool lists servers in registration order. */
  addServer(server: string): void {
    this.#machine.addServer(server);
  }

  /** Cached templates: every server's in registration order, or one server's. */
  templates(options: { server?: string } = {}): ResourceTemplate[] {
    const { server } = options;
    return JSON.parse(call(server, () => this.#native.templates(server))) as ResourceTemplate[];
  }

  /** Cached resources: every server's in registration order, or one server's. */
  resources(options: { server?: string } = {}): Resource[] {
    const { server } = options;
    return JSON.parse(call(server, () => this.#native.resources(server))) as Resource[];
  }

  /** `server`'s status at `now` (default: now). Throws `unknown_server` for a server never added. */
  status(server: string, now: number = performance.now()): ServerStatus {
    return JSON.parse(call(server, () => this.#native.status(server, now))) as ServerStatus;
  }

  /**
   * Would a request for a current listing of `server` traverse at `now` (no pair yet, outdated by
   * list_changed, or its `ttlMs` ran out)? A failed server is answered from the catalog until its
   * retry, a list_changed or an explicit refresh.
   */
  needsRefresh(server: string, now: number = performance.now()): boolean {
    return call(server, () => this.#native.needsRefresh(server, now));
  }

  /** The resource tools to offer the model now: all three while an attached server declares `resources`, none otherwise. */
  visibleTools(): string[] {
    return this.#native.visibleTools();
  }

  /** Catalog-wide change counter: when it moves, ask `visibleTools()` (and re-render) again. */
  get generation(): number {
    return this.#native.generation();
  }

  /**
   * Answers `ListMcpResourceTemplatesTool`: `args` is the model's input (an object, or its JSON
   * text). Returns the compact JSON output; throws `McplensError` `unknown_server` (naming the
   * available servers), `invalid_argument` or `output_too_large` (never truncated).
   */
  callListTemplatesTool(args?: ListTemplatesToolInput | Readonly<Record<string, unknown>> | string | null): string {
    return this.#tool(args, (input) => native.callListingTool(this.#native, listResourceTemplatesTool.name, input));
  }

  /** Answers `ListMcpResourcesTool`, the concrete-resources twin (same input, paging, failures and cap). */
  callListResourcesTool(args?: ListTemplatesToolInput | Readonly<Record<string, unknown>> | string | null): string {
    return this.#tool(args, (input) => native.callListingTool(this.#native, listResourcesTool.name, input));
  }

  /**
   * Answers the resource tool `name` (one of `visibleTools()`) with the model's `args` (an object,
   * or its JSON text) once the servers it reads are current (the core's `currentBefore`: a
   * listing's, the read's server): a listing from the catalog; a read over the server's client,
   * bounded by the catalog's `read` options. Resolves with the tool's output (a listing's compact
   * JSON; a read's header line and texts, `docs/tools.md`); rejects with a `McplensError` whose
   * message is meant for the model.
   */
  async callTool(name: string, args?: Readonly<Record<string, unknown>> | string | null): Promise<string> {
    const { input } = modelInput(args ?? null);
    const current = input === undefined ? [] : native.currentBefore(this.#native, name, input);
    await Promise.all(current.map((server) => this.ensureFresh(server)));
    if (!native.asksServer(name)) {
      return this.#tool(args, (input) => native.callListingTool(this.#native, name, input));
    }
    const asked = new ToolCall(this, name, args ?? null);
    const conn = this.#connections.get(this.#machine.epoch(asked.server) ?? -1);
    if (conn !== undefined) await send(conn.client, asked, { method: asked.method, params: asked.params });
    return asked.finish(); // nothing sent (no connection): transport_error
  }

  /**
   * Every cached template `uri` fits, with the values, most specific first (then in catalog order):
   * route a read to `matches[0].server`. Throws `invalid_argument` for a URI over 8,192 bytes.
   */
  matchUri(uri: string): CatalogMatches {
    return JSON.parse(call(undefined, () => native.catalogMatchUri(this.#native, uri))) as CatalogMatches;
  }

  /** Resolves once no traversal of `server` (or of any server) is in flight or queued. */
  async settled(server?: string): Promise<void> {
    while (this.#machine.isBusy(server)) await new Promise<void>((resolve) => this.#settled.push(resolve));
  }

  // --- internals: performing the refresher's actions ---

  /** A resource tool on the model's input (an object, or its JSON text). */
  #tool<T>(args: unknown, f: (input: string) => T): T {
    const { input, asked } = modelInput(args);
    return call(asked, () => f(jsonInput(input)));
  }

  /** The connection of `client` for `server`, attaching it if new (replacing another client's). */
  #connect(server: string, client: McpClient): Connection {
    const current = this.#connections.get(this.#machine.epoch(server) ?? -1);
    if (current !== undefined && current.client === client) return current;
    initialized(server, client); // throws for a client that is not initialized
    if (current !== undefined) this.#drop(current);
    const conn = { server, epoch: this.#machine.attachCapabilities(server, client.getServerCapabilities() ?? {}), client };
    this.#connections.set(conn.epoch, conn);
    this.#drive();
    return conn;
  }

  /** Forgets a connection (and closes the stream mcplens opened for it). */
  #drop(conn: Connection): void {
    this.#connections.delete(conn.epoch);
    void conn.listen?.close().catch(() => {});
  }

  async #wait(server: string, want: 'current' | 'refresh' | 'force'): Promise<ServerStatus> {
    const caller = this.#machine.request(server, want);
    const outcome = new Promise<RefreshOutcome>((resolve) => this.#waiters.set(caller, resolve));
    this.#drive();
    const o = await outcome;
    if (typeof o === 'object') {
      const { failure, rpcCode } = o.failed;
      throw new McplensError(failure.code as ErrorCode, server, failure.message, { rpcCode });
    }
    return this.status(server);
  }

  /** Performs every pending action, then arms the timer. */
  #drive(): void {
    for (let actions = this.#poll(); actions.length > 0; actions = this.#poll()) {
      for (const action of actions) {
        if ('traverse' in action) {
          const conn = this.#connections.get(action.traverse.epoch);
          if (conn === undefined) this.#machine.traversalAbandoned(action.traverse.traversal);
          else void this.#traverse(conn, action.traverse.traversal);
        } else {
          for (const caller of action.resolve.callers) {
            this.#waiters.get(caller)?.(action.resolve.outcome);
            this.#waiters.delete(caller);
          }
        }
      }
    }
    this.#arm();
    for (const wake of this.#settled.splice(0)) wake();
  }

  #poll(): RefresherAction[] {
    return this.#machine.pollActions();
  }

  /** Performs the core's traversal pair and hands it back (ended, or abandoned: the core decides). */
  async #traverse(conn: Connection, traversal: number): Promise<void> {
    try {
      await this.#machine.traverse(conn.client, traversal, { server: conn.server, limits: this.#limits });
    } catch {
      this.#machine.traversalAbandoned(traversal); // the client threw before the pair began
    }
    this.#drive();
  }

  /** One timer, re-armed whenever `pollTimeout` moves; it does not keep the process alive. */
  #arm(): void {
    const due = this.#machine.pollTimeout() ?? undefined;
    if (due === this.#timer?.due) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    if (due === undefined) return;
    const handle = setTimeout(() => {
      this.#timer = undefined;
      this.#machine.handleTimeout();
      this.#drive();
    }, Math.min(Math.max(0, due - performance.now()), 2 ** 31 - 1));
    handle.unref();
    this.#timer = { due, handle };
  }
}
