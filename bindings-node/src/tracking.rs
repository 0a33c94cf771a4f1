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

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcplens::tracking::{
    Batch, CallbackExporter, ExportError, Exporter, Hooks, Identity, Method, Operation, Payload, PeerInfo, RequestId,
    RpcError, Session, SessionKey, Stats, Tracker, TrackerConfig, TrackingError, Transport,
};
use napi::bindgen_prelude::{
    AsyncTask, Env, Error, Float64Array, FnArgs, FromNapiValue, Task, TypeName, Uint8Array, Unknown, ValueType,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Status};
use napi_derive::napi;

use crate::{Code, Result};

/// How long a core thread waits for a JS callback exporter to settle one batch.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the event builder waits for the JS `redact` hook on one event (then drops it, counted).
const REDACT_TIMEOUT: Duration = Duration::from_secs(5);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn tracking_error(e: TrackingError) -> Error<Code> {
    Error::new(Code(e.code().as_str()), e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Handles.

struct Entry {
    tracker: Tracker,
    /// Open sessions by key (the request path passes the key alone).
    sessions: Mutex<HashMap<u64, Session>>,
}

/// Every tracker created in this process, by handle. Slots are never reused: a handle outliving its
/// tracker's shutdown can only reach that (shut down) tracker.
static TRACKERS: RwLock<Vec<Arc<Entry>>> = RwLock::new(Vec::new());

fn entry(handle: u32) -> Option<Arc<Entry>> {
    TRACKERS.read().unwrap_or_else(PoisonError::into_inner).get(handle as usize).cloned()
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

/// The facade's options as the core's configuration, plus what Node supplies.
fn config_of(config_json: &str, server_json: Option<&str>) -> Result<TrackerConfig> {
    let mut config = TrackerConfig::from_json(config_json).map_err(tracking_error)?;
    if let Some(s) = server_json {
        config.server = serde_json::from_str::<Option<PeerInfo>>(s)
            .map_err(|_| tracking_error(TrackingError::invalid("server", "must be {name, version?}")))?;
        config.check().map_err(tracking_error)?;
    }
    // What agentcat's own TypeScript SDK sends as `sdk_language`.
    config.sdk_language = "TypeScript".to_owned();
    Ok(config)
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
/// info (`{name, version?}` JSON, or null); returns its handle. Callback exporters are the
/// `callback` entries, answered by `dispatch("export", index, …)` in order; `redact`: whether
/// `dispatch("redact", …)` answers the string hook.
#[napi(
    ts_args_type = "configJson: string, serverJson: string | null, redact: boolean, dispatch?: (kind: string, index: number, ticket: number, payload: string) => void"
)]
pub fn tracking_create(
    config_json: String,
    server_json: Option<String>,
    redact: bool,
    dispatch: Option<Dispatch>,
) -> Result<u32> {
    let config = config_of(&config_json, server_json.as_deref())?;
    let dispatch = dispatch.map(Arc::new);
    let needs_js = || tracking_error(TrackingError::invalid("exporters", "JS functions need the facade's dispatcher"));
    let mut hooks = Hooks::default();
    if redact {
        let d = dispatch.clone().ok_or_else(needs_js)?;
        hooks.redact_strings = Some(Arc::new(move |strings: &mut [String]| {
            let payload =
                serde_json::to_string(&*strings).map_err(|_| TrackingError::hook("unserializable strings"))?;
            let reply = ask_js(&d, "redact", 0, payload, REDACT_TIMEOUT).map_err(TrackingError::hook)?;
            let out: Vec<String> =
                serde_json::from_str(&reply).map_err(|_| TrackingError::hook("redact must return a string"))?;
            if out.len() != strings.len() {
                return Err(TrackingError::hook("redact answered for a different number of strings"));
            }
            for (s, o) in strings.iter_mut().zip(out) {
                *s = o;
            }
            Ok(())
        }));
    }
    let callbacks = config.exporters.iter().filter(|e| e.kind() == "callback").count();
    for index in 0..callbacks {
        let d = dispatch.clone().ok_or_else(needs_js)?;
        hooks.callbacks.push(Box::new(CallbackExporter(move |batch: &Batch<'_>| {
            ask_js(&d, "export", index as u32, batch.to_json_array(), EXPORT_TIMEOUT)
                .map(|_| ())
                .map_err(|m| ExportError::permanent(m, 0))
        })) as Box<dyn Exporter>);
    }
    let tracker = Tracker::start(config, hooks).map_err(tracking_error)?;
    let mut all = TRACKERS.write().unwrap_or_else(PoisonError::into_inner);
    all.push(Arc::new(Entry { tracker, sessions: Mutex::new(HashMap::new()) }));
    Ok((all.len() - 1) as u32)
}

/// The tracked methods' names, in the order of their numeric codes (what `trackingRecord` takes).
#[napi]
pub fn tracking_methods() -> Vec<&'static str> {
    Method::ALL.iter().map(|m| m.name()).collect()
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
    let Some(e) = entry(handle) else { return Ok((0.0, String::new())) };
    let session = e.tracker.open_session(transport_session_id.as_deref(), transport);
    let (key, id) = (session.key().0, session.id().to_owned());
    lock(&e.sessions).insert(key, session);
    Ok((key as f64, id))
}

