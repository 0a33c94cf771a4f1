/**
 * The catalog: each server's last complete resources + templates pair, refreshed as one
 * transaction over an `@modelcontextprotocol/sdk` 1.x `Client`, kept current by list_changed, and
 * the model-facing listing tool rendered from it.
 *
 * Every rule (tickets, coalescing, staleness, TTL, rendering, the output cap) is the Rust core's
 * (`mcplens::catalog`, `mcplens::tool`). This facade runs the traversals, reads the clock,
 * serializes refreshes per server, and hooks the SDK client's notifications and `onclose`.
 */
import { performance } from 'node:perf_hooks';

import * as native from '../index.js';
import {
  McplensError,
  nativeOf,
  rethrow,
  traverse,
  type Limits,
  type Listing,
  type McpClient,
  type Resource,
  type ResourceTemplate,
} from './discovery.js';
import type { CatalogMatches } from './template.js';

/** A server's catalog status (see `docs/catalog.md`). */
export type Status = 'unknown' | 'ok' | 'unsupported' | 'failed' | 'stale';

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

/** What became of a commit or failure (sans-IO API). */
export interface Completion {
  /** False when the ticket was stale (newer ticket, invalidation, or removal): nothing changed. */
  applied: boolean;
  /** A list_changed arrived during the refresh: start exactly one more now. */
  refreshAgain: boolean;
}

/** The core's answer to a list_changed (sans-IO API); `ignored`: the server is not in the catalog. */
export type ListChangedDecision = 'refresh_now' | 'queued' | 'already_queued' | 'ignored';

/** Why a server's entries are invalidated; every reason clears both lists alike. */
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

/** The listing tool's spec, from the Rust core: the same text in every language. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input. */
  readonly inputSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
    readonly additionalProperties: boolean;
  };
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

/** `ListMcpResourceTemplatesTool`: register it in the agent's tool list; answer it with `catalog.callListTemplatesTool(args)`. */
export const listResourceTemplatesTool: ToolSpec = deepFreeze(JSON.parse(native.listTemplatesToolSpec()) as ToolSpec);

/** `ListMcpResourcesTool`, the concrete-resources twin: answer it with `catalog.callListResourcesTool(args)`. */
export const listResourcesTool: ToolSpec = deepFreeze(JSON.parse(native.listResourcesToolSpec()) as ToolSpec);

/** What `watch` needs of an SDK 1.x `Client` besides requests (the SDK's `Client` satisfies it). */
export interface WatchableClient extends McpClient {
  onclose?: (() => void) | undefined;
}

/** Options of `new Catalog`. */
export interface CatalogOptions {
  /** Bounds on every traversal the catalog runs (both lists of every refresh). */
  limits?: Limits;
}

const LIST_CHANGED = 'notifications/resources/list_changed';

/** Proof that a refresh was started (sans-IO API); hand it back to `commit` or `fail`. */
export class RefreshTicket {
  /** The server this ticket refreshes. */
  readonly server: string;

  /** @internal Only `Catalog.beginRefresh` makes tickets. */
  constructor(server: string) {
    this.server = server;
  }
}

/** The core's ticket behind each facade ticket. */
const TICKETS = new WeakMap<RefreshTicket, native.NativeTicket>();

/** The per-server serialization of refreshes: one running, at most one waiting (shared by its callers). */
interface Slot {
  tail: Promise<ServerStatus>;
  next?: { client: McpClient; promise: Promise<ServerStatus>; start: () => void };
}

interface Watch {
  client: WatchableClient;
  active: boolean;
}

/**
 * The per-server catalog, over SDK 1.x clients.
 *
 * ```js
 * const catalog = new Catalog();
 * await catalog.refresh('docs', client);   // both lists, committed together, or the error
 * catalog.watch('docs', client);           // list_changed → refresh; onclose → invalidate
 * catalog.callListTemplatesTool({ server: 'docs' });   // the model's listing, compact JSON
 * ```
 *
 * At most one refresh per server runs at a time. Sans-IO hosts use `beginRefresh` → their own
 * traversals (`Pager`) → `commit` / `fail`, and `onListChanged`, with time passed in.
 */
