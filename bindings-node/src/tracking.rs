//! Server tracking for Node: the core's [`Tracker`] behind numeric handles.
//!
//! The facade's options are the core's one `TrackerConfig` (JSON text, checked by the core); this
//! module only adds what Node supplies (the server's info, `sdk_language`, the JS functions).
//! The request path is one free function without arguments, [`tracking_record`]: no `this` to
//! unwrap, nothing to convert. The facade writes the request's numbers into a per-thread
//! `Float64Array` and its text (the params and, when captured, the result as the JSON text
//! `JSON.stringify` made) into a per-thread `Uint8Array` (`TextEncoder.encodeInto`), both over
//! native memory; the call copies those raw parts into the core's queue and returns.
//!
//! JS functions (the callback exporters, the `redact` hook) run on the JS thread through one
//! ThreadsafeFunction per tracker (weak: it never keeps the process alive). A core thread asks with
//! a ticket and waits, bounded, for the facade's [`tracking_reply`]; the JS thread never waits on a
//! core thread (`flush` and `shutdown` run on the libuv pool and resolve a Promise). The core hands
//! `redact` all strings of one event at once: one round trip per event.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use mcplens::tracking::{
    host, Hooks, Method, Operation, Payload, PeerInfo, RequestId, RpcError, Session, SessionKey, Stats, Tracker,
    TrackerConfig, TrackingError, Transport, OTHER_METHOD_CODE,
};
use napi::bindgen_prelude::{AsyncTask, Env, Error, Float64Array, FnArgs, Task, Uint8Array, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;

use crate::{Code, Result};

/// How much longer than the core's hook and callback timeouts (which decide) a hook thread waits
/// for JS before it gives the call up, so that a JS function that never settles frees it.
const JS_GRACE: u32 = 2;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The core's error whole: its code, and its JSON (`{code, message, option?, pending?}`) as the
/// message, which the facade reads back into an `McplensError` (napi errors carry no other field).
fn tracking_error(e: TrackingError) -> Error<Code> {
    Error::new(Code(e.code().as_str()), e.to_json())
}

// ---------------------------------------------------------------------------------------------
// Handles.

/// Every tracker created in this process, by handle (sessions by key: the core's). Slots are never
/// reused: a handle outliving its tracker's shutdown can only reach that (shut down) tracker.
/// Every tracker the facade started, by handle; `None` once released (handles are not reused, so a
/// stale one finds nothing).
static TRACKERS: RwLock<Vec<Option<Tracker>>> = RwLock::new(Vec::new());

fn entry(handle: u32) -> Option<Tracker> {
    TRACKERS.read().unwrap_or_else(PoisonError::into_inner).get(handle as usize).cloned().flatten()
}

/// How many trackers the addon holds (started, not released).
#[napi]
pub fn tracking_live() -> u32 {
    TRACKERS.read().unwrap_or_else(PoisonError::into_inner).iter().flatten().count() as u32
}

/// The facade's tracker is gone (garbage-collected): its native state goes too. The last handle's
/// drop (a shutdown within the drop timeout, if none ran) happens on a thread of its own, never on
/// the JS thread.
#[napi]
pub fn tracking_release(handle: u32) {
    let released =
        TRACKERS.write().unwrap_or_else(PoisonError::into_inner).get_mut(handle as usize).and_then(Option::take);
    if let Some(t) = released {
        let _ = std::thread::Builder::new().name("mcplens-release".to_owned()).spawn(move || drop(t));
    }
}

// ---------------------------------------------------------------------------------------------
// Calls into JS.

/// The facade's dispatcher: `(kind, index, ticket, payload)`; it answers with `trackingReply(ticket, …)`.
type Dispatch = ThreadsafeFunction<
    FnArgs<(&'static str, u32, f64, String)>,
    Unknown<'static>,
    FnArgs<(&'static str, u32, f64, String)>,
    Status,
    false,
    true,
>;

type Reply = std::result::Result<String, String>;

fn pending() -> &'static Mutex<HashMap<u64, SyncSender<Reply>>> {
    static PENDING: OnceLock<Mutex<HashMap<u64, SyncSender<Reply>>>> = OnceLock::new();
    PENDING.get_or_init(Default::default)
}

static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

/// Ask the JS thread and wait for its answer, at most `timeout`.
fn ask_js(dispatch: &Dispatch, kind: &'static str, index: u32, payload: String, timeout: Duration) -> Reply {
    let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = sync_channel(1);
    lock(pending()).insert(ticket, tx);
    let status = dispatch.call((kind, index, ticket as f64, payload).into(), ThreadsafeFunctionCallMode::NonBlocking);
    if status != Status::Ok {
        lock(pending()).remove(&ticket);
        return Err("the JS thread is not accepting calls (shutting down)".to_owned());
    }
    match rx.recv_timeout(timeout) {
        Ok(reply) => reply,
        Err(_) => {
            lock(pending()).remove(&ticket);
            Err(format!("no answer from JS within {} ms", timeout.as_millis()))
        }
    }
}

/// The facade's answer to a dispatched call: `ok` with the result text, or the error message.
#[napi]
pub fn tracking_reply(ticket: f64, ok: bool, payload: String) {
    if let Some(tx) = lock(pending()).remove(&(ticket as u64)) {
        let _ = tx.try_send(if ok { Ok(payload) } else { Err(payload) });
    }
}

// ---------------------------------------------------------------------------------------------
// Construction.

/// The facade's options (the core's `TrackerConfig` JSON) and the server's `serverInfo`, as the
/// core's configuration (`sdkLanguage`: what agentcat's own TypeScript SDK sends).
fn config_of(config_json: &str, server: Option<PeerInfo>) -> Result<TrackerConfig> {
    TrackerConfig::for_host(config_json, server, "TypeScript").map_err(tracking_error)
}

/// Checks the options (the core's `TrackerConfig` JSON) as the core will when the tracker
/// starts; returns the counters of a tracker that has recorded nothing (JSON text).
#[napi]
pub fn tracking_check(config_json: String) -> Result<String> {
    let config = config_of(&config_json, None)?;
    let names = config.names().map_err(tracking_error)?;
    Ok(Stats::zero(&names).to_json())
}

/// Starts a tracker from the facade's options (the core's `TrackerConfig` JSON) and the server's
/// `serverInfo` (when its name is known); returns its handle. Callback exporters are the
/// `callback` entries, answered by `dispatch("export", index, …)` in order; `redact`: whether
/// `dispatch("redact", …)` answers the string hook.
#[napi(
    ts_args_type = "configJson: string, serverName: string | null, serverVersion: string | undefined, redact: boolean, dispatch?: (kind: string, index: number, ticket: number, payload: string) => void"
)]
pub fn tracking_create(
    config_json: String,
    server_name: Option<String>,
    server_version: Option<String>,
    redact: bool,
    dispatch: Option<Dispatch>,
) -> Result<u32> {
    let server = server_name.map(|n| PeerInfo::new(n, server_version.as_deref()));
    let config = config_of(&config_json, server)?;
    let dispatch = dispatch.map(Arc::new);
    let needs_js = || tracking_error(TrackingError::invalid("exporters", "JS functions need the facade's dispatcher"));
    let mut hooks = Hooks::default();
    if redact {
        let d = dispatch.clone().ok_or_else(needs_js)?;
        let wait = config.hook_timeout.saturating_mul(JS_GRACE);
        hooks.redact_strings = Some(host::json_string_hook(move |p| ask_js(&d, "redact", 0, p, wait)));
    }
    let callbacks = config.exporters.iter().filter(|e| e.kind() == "callback").count();
    for index in 0..callbacks {
        let d = dispatch.clone().ok_or_else(needs_js)?;
        hooks.callbacks.push(host::json_callback(move |batch| {
            ask_js(&d, "export", index as u32, batch, config.callback_timeout.saturating_mul(JS_GRACE)).map(|_| ())
        }));
    }
    let tracker = Tracker::start(config, hooks).map_err(tracking_error)?;
    let mut all = TRACKERS.write().unwrap_or_else(PoisonError::into_inner);
    all.push(Some(tracker));
    Ok((all.len() - 1) as u32)
}

