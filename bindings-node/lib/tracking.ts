/**
 * Server tracking: `track(server, tracker)` makes every tracked request (`initialize`, `ping`,
 * `tools/*`, `resources/*`, `prompts/*`, `completion/complete`, `logging/setLevel`, `tasks/*`,
 * `server/discover`, `subscriptions/listen`) of an MCP SDK `Server` or `McpServer` (1.x or v2) an
 * event, exported off the request path to a JSONL file (default), OTLP/HTTP, the agentcat (MCPcat)
 * API or a JS callback; v2's per-request factories, `createMcpHandler` handlers and `serveStdio`
 * transports are tracked too. Hosts that drive the tracker themselves use `Tracker.openSession()`
 * and `TrackingSession.record()`.
 *
 * Every rule (the configuration and its checks, the event, redaction, caps, session ids, identify,
 * the queue, batching, retries, the wire formats) is the Rust core's (`mcplens::tracking`). This
 * facade patches the server instance it is given, reads the clock, and hands the core raw parts:
 * numbers, and the params (and, when captured, the result) as the JSON text `JSON.stringify` makes.
 */
import { performance } from 'node:perf_hooks';

import * as native from '../native.js';
import { McplensError, type ErrorCode } from './discovery.js';

// The request path makes one native call per request, without arguments: its numbers go through
// this thread's scratch and its text through this thread's text buffer (both native memory), laid
// out as the addon defines (its slot and flag constants).
const record = native.trackingRecord;
const recordText = native.trackingRecordText;
const SLOTS = native.trackingScratch();
const TEXT = native.trackingTextBuffer();
const ENCODER = new TextEncoder();
const { S_HANDLE, S_SESSION, S_METHOD, S_ID, S_STARTED_MS, S_DURATION_MS, S_FLAGS, S_CODE, S_TEXT_LEN } = native;
const { F_ERROR, F_ID_TEXT, F_HOST_SPAN, OTHER_METHOD, ANSWERED_MAX } = native;

/** Hands one request's raw parts to the core (see `trackingRecord` in `src/tracking.rs`). */
function put(
  handle: number,
  key: number,
  code: number,
  method: string,
  hostSpan: string | undefined,
  id: unknown,
  started: number,
  duration: number,
  params: string | undefined,
  flags: number,
  rpcCode: number,
  rest: string,
): void {
  let idText = '';
  if (typeof id === 'number') SLOTS[S_ID] = id;
  else {
    SLOTS[S_ID] = NaN;
    if (typeof id === 'string' && !id.includes('\0')) {
      idText = id;
      flags |= F_ID_TEXT;
    }
  }
  SLOTS[S_HANDLE] = handle;
  SLOTS[S_SESSION] = key;
  SLOTS[S_METHOD] = code;
  SLOTS[S_STARTED_MS] = started;
  SLOTS[S_DURATION_MS] = duration;
  SLOTS[S_CODE] = rpcCode;
  if (hostSpan !== undefined) flags |= F_HOST_SPAN;
  SLOTS[S_FLAGS] = flags;
  // Each part encoded in place (no joined string to build and flatten); -1 once one does not fit.
  // The host's span goes first (48 hex digits), then another method than the core's own by its
  // name (a NUL in it would cut the parts).
  const name = code === OTHER_METHOD ? method.replaceAll('\0', '') : undefined;
  let at = hostSpan === undefined ? 0 : part(hostSpan, 0);
  if (name !== undefined && at >= 0) at = part(name, at);
  at = at >= 0 ? part(params ?? '', at) : -1;
  at = at >= 0 ? part(idText, at) : -1;
  at = at >= 0 ? into(rest, at) : -1;
  if (at >= 0) {
    SLOTS[S_TEXT_LEN] = at;
    record();
  } else {
    const head = `${hostSpan === undefined ? '' : `${hostSpan}\0`}${name === undefined ? '' : `${name}\0`}`;
    recordText(`${head}${params ?? ''}\0${idText}\0${rest}`); // over 64 KiB
  }
}

/** Encodes `s` and a NUL after it at byte `at`: the offset after both, or -1 if they do not fit. */
function part(s: string, at: number): number {
  const end = into(s, at);
  return end >= 0 && end < TEXT.length ? ((TEXT[end] = 0), end + 1) : -1;
}