export class Catalog {
  readonly #native = new native.NativeCatalog();
  readonly #limits: Limits | undefined;
  readonly #slots = new Map<string, Slot>();
  /** The client each server was last refreshed or watched with: follow-up refreshes use it. */
  readonly #clients = new Map<string, McpClient>();
  readonly #watches = new Map<string, Watch>();

  constructor(options: CatalogOptions = {}) {
    this.#limits = options.limits;
  }

  /**
   * Refreshes `server` over `client`: resources, then templates are traversed and committed
   * together, or the refresh fails with the first error (resources first) and the
   * previous pair is kept (status `stale`). Resolves with the server's status once no follow-up
   * refresh is due; rejects with the `McplensError` of a failed refresh (also recorded in the
   * catalog). A call while a refresh of `server` runs waits for it, then refreshes once more
   * (callers arriving meanwhile share that refresh).
   */
  refresh(server: string, client: McpClient): Promise<ServerStatus> {
    this.#clients.set(server, client);
    return this.#schedule(server, client);
  }

  /**
   * Keeps `server` current on `client`: a `notifications/resources/list_changed` invalidates it and,
   * as the core decides, refreshes it (a burst during a refresh causes exactly one more); the
   * connection closing invalidates it. Chains onto the client's existing list_changed handler and
   * `onclose` (both still run, after mcplens'). Call it after `client.connect()` and after the
   * app's own `setNotificationHandler` for that method (a later one replaces the chain). It does
   * not refresh by itself: call `refresh` for the first listing.
   */
  watch(server: string, client: WatchableClient): void {
    const handlers = (client as { _notificationHandlers?: unknown })._notificationHandlers;
    if (!(handlers instanceof Map)) {
      throw new McplensError(
        'invalid_argument',
        server,
        `server "${server}": invalid argument: watch needs an @modelcontextprotocol/sdk 1.x Client (no notification handler map to chain onto)`,
      );
    }
    this.addServer(server);
    this.#clients.set(server, client);
    const old = this.#watches.get(server);
    if (old !== undefined) old.active = false;
    const watch: Watch = { client, active: true };
    this.#watches.set(server, watch);

    const previous = handlers.get(LIST_CHANGED) as ((notification: unknown) => unknown) | undefined;
    handlers.set(LIST_CHANGED, (notification: unknown) => {
      if (watch.active) this.#listChanged(server, client);
      return previous?.(notification);
    });
    const previousOnclose = client.onclose;
    client.onclose = () => {
      try {
        if (watch.active) this.#native.invalidate(server, 'connection_closed');
      } finally {
        previousOnclose?.call(client);
      }
    };
  }

  /** Clears `server`'s resources and templates together; a refresh in flight is discarded. */
  invalidate(server: string, reason: InvalidateReason = 'other'): void {
    this.#call(server, () => this.#native.invalidate(server, reason));
  }

  /** Forgets `server` (entries, watch, client); a refresh in flight is discarded. Returns whether it was known. */
  remove(server: string): boolean {
    this.#unwatch(server);
    return this.#call(server, () => this.#native.remove(server));
  }