fn with_session(handle: u32, key: f64, f: impl FnOnce(&Tracker, &Session)) {
    let Some(e) = entry(handle) else { return };
    let sessions = lock(&e.sessions);
    if let Some(s) = sessions.get(&(key as u64)) {
        f(&e.tracker, s);
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

/// The identify hook answered: `{id?, name?, data?}` as JSON text, or null (nobody). Anything
/// else counts as a failure.
#[napi]
pub fn tracking_resolve_identity(handle: u32, key: f64, identity_json: Option<String>) {
    with_session(handle, key, |t, s| match identity_json.as_deref().map(serde_json::from_str::<Identity>) {
        None => t.resolve_identity(s, None),
        Some(Ok(i)) => t.resolve_identity(s, Some(i)),
        Some(Err(_)) => t.identify_failed(s),
    });
}

/// The identify hook failed (threw or rejected): the waiting records go on without an identity.
#[napi]
pub fn tracking_identify_failed(handle: u32, key: f64) {
    with_session(handle, key, |t, s| t.identify_failed(s));
}

/// The connection closed.
#[napi]
pub fn tracking_close_session(handle: u32, key: f64) {
    let Some(e) = entry(handle) else { return };
    let session = lock(&e.sessions).remove(&(key as u64));
    if let Some(s) = session {
        e.tracker.close_session(&s);
    }
}

// ---------------------------------------------------------------------------------------------
// The request path.

/// Slots of the scratch the facade writes a request's numbers into before `trackingRecord`.
const SLOT_COUNT: usize = 9;
const S_HANDLE: usize = 0;
const S_SESSION: usize = 1;
const S_METHOD: usize = 2;
const S_ID: usize = 3;
const S_STARTED_MS: usize = 4;
const S_DURATION_MS: usize = 5;
const S_FLAGS: usize = 6;
const S_CODE: usize = 7;
const S_TEXT_LEN: usize = 8;

/// Bytes of the per-thread text buffer; longer text goes as an argument (`trackingRecordText`).
const TEXT_BUFFER: usize = 64 * 1024;

const F_TOOL_ERROR: u32 = 1;
const F_ERROR: u32 = 2;
const F_RESULT: u32 = 4;
const F_ID_TEXT: u32 = 8;
const F_PARAMS: u32 = 16;

type Slots = [AtomicU64; SLOT_COUNT];

thread_local! {
    /// This JS thread's scratch (each worker thread has its own).
    static SCRATCH: Cell<Option<&'static Slots>> = const { Cell::new(None) };
    /// This JS thread's text buffer (leaked: it lives as long as the process).
    static TEXT_IN: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
    /// Reused for the text argument, so the request path does not allocate.
    static TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The scratch of this JS thread, as a `Float64Array` of 9 numbers the facade writes before each
/// `trackingRecord` call: handle, session key, method code, numeric request id (NaN if none or a
/// string), started (wall-clock ms since the epoch), duration (ms), flags, JSON-RPC error code, and
/// the length in bytes of the text in `trackingTextBuffer()`. Numbers (and text) cross this way
/// because each napi argument costs a conversion; call it once per thread.
#[napi]
pub fn tracking_scratch() -> Float64Array {
    let slots: &'static Slots = match SCRATCH.get() {
        Some(s) => s,
        None => {
            let s: &'static Slots = Box::leak(Box::new(std::array::from_fn(|_| AtomicU64::new(0))));
            SCRATCH.set(Some(s));
            s
        }
    };
    // SAFETY: the slots are leaked (they live as long as the process) and every Rust read of them
    // is an atomic load; JS writes them on this thread only, between calls.
    unsafe { Float64Array::with_external_data(slots.as_ptr() as *mut f64, SLOT_COUNT, |_, _| {}) }
}

/// How long the flush at `beforeExit` may take, in ms (the core's exit timeout).
#[napi]
pub fn tracking_exit_timeout_ms() -> u32 {
    u32::try_from(mcplens::tracking::EXIT_TIMEOUT.as_millis()).unwrap_or(u32::MAX)
}

/// The text buffer of this JS thread, as a `Uint8Array` of 64 KiB the facade writes a request's
/// text into (`TextEncoder.encodeInto`) before `trackingRecord`; call it once per thread.
#[napi]
pub fn tracking_text_buffer() -> Uint8Array {
    let mut ptr = TEXT_IN.get();
    if ptr.is_null() {
        ptr = Box::leak(vec![0u8; TEXT_BUFFER].into_boxed_slice()).as_mut_ptr();
        TEXT_IN.set(ptr);
    }
    // SAFETY: the buffer is leaked (it lives as long as the process); only this thread uses it:
    // JS writes it, then `trackingRecord` reads it, never at the same time.
    unsafe { Uint8Array::with_external_data(ptr, TEXT_BUFFER, |_, _| {}) }
}

/// A JS string read as UTF-8 into a buffer kept per thread (no allocation once it is large enough).
pub struct Utf8(Vec<u8>);

impl Drop for Utf8 {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        if buf.capacity() <= 1 << 20 {
            TEXT.with(|t| *t.borrow_mut() = buf);
        }
    }
}

impl TypeName for Utf8 {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl FromNapiValue for Utf8 {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let mut buf = TEXT.with(|t| std::mem::take(&mut *t.borrow_mut()));
        buf.clear();
        buf.reserve(4096);
        let mut written = 0usize;
        // SAFETY: the buffer has `capacity` writable bytes; napi writes at most that many (with a NUL).
        let status = unsafe {
            sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), buf.capacity(), &mut written)
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::new(Status::StringExpected, "expected a string"));
        }
        // Maybe cut short (napi stops before a character that does not fit): ask the length, retry.
        if written + 4 >= buf.capacity() {
            let mut len = 0usize;
            // SAFETY: a null buffer asks for the length only.
            unsafe { sys::napi_get_value_string_utf8(env, value, std::ptr::null_mut(), 0, &mut len) };
            buf.reserve(len + 1);
            // SAFETY: as above, with room for the whole string and its NUL.
            unsafe {
                sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), buf.capacity(), &mut written)
            };
        }
        // SAFETY: napi wrote `written` bytes.
        unsafe { buf.set_len(written.min(buf.capacity())) };
        Ok(Utf8(buf))
    }
}