/** Encodes `s` into the text buffer at byte `at`: the offset after it, or -1 if it does not fit. */
function into(s: string, at: number): number {
  if (s === '') return at;
  const { read, written } = ENCODER.encodeInto(s, at === 0 ? TEXT : TEXT.subarray(at));
  return read === s.length ? at + written : -1;
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
  /** `ses_…`, one per connection; absent on requests of a sessionless revision (2026-07-28). */
  sessionId?: string;
  requestId?: number | string;
  protocolVersion?: string;
  client?: { name: string; version?: string };
  server?: { name: string; version?: string };
  transport?: 'stdio' | 'http' | 'memory';
  /** The URI (resources/read, subscribe, unsubscribe, directory read), tool name (tools/call), prompt name (prompts/get), or completion reference. */
  resourceName?: string;
  /** The URIs a `subscriptions/listen` request names. */
  resourceUris?: string[];
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
  /** The exporter's entry in the core's configuration (checked there). */
  config: Record<string, unknown>;
  fn?: (events: TrackedEvent[]) => unknown;
}

const SPECS = new WeakSet<object>();

function spec(kind: Exporter['kind'], config: Record<string, unknown>, fn?: Spec['fn']): Exporter {
  const frozen = Object.freeze({ kind, config: { type: kind, ...config }, fn });
  SPECS.add(frozen);
  return frozen;
}

/** JSON lines appended to `path` (default `mcplens-events.jsonl` in the working directory), rotated by size. */
export function jsonlExporter(opts: { path?: string } = {}): Exporter {
  return spec('jsonl', { ...opts });
}

/**
 * OTLP/HTTP protobuf: spans to `{endpoint}/v1/traces` and the `mcp.server.operation.duration`
 * histogram to `{endpoint}/v1/metrics` (OpenTelemetry MCP semantic conventions).
 */
export function otlpExporter(opts: { endpoint: string; headers?: Record<string, string> }): Exporter {
  const { headers, ...rest } = opts ?? {};
  return spec('otlp', headers === undefined ? rest : { ...rest, headers: Object.entries(headers) });
}

/**
 * The agentcat (formerly MCPcat) events API: `POST {baseUrl}/v1/public/events/` (default
 * `https://api.agentcat.com`), `Authorization: Token <apiKey>` when set.
 */
export function mcpcatExporter(opts: { projectId: string; baseUrl?: string; apiKey?: string }): Exporter {
  return spec('mcpcat', { ...opts });
}

/**
 * `fn(events)` on the JS thread, off the request path, one batch (≤ 512 events; 1 s under load, 20 ms after the last event) at a time;
 * the next batch waits until the returned promise settles. A throw or rejection counts the batch
 * as failed.
 */
export function callbackExporter(fn: (events: TrackedEvent[]) => void | Promise<void>): Exporter {
  if (typeof fn !== 'function') throw new TypeError('callbackExporter takes a function');
  return spec('callback', {}, fn);
}

/**
 * Options of `new Tracker`: the core's tracker configuration (`docs/tracking.md`; every value is
 * checked there, defaults are its own) plus the JS functions.
 */
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
   * request path (one call into JS per event for all its strings; the core's event builder waits
   * for it, at most `hookTimeoutMs`). A throw, a rejection, a non-string or the timeout drops the
   * event (counted `redactionFailed`).
   */
  redact?: (text: string) => string | Promise<string>;
  /**
   * Who is behind a session: called once per session, off the request path, with the session's
   * first request (the raw JSON-RPC request and the SDK's `extra`). The session's events wait for
   * it in the core (at most `identifyMaxRecords` and `identifyTimeoutMs`); a throw, a rejection or
   * a bound passed lets them go on without an identity (counted `unidentified`).
   */
  identify?: (request: JsonRpcRequest, extra: unknown) => Identity | null | undefined | Promise<Identity | null | undefined>;
  /** Operations waiting to become events (default 10,000); the oldest are dropped beyond it. */
  queueCapacity?: number;
  /** Most events of one session waiting for `identify` (default 1,000). */
  identifyMaxRecords?: number;
  /** Longest they wait (default 5,000 ms). */
  identifyTimeoutMs?: number;
  /** Longest `redact` may take on one event (default 5,000 ms); then the event is dropped, counted. */
  hookTimeoutMs?: number;
  /** Longest a callback exporter may take on one batch (default 30,000 ms); then the batch fails. */
  callbackTimeoutMs?: number;
  /** The server's `serverInfo`, for hosts that open sessions themselves (`track()` reads it from the server). */
  server?: { name: string; version?: string };
}

/** Counters of one exporter (the same JSON in every language). */
export interface ExporterStats {
  name: string;
  exported: number;
  dropped: number;
  failed: number;
  /** Events this exporter does not take (the agentcat API's event types). */
  skipped: number;
  pending: number;
}

/** Counters of a tracker: the core's `Stats`, the same JSON in every language (`docs/tracking.md`). */
export interface TrackerStats {
  /** Operations accepted. */
  recorded: number;
  /** Dropped before becoming events (queue full, or recorded after shutdown). */
  dropped: number;
  /** Dropped by an event hook. */
  filtered: number;
  /** Dropped because the `redact` hook failed. */
  redactionFailed: number;
  /** Went on without the identity they waited for (identify failed or a bound passed). */
  unidentified: number;
  /** Waiting to become events. */
  queued: number;
  exporters: ExporterStats[];
}