  /** Forgets every server. */
  clear(): void {
    for (const server of [...this.#watches.keys(), ...this.#clients.keys()]) this.#unwatch(server);
    this.#native.clear();
  }

  /** The registered servers, in registration order. */
  servers(): string[] {
    return this.#native.servers();
  }

  /** Registers a server without refreshing it (idempotent); the tool lists servers in registration order. */
  addServer(server: string): void {
    this.#call(server, () => this.#native.addServer(server));
  }

  /** Cached templates: every server's in registration order, or one server's. */
  templates(options: { server?: string } = {}): ResourceTemplate[] {
    const { server } = options;
    return JSON.parse(this.#call(server ?? '', () => this.#native.templates(server))) as ResourceTemplate[];
  }

  /** Cached resources: every server's in registration order, or one server's. */
  resources(options: { server?: string } = {}): Resource[] {
    const { server } = options;
    return JSON.parse(this.#call(server ?? '', () => this.#native.resources(server))) as Resource[];
  }

  /** `server`'s status at `now` (default: now). Throws `unknown_server` for a server never added. */
  status(server: string, now: number = performance.now()): ServerStatus {
    return JSON.parse(this.#call(server, () => this.#native.status(server, now))) as ServerStatus;
  }

  /** True when `server` has no current pair at `now` and no refresh is running. */
  needsRefresh(server: string, now: number = performance.now()): boolean {
    return this.#call(server, () => this.#native.needsRefresh(server, now));
  }

  /**
   * Answers `ListMcpResourceTemplatesTool`: `args` is the model's input (an object, or its JSON
   * text). Returns the compact JSON output; throws `McplensError` `unknown_server` (naming the
   * available servers), `invalid_argument` or `output_too_large` (never truncated).
   */
  callListTemplatesTool(args?: ListTemplatesToolInput | Readonly<Record<string, unknown>> | string | null): string {
    return this.#tool(args, (input) => this.#native.callListTemplatesTool(input));
  }

  /** Answers `ListMcpResourcesTool`, the concrete-resources twin (same input, paging, failures and cap). */
  callListResourcesTool(args?: ListTemplatesToolInput | Readonly<Record<string, unknown>> | string | null): string {
    return this.#tool(args, (input) => native.callListResourcesTool(this.#native, input));
  }

  /**
   * Every cached template `uri` fits, with the values, most specific first (then in catalog order):
   * route a read to `matches[0].server`. Throws `invalid_argument` for a URI over 8,192 bytes.
   */
  matchUri(uri: string): CatalogMatches {
    return JSON.parse(this.#call('', () => native.catalogMatchUri(this.#native, uri))) as CatalogMatches;
  }

  /** Resolves once no refresh of `server` (or of any server) is running or waiting. */
  async settled(server?: string): Promise<void> {
    for (;;) {
      const slots = server === undefined ? [...this.#slots.values()] : [this.#slots.get(server)];
      const tails = slots.filter((s) => s !== undefined).map((s) => s.tail);
      if (tails.length === 0) return;
      await Promise.allSettled(tails);
    }
  }

  // --- sans-IO: for hosts that run their own traversals (`Pager`) and read their own clock ---

  /** Starts a refresh of `server` (registering it): its newest ticket; older tickets' commits are discarded. */
  beginRefresh(server: string): RefreshTicket {
    const ticket = new RefreshTicket(server);
    TICKETS.set(ticket, this.#call(server, () => this.#native.beginRefresh(server)));
    return ticket;
  }

  /**
   * Applies a complete refresh: both listings at once. The listings must be ones this package
   * returned (`Pager.finish`, `listResources`, `listResourceTemplates`): they are committed as the
   * core produced them, never re-validated. `now` starts the `ttlMs` clock.
   */
  commit(
    ticket: RefreshTicket,
    resources: Listing<Resource>,
    templates: Listing<ResourceTemplate>,
    now: number = performance.now(),
  ): Completion {
    const server = String(ticket?.server);
    const t = this.#ticket(ticket);
    const r = nativeOf(resources);
    const p = nativeOf(templates);
    if (r === undefined || p === undefined) {
      throw new McplensError(
        'invalid_argument',
        server,
        `server "${server}": invalid argument: commit takes listings returned by mcplens (Pager.finish, listResources, listResourceTemplates)`,
      );
    }
    return this.#call(server, () => this.#native.commit(t, r, p, now));
  }

  /** Records a failed refresh (usually a `McplensError`'s `code` and `message`); the previous pair is kept. */
  fail(ticket: RefreshTicket, failure: Failure): Completion {
    const server = String(ticket?.server);
    const t = this.#ticket(ticket);
    return this.#call(server, () => this.#native.fail(t, failure.code, failure.message));
  }

  /** Ends a refresh that will not complete (cancelled, host failure) without changing data. */
  abandon(ticket: RefreshTicket): Completion {
    const t = this.#ticket(ticket);
    return this.#native.abandon(t);
  }

  /** A list_changed from `server`: invalidates it and says whether to refresh now (`beginRefresh` before the next notification). */
  onListChanged(server: string): ListChangedDecision {
    return this.#call(server, () => this.#native.onListChanged(server)) as ListChangedDecision;
  }

  // --- internals ---

  /** Either listing tool on the model's input (an object, or its JSON text). */
  #tool(args: unknown, f: (input: string) => string): string {
    const asked = typeof args === 'object' && args !== null ? (args as { server?: unknown }).server : undefined;
    const server = typeof asked === 'string' ? asked : '';
    let input: string;
    try {
      input = typeof args === 'string' ? args : (JSON.stringify(args ?? null) ?? 'null');
    } catch {
      throw new McplensError('invalid_argument', server, 'invalid input: the input is not a JSON object');
    }
    return this.#call(server, () => f(input));
  }

  #ticket(ticket: RefreshTicket): native.NativeTicket {
    const t = TICKETS.get(ticket);
    if (t === undefined) {
      const server = String(ticket?.server);
      throw new McplensError('invalid_argument', server, `server "${server}": invalid argument: not a ticket from beginRefresh`);
    }
    return t;
  }

  #call<T>(server: string, f: () => T): T {
    try {
      return f();
    } catch (e) {
      rethrow(e, server);
    }
  }

  #unwatch(server: string): void {
    const watch = this.#watches.get(server);
    if (watch !== undefined) watch.active = false;
    this.#watches.delete(server);
    this.#clients.delete(server);
  }

  /** The list_changed handler's part: never throws into the SDK. */
  #listChanged(server: string, client: McpClient): void {
    let decision: string;
    try {
      decision = this.#native.onListChanged(server);
    } catch {
      return;
    }
    // Queued / already_queued: the running refresh's completion says refreshAgain.
    if (decision === 'refresh_now') this.#schedule(server, client).catch(() => {});
  }

  /** Runs a refresh now, or once the running one is over (joining an already waiting one). */
  #schedule(server: string, client: McpClient): Promise<ServerStatus> {
    const slot = this.#slots.get(server);
    if (slot === undefined) {
      const fresh = {} as Slot;
      this.#slots.set(server, fresh);
      fresh.tail = this.#run(server, client, fresh);
      return fresh.tail;
    }
    if (slot.next !== undefined) {
      slot.next.client = client;
      return slot.next.promise;
    }
    let start!: () => void;
    const promise = new Promise<ServerStatus>((resolve, reject) => {
      start = () => this.#run(server, next.client, slot).then(resolve, reject);
    });
    const next = { client, promise, start };
    slot.next = next;
    slot.tail = promise;
    return promise;
  }

  /** One refresh plus the follow-ups the core asks for; then hands the slot to the waiting refresh. */
  async #run(server: string, client: McpClient, slot: Slot): Promise<ServerStatus> {
    try {
      for (;;) {
        const ticket = this.#native.beginRefresh(server);
        const { completion, failed, error } = await this.#once(ticket, server, client);
        if (completion.refreshAgain) {
          client = this.#clients.get(server) ?? client;
          // A closed connection (the SDK unsets `transport`) has been invalidated: nothing to ask.
          if (!('transport' in client && client.transport === undefined)) continue;
        }
        if (failed) throw error;
        return this.status(server);
      }
    } finally {
      const next = slot.next;
      slot.next = undefined;
      if (next !== undefined) next.start();
      else if (this.#slots.get(server) === slot) this.#slots.delete(server);
    }
  }

  /**
   * Resources, then templates (as the Rust and Python drivers do, so every language records the same
   * error); commit both, or fail with the first error.
   */
  async #once(
    ticket: native.NativeTicket,
    server: string,
    client: McpClient,
  ): Promise<{ completion: native.Completion; failed: boolean; error?: unknown }> {
    const options = { server, limits: this.#limits };
    let resources: native.NativeListing;
    let templates: native.NativeListing;
    try {
      resources = await traverse('resources', client, options);
      templates = await traverse('resource_templates', client, options);
    } catch (error) {
      // Not a traversal's failure (a bug or a broken client in the host): the refresh is abandoned.
      if (!(error instanceof McplensError)) return { completion: this.#native.abandon(ticket), failed: true, error };
      return { completion: this.#native.fail(ticket, error.code, error.message), failed: true, error };
    }
    const completion = this.#call(server, () => this.#native.commit(ticket, resources, templates, performance.now()));
    return { completion, failed: false };
  }
}