/// The transport a server's transport object is, by its constructor's name (the core's rule:
/// `Transport::from_type_name`): `stdio`, `http`, `memory`, or `null`.
#[napi]
pub fn tracking_transport_of(type_name: String) -> Option<&'static str> {
    Transport::from_type_name(&type_name).map(Transport::name)
}

/// The tracked methods' names, in the order of their numeric codes (what `trackingRecord` takes).
#[napi]
pub fn tracking_methods() -> Vec<&'static str> {
    Method::ALL.iter().map(|m| m.name()).collect()
}

/// What of a request's `params` and of its result the facade passes to `trackingRecord`, as the
/// core's projections for this tracker's configuration (`Method::params_projection`,
/// `Method::result_projection`), per method code and then one entry for any other method: each
/// `null` (all of it), a list of keys (an object's, those it has; a value that is not an object
/// passes as nothing) or `false` (nothing). JSON text `{"params": [...], "result": [...]}`; `null`
/// for a released tracker.
#[napi]
pub fn tracking_projections(handle: u32) -> String {
    let Some(t) = entry(handle) else { return "null".to_owned() };
    let c = t.config();
    let methods: Vec<Method> = Method::ALL.iter().cloned().chain([Method::from_name("x/other")]).collect();
    let params: Vec<_> = methods.iter().map(|m| m.params_projection(c.capture_parameters).to_json()).collect();
    let result: Vec<_> = methods.iter().map(|m| m.result_projection(c.capture_responses).to_json()).collect();
    serde_json::json!({ "params": params, "result": result }).to_string()
}