/** The raw JSON-RPC request a handler in the SDK's map receives. */
export interface JsonRpcRequest {
  jsonrpc?: '2.0';
  id?: number | string;
  method: string;
  params?: Record<string, unknown>;
}

/** How a request ended: its result, or the JSON-RPC error the client got. */
export type Outcome = { result: unknown } | { error: { code: number; message: string } };

type Dispatch = (kind: string, index: number, ticket: number, payload: string) => void;

/** The native tracker, started at the first `track()` or `openSession()`. */
interface Core {
  handle: number;
  enabled: boolean;
  /** What of params and of a result `record` passes, per method code (the core's projections). */
  projections: Projections;
  /** The host's active OpenTelemetry span (trace and span id, 48 hex digits): only with OTLP. */
  hostSpan: (() => string | undefined) | undefined;
  identify: TrackerOptions['identify'];
  server: string;
}

interface State {
  configJson: string;
  options: TrackerOptions;
  exporters: Spec[];
  zeroStats: string;
  core: Core | undefined;
  closed: boolean;
  /** The sessions of the `subscriptions/listen` requests v2 serving entries answer. */
  listen?: { stdio?: TrackingSession; http?: TrackingSession };
}

const STATES = new WeakMap<Tracker, State>();

/** Whether the exit listeners are there (one set for every tracker). */
let exitHooked = false;

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The core's error as an `McplensError`: the addon's error message is the core's error JSON
 * (`{code, message, option?}`: an `invalid_argument` names its option). */
function coreError(e: unknown, server: string | undefined): McplensError {
  let body: { code?: ErrorCode; message?: string; option?: string } = {};
  try {
    body = JSON.parse(typeof e === 'string' ? e : messageOf(e)) as typeof body;
  } catch {
    // Not the core's (napi refused an argument by its type).
  }
  const { code = 'invalid_argument', message = messageOf(e), option } = body;
  return new McplensError(code, server, message, typeof e === 'string' ? { option } : { option, cause: e });
}

/** A flush or shutdown of a started tracker: `null` when it settled, else the core's error JSON. */
async function settle(state: State, run: (handle: number) => Promise<string | null>): Promise<void> {
  const core = state.core;
  if (core === undefined || !core.enabled) return;
  const error: unknown = await (async () => run(core.handle))().catch((e: unknown) => e);
  if (error != null) throw coreError(error, core.server);
}

/**
 * A tracker: options, exporters and counters shared by every server tracked with it. The options
 * are checked now (`McplensError` `invalid_argument`, `.option` naming it); the native tracker
 * (its threads, the JSONL file, HTTP clients) starts at the first `track()` or `openSession()`.
 */
export class Tracker {
  constructor(opts: TrackerOptions = {}) {
    if (typeof opts !== 'object' || opts === null) throw new TypeError('Tracker takes an options object');
    const { exporters: given, redact, identify, server, ...config } = opts;
    for (const [name, fn] of [['redact', redact], ['identify', identify]] as const) {
      if (fn !== undefined && typeof fn !== 'function') throw new TypeError(`Tracker: ${name} must be a function`);
    }
    let exporters: Spec[] = [];
    if (given !== undefined) {
      if (!Array.isArray(given)) throw new TypeError('Tracker: exporters must be an array');
      exporters = given.map((e) => {
        if (!SPECS.has(e)) throw new TypeError('Tracker: exporters are made by jsonlExporter, otlpExporter, mcpcatExporter or callbackExporter');
        return e as Spec;
      });
    }
    const configJson = JSON.stringify(exporters.length > 0 ? { ...config, exporters: exporters.map((e) => e.config) } : config);
    let zeroStats: string;
    try {
      zeroStats = native.trackingCheck(configJson);
    } catch (e) {
      throw coreError(e, server?.name);
    }
    STATES.set(this, { configJson, options: { ...opts }, exporters, zeroStats, core: undefined, closed: false });
  }

  /**
   * Opens a tracking session for a connection (for hosts that drive the tracker themselves; `track()`
   * does this for SDK servers). With the transport's session id (`Mcp-Session-Id`) the session id is
   * derived from it; `transport`: `stdio`, `http` or `memory`.
   */
  openSession(opts: { transportSessionId?: string; transport?: 'stdio' | 'http' | 'memory' } = {}): TrackingSession {
    const core = coreOf(this, STATES.get(this)!.options.server);
    return new TrackingSession(core, opts.transportSessionId, opts.transport);
  }