fn wall(started_ms: f64) -> SystemTime {
    let ms = if started_ms.is_finite() && started_ms > 0.0 { started_ms } else { 0.0 };
    // Whole milliseconds and the fraction apart: `ms * 1e6` would lose the millisecond's last
    // nanoseconds (f64 has 53 bits; Unix nanoseconds need 61).
    let whole = ms.trunc();
    UNIX_EPOCH + Duration::from_millis(whole as u64) + Duration::from_nanos(((ms - whole) * 1e6).round() as u64)
}

fn span(duration_ms: f64) -> Duration {
    let ms = if duration_ms.is_finite() && duration_ms > 0.0 { duration_ms } else { 0.0 };
    Duration::from_nanos((ms * 1e6).round() as u64)
}

/// Records one request: its numbers in the scratch (see `trackingScratch`), its text (as many bytes
/// as the scratch says) in `trackingTextBuffer()`: `params NUL idText NUL rest`, where `params` is
/// the params' JSON text (flag 16), `idText` the JSON-RPC id when it is a string (flag 8), and `rest`
/// the result's JSON text (flag 4) or the error message (flag 2). JSON text never holds a raw NUL.
#[napi]
pub fn tracking_record() {
    let ptr = TEXT_IN.get();
    let Some(slots) = SCRATCH.get() else { return };
    let len = (f64::from_bits(slots[S_TEXT_LEN].load(Ordering::Relaxed)) as usize).min(TEXT_BUFFER);
    if ptr.is_null() {
        return;
    }
    // SAFETY: `ptr` is this thread's leaked buffer of TEXT_BUFFER bytes; JS is not running while
    // this call reads it.
    let text = unsafe { std::slice::from_raw_parts(ptr, len) };
    record_parts(slots, text);
}

