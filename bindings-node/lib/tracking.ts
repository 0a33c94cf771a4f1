/**
 * Server tracking: `track(server, tracker)` makes every `initialize`, `tools/*`, `resources/*` and
 * `prompts/*` request of an `@modelcontextprotocol/sdk` 1.x `Server` (or `McpServer`) an event,
 * exported off the request path to a JSONL file (default), OTLP/HTTP, an MCPcat-compatible API or
 * a JS callback.
 *
 * Every rule (the event, redaction, caps, sessions ids, the queue, batching, retries, the wire
 * formats) is the Rust core's (`mcplens::tracking`). This facade patches the server instance it is
 * given, reads the clock, and hands the core raw parts: numbers, and the params (and, when captured,
 * the result) as the JSON text `JSON.stringify` makes.
 */
import { performance } from 'node:perf_hooks';

import * as native from '../index.js';
import { McplensError, type ErrorCode } from './discovery.js';

// The request path makes one native call per request, without arguments: its numbers go through
// this thread's scratch and its text through this thread's text buffer (both native memory).
const record = native.trackingRecord;
const recordText = native.trackingRecordText;
const SLOTS = native.trackingScratch();
const TEXT = native.trackingTextBuffer();
const ENCODER = new TextEncoder();
const F_TOOL_ERROR = 1;
const F_ERROR = 2;
const F_RESULT = 4;
const F_ID_TEXT = 8;
const F_PARAMS = 16;

/** Hands one request's raw parts to the core (see `trackingRecord` in `src/tracking.rs`). */
function put(
  handle: number,
  key: number,
  code: number,
  id: unknown,
  started: number,
  duration: number,
  params: string | undefined,
  flags: number,
  rpcCode: number,
  rest: string,
): void {
  let idText = '';
  if (typeof id === 'number') SLOTS[3] = id;
  else {
    SLOTS[3] = NaN;
    if (typeof id === 'string' && !id.includes('\0')) {
      idText = id;
      flags |= F_ID_TEXT;
    }
  }
  SLOTS[0] = handle;
  SLOTS[1] = key;
  SLOTS[2] = code;
  SLOTS[4] = started;
  SLOTS[5] = duration;
  SLOTS[7] = rpcCode;
  if (params !== undefined) flags |= F_PARAMS;
  SLOTS[6] = flags;
  const text = `${params ?? ''}\0${idText}\0${rest}`;
  const { read, written } = ENCODER.encodeInto(text, TEXT);
  if (read === text.length) {
    SLOTS[8] = written;
    record();
  } else {
    recordText(text); // over 64 KiB
  }
}

/** A tracked MCP request as exported (schema 1, `docs/events.md`). */
export interface TrackedEvent {
  schema: number;
  /** `evt_…` */
  id: string;
  /** `mcp:` + the method, e.g. `mcp:resources/read`. */
  type: string;
  /** When the request started (RFC 3339, UTC, milliseconds). */
  timestamp: string;
  durationMs: number;
  /** `ses_…`, one per connection. */
  sessionId: string;
  requestId?: number | string;
  protocolVersion?: string;
  client?: { name: string; version?: string };
  server?: { name: string; version?: string };
  transport?: 'stdio' | 'http' | 'memory';
  /** The URI (resources/read, subscribe, unsubscribe), tool name (tools/call) or prompt name (prompts/get). */
  resourceName?: string;
  parameters?: unknown;
  response?: unknown;
  isError: boolean;
  error?: { code?: number; type: string; message: string };
  identity?: Identity;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  truncated: Array<{ path: string; reason: string; originalBytes?: number }>;
}

/** Who is behind a session, as the `identify` hook says. */
export interface Identity {
  id?: string;
  name?: string;
  data?: unknown;
}

/** Where events go: made by `jsonlExporter`, `otlpExporter`, `mcpcatExporter`, `callbackExporter`. */
export interface Exporter {
  readonly kind: 'jsonl' | 'otlp' | 'mcpcat' | 'callback';
}