  /**
   * Resolves once everything recorded so far is exported, dropped or failed (events waiting for
   * `identify` are waited for, within its bounds); rejects with `McplensError` `timeout` after
   * `timeoutMs` (default 5,000).
   */
  async flush(timeoutMs = 5_000): Promise<void> {
    recordDeferred();
    await settle(STATES.get(this)!, (h) => native.trackingSettle(h, timeoutMs, false));
  }

  /**
   * Stops accepting events and delivers what is queued within `timeoutMs` (default 5,000); rejects
   * with `McplensError` `timeout` if some could not be. Idempotent; servers stay tracked as
   * pass-throughs.
   */
  async shutdown(timeoutMs = 5_000): Promise<void> {
    recordDeferred();
    const state = STATES.get(this)!;
    state.closed = true;
    await settle(state, (h) => native.trackingSettle(h, timeoutMs, true));
  }

  /** The counters: the core's `Stats` (all zero before the tracker starts). */
  stats(): TrackerStats {
    recordDeferred();
    const state = STATES.get(this)!;
    const started = state.core !== undefined && state.core.enabled;
    return JSON.parse(started ? native.trackingStats(state.core!.handle) : state.zeroStats) as TrackerStats;
  }
}

// ---------------------------------------------------------------------------------------------
// A tracked server's requests are recorded after their responses.

/** A request `track()` saw answered: recorded once its response is on its way. */
interface Answered {
  session: TrackingSession;
  method: string;
  request: JsonRpcRequest;
  outcome: Outcome;
  started: number;
  duration: number;
  /** The host's span, read while the request's context was active. */
  hostSpan: string | undefined;
}

let recordAs: (session: TrackingSession, a: Answered) => void;
/** Held in order; at most the core's `ANSWERED_MAX` (their params and results referenced, not copied). */
const ANSWERED: Answered[] = [];
let recordScheduled = false;

/**
 * Holds a request `track()` saw answered, so that serializing its params and result and handing
 * them to the core happen after the SDK has sent the response (the core's `tracking::Answered`
 * rule): in this turn's check phase (`setImmediate`, Node's "after the response"), or at once when
 * `ANSWERED_MAX` are held (a loop that never yields).
 */
function recordAfter(a: Answered): void {
  ANSWERED.push(a);
  if (ANSWERED.length >= ANSWERED_MAX) recordDeferred();
  else if (!recordScheduled) {
    recordScheduled = true;
    setImmediate(recordDeferred);
  }
}

/** Records every held request, in order: before anything that reads or ends what they feed. */
function recordDeferred(): void {
  recordScheduled = false;
  // Recording runs no host code but a `toJSON`; whatever it adds is recorded in this same pass.
  try {
    for (let i = 0; i < ANSWERED.length; i++) recordAs(ANSWERED[i]!.session, ANSWERED[i]!);
  } catch {
    // Tracking never breaks the server (recording catches its own errors; this is the backstop).
  } finally {
    ANSWERED.length = 0;
  }
}

/**
 * One connection as a tracker knows it: what a host driver records each request with. Made by
 * `Tracker.openSession()`.
 */
export class TrackingSession {
  readonly #core: Core;
  readonly #key: number;
  /** The `ses_…` id its events carry (none on requests of a sessionless revision). */
  readonly id: string;
  #identifyStarted = false;