/// `trackingRecord` with the text as an argument (when it does not fit the text buffer).
#[napi(ts_args_type = "text: string")]
pub fn tracking_record_text(text: Utf8) {
    if let Some(slots) = SCRATCH.get() {
        record_parts(slots, &text.0);
    }
}

fn record_parts(slots: &Slots, text: &[u8]) {
    let n = |i: usize| f64::from_bits(slots[i].load(Ordering::Relaxed));
    let flags = n(S_FLAGS) as u32;
    let Some(method) = u8::try_from(n(S_METHOD) as u32).ok().and_then(Method::from_code) else { return };
    let Ok(text) = std::str::from_utf8(text) else { return };
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
        params: if flags & F_PARAMS != 0 { Payload::Json(params) } else { Payload::None },
        tool_error: flags & F_TOOL_ERROR != 0,
        ..Operation::new(SessionKey(n(S_SESSION) as u64), method, wall(n(S_STARTED_MS)), span(n(S_DURATION_MS)))
    };
    if flags & F_ERROR != 0 {
        op.error = Some(RpcError { code: n(S_CODE) as i64, message: rest });
    } else if flags & F_RESULT != 0 {
        op.result = Payload::Json(rest);
    }
    let all = TRACKERS.read().unwrap_or_else(PoisonError::into_inner);
    if let Some(e) = all.get(n(S_HANDLE) as usize) {
        e.tracker.record(&op);
    }
}

// ---------------------------------------------------------------------------------------------
// Flush, shutdown, stats.

/// How a flush or shutdown ended.
#[napi(object)]
pub struct Settled {
    /// Everything recorded before the call was delivered, dropped or failed in time.
    pub ok: bool,
    /// The core's error code when not `ok` (`timeout`).
    pub code: Option<String>,
    /// The core's message when not `ok`.
    pub message: Option<String>,
}

/// Waits on the libuv pool, so the JS thread stays free to run callbacks and hooks meanwhile.
pub struct Settle {
    entry: Option<Arc<Entry>>,
    timeout: Duration,
    shutdown: bool,
}

impl Task for Settle {
    type Output = Settled;
    type JsValue = Settled;

    fn compute(&mut self) -> napi::Result<Settled> {
        let Some(e) = &self.entry else { return Ok(Settled { ok: true, code: None, message: None }) };
        let r = if self.shutdown { e.tracker.shutdown(self.timeout) } else { e.tracker.flush(self.timeout) };
        Ok(match r {
            Ok(()) => Settled { ok: true, code: None, message: None },
            Err(err) => Settled { ok: false, code: Some(err.code().to_string()), message: Some(err.to_string()) },
        })
    }

    fn resolve(&mut self, _env: Env, output: Settled) -> napi::Result<Settled> {
        Ok(output)
    }
}

fn settle(handle: u32, timeout_ms: f64, shutdown: bool) -> AsyncTask<Settle> {
    let ms = if timeout_ms.is_finite() && timeout_ms > 0.0 { timeout_ms } else { 0.0 };
    AsyncTask::new(Settle { entry: entry(handle), timeout: Duration::from_nanos((ms * 1e6) as u64), shutdown })
}

/// Waits until everything recorded so far is delivered, dropped or failed, at most `timeoutMs`.
#[napi(ts_return_type = "Promise<Settled>")]
pub fn tracking_flush(handle: u32, timeout_ms: f64) -> AsyncTask<Settle> {
    settle(handle, timeout_ms, false)
}

/// Stops accepting operations and delivers what is queued, at most `timeoutMs`. Idempotent.
#[napi(ts_return_type = "Promise<Settled>")]
pub fn tracking_shutdown(handle: u32, timeout_ms: f64) -> AsyncTask<Settle> {
    settle(handle, timeout_ms, true)
}

/// The tracker's counters: the core's `Stats` JSON (the same in every language).
#[napi]
pub fn tracking_stats(handle: u32) -> String {
    match entry(handle) {
        Some(e) => e.tracker.stats().to_json(),
        None => Stats::default().to_json(),
    }
}