interface Spec extends Exporter {
  path?: string;
  endpoint?: string;
  headers?: Array<[string, string]>;
  projectId?: string;
  baseUrl?: string;
  apiKey?: string;
  fn?: (events: TrackedEvent[]) => unknown;
}

const SPECS = new WeakSet<object>();

function spec(s: Spec): Exporter {
  const frozen = Object.freeze(s);
  SPECS.add(frozen);
  return frozen;
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value !== undefined && typeof value !== 'string') throw new TypeError(`${what} must be a string`);
  return value;
}

function requiredString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${what} must be a non-empty string`);
  return value;
}

function options<T extends object>(value: T | undefined, what: string, keys: ReadonlyArray<keyof T & string>): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) throw new TypeError(`${what} takes an options object`);
  for (const k of Object.keys(value)) {
    if (!keys.includes(k as keyof T & string)) throw new TypeError(`${what}: unknown option "${k}"`);
  }
  return value;
}

/** JSON lines appended to `path` (default `mcplens-events.jsonl` in the working directory), rotated by size. */
export function jsonlExporter(opts?: { path?: string }): Exporter {
  const o = options(opts, 'jsonlExporter', ['path']);
  const path = optionalString(o.path, 'jsonlExporter: path');
  return spec(path === undefined ? { kind: 'jsonl' } : { kind: 'jsonl', path });
}

/**
 * OTLP/HTTP protobuf: spans to `{endpoint}/v1/traces` and the `mcp.server.operation.duration`
 * histogram to `{endpoint}/v1/metrics` (OpenTelemetry MCP semantic conventions).
 */
export function otlpExporter(opts: { endpoint: string; headers?: Record<string, string> }): Exporter {
  const o = options(opts, 'otlpExporter', ['endpoint', 'headers']);
  const endpoint = requiredString(o.endpoint, 'otlpExporter: endpoint');
  const headers: Array<[string, string]> = [];
  if (o.headers !== undefined) {
    if (typeof o.headers !== 'object' || o.headers === null) throw new TypeError('otlpExporter: headers must be an object');
    for (const [k, v] of Object.entries(o.headers)) headers.push([k, requiredString(v, `otlpExporter: header "${k}"`)]);
  }
  return spec({ kind: 'otlp', endpoint, headers });
}

/** The MCPcat-compatible events API: `POST {baseUrl}/v1/public/events/` (default `https://api.mcpcat.io`). */
export function mcpcatExporter(opts: { projectId: string; baseUrl?: string; apiKey?: string }): Exporter {
  const o = options(opts, 'mcpcatExporter', ['projectId', 'baseUrl', 'apiKey']);
  const s: Spec = { kind: 'mcpcat', projectId: requiredString(o.projectId, 'mcpcatExporter: projectId') };
  const baseUrl = optionalString(o.baseUrl, 'mcpcatExporter: baseUrl');
  const apiKey = optionalString(o.apiKey, 'mcpcatExporter: apiKey');
  if (baseUrl !== undefined) s.baseUrl = baseUrl;
  if (apiKey !== undefined) s.apiKey = apiKey;
  return spec(s);
}

/**
 * `fn(events)` on the JS thread, off the request path, one batch (≤ 512 events or 1 s) at a time;
 * the next batch waits until the returned promise settles. A throw or rejection counts the batch
 * as failed.
 */
export function callbackExporter(fn: (events: TrackedEvent[]) => void | Promise<void>): Exporter {
  if (typeof fn !== 'function') throw new TypeError('callbackExporter takes a function');
  return spec({ kind: 'callback', fn });
}

