//! Server tracking for Python: the native half of `mcplens.Tracker` and `mcplens.track()`.
//!
//! The rules (configuration, events, redaction, caps, sessions, identify, export) are the core's.
//! This module converts values and owns handles: the options become the core's one
//! `TrackerConfig` (validated there), Python callables become its hooks and callback exporters.
//! On the request path, `hold` measures the duration and holds the request's objects (the core's
//! `tracking::Answered` rule); the pass after the response (`record_answered`) writes the request
//! `params` and, when responses are captured, the result straight from the Python objects into a per-thread scratch buffer as compact JSON (a
//! direct walk over dicts, lists, scalars and pydantic models: no intermediate Python objects, no
//! pydantic round trip for the common shapes), then hands the text to the core (releasing the GIL
//! for large payloads). Events are built on the core's threads, which take the GIL only to call a
//! Python hook (once per event, for all its strings) or a callback (once per batch).

use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use mcplens::tracking::ids::TraceParent;
use mcplens::tracking::{
    host, Answered, Exporter, Held, Hooks, Method, Operation, Payload, PeerInfo, RpcError, Session, SessionKey,
    Tracker, TrackerConfig, TrackingError as CoreError, Transport, WallClock,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::PyTypeInfo;

use crate::convert::json::{request_id, write_projected, write_value};
use crate::McplensError;

pyo3::create_exception!(
    mcplens._core,
    TrackingError,
    McplensError,
    "A tracking operation failed (`invalid_argument` with `.option`, `io_error`, `timeout` with `.pending`)."
);

fn tracking_error(py: Python<'_>, e: &CoreError) -> PyErr {
    let err = crate::error::<TrackingError>(py, e.to_string(), e.code().as_str(), None, None);
    let set = || -> PyResult<()> {
        if let CoreError::Timeout { pending, .. } = e {
            err.value(py).setattr("pending", *pending)?;
        }
        if let Some(option) = e.option() {
            err.value(py).setattr("option", option)?;
        }
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(set) => set,
    }
}

fn seconds(py: Python<'_>, secs: f64) -> PyResult<Duration> {
    host::timeout(secs, 1.0, "timeout_seconds").map_err(|e| tracking_error(py, &e))
}

// ---------------------------------------------------------------------------------------------
// Configuration: `mcplens._tracking` writes the options and the exporters' entries as the core's
// JSON; a callback exporter's function is passed apart, in order. The core checks everything.

/// A callback exporter: one Python call per batch (a list of event dicts), with the GIL taken only
/// for that call.
fn callback_exporter(callback: Py<PyAny>) -> Box<dyn Exporter> {
    host::json_callback(move |text| {
        Python::attach(|py| {
            let events = py.import(intern!(py, "json")).and_then(|j| j.call_method1(intern!(py, "loads"), (text,)));
            events.and_then(|events| callback.call1(py, (events,))).map(drop).map_err(|e| {
                format!("the callback raised {}", e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default())
            })
        })
    })
}

/// Checks the options (the core's `TrackerConfig` JSON) as the core will when `Tracker(...)` is
/// constructed. Returns whether tracing is enabled and the counters of a tracker that has recorded
/// nothing (JSON text).
#[pyfunction]
fn check_tracker_options(py: Python<'_>, config_json: &str) -> PyResult<(bool, String)> {
    let config = TrackerConfig::for_host(config_json, None, "").map_err(|e| tracking_error(py, &e))?;
    let names = config.names().map_err(|e| tracking_error(py, &e))?;
    Ok((config.enable_tracing, mcplens::tracking::Stats::zero(&names).to_json()))
}

// ---------------------------------------------------------------------------------------------
// Sessions.

/// One client connection as the tracker knows it (opaque; from `TrackerCore.open_session`).
#[pyclass(name = "TrackingSession", module = "mcplens._core", frozen)]
pub struct PySession {
    inner: Session,
}

getters! { PySession, |s| {
    /// The `ses_…` id its events carry (none on requests of a sessionless revision).
    id: &str = s.inner.id();
}}

#[pymethods]
impl PySession {
    fn __repr__(&self) -> String {
        format!("<TrackingSession {}>", self.inner.id())
    }
}

thread_local! {
    /// The request path's buffer for one operation's JSON text.
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Python's `time.perf_counter_ns()` (the request path's one integer) read on `Instant` (both
/// read the monotonic clock), mapped onto wall time by the core's `WallClock`.
struct Clock {
    base: Instant,
    base_ns: u64,
    wall: WallClock,
}

impl Clock {
    /// The two clocks tied at the reading bracketed most closely of a few: the tie is off by at
    /// most half that bracket (tens of nanoseconds), so a fast handler's end is never read before
    /// its start.
    fn new(py: Python<'_>) -> PyResult<Clock> {
        let perf = py.import("time")?.getattr("perf_counter_ns")?;
        let mut best: Option<(Duration, Instant, u64)> = None;
        for _ in 0..16 {
            let a = Instant::now();
            let ns: u64 = perf.call0()?.extract()?;
            let bracket = a.elapsed();
            if best.is_none_or(|(b, ..)| bracket < b) {
                best = Some((bracket, a + bracket / 2, ns));
            }
        }
        let (_, base, ns) = best.expect("sixteen readings");
        Ok(Clock { base, base_ns: ns, wall: WallClock::new(ns, SystemTime::now()) })
    }

    /// `(started_at, duration)` of a request that started at `t0_ns` (perf_counter) and ends now.
    fn since(&self, t0_ns: u64) -> (SystemTime, Duration) {
        let elapsed = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.wall.span(t0_ns, self.base_ns.saturating_add(elapsed), SystemTime::now)
    }
}

// ---------------------------------------------------------------------------------------------
// The tracker.

/// The native tracker behind `mcplens.Tracker` (built by the glue once the server is known).
#[pyclass(name = "TrackerCore", module = "mcplens._core", frozen, weakref)]
pub struct PyTrackerCore {
    inner: Tracker,
    clock: Clock,
    /// The requests `hold` took, recorded by the pass after their responses (the core's rule).
    answered: Mutex<Answered<HeldRequest>>,
}

/// A request held until the pass after its response: its duration measured, its objects referenced.
struct HeldRequest {
    method: Method,
    key: SessionKey,
    started_at: SystemTime,
    duration: Duration,
    rid: Py<PyAny>,
    params: Py<PyAny>,
    result: Option<Py<PyAny>>,
    error: Option<(i64, String)>,
    host_span: Option<(u128, u64)>,
}

impl Drop for PyTrackerCore {
    fn drop(&mut self) {
        // Stop the threads without the GIL: a callback exporter may need it to finish.
        let t = self.inner.clone();
        Python::attach(|py| {
            self.record_answered(py);
            py.detach(move || drop(t.shutdown(Duration::from_secs(2))));
        });
    }
}

/// From this many payload bytes on, the pass releases the GIL while the core copies the record
/// into its queue. Below it the copy (a few hundred ns at most, under a short lock) costs less than
/// releasing and re-taking the GIL (measured: ~250 ns per round trip on the CI machine), so the GIL
/// stays held for it; nothing else the core does on the caller's thread can block.
const DETACH_BYTES: usize = 16 * 1024;

/// The user's `redact(text) -> str`, for all strings of one event under one GIL acquisition.
fn redact_hook(hook: Py<PyAny>) -> mcplens::tracking::StringHook {
    Arc::new(move |strings: &mut [String]| {
        Python::attach(|py| -> PyResult<()> {
            for s in strings.iter_mut() {
                *s = hook.call1(py, (s.as_str(),))?.extract::<String>(py)?;
            }
            Ok(())
        })
        .map_err(|_| CoreError::hook("the redact hook raised or did not return a str"))
    })
}

fn session_of<'a>(session: &'a Bound<'_, PySession>) -> &'a Session {
    &session.get().inner
}

/// A request's method as the glue passes it: a known method's code, or any method's name.
#[derive(FromPyObject)]
enum MethodArg {
    Code(u8),
    Name(String),
}

impl MethodArg {
    fn method(self, py: Python<'_>) -> PyResult<Method> {
        match self {
            MethodArg::Name(name) => Ok(Method::from_name(&name)),
            MethodArg::Code(code) => Method::from_code(code).ok_or_else(|| {
                tracking_error(py, &CoreError::invalid("method", format!("unknown method code {code}")))
            }),
        }
    }
}

impl PyTrackerCore {
    /// Records every held request, in the order held (the core's `Answered` pass).
    fn record_answered(&self, py: Python<'_>) {
        let pass = self.answered.lock().unwrap_or_else(PoisonError::into_inner).take();
        for held in pass {
            self.record_held(py, held);
        }
    }

    /// Writes one held request's params (and result) as JSON and hands them to the core; never fails.
    fn record_held(&self, py: Python<'_>, held: HeldRequest) {
        let HeldRequest { method, key, started_at, duration, rid, params, result, error, host_span } = held;
        let (rid, params) = (rid.bind(py), params.bind(py));
        let result = result.as_ref().map(|r| r.bind(py));
        let host_span = host_span.map(|(trace, span)| TraceParent {
            trace_id: trace.to_be_bytes(),
            parent_span_id: span.to_be_bytes(),
            flags: 1,
        });
        let config = self.inner.config();
        let (capture_parameters, capture_responses) = (config.capture_parameters, config.capture_responses);
        let write = |buf: &mut String| {
            buf.clear();
            if !params.is_none() {
                write_projected(py, buf, params, method.params_projection(capture_parameters));
            }
            let p_end = buf.len();
            if let Some(r) = result.filter(|r| !r.is_none()) {
                write_projected(py, buf, r, method.result_projection(capture_responses));
            }
            let (params_text, result_text) = buf.split_at(p_end);
            let rid = request_id(rid);
            let tracker = &self.inner;
            // `Operation` is not `Send` (it may hold a `dyn WriteJson`): built inside.
            let record = || {
                tracker.record(&Operation {
                    request_id: rid,
                    params: Payload::text(params_text),
                    result: Payload::text(result_text),
                    error: error.as_ref().map(|(code, message)| RpcError { code: *code, message }),
                    host_span,
                    ..Operation::new(key, method.clone(), started_at, duration)
                })
            };
            if params_text.len() + result_text.len() >= DETACH_BYTES {
                py.detach(record);
            } else {
                record();
            }
        };
        // A panic (PyO3 panics if a dict changes size while it is walked, which only Python code run
        // by a fallback serializer could do) must not reach the request: the operation is dropped.
        let done = std::panic::catch_unwind(AssertUnwindSafe(|| {
            SCRATCH.with(|cell| match cell.try_borrow_mut() {
                Ok(mut buf) => {
                    write(&mut buf);
                    if buf.capacity() > 1 << 20 {
                        *buf = String::new();
                    }
                }
                // Re-entered from Python code run by the serializer: a buffer of its own.
                Err(_) => write(&mut String::new()),
            })
        }));
        if done.is_err() {
            SCRATCH.with(|cell| {
                if let Ok(mut buf) = cell.try_borrow_mut() {
                    buf.clear();
                }
            });
        }
    }
}

#[pymethods]
impl PyTrackerCore {
    /// The options as `mcplens.Tracker` wrote them (the core's `TrackerConfig` JSON), the
    /// functions of its callback exporters (in order), the server's info, the `redact` hook and a
    /// fixed `seed` (vectors).
    #[new]
    #[pyo3(signature = (config_json, callbacks, *, server_name = None, server_version = None, redact = None, seed = None))]
    fn new(
        py: Python<'_>,
        config_json: &str,
        callbacks: Vec<Py<PyAny>>,
        server_name: Option<String>,
        server_version: Option<&str>,
        redact: Option<Bound<'_, PyAny>>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let v = py.version_info();
        // What agentcat's own Python SDK sends as `sdk_language`.
        let language = format!("Python {}.{}", v.major, v.minor);
        let server = server_name.map(|n| PeerInfo::new(n, server_version));
        let mut config = TrackerConfig::for_host(config_json, server, &language).map_err(|e| tracking_error(py, &e))?;
        config.seed = seed.or(config.seed);
        let mut hooks = Hooks { callbacks: callbacks.into_iter().map(callback_exporter).collect(), ..Hooks::default() };
        // (`Tracker` checked that it is callable.)
        hooks.redact_strings = redact.map(|hook| redact_hook(hook.unbind()));
        let inner = py.detach(|| Tracker::start(config, hooks)).map_err(|e| tracking_error(py, &e))?;
        Ok(PyTrackerCore { inner, clock: Clock::new(py)?, answered: Mutex::default() })
    }

    /// Open a session for a new connection (`transport`: "stdio", "http", "memory" or None).
    #[pyo3(signature = (transport_session_id = None, transport = None))]
    fn open_session(
        &self,
        py: Python<'_>,
        transport_session_id: Option<&str>,
        transport: Option<&str>,
    ) -> PyResult<PySession> {
        let transport = transport.map(Transport::from_name).transpose().map_err(|e| tracking_error(py, &e))?;
        Ok(PySession { inner: self.inner.open_session(transport_session_id, transport) })
    }

    /// The client's `clientInfo` and the negotiated protocol version.
    #[pyo3(signature = (session, name, version = None, protocol_version = None))]
    fn set_session_client(
        &self,
        session: &Bound<'_, PySession>,
        name: Option<String>,
        version: Option<&str>,
        protocol_version: Option<&str>,
    ) {
        let client = name.map(|n| PeerInfo::new(n, version));
        self.inner.set_session_client(session_of(session), client, protocol_version);
    }

    /// The identify hook starts for this session: its records wait in the core until
    /// `resolve_identity` or `identify_failed` (bounded).
    fn begin_identify(&self, session: &Bound<'_, PySession>) {
        self.inner.begin_identify(session_of(session));
    }

    /// The identify hook answered: written as JSON (a mapping as a dict), the core decides
    /// (`host::identity`: `{"id", "name", "data"}` with string `id`/`name`, or None for nobody;
    /// anything else is a failure).
    fn resolve_identity(&self, py: Python<'_>, session: &Bound<'_, PySession>, identity: &Bound<'_, PyAny>) {
        let mapping = !identity.is_instance_of::<PyDict>() && identity.hasattr(intern!(py, "keys")).unwrap_or(false);
        let dict = mapping.then(|| PyDict::type_object(py).call1((identity,)).ok()).flatten();
        let mut text = String::new();
        write_value(py, &mut text, dict.as_ref().unwrap_or(identity), 0, None);
        self.inner.resolve_identity_json(session_of(session), &text);
    }

    /// The identify hook failed: the waiting records go on without an identity (counted).
    fn identify_failed(&self, session: &Bound<'_, PySession>) {
        self.inner.identify_failed(session_of(session));
    }

    /// The connection closed (what it answered is recorded first).
    fn close_session(&self, py: Python<'_>, session: &Bound<'_, PySession>) {
        self.record_answered(py);
        self.inner.close_session(session_of(session));
    }

    /// A request that returned `result`, or failed with `error` (`(code, message)`, the JSON-RPC
    /// error the client got), held by the core's `tracking::Answered` rule: its duration measured
    /// now, its objects referenced, recorded in order by the pass after its response (see the
    /// module docs). `host_span`: the process's active OpenTelemetry span for the request
    /// (`(trace_id, span_id)`), whose child the event's span becomes. Returns True for the first
    /// request of a pass: the caller arranges `record_answered` `AFTER_RESPONSE` later; at
    /// `ANSWERED_MAX` held the pass runs at once.
    #[pyo3(signature = (method, session, t0_ns, request_id, params, result, error = None, host_span = None, /))]
    #[allow(clippy::too_many_arguments)]
    fn hold(
        &self,
        py: Python<'_>,
        method: MethodArg,
        session: &Bound<'_, PySession>,
        t0_ns: u64,
        request_id: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        result: &Bound<'_, PyAny>,
        error: Option<(i64, String)>,
        host_span: Option<(u128, u64)>,
    ) -> PyResult<bool> {
        let (started_at, duration) = self.clock.since(t0_ns);
        let held = HeldRequest {
            method: method.method(py)?,
            key: session_of(session).key(),
            started_at,
            duration,
            rid: request_id.clone().unbind(),
            params: params.clone().unbind(),
            result: error.is_none().then(|| result.clone().unbind()),
            error,
            host_span,
        };
        let action = self.answered.lock().unwrap_or_else(PoisonError::into_inner).hold(held);
        if action == Held::RecordNow {
            self.record_answered(py);
        }
        Ok(action == Held::Schedule)
    }

    /// The pass: records every held request, in the order held.
    #[pyo3(name = "record_answered")]
    fn py_record_answered(&self, py: Python<'_>) {
        self.record_answered(py);
    }

    /// Deliver everything recorded so far, waiting at most `timeout_seconds`.
    fn flush(&self, py: Python<'_>, timeout_seconds: f64) -> PyResult<()> {
        let d = seconds(py, timeout_seconds)?;
        self.record_answered(py);
        py.detach(|| self.inner.flush(d)).map_err(|e| tracking_error(py, &e))
    }

    /// Stop recording, deliver what is queued within `timeout_seconds`, stop the threads.
    fn shutdown(&self, py: Python<'_>, timeout_seconds: f64) -> PyResult<()> {
        let d = seconds(py, timeout_seconds)?;
        self.record_answered(py);
        py.detach(|| self.inner.shutdown(d)).map_err(|e| tracking_error(py, &e))
    }

    /// The counters, as the core's JSON text (`Stats::to_json`).
    fn stats_json(&self, py: Python<'_>) -> String {
        self.record_answered(py);
        py.detach(|| self.inner.stats().to_json())
    }

    /// Every record from now on starts at `started_unix_ns` and takes `duration_ns` (vectors).
    fn _freeze_clock(&self, started_unix_ns: i64, duration_ns: u64) {
        self.clock.wall.freeze(started_unix_ns, duration_ns);
    }
}

/// The interpreter is exiting (`atexit`): the core's exit flush (`tracking::flush_at_exit`: what
/// every live tracker recorded, delivered within the exit timeout), without the GIL.
#[pyfunction]
fn flush_at_exit(py: Python<'_>) {
    py.detach(mcplens::tracking::flush_at_exit);
}

/// Adds the tracking classes to `mcplens._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TrackingError", py.get_type::<TrackingError>())?;
    py.get_type::<TrackingError>().setattr("pending", py.None())?;
    py.get_type::<TrackingError>().setattr("option", py.None())?;
    m.add_class::<PySession>()?;
    m.add_class::<PyTrackerCore>()?;
    m.add_function(wrap_pyfunction!(check_tracker_options, m)?)?;
    m.add_function(wrap_pyfunction!(flush_at_exit, m)?)?;
    let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    m.add("TRACKED_METHODS", PyTuple::new(py, names)?)?;
    m.add("DEFAULT_AGENTCAT_BASE_URL", mcplens::tracking::export::DEFAULT_BASE_URL)?;
    m.add("DEFAULT_JSONL_PATH", mcplens::tracking::export::DEFAULT_JSONL_PATH)?;
    m.add("AFTER_RESPONSE_SECONDS", mcplens::tracking::AFTER_RESPONSE.as_secs_f64())?;
    m.add("ANSWERED_MAX", mcplens::tracking::ANSWERED_MAX)?;
    Ok(())
}