// ---------------------------------------------------------------------------------------------
// Sessions.

/// Opens a session: derived from the transport's session id when there is one, minted otherwise.
/// `transport`: `stdio`, `http` or `memory`. Returns the session's key and id (`[key, id]`).
#[napi(ts_return_type = "[number, string]")]
pub fn tracking_open_session(
    handle: u32,
    transport_session_id: Option<String>,
    transport: Option<String>,
) -> Result<(f64, String)> {
    let transport = transport.as_deref().map(Transport::from_name).transpose().map_err(tracking_error)?;
    let Some(t) = entry(handle) else { return Ok((0.0, String::new())) };
    let session = t.open_session(transport_session_id.as_deref(), transport);
    Ok((session.key().0 as f64, session.id().to_owned()))
}

fn with_session(handle: u32, key: f64, f: impl FnOnce(&Tracker, &Session)) {
    if let Some(t) = entry(handle) {
        if let Some(s) = t.session(SessionKey(key as u64)) {
            f(&t, &s);
        }
    }
}

/// The client's `clientInfo` and the negotiated protocol version, for the session's later events.
#[napi]
pub fn tracking_session_client(
    handle: u32,
    key: f64,
    name: Option<String>,
    version: Option<String>,
    protocol_version: Option<String>,
) {
    with_session(handle, key, |t, s| {
        t.set_session_client(s, name.map(|n| PeerInfo::new(n, version.as_deref())), protocol_version.as_deref())
    });
}

/// The identify hook starts: the session's records wait in the core until it answers (bounded).
#[napi]
pub fn tracking_begin_identify(handle: u32, key: f64) {
    with_session(handle, key, |t, s| t.begin_identify(s));
}

/// The identify hook answered (JSON text): the core decides (`host::identity`: `{id?, name?,
/// data?}` with string `id`/`name`, or `null` for nobody; anything else is a failure).
#[napi]
pub fn tracking_resolve_identity(handle: u32, key: f64, identity_json: String) {
    with_session(handle, key, |t, s| t.resolve_identity_json(s, &identity_json));
}