/** Options of `new Tracker`. */
export interface TrackerOptions {
  /** Where events go (default: one `jsonlExporter()`). */
  exporters?: Exporter[];
  /** `false`: no events at all; `track` leaves the server untouched (default true). */
  enableTracing?: boolean;
  /** Keep request params in events (default true). */
  captureParameters?: boolean;
  /** Keep results in events (default true); when off, results are not even serialized. */
  captureResponses?: boolean;
  /** Keep the text of `resources/read` contents (default false: size and SHA-256 only). */
  captureResourceText?: boolean;
  /**
   * Applied to every string of every event after the built-in redaction, on the JS thread off the
   * request path (one call into JS per event; the core's event builder waits for it, at most 5 s).
   * A throw, a rejection, a non-string or the timeout drops the event (counted `redactionFailed`).
   */
  redact?: (text: string) => string | Promise<string>;
  /**
   * Who is behind a session: called off the request path with the session's first request (the
   * raw JSON-RPC request and the SDK's `extra`) until it returns an identity; that request's event
   * and every later one of the session carry it.
   */
  identify?: (request: JsonRpcRequest, extra: unknown) => Identity | null | undefined | Promise<Identity | null | undefined>;
  /** Operations waiting to become events (default 10,000); the oldest are dropped beyond it. */
  queueCapacity?: number;
}

/** Counters of one exporter. */
export interface ExporterStats {
  name: string;
  exported: number;
  dropped: number;
  failed: number;
  pending: number;
}

/** Counters of a tracker (see `docs/events.md` and the core's `Stats`). */
export interface TrackerStats {
  /** Operations accepted. */
  recorded: number;
  /** Dropped before becoming events (queue full, or recorded after shutdown). */
  dropped: number;
  /** Dropped by an event hook. */
  filtered: number;
  /** Dropped because the `redact` hook failed. */
  redactionFailed: number;
  /** Waiting to become events. */
  queued: number;
  exporters: ExporterStats[];
}

/** The raw JSON-RPC request a handler in the SDK's map receives. */
export interface JsonRpcRequest {
  jsonrpc?: '2.0';
  id: number | string;
  method: string;
  params?: Record<string, unknown>;
}

type Dispatch = (kind: string, index: number, ticket: number, payload: string) => void;

/** The native tracker, built at the first `track()` (it needs the server's `serverInfo`). */
interface Core {
  handle: number;
  enabled: boolean;
  captureResponses: boolean;
  identify: TrackerOptions['identify'];
  server: string;
  /** `identify` calls in progress; their sessions' records wait for them. */
  identifying: Set<Promise<void>>;
}

interface State {
  options: TrackerOptions;
  exporters: Spec[];
  core: Core | undefined;
  closed: boolean;
  /** `stats().recorded` at the last exit flush. */
  exitFlushed: number;
}

const STATES = new WeakMap<Tracker, State>();

const OPTION_KEYS: ReadonlyArray<keyof TrackerOptions> = [
  'exporters',
  'enableTracing',
  'captureParameters',
  'captureResponses',
  'captureResourceText',
  'redact',
  'identify',
  'queueCapacity',
];

function optionalBoolean(value: unknown, what: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`Tracker: ${what} must be a boolean`);
  return value;
}

function optionalFunction(value: unknown, what: string): void {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`Tracker: ${what} must be a function`);
}

/** Trackers with a live native tracker, flushed at `beforeExit`. */
const LIVE = new Set<Tracker>();
/** How long the `beforeExit` flush may take. */
const EXIT_FLUSH_MS = 2_000;
let exitHookInstalled = false;

async function flushAtExit(): Promise<void> {
  const work: Array<Promise<void>> = [];
  for (const t of LIVE) {
    const state = STATES.get(t);
    if (state?.core === undefined) continue;
    const recorded = t.stats().recorded;
    if (recorded === state.exitFlushed) continue; // nothing new: let the process exit
    state.exitFlushed = recorded;
    work.push(t.flush(EXIT_FLUSH_MS));
  }
  await Promise.allSettled(work);
}

/** Waits (at most `timeoutMs`) for `identify` calls in progress, whose records wait for them; the time left. */
async function identified(core: Core, timeoutMs: number): Promise<number> {
  if (core.identifying.size === 0) return timeoutMs;
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([...core.identifying]),
    new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, timeoutMs)))),
  ]);
  clearTimeout(timer);
  return Math.max(0, timeoutMs - (performance.now() - start));
}