  constructor(core: Core, transportSessionId: string | undefined, transport: string | undefined) {
    this.#core = core;
    if (core.handle < 0) {
      this.#key = -1;
      this.id = '';
      return;
    }
    try {
      [this.#key, this.id] = native.trackingOpenSession(core.handle, transportSessionId, transport);
    } catch (e) {
      throw coreError(e, core.server);
    }
  }

  /** The client's `clientInfo` and the negotiated protocol version (after `initialize`). */
  setClient(client: { name?: unknown; version?: unknown } | undefined, protocolVersion?: unknown): void {
    if (!this.#core.enabled) return;
    const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    native.trackingSessionClient(this.#core.handle, this.#key, text(client?.name), text(client?.version), text(protocolVersion));
  }

  /**
   * Runs `identify` once for this session (later calls do nothing), off the request path; the
   * session's records wait for it in the core (bounded). Never throws.
   */
  identify(fn: () => Identity | null | undefined | Promise<Identity | null | undefined>): void {
    if (!this.#core.enabled || this.#identifyStarted) return;
    this.#identifyStarted = true;
    const { handle } = this.#core;
    const key = this.#key;
    native.trackingBeginIdentify(handle, key);
    setImmediate(() => {
      void (async () => fn())().then(
        (identity) => native.trackingResolveIdentity(handle, key, JSON.stringify(identity ?? null)),
        () => native.trackingIdentifyFailed(handle, key),
      );
    });
  }

  /**
   * Records one request: its method (any request method; one the core does not know is recorded
   * by its name, `mcp:<method>`), the JSON-RPC
   * request (`id`, `params`), how it ended, when it started (ms since the epoch) and how long it
   * took (ms). Never throws.
   */
  record(method: string, request: { id?: unknown; params?: unknown }, outcome: Outcome, startedAtMs: number, durationMs: number): void {
    this.#record(method, request, outcome, startedAtMs, durationMs, this.#core.hostSpan?.());
  }

  static {
    recordAs = (session, d) => session.#record(d.method, d.request, d.outcome, d.started, d.duration, d.hostSpan);
  }

  #record(method: string, request: { id?: unknown; params?: unknown }, outcome: Outcome, startedAtMs: number, durationMs: number, hostSpan: string | undefined): void {
    if (!this.#core.enabled) return;
    const code = CODES.get(method) ?? OTHER_METHOD;
    const { projections } = this.#core;
    const at = code === OTHER_METHOD ? projections.params.length - 1 : code;
    try {
      const params = jsonOf(request.params, projections.params[at]);
      if ('error' in outcome) {
        put(this.#core.handle, this.#key, code, method, hostSpan, request.id, startedAtMs, durationMs, params, F_ERROR, outcome.error.code, outcome.error.message);
        return;
      }
      let text: string | undefined;
      try {
        text = jsonOf(outcome.result, projections.result[at]);
      } catch {
        // Not JSON (a cycle, a BigInt): the event goes without a response.
      }
      put(this.#core.handle, this.#key, code, method, hostSpan, request.id, startedAtMs, durationMs, params, 0, 0, text ?? '');
    } catch {
      // Tracking never breaks the server.
    }
  }

  /** The connection closed. */
  close(): void {
    if (!this.#core.enabled) return;
    recordDeferred(); // its requests first
    native.trackingCloseSession(this.#core.handle, this.#key);
  }
}

type OtelApi = typeof import('@opentelemetry/api');

/** `@opentelemetry/api`, when the app has it (an optional peer dependency, never required). */
function otelApi(): OtelApi | null {
  try {
    return require('@opentelemetry/api') as OtelApi;
  } catch {
    return null;
  }
}

/**
 * The app's own active span (its trace and span id, 48 hex digits): mcplens' span goes under it. A
 * remote context (a `traceparent` the app extracted) is not one: `_meta.traceparent` is read then.
 */
function activeSpan(api: OtelApi): string | undefined {
  const ctx = api.trace.getActiveSpan()?.spanContext();
  return ctx !== undefined && api.isSpanContextValid(ctx) && ctx.isRemote !== true ? ctx.traceId + ctx.spanId : undefined;
}

/** Frees a native tracker once nothing can use it (no `Tracker`, session or tracked server). */
const RELEASE = new FinalizationRegistry<number>((handle) => native.trackingRelease(handle));

/** The native tracker of `tracker`, started now if needed with this server's `serverInfo`. */
function coreOf(tracker: Tracker, serverInfo: unknown): Core {
  const state = STATES.get(tracker)!;
  if (state.core !== undefined) return state.core;
  const o = state.options;
  const info = serverInfo as { name?: unknown; version?: unknown } | undefined;
  const server = typeof info?.name === 'string' ? info.name : '';
  if (state.closed) {
    state.core = { handle: -1, enabled: false, projections: NO_PROJECTIONS, hostSpan: undefined, identify: undefined, server };
    return state.core;
  }
  const callbacks = state.exporters.flatMap((e) => (e.fn === undefined ? [] : [e.fn]));
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
    const out: string[] = [];
    for (const s of JSON.parse(payload) as string[]) {
      const v = await redact!(s);
      if (typeof v !== 'string') throw new TypeError('redact must return a string');
      out.push(v);
    }
    return JSON.stringify(out);
  }
  const version = typeof info?.version === 'string' ? info.version : undefined;
  let handle: number;
  try {
    const needsJs = callbacks.length > 0 || redact !== undefined;
    handle = native.trackingCreate(state.configJson, server || null, version, redact !== undefined, needsJs ? dispatch : undefined);
  } catch (e) {
    throw coreError(e, server);
  }
  // A disabled tracker starts nothing, but still derives session ids.
  const enabled = o.enableTracing !== false;
  const otlp = state.exporters.some((e) => e.config.type === 'otlp');
  const api = otlp ? otelApi() : null;
  const hostSpan = api === null ? undefined : () => activeSpan(api);
  const projections = (JSON.parse(native.trackingProjections(handle)) as Projections | null) ?? NO_PROJECTIONS;
  state.core = { handle, enabled, projections, hostSpan, identify: o.identify, server };
  RELEASE.register(state.core, handle); // its sessions and tracked servers hold it
  if (!enabled) return state.core;
  if (!exitHooked) installExitHooks();
  return state.core;
}

/** The core's exit flush (what every live tracker recorded since the last one, within its exit
 * timeout) wherever the process ends: at `beforeExit` off the JS thread (nothing new lets the
 * process end); at `exit` (`process.exit()`) and on a signal the app has no listener for, on the JS
 * thread, so trackers with a JS hook cannot be waited for — then the signal's default action. */
function installExitHooks(): void {
  exitHooked = true;
  process.on('beforeExit', () => {
    recordDeferred();
    if (native.trackingExitPending()) void native.trackingFlushAtExit();
  });
  process.on('exit', () => {
    recordDeferred();
    native.trackingFlushAtExitBlocking();
  });
  // SIGTERM and SIGINT end the process without `exit`; an app's own listener decides instead.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const listener = (): void => {
      if (process.listenerCount(signal) > 1) return;
      recordDeferred();
      native.trackingFlushAtExitBlocking();
      process.removeListener(signal, listener);
      process.kill(process.pid, signal);
    };
    if (process.listenerCount(signal) === 0) process.on(signal, listener);
  }
}

let defaultTracker: Tracker | undefined;

// ---------------------------------------------------------------------------------------------
// Patching a server instance.

type Handler = (request: JsonRpcRequest, extra: Extra | undefined) => Promise<unknown>;

/** 1.x: the handler's `extra`; v2: its `ctx` (`mcpReq` holds the id and the 2026-07-28 envelope). */
interface Extra {
  sessionId?: string;
  requestInfo?: unknown;
  http?: unknown;
  mcpReq?: { id?: unknown; envelope?: Record<string, unknown> };
}

/** The parts of an SDK `Server` (ESM or CommonJS build; never its class) that tracking uses. */
interface LowLevelServer {
  _requestHandlers: Map<string, Handler>;
  _serverInfo?: unknown;
  _onclose?: (...args: unknown[]) => unknown;
  transport?: unknown;
  getClientVersion(): { name?: string; version?: string } | undefined;
  /** v2 */
  getNegotiatedProtocolVersion?(): string | undefined;
  setRequestHandler: unknown;
  [TRACKED]?: ServerState;
}

interface SessionState {
  session: TrackingSession;
  sid: string | undefined;
  clientKnown: boolean;
}

interface ServerState {
  tracker: Tracker;
  core: Core;
  server: LowLevelServer;
  session: SessionState | undefined;
}

const TRACKED: unique symbol = Symbol.for('mcplens.tracked') as never;
const ORIGINAL = Symbol.for('mcplens.original');

const CODES = new Map(native.trackingMethods().map((m, i) => [m, i] as const));

/**
 * The core's projections (`trackingProjections`): per method code, then any other method, what of
 * a value `record` passes — `null` all of it, a list of an object's keys, `false` nothing.
 */
interface Projections {
  params: (readonly string[] | false | null)[];
  result: (readonly string[] | false | null)[];
}
const NO_PROJECTIONS: Projections = { params: [false], result: [false] };

/** JSON text of what `projection` passes of `value` (undefined: nothing). */
function jsonOf(value: unknown, projection: readonly string[] | false | null | undefined): string | undefined {
  if (value === undefined || projection === false || projection === undefined) return undefined;
  if (projection === null) return JSON.stringify(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const kept: Record<string, unknown> = {};
  for (const key of projection) if (Object.hasOwn(value, key)) kept[key] = (value as Record<string, unknown>)[key];
  return JSON.stringify(kept);
}
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

function transportOf(server: LowLevelServer, extra: Extra | undefined): 'stdio' | 'http' | 'memory' | undefined {
  if (extra?.requestInfo !== undefined || extra?.http !== undefined) return 'http';
  const name = (server.transport as { constructor?: { name?: string } } | undefined)?.constructor?.name ?? '';
  return (native.trackingTransportOf(name) as 'stdio' | 'http' | 'memory' | null) ?? undefined;
}

/** The session of this request: one per transport session id, else one per server instance. */
function sessionOf(state: ServerState, request: JsonRpcRequest, extra: Extra | undefined): SessionState {
  const sid = extra?.sessionId;
  let s = state.session;
  if (s === undefined || s.sid !== sid) {
    s?.session.close();
    const session = state.tracker.openSession({ transportSessionId: sid, transport: transportOf(state.server, extra) });
    s = { session, sid, clientKnown: false };
    state.session = s;
    const identify = state.core.identify;
    if (identify !== undefined) session.identify(() => identify(request, extra));
  }
  return s;
}

/**
 * The request as the client sent it: a v2 handler gets it without its id and its 2026-07-28
 * `_meta` envelope (the core reads each request's revision and client there), both in `ctx.mcpReq`.
 */
function asSent(request: JsonRpcRequest, extra: Extra | undefined): JsonRpcRequest {
  const m = extra?.mcpReq;
  if (m === undefined) return request;
  const envelope = m.envelope;
  const params = envelope === undefined ? request.params : { ...request.params, _meta: { ...(request.params?._meta as object), ...envelope } };
  return { ...request, id: (request.id ?? m.id) as JsonRpcRequest['id'], params };
}

/** Records a request the SDK's handler answered (`outcome`), between `t0` and `t1` (`performance.now()`). */
function recorded(state: ServerState, method: string, raw: JsonRpcRequest, extra: Extra | undefined, t0: number, t1: number, outcome: Outcome): void {
  try {
    const request = asSent(raw, extra);
    const s = sessionOf(state, request, extra);
    if (!s.clientKnown || method === 'initialize') {
      const info = state.server.getClientVersion();
      // v2: the instance's revision, or (a stateless HTTP instance) the request's header.
      const version =
        method === 'initialize' && 'result' in outcome
          ? (outcome.result as { protocolVersion?: unknown } | undefined)?.protocolVersion
          : (state.server.getNegotiatedProtocolVersion?.() ?? (extra?.http as { req?: Request } | undefined)?.req?.headers.get('mcp-protocol-version'));
      if (info !== undefined || version !== undefined) s.session.setClient(info, version);
      s.clientKnown = info !== undefined;
    }
    recordAfter({ session: s.session, method, request, outcome, started: TIME_ORIGIN + t0, duration: t1 - t0, hostSpan: state.core.hostSpan?.() });
  } catch {
    // Tracking never breaks the server.
  }
}

/** What the SDK answers the client with for a thrown `error`. */
function errorOutcome(error: unknown): Outcome {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  const code = Number.isSafeInteger(e?.code) ? (e!.code as number) : -32603;
  let message = String(e?.message ?? 'Internal error');
  // McpError prefixes its message with the code, which the event carries apart.
  const prefix = `MCP error ${code}: `;
  if (message.startsWith(prefix)) message = message.slice(prefix.length);
  return { error: { code, message } };
}

/** `handler` wrapped when `method` is tracked; the same function otherwise. */
function wrap(state: ServerState, method: string, handler: Handler): Handler {
  if (typeof handler !== 'function' || ORIGINAL in handler) return handler;
  const tracked: Handler = async (request, extra) => {
    const t0 = performance.now();
    let result: unknown;
    try {
      result = await handler(request, extra);
    } catch (error) {
      recorded(state, method, request, extra, t0, performance.now(), errorOutcome(error));
      throw error; // unchanged (an McpError keeps its code)
    }
    recorded(state, method, request, extra, t0, performance.now(), { result });
    return result; // the handler's own object
  };
  Object.defineProperty(tracked, ORIGINAL, { value: handler });
  return tracked;
}

/**
 * Tracks, with `tracker` (default: one shared `new Tracker()`, JSONL to `./mcplens-events.jsonl`),
 * and returns:
 * - an MCP SDK `Server` or `McpServer` instance (1.x or v2; an McpServer's `.server` is patched),
 *   before or after its handlers are registered. Only this instance is patched: every handler in
 *   its request-handler map is wrapped, and the map's own `set` wraps handlers registered later
 *   (`setRequestHandler`, McpServer's lazy registrations, v2's `server/discover`). Results are
 *   returned and errors rethrown unchanged.
 * - a v2 server factory (`(ctx) => server`, for `createMcpHandler` or `serveStdio`): the factory
 *   that tracks each instance it builds, all with `tracker`;
 * - a v2 `createMcpHandler` handler (its `fetch` also records `subscriptions/listen`, which v2
 *   serves before any instance), or a transport handed to v2 `serveStdio` (`{ transport }`: the
 *   same for stdio).
 * Idempotent; a `TypeError` for anything else.
 */
export function track<S>(target: S, tracker?: Tracker): S {
  if (tracker !== undefined && !(tracker instanceof Tracker)) throw new TypeError('track(): tracker must be a Tracker');
  const t = tracker ?? (defaultTracker ??= new Tracker());
  if (typeof target === 'function') {
    const factory = target as unknown as (ctx: unknown) => unknown;
    return ((ctx: unknown) => {
      const built = factory(ctx);
      return built instanceof Promise ? built.then((s) => track(s, t)) : track(built, t);
    }) as S;
  }
  const x = target as { server?: unknown; fetch?: unknown; bus?: unknown; send?: unknown; start?: unknown } | null;
  const low = isLowLevel(x) ? x : isLowLevel(x?.server) ? x.server : undefined;
  if (low !== undefined) trackInstance(low, t);
  else if (typeof x?.fetch === 'function' && x.bus !== undefined) trackHandler(x as McpHttpHandler, t);
  else if (typeof x?.send === 'function' && typeof x.start === 'function') trackTransport(x as WireTransport, t);
  else throw new TypeError('track() takes an MCP SDK Server or McpServer (1.x or v2), a v2 server factory, createMcpHandler handler or serveStdio transport');
  return target;
}

function trackInstance(low: LowLevelServer, t: Tracker): void {
  if (low[TRACKED] !== undefined) return;
  const core = coreOf(t, low._serverInfo);
  const state: ServerState = { tracker: t, core, server: low, session: undefined };
  Object.defineProperty(low, TRACKED, { value: state });
  if (!core.enabled) return; // enableTracing: false: a pass-through, nothing installed

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
      try {
        s?.session.close();
      } catch {
        // Tracking never breaks the server.
      }
      return onclose.apply(this, args);
    };
  }
}

// --- subscriptions/listen, which a v2 serving entry answers itself (before any instance) ---

type Message = JsonRpcRequest & { result?: unknown; error?: { code: number; message: string } };

/** The v2 `createMcpHandler` handler's face. */
interface McpHttpHandler {
  fetch(request: Request, options?: { parsedBody?: unknown }): Promise<Response>;
  bus: unknown;
  [TRACKED]?: true;
}

/** A transport handed to v2 `serveStdio`. */
interface WireTransport {
  send(message: Message, options?: unknown): Promise<void>;
  onmessage?: ((message: Message, extra?: unknown) => void) | undefined;
  [TRACKED]?: true;
}

const { subscriptionId: SUBSCRIPTION_ID, subscriptionsListen: LISTEN, subscriptionsAcknowledged: ACKNOWLEDGED, headerMcpMethod: MCP_METHOD } =
  native.protocol();

/** Records a listen request once the server acknowledged it (`{}`), or answered it with an error. */
function recordListen(t: Tracker, transport: 'stdio' | 'http', request: Message, t0: number, answer: Message): void {
  try {
    const state = STATES.get(t)!;
    const session = (state.listen ??= {})[transport] ??= t.openSession({ transport });
    const outcome: Outcome = answer.error !== undefined ? { error: answer.error } : { result: {} };
    const hostSpan = state.core!.hostSpan?.();
    recordAfter({ session, method: LISTEN, request, outcome, started: TIME_ORIGIN + t0, duration: performance.now() - t0, hostSpan });
  } catch {
    // Tracking never breaks the server.
  }
}

/** The listen id a message from the server answers: the acknowledgement's, or a response's. */
function answers(message: Message): unknown {
  if (message.method === ACKNOWLEDGED) return (message.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID];
  return message.method === undefined ? message.id : undefined;
}

/** `enableTracing: false`: entries stay untouched (the native tracker starts with the first instance). */
const disabled = (t: Tracker): boolean => STATES.get(t)!.options.enableTracing === false;

function trackTransport(wire: WireTransport, t: Tracker): void {
  if (wire[TRACKED] || disabled(t)) return;
  Object.defineProperty(wire, TRACKED, { value: true });
  const pending = new Map<unknown, { request: Message; t0: number }>();
  const send = wire.send;
  wire.send = function (this: unknown, message, options) {
    const id = pending.size > 0 ? answers(message) : undefined;
    const p = id === undefined ? undefined : pending.get(id);
    if (p !== undefined) {
      pending.delete(id);
      recordListen(t, 'stdio', p.request, p.t0, message);
    }
    return send.call(this, message, options);
  };
  // serveStdio sets `onmessage` at start: whatever it sets sees each message after mcplens.
  let onmessage = wire.onmessage;
  const deliver = (message: Message, extra?: unknown) => {
    if (message?.method === LISTEN && message.id !== undefined) pending.set(message.id, { request: message, t0: performance.now() });
    onmessage?.(message, extra);
  };
  Object.defineProperty(wire, 'onmessage', {
    configurable: true,
    get: () => (onmessage === undefined ? undefined : deliver),
    set: (fn) => {
      onmessage = fn;
    },
  });
}

function trackHandler(handler: McpHttpHandler, t: Tracker): void {
  if (handler[TRACKED] || disabled(t)) return;
  Object.defineProperty(handler, TRACKED, { value: true });
  const fetch = handler.fetch;
  handler.fetch = async function (this: unknown, request, options) {
    // 2026-07-28 HTTP requests name their method in a header (SEP-2243).
    if (request.headers.get(MCP_METHOD) !== LISTEN) return fetch.call(this, request, options);
    const t0 = performance.now();
    const body = (options?.parsedBody ?? (await request.clone().json().catch(() => undefined))) as Message | undefined;
    const response = await fetch.call(this, request, options);
    // A refusal is a JSON error response; an accepted listen an SSE stream opening with the acknowledgement.
    const refusal = response.headers.get('content-type')?.includes('json') ? await response.clone().json().catch(() => undefined) : {};
    if (body?.id !== undefined && refusal !== undefined) recordListen(t, 'http', body, t0, refusal as Message);
    return response;
  };
}