/// The identify hook failed (threw or rejected): the waiting records go on without an identity.
#[napi]
pub fn tracking_identify_failed(handle: u32, key: f64) {
    with_session(handle, key, |t, s| t.identify_failed(s));
}

/// The connection closed.
#[napi]
pub fn tracking_close_session(handle: u32, key: f64) {
    with_session(handle, key, |t, s| t.close_session(s));
}

// ---------------------------------------------------------------------------------------------
// The request path.

// The request path's ABI, defined once: the facade reads these constants (`native.S_ID`, …).
/// Slots of the scratch the facade writes a request's numbers into before `trackingRecord`.
const SLOT_COUNT: usize = 9;
/// Slot: the tracker's handle.
#[napi]
pub const S_HANDLE: u32 = 0;
/// Slot: the session key.
#[napi]
pub const S_SESSION: u32 = 1;
/// Slot: the method code.
#[napi]
pub const S_METHOD: u32 = 2;
/// Slot: the numeric request id (NaN if none or a string).
#[napi]
pub const S_ID: u32 = 3;
/// Slot: started, wall-clock ms since the epoch.
#[napi]
pub const S_STARTED_MS: u32 = 4;
/// Slot: the duration, ms.
#[napi]
pub const S_DURATION_MS: u32 = 5;
/// Slot: the flags (`F_*`).
#[napi]
pub const S_FLAGS: u32 = 6;
/// Slot: the JSON-RPC error code.
#[napi]
pub const S_CODE: u32 = 7;
/// Slot: the length in bytes of the text in `trackingTextBuffer()`.
#[napi]
pub const S_TEXT_LEN: u32 = 8;
/// The method code of a request the core does not know: the text's first part is its name.
#[napi]
pub const OTHER_METHOD: u32 = OTHER_METHOD_CODE as u32;
/// Answered requests held at most before they are recorded (the core's `tracking::ANSWERED_MAX`).
#[napi]
pub const ANSWERED_MAX: u32 = mcplens::tracking::ANSWERED_MAX as u32;
/// Flag: the request failed; the text's rest is the error message.
#[napi]
pub const F_ERROR: u32 = 2;
/// Flag: the JSON-RPC id is a string (the text's second part).
#[napi]
pub const F_ID_TEXT: u32 = 8;
/// Flag: the text's first part is the host's active span (trace and span id, 48 hex digits).
#[napi]
pub const F_HOST_SPAN: u32 = 16;

/// Bytes of the per-thread text buffer; longer text goes as an argument (`trackingRecordText`).
const TEXT_BUFFER: usize = 64 * 1024;

type Slots = [AtomicU64; SLOT_COUNT];

/// One JS thread's scratch: the numbers and the text buffer its facade writes a request into. Held
/// by the thread (its thread-local) and by each JS array over it (their finalizers, which run on
/// that thread): it is freed
/// once the thread has ended and its arrays are collected (a JS worker thread's with it), not kept
/// for the process's life.
struct Scratch {
    slots: Slots,
    /// `TEXT_BUFFER` bytes, written by JS through a `Uint8Array`, read here between JS calls.
    text: *mut u8,
}

/// Scratches alive in this process (`trackingScratches`, for the lifecycle test).
static SCRATCHES: AtomicU64 = AtomicU64::new(0);

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: `text` came from `Box::into_raw` of a TEXT_BUFFER-byte slice, freed once, here.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.text, TEXT_BUFFER)) });
        SCRATCHES.fetch_sub(1, Ordering::Relaxed);
    }
}

thread_local! {
    /// This JS thread's scratch (each worker thread has its own), made on first use.
    static SCRATCH: std::cell::RefCell<Option<Rc<Scratch>>> = const { std::cell::RefCell::new(None) };
}

/// This thread's scratch, made if needed.
fn scratch() -> Rc<Scratch> {
    let new = || {
        SCRATCHES.fetch_add(1, Ordering::Relaxed);
        let text = Box::into_raw(vec![0u8; TEXT_BUFFER].into_boxed_slice()).cast::<u8>();
        Rc::new(Scratch { slots: std::array::from_fn(|_| AtomicU64::new(0)), text })
    };
    SCRATCH.with_borrow_mut(|s| s.get_or_insert_with(new).clone())
}