function settle(state: State, outcome: native.Settled): void {
  if (!outcome.ok) {
    throw new McplensError((outcome.code ?? 'timeout') as ErrorCode, state.core?.server ?? '', outcome.message ?? 'tracking failed');
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * A tracker: options, exporters and counters shared by every server tracked with it. The native
 * tracker (its threads, the JSONL file, HTTP clients) starts at the first `track()`, which gives
 * it the server's `serverInfo`.
 */
export class Tracker {
  constructor(opts: TrackerOptions = {}) {
    const o = options(opts, 'Tracker', OPTION_KEYS);
    for (const k of ['enableTracing', 'captureParameters', 'captureResponses', 'captureResourceText'] as const) {
      optionalBoolean(o[k], k);
    }
    optionalFunction(o.redact, 'redact');
    optionalFunction(o.identify, 'identify');
    if (o.queueCapacity !== undefined && !(Number.isSafeInteger(o.queueCapacity) && o.queueCapacity > 0)) {
      throw new TypeError('Tracker: queueCapacity must be a positive integer');
    }
    let exporters: Spec[] = [];
    if (o.exporters !== undefined) {
      if (!Array.isArray(o.exporters)) throw new TypeError('Tracker: exporters must be an array');
      exporters = o.exporters.map((e) => {
        if (!SPECS.has(e)) throw new TypeError('Tracker: exporters are made by jsonlExporter, otlpExporter, mcpcatExporter or callbackExporter');
        return e as Spec;
      });
    }
    STATES.set(this, { options: { ...o }, exporters, core: undefined, closed: false, exitFlushed: 0 });
  }

  /**
   * Resolves once everything recorded so far is exported, dropped or failed; rejects with
   * `McplensError` `timeout` after `timeoutMs` (default 5,000).
   */
  async flush(timeoutMs = 5_000): Promise<void> {
    const state = STATES.get(this)!;
    if (state.core === undefined || !state.core.enabled) return;
    const left = await identified(state.core, timeoutMs);
    settle(state, await native.trackingFlush(state.core.handle, left));
  }

  /**
   * Stops accepting events and delivers what is queued within `timeoutMs` (default 5,000); rejects
   * with `McplensError` `timeout` if some could not be. Idempotent; servers stay tracked as
   * pass-throughs.
   */
  async shutdown(timeoutMs = 5_000): Promise<void> {
    const state = STATES.get(this)!;
    state.closed = true;
    LIVE.delete(this);
    if (state.core === undefined || !state.core.enabled) return;
    const left = await identified(state.core, timeoutMs);
    settle(state, await native.trackingShutdown(state.core.handle, left));
  }

  /** The counters (all zero before the first `track()`). */
  stats(): TrackerStats {
    const state = STATES.get(this)!;
    if (state.core === undefined || !state.core.enabled) {
      return { recorded: 0, dropped: 0, filtered: 0, redactionFailed: 0, queued: 0, exporters: [] };
    }
    return native.trackingStats(state.core.handle);
  }
}

/** The native tracker of `tracker`, built now if needed with this server's `serverInfo`. */
function coreOf(tracker: Tracker, serverInfo: unknown): Core {
  const state = STATES.get(tracker)!;
  if (state.core !== undefined) return state.core;
  const o = state.options;
  const info = serverInfo as { name?: unknown; version?: unknown } | undefined;
  const server = typeof info?.name === 'string' ? info.name : '';
  if (o.enableTracing === false || state.closed) {
    state.core = { handle: -1, enabled: false, captureResponses: false, identify: undefined, server, identifying: new Set() };
    return state.core;
  }
  const callbacks: Array<(events: TrackedEvent[]) => unknown> = [];
  const exporters = state.exporters.map((e) => {
    const { fn, ...rest } = e;
    if (fn === undefined) return rest;
    callbacks.push(fn);
    return { kind: 'callback', index: callbacks.length - 1 };
  });
  const config = {
    enableTracing: true,
    captureParameters: o.captureParameters ?? true,
    captureResponses: o.captureResponses ?? true,
    captureResourceText: o.captureResourceText ?? false,
    queueCapacity: o.queueCapacity,
    server:
      server === '' ? undefined : { name: server, version: typeof info?.version === 'string' ? info.version : undefined },
    redact: o.redact !== undefined,
    exporters,
  };
  const redact = o.redact;
  const dispatch: Dispatch = (kind, index, ticket, payload) => {
    void answer(kind, index, payload).then(
      (out) => native.trackingReply(ticket, true, out),
      (e: unknown) => native.trackingReply(ticket, false, messageOf(e)),
    );
  };
  async function answer(kind: string, index: number, payload: string): Promise<string> {
    if (kind === 'export') {
      await callbacks[index]!(JSON.parse(payload) as TrackedEvent[]);
      return '';
    }
    const strings = JSON.parse(payload) as string[];
    const out: string[] = [];
    for (const s of strings) {
      const r = redact!(s);
      const v = typeof r === 'string' ? r : await r;
      if (typeof v !== 'string') throw new TypeError('redact must return a string');
      out.push(v);
    }
    return JSON.stringify(out);
  }
  let handle: number;
  try {
    handle = native.trackingCreate(JSON.stringify(config), callbacks.length > 0 || redact !== undefined ? dispatch : undefined);
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    throw new McplensError(typeof code === 'string' ? (code as ErrorCode) : 'invalid_argument', server, messageOf(e), { cause: e });
  }
  state.core = {
    handle,
    enabled: true,
    captureResponses: config.captureResponses,
    identify: o.identify,
    server,
    identifying: new Set(),
  };
  LIVE.add(tracker);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('beforeExit', () => void flushAtExit());
  }
  return state.core;
}

let defaultTracker: Tracker | undefined;

// ---------------------------------------------------------------------------------------------
// Patching a server instance.

type Handler = (request: JsonRpcRequest, extra: Extra | undefined) => Promise<unknown>;

interface Extra {
  sessionId?: string;
  requestInfo?: unknown;
}

/** The parts of an SDK `Server` (ESM or CommonJS build; never its class) that tracking uses. */
interface LowLevelServer {
  _requestHandlers: Map<string, Handler>;
  _serverInfo?: unknown;
  _onclose?: (...args: unknown[]) => unknown;
  transport?: unknown;
  getClientVersion(): { name?: string; version?: string } | undefined;
  setRequestHandler: unknown;
  [TRACKED]?: ServerState;
}

interface SessionState {
  key: number;
  sid: string | undefined;
  clientKnown: boolean;
  identified: boolean;
  /** Records waiting for the `identify` hook (then this session's events carry the identity). */
  deferred: Array<() => void> | undefined;
}

interface ServerState {
  core: Core;
  server: LowLevelServer;
  session: SessionState | undefined;
}

const TRACKED: unique symbol = Symbol.for('mcplens.tracked') as never;
const ORIGINAL = Symbol.for('mcplens.original');

const CODES = new Map(native.trackingMethods().map((m, i) => [m, i] as const));
const INITIALIZE = CODES.get('initialize')!;
const TOOLS_CALL = CODES.get('tools/call')!;
const TIME_ORIGIN = performance.timeOrigin;

function isLowLevel(x: unknown): x is LowLevelServer {
  const s = x as Partial<LowLevelServer> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    s._requestHandlers instanceof Map &&
    typeof s.setRequestHandler === 'function' &&
    typeof s.getClientVersion === 'function'
  );
}

function transportOf(server: LowLevelServer, extra: Extra | undefined): string | undefined {
  if (extra?.requestInfo !== undefined) return 'http';
  const name = (server.transport as { constructor?: { name?: string } } | undefined)?.constructor?.name ?? '';
  if (/stdio/i.test(name)) return 'stdio';
  if (/memory/i.test(name)) return 'memory';
  if (/http|sse/i.test(name)) return 'http';
  return undefined;
}

/** The session of this request: one per transport session id, else one per server instance. */
function sessionOf(state: ServerState, request: JsonRpcRequest, extra: Extra | undefined): SessionState {
  const sid = extra?.sessionId;
  let s = state.session;
  if (s === undefined || s.sid !== sid) {
    const handle = state.core.handle;
    if (s !== undefined) native.trackingCloseSession(handle, s.key);
    s = { key: native.trackingOpenSession(handle, sid, transportOf(state.server, extra)), sid, clientKnown: false, identified: false, deferred: undefined };
    state.session = s;
  }
  const identify = state.core.identify;
  if (identify !== undefined && !s.identified && s.deferred === undefined) startIdentify(state, s, identify, request, extra);
  return s;
}

function startIdentify(
  state: ServerState,
  s: SessionState,
  identify: NonNullable<TrackerOptions['identify']>,
  request: JsonRpcRequest,
  extra: Extra | undefined,
): void {
  const deferred: Array<() => void> = [];
  s.deferred = deferred;
  const pending = state.core.identifying;
  const done = new Promise<void>((resolve) =>
    setImmediate(async () => {
      try {
        const identity = await identify(request, extra);
        if (identity !== null && identity !== undefined && typeof identity === 'object') {
          native.trackingIdentify(state.core.handle, s.key, JSON.stringify(identity));
          s.identified = true;
        }
      } catch {
        // A failing hook identifies nobody; it is asked again with the session's next request.
      }
      s.deferred = undefined;
      for (const record of deferred) record();
      pending.delete(done);
      resolve();
    }),
  );
  pending.add(done);
}