/// How many per-thread scratches are alive (each JS thread that loaded the facade has one until
/// it ends and its arrays are collected).
#[napi]
pub fn tracking_scratches() -> u32 {
    SCRATCHES.load(Ordering::Relaxed) as u32
}

/// The scratch of this JS thread, as a `Float64Array` of 9 numbers the facade writes before each
/// `trackingRecord` call: handle, session key, method code, numeric request id (NaN if none or a
/// string), started (wall-clock ms since the epoch), duration (ms), flags, JSON-RPC error code, and
/// the length in bytes of the text in `trackingTextBuffer()`. Numbers (and text) cross this way
/// because each napi argument costs a conversion; call it once per thread.
#[napi]
pub fn tracking_scratch() -> Float64Array {
    let held = scratch();
    let ptr = held.slots.as_ptr() as *mut f64;
    // SAFETY: the array holds the scratch (`held`, dropped by its finalizer), so the slots outlive
    // it; every Rust read of them is an atomic load; JS writes them on this thread only, between
    // calls.
    unsafe { Float64Array::with_external_data(ptr, SLOT_COUNT, move |_, _| drop(held)) }
}

/// The text buffer of this JS thread, as a `Uint8Array` of 64 KiB the facade writes a request's
/// text into (`TextEncoder.encodeInto`) before `trackingRecord`; call it once per thread.
#[napi]
pub fn tracking_text_buffer() -> Uint8Array {
    let held = scratch();
    let ptr = held.text;
    // SAFETY: the array holds the scratch (`held`, dropped by its finalizer), so the buffer
    // outlives it; only this thread uses it: JS writes it, then `trackingRecord` reads it, never at
    // the same time.
    unsafe { Uint8Array::with_external_data(ptr, TEXT_BUFFER, move |_, _| drop(held)) }
}

/// Records one request: its numbers in the scratch (see `trackingScratch`), its text (as many bytes
/// as the scratch says) in `trackingTextBuffer()`: `params NUL idText NUL rest`, where `params` is
/// the params' JSON text (empty: none), `idText` the JSON-RPC id when it is a string (`F_ID_TEXT`),
/// and `rest` the error message (`F_ERROR`) or else the result's JSON text (empty: none). JSON text
/// never holds a raw NUL.
#[napi]
pub fn tracking_record() {
    SCRATCH.with_borrow(|s| {
        let Some(s) = s else { return };
        let len = (f64::from_bits(s.slots[S_TEXT_LEN as usize].load(Ordering::Relaxed)) as usize).min(TEXT_BUFFER);
        // SAFETY: `text` is this thread's buffer of TEXT_BUFFER bytes, alive while the thread-local
        // holds it; JS is not running while this call reads it.
        let text = unsafe { std::slice::from_raw_parts(s.text, len) };
        record_parts(&s.slots, text);
    });
}

/// `trackingRecord` with the text as an argument (when it does not fit the text buffer: over
/// 64 KiB, where napi's own string conversion costs little beside the copy).
#[napi]
pub fn tracking_record_text(text: String) {
    SCRATCH.with_borrow(|s| {
        if let Some(s) = s {
            record_parts(&s.slots, text.as_bytes());
        }
    });
}

/// The text's next part (up to its NUL), the rest left in `text`.
fn take_part<'a>(text: &mut &'a str) -> &'a str {
    let (part, rest) = text.split_once('\0').unwrap_or((text, ""));
    *text = rest;
    part
}