function noteClient(state: ServerState, s: SessionState, protocolVersion: unknown): void {
  const info = state.server.getClientVersion();
  if (info === undefined && protocolVersion === undefined) return;
  native.trackingSessionClient(
    state.core.handle,
    s.key,
    typeof info?.name === 'string' ? info.name : undefined,
    typeof info?.version === 'string' ? info.version : undefined,
    typeof protocolVersion === 'string' ? protocolVersion : undefined,
  );
  s.clientKnown = info !== undefined;
}

function succeeded(state: ServerState, code: number, request: JsonRpcRequest, extra: Extra | undefined, t0: number, t1: number, result: unknown): void {
  try {
    const core = state.core;
    const s = sessionOf(state, request, extra);
    if (code === INITIALIZE) noteClient(state, s, (result as { protocolVersion?: unknown } | undefined)?.protocolVersion);
    else if (!s.clientKnown) noteClient(state, s, undefined);
    const params = request.params === undefined ? undefined : JSON.stringify(request.params);
    let text = '';
    let flags = 0;
    if (core.captureResponses) {
      try {
        const json = JSON.stringify(result);
        if (json !== undefined) {
          text = json;
          flags = F_RESULT;
        }
      } catch {
        // Not JSON (a cycle, a BigInt): the event goes without a response.
      }
    } else if (code === TOOLS_CALL && (result as { isError?: unknown } | null | undefined)?.isError === true) {
      flags = F_TOOL_ERROR;
    }
    const id = request.id;
    const started = TIME_ORIGIN + t0;
    if (s.deferred !== undefined) {
      const key = s.key;
      s.deferred.push(() => put(core.handle, key, code, id, started, t1 - t0, params, flags, 0, text));
    } else {
      put(core.handle, s.key, code, id, started, t1 - t0, params, flags, 0, text);
    }
  } catch {
    // Tracking never breaks the server.
  }
}

function failed(state: ServerState, code: number, request: JsonRpcRequest, extra: Extra | undefined, t0: number, t1: number, error: unknown): void {
  try {
    const h = state.core.handle;
    const s = sessionOf(state, request, extra);
    if (!s.clientKnown && code !== INITIALIZE) noteClient(state, s, undefined);
    const params = request.params === undefined ? undefined : JSON.stringify(request.params);
    // What the SDK answers the client with.
    const e = error as { code?: unknown; message?: unknown } | null | undefined;
    const rpc = Number.isSafeInteger(e?.code) ? (e!.code as number) : -32603;
    let message = String(e?.message ?? 'Internal error');
    // McpError prefixes its message with the code, which the event carries apart.
    const prefix = `MCP error ${rpc}: `;
    if (message.startsWith(prefix)) message = message.slice(prefix.length);
    const id = request.id;
    const started = TIME_ORIGIN + t0;
    const key = s.key;
    const send = (): void => put(h, key, code, id, started, t1 - t0, params, F_ERROR, rpc, message);
    if (s.deferred !== undefined) s.deferred.push(send);
    else send();
  } catch {
    // Tracking never breaks the server.
  }
}

/** `handler` wrapped when `method` is tracked; the same function otherwise. */
function wrap(state: ServerState, method: string, handler: Handler): Handler {
  const code = CODES.get(method);
  if (code === undefined || typeof handler !== 'function' || ORIGINAL in handler) return handler;
  const tracked: Handler = async (request, extra) => {
    const t0 = performance.now();
    let result: unknown;
    try {
      result = await handler(request, extra);
    } catch (error) {
      failed(state, code, request, extra, t0, performance.now(), error);
      throw error; // unchanged (an McpError keeps its code)
    }
    succeeded(state, code, request, extra, t0, performance.now(), result);
    return result; // the handler's own object
  };
  Object.defineProperty(tracked, ORIGINAL, { value: handler });
  return tracked;
}

/**
 * Tracks `server`: an `@modelcontextprotocol/sdk` 1.x low-level `Server`, or an `McpServer` (its
 * `.server` is patched), before or after its handlers are registered, with `tracker` (default: one
 * shared `new Tracker()`, JSONL to `./mcplens-events.jsonl`). Returns `server`. Idempotent.
 *
 * Only this instance is patched: every handler in its request-handler map is wrapped, and the
 * map's own `set` wraps handlers registered later (`setRequestHandler`, McpServer's lazy
 * registrations). Results are returned and errors rethrown unchanged.
 */
export function track<S>(server: S, tracker?: Tracker): S {
  let low: LowLevelServer;
  if (isLowLevel(server)) low = server;
  else if (typeof server === 'object' && server !== null && isLowLevel((server as { server?: unknown }).server)) {
    low = (server as unknown as { server: LowLevelServer }).server;
  } else {
    throw new TypeError('track() takes an @modelcontextprotocol/sdk Server or McpServer instance');
  }
  if (tracker !== undefined && !(tracker instanceof Tracker)) throw new TypeError('track(): tracker must be a Tracker');
  if (low[TRACKED] !== undefined) return server;
  const core = coreOf(tracker ?? (defaultTracker ??= new Tracker()), low._serverInfo);
  const state: ServerState = { core, server: low, session: undefined };
  Object.defineProperty(low, TRACKED, { value: state });
  if (!core.enabled) return server; // enableTracing: false: a pass-through, nothing installed

  const map = low._requestHandlers;
  for (const [method, handler] of map) {
    const wrapped = wrap(state, method, handler);
    if (wrapped !== handler) map.set(method, wrapped);
  }
  const set = map.set;
  Object.defineProperty(map, 'set', {
    configurable: true,
    writable: true,
    value(this: Map<string, Handler>, method: string, handler: Handler) {
      return set.call(this, method, wrap(state, method, handler));
    },
  });
  const onclose = low._onclose;
  if (typeof onclose === 'function') {
    low._onclose = function (this: unknown, ...args: unknown[]) {
      const s = state.session;
      state.session = undefined;
      if (s !== undefined) {
        try {
          native.trackingCloseSession(core.handle, s.key);
        } catch {
          // Tracking never breaks the server.
        }
      }
      return onclose.apply(this, args);
    };
  }
  return server;
}