fn record_parts(slots: &Slots, text: &[u8]) {
    let n = |i: u32| f64::from_bits(slots[i as usize].load(Ordering::Relaxed));
    let flags = n(S_FLAGS) as u32;
    let Ok(mut text) = std::str::from_utf8(text) else { return };
    let host_span = (flags & F_HOST_SPAN != 0).then(|| take_part(&mut text)).and_then(host::span_context);
    let method = match u8::try_from(n(S_METHOD) as u32) {
        Ok(OTHER_METHOD_CODE) => Method::from_name(take_part(&mut text)),
        Ok(code) => match Method::from_code(code) {
            Some(m) => m,
            None => return,
        },
        Err(_) => return,
    };
    let mut parts = text.splitn(3, '\0');
    let (params, id_text, rest) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let id = n(S_ID);
    let request_id = if flags & F_ID_TEXT != 0 {
        RequestId::Text(id_text)
    } else if id.is_finite() && id.fract() == 0.0 {
        RequestId::Number(id as i64)
    } else {
        RequestId::None
    };
    let mut op = Operation {
        request_id,
        params: Payload::text(params),
        host_span,
        ..Operation::new(
            SessionKey(n(S_SESSION) as u64),
            method,
            host::unix_ms(n(S_STARTED_MS)),
            host::span(n(S_DURATION_MS)),
        )
    };
    if flags & F_ERROR != 0 {
        op.error = Some(RpcError { code: n(S_CODE) as i64, message: rest });
    } else {
        op.result = Payload::text(rest);
    }
    let all = TRACKERS.read().unwrap_or_else(PoisonError::into_inner);
    if let Some(Some(t)) = all.get(n(S_HANDLE) as usize) {
        t.record(&op);
    }
}

// ---------------------------------------------------------------------------------------------
// Flush, shutdown, stats.

type Work = Box<dyn FnOnce() -> Option<String> + Send>;

/// Waits on the libuv pool, so the JS thread stays free to run callbacks and hooks meanwhile;
/// resolves with `null`, or the core's error JSON (`timeout`, with `pending`).
pub struct Settle(Option<Work>);

impl Task for Settle {
    type Output = Option<String>;
    type JsValue = Option<String>;

    fn compute(&mut self) -> napi::Result<Option<String>> {
        Ok(self.0.take().and_then(|work| work()))
    }

    fn resolve(&mut self, _env: Env, output: Option<String>) -> napi::Result<Option<String>> {
        Ok(output)
    }
}

/// `shutdown`: stops accepting operations and delivers what is queued (idempotent); else waits until
/// everything recorded so far is delivered, dropped or failed. At most `timeoutMs` either way.
#[napi(ts_return_type = "Promise<string | null>")]
pub fn tracking_settle(handle: u32, timeout_ms: f64, shutdown: bool) -> Result<AsyncTask<Settle>> {
    let timeout = host::timeout(timeout_ms, 1000.0, "timeoutMs").map_err(tracking_error)?;
    let work = entry(handle).map(|t| -> Work {
        Box::new(move || (if shutdown { t.shutdown(timeout) } else { t.flush(timeout) }).err().map(|err| err.to_json()))
    });
    Ok(AsyncTask::new(Settle(work)))
}

/// Whether a live tracker recorded something since the last exit flush (`beforeExit` asks first).
#[napi]
pub fn tracking_exit_pending() -> bool {
    mcplens::tracking::exit_pending_any()
}

/// The core's exit flush (`tracking::flush_at_exit`), on the libuv pool.
#[napi(ts_return_type = "Promise<null>")]
pub fn tracking_flush_at_exit() -> AsyncTask<Settle> {
    AsyncTask::new(Settle(Some(Box::new(|| {
        mcplens::tracking::flush_at_exit();
        None
    }))))
}

/// The core's exit flush on the JS thread (`tracking::flush_at_exit_blocking`), for `exit` and the
/// signal listeners, where nothing asynchronous runs any more: trackers with a JS hook are skipped.
#[napi]
pub fn tracking_flush_at_exit_blocking() {
    mcplens::tracking::flush_at_exit_blocking();
}

/// The tracker's counters: the core's `Stats` JSON (the same in every language).
#[napi]
pub fn tracking_stats(handle: u32) -> String {
    match entry(handle) {
        Some(t) => t.stats().to_json(),
        None => Stats::default().to_json(),
    }
}
