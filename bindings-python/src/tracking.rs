//! Server tracking for Python: the native half of `mcplens.Tracker` and `mcplens.track()`.
//!
//! The rules (configuration, events, redaction, caps, sessions, identify, export) are the core's.
//! This module converts values and owns handles: the options become the core's one
//! `TrackerConfig` (validated there), Python callables become its hooks and callback exporters.
//! On the request path, `record` writes the request `params` and, when responses are captured, the
//! result straight from the Python objects into a per-thread scratch buffer as compact JSON (a
//! direct walk over dicts, lists, scalars and pydantic models: no intermediate Python objects, no
//! pydantic round trip for the common shapes), then hands the text to the core (releasing the GIL
//! for large payloads). Events are built on the core's threads, which take the GIL only to call a
//! Python hook (once per event, for all its strings) or a callback (once per batch).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mcplens::tracking::ids::TraceParent;
use mcplens::tracking::{
    host, write_json_str as write_str, Exporter, Hooks, Method, Operation, Payload, PeerInfo, Projection, RequestId,
    RpcError, Session, Tracker, TrackerConfig, TrackingError as CoreError, Transport, WallClock,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::PyTypeInfo;

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

// ---------------------------------------------------------------------------------------------
// Python objects → compact JSON (the request-path serializer).
// ---------------------------------------------------------------------------------------------
// Python objects → compact JSON (the request-path serializer).

/// Deeper than this, a value is written as a marker string (the core caps depth far lower anyway).
const MAX_DEPTH: u32 = 64;

/// How values of one (non-builtin) type are written.
enum Kind {
    /// A pydantic model: its fields by alias, `None` fields left out, then its extras.
    Model { fields: Vec<(Py<PyString>, String)>, extra: bool },
    /// A pydantic `RootModel`: its `root`.
    Root,
    /// Written as `str(value)` (URLs).
    Str,
    /// An iterator or generator: never consumed; written as a marker.
    Opaque,
    /// Anything else: pydantic's own serializer (`pydantic_core.to_json`), else `str(value)`.
    Fallback,
}

/// A type (held, so that its address is never reused by another) and how to write its values.
type KindEntry = (Py<PyType>, Rc<Kind>);

thread_local! {
    /// Per type: how to write it. The type is held so its address is never reused by another.
    static KINDS: RefCell<HashMap<usize, KindEntry>> = RefCell::new(HashMap::new());
    static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
}

fn truthy(v: PyResult<Bound<'_, PyAny>>) -> bool {
    v.and_then(|v| v.is_truthy()).unwrap_or(false)
}

fn classify(py: Python<'_>, t: &Bound<'_, PyType>) -> Kind {
    if let Ok(fields) = t.getattr(intern!(py, "__pydantic_fields__")) {
        if let Ok(fields) = fields.cast::<PyDict>() {
            if truthy(t.getattr(intern!(py, "__pydantic_root_model__"))) {
                return Kind::Root;
            }
            // Custom serializers or computed fields: let pydantic do it.
            if let Ok(d) = t.getattr(intern!(py, "__pydantic_decorators__")) {
                for attr in ["field_serializers", "model_serializers", "computed_fields"] {
                    if truthy(d.getattr(attr)) {
                        return Kind::Fallback;
                    }
                }
            }
            let mut out = Vec::new();
            for (name, info) in fields.iter() {
                let Ok(name) = name.cast_into::<PyString>() else { return Kind::Fallback };
                if info.getattr(intern!(py, "exclude")).is_ok_and(|e| e.is(PyBool::new(py, true).as_any())) {
                    continue;
                }
                let alias = |attr: &Bound<'_, PyString>| -> Option<String> {
                    info.getattr(attr).ok().and_then(|a| a.extract::<Option<String>>().ok()).flatten()
                };
                let key = alias(intern!(py, "serialization_alias"))
                    .or_else(|| alias(intern!(py, "alias")))
                    .unwrap_or_else(|| name.to_string_lossy().into_owned());
                let Ok(key) = serde_json::to_string(&key) else { return Kind::Fallback };
                out.push((name.unbind(), key));
            }
            let extra = t
                .getattr(intern!(py, "model_config"))
                .and_then(|c| c.get_item("extra"))
                .and_then(|e| e.extract::<String>())
                .is_ok_and(|e| e == "allow");
            return Kind::Model { fields: out, extra };
        }
    }
    if t.hasattr(intern!(py, "__next__")).unwrap_or(false) {
        return Kind::Opaque;
    }
    let url = (|| -> PyResult<bool> {
        let networks = py.import("pydantic.networks")?;
        for base in ["_BaseUrl", "_BaseMultiHostUrl"] {
            if let Ok(b) = networks.getattr(base) {
                if t.is_subclass(&b)? {
                    return Ok(true);
                }
            }
        }
        let core = py.import("pydantic_core")?;
        for base in ["Url", "MultiHostUrl"] {
            if let Ok(b) = core.getattr(base) {
                if t.is_subclass(&b)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    })();
    if url.unwrap_or(false) {
        return Kind::Str;
    }
    Kind::Fallback
}

fn kind_of(py: Python<'_>, v: &Bound<'_, PyAny>) -> Rc<Kind> {
    let t = v.get_type();
    let key = t.as_ptr() as usize;
    if let Some(k) = KINDS.with(|m| m.borrow().get(&key).map(|(_, k)| k.clone())) {
        return k;
    }
    let k = Rc::new(classify(py, &t));
    KINDS.with(|m| m.borrow_mut().insert(key, (t.unbind(), k.clone())));
    k
}

fn write_pystr(out: &mut String, s: &Bound<'_, PyString>) {
    match s.to_str() {
        Ok(s) => write_str(out, s),
        // Lone surrogates: replaced, as everywhere else in mcplens.
        Err(_) => write_str(out, &s.to_string_lossy()),
    }
}

fn write_fallback(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>) {
    let json = (|| -> PyResult<Bound<'_, PyBytes>> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("by_alias", true)?;
        kwargs.set_item("exclude_none", true)?;
        let b = py.import(intern!(py, "pydantic_core"))?.getattr(intern!(py, "to_json"))?.call((v,), Some(&kwargs))?;
        Ok(b.cast_into::<PyBytes>()?)
    })();
    if let Ok(b) = &json {
        if let Ok(text) = std::str::from_utf8(b.as_bytes()) {
            out.push_str(text);
            return;
        }
    }
    match v.str() {
        Ok(s) => write_pystr(out, &s),
        Err(_) => out.push_str("null"),
    }
}

/// Writes what of `v` the core's projection passes (`mcplens::tracking::Projection`): all of it,
/// an object's listed keys (a value that is not an object passes as nothing), or nothing.
fn write_projected(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>, projection: Projection) {
    match projection {
        Projection::Whole => write_value(py, out, v, 0, None),
        Projection::Keys(keys) if !is_json_non_object(v) => write_value(py, out, v, 0, Some(keys)),
        _ => {}
    }
}

/// Whether `v` is written as a JSON value other than an object (what a projection to keys drops).
fn is_json_non_object(v: &Bound<'_, PyAny>) -> bool {
    v.is_none()
        || v.is_instance_of::<PyString>()
        || v.is_instance_of::<PyBool>()
        || v.is_instance_of::<PyInt>()
        || v.is_instance_of::<PyFloat>()
        || v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
}

/// Writes `v` as compact JSON. `only`: at the top level, keep only these keys (when parameters are
/// not captured, the core still needs the resource name and `_meta`).
fn write_value(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>, depth: u32, only: Option<&[&str]>) {
    if depth > MAX_DEPTH {
        write_str(out, "[not serialized: nested too deep]");
        return;
    }
    if let Ok(s) = v.cast_exact::<PyString>() {
        write_pystr(out, s);
    } else if let Ok(d) = v.cast::<PyDict>() {
        out.push('{');
        let mut first = true;
        for (k, x) in d.iter() {
            // A key that is not a str is written as `str(key)`, and never kept under `only`.
            let key = match k.cast_into::<PyString>() {
                Ok(ks) => ks,
                Err(_) if only.is_some() => continue,
                Err(e) => match e.into_inner().str() {
                    Ok(ks) => ks,
                    Err(_) => continue,
                },
            };
            if !only.is_none_or(|o| key.to_str().is_ok_and(|s| o.contains(&s))) {
                continue;
            }
            member(py, out, &mut first, &key, &x, depth);
        }
        out.push('}');
    } else if v.is_none() {
        out.push_str("null");
    } else if let Ok(b) = v.cast_exact::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if let Ok(i) = v.cast::<PyInt>() {
        if let Ok(n) = i.extract::<i64>() {
            let _ = write!(out, "{n}");
        } else if let Ok(n) = i.extract::<u64>() {
            let _ = write!(out, "{n}");
        } else {
            // A big int: its decimal digits are a JSON number.
            match i.str() {
                Ok(s) => out.push_str(&s.to_string_lossy()),
                Err(_) => out.push_str("null"),
            }
        }
    } else if let Ok(l) = v.cast::<PyList>() {
        write_seq(py, out, l.iter(), depth);
    } else if let Ok(s) = v.cast::<PyString>() {
        write_pystr(out, s);
    } else if let Ok(f) = v.cast::<PyFloat>() {
        let x = f.value();
        if x.is_finite() {
            // `Debug` is the shortest round-trip form (`2.5`, `1e300`): valid JSON.
            let _ = write!(out, "{x:?}");
        } else {
            out.push_str("null");
        }
    } else if let Ok(t) = v.cast::<PyTuple>() {
        write_seq(py, out, t.iter(), depth);
    } else {
        write_object(py, out, v, depth, only);
    }
}

/// One `"key":value` member of an object (a comma before all but the first).
fn member(
    py: Python<'_>,
    out: &mut String,
    first: &mut bool,
    key: &Bound<'_, PyString>,
    v: &Bound<'_, PyAny>,
    depth: u32,
) {
    if !std::mem::take(first) {
        out.push(',');
    }
    write_pystr(out, key);
    out.push(':');
    write_value(py, out, v, depth + 1, None);
}

fn write_seq<'py>(py: Python<'py>, out: &mut String, items: impl Iterator<Item = Bound<'py, PyAny>>, depth: u32) {
    out.push('[');
    for (i, x) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_value(py, out, &x, depth + 1, None);
    }
    out.push(']');
}

fn write_object(py: Python<'_>, out: &mut String, v: &Bound<'_, PyAny>, depth: u32, only: Option<&[&str]>) {
    match &*kind_of(py, v) {
        Kind::Root => match v.getattr(intern!(py, "root")) {
            Ok(root) => write_value(py, out, &root, depth + 1, only),
            Err(_) => out.push_str("null"),
        },
        Kind::Model { fields, extra } => {
            let Ok(dict) = v.getattr(intern!(py, "__dict__")) else {
                write_fallback(py, out, v);
                return;
            };
            let Ok(dict) = dict.cast::<PyDict>() else {
                write_fallback(py, out, v);
                return;
            };
            out.push('{');
            let mut first = true;
            for (name, key) in fields {
                if only.is_some_and(|o| !o.iter().any(|k| key.get(1..key.len() - 1) == Some(*k))) {
                    continue;
                }
                let Ok(Some(x)) = dict.get_item(name.bind(py)) else { continue };
                if x.is_none() {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(key);
                out.push(':');
                write_value(py, out, &x, depth + 1, None);
            }
            if *extra {
                if let Ok(extras) = v.getattr(intern!(py, "__pydantic_extra__")) {
                    if let Ok(extras) = extras.cast::<PyDict>() {
                        for (k, x) in extras.iter() {
                            let Ok(k) = k.cast::<PyString>() else { continue };
                            if x.is_none() || only.is_some_and(|o| !k.to_str().is_ok_and(|s| o.contains(&s))) {
                                continue;
                            }
                            member(py, out, &mut first, k, &x, depth);
                        }
                    }
                }
            }
            out.push('}');
        }
        Kind::Str => match v.str() {
            Ok(s) => write_pystr(out, &s),
            Err(_) => out.push_str("null"),
        },
        Kind::Opaque => {
            let name = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            write_str(out, &format!("[not serialized: {name}]"));
        }
        Kind::Fallback => write_fallback(py, out, v),
    }
}

fn request_id<'a>(v: &'a Bound<'_, PyAny>) -> RequestId<'a> {
    if let Ok(s) = v.cast::<PyString>() {
        return s.to_str().map(RequestId::Text).unwrap_or_default();
    }
    if v.cast::<PyBool>().is_err() {
        if let Ok(n) = v.extract::<i64>() {
            return RequestId::Number(n);
        }
    }
    RequestId::None
}

/// Python's `time.perf_counter_ns()` (the request path's one integer) read on `Instant` (both
/// read the monotonic clock), mapped onto wall time by the core's `WallClock`.
struct Clock {
    base: Instant,
    base_ns: u64,
    wall: WallClock,
}

impl Clock {
    fn new(py: Python<'_>) -> PyResult<Clock> {
        let perf = py.import("time")?.getattr("perf_counter_ns")?;
        let a = Instant::now();
        let ns: u64 = perf.call0()?.extract()?;
        let b = Instant::now();
        Ok(Clock { base: a + (b - a) / 2, base_ns: ns, wall: WallClock::new(ns, SystemTime::now()) })
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
#[pyclass(name = "TrackerCore", module = "mcplens._core", frozen)]
pub struct PyTrackerCore {
    inner: Tracker,
    clock: Clock,
}

impl Drop for PyTrackerCore {
    fn drop(&mut self) {
        // Stop the threads without the GIL: a callback exporter may need it to finish.
        let t = self.inner.clone();
        Python::attach(|py| py.detach(move || drop(t.shutdown(Duration::from_secs(2)))));
    }
}

/// From this many payload bytes on, `record` releases the GIL while the core copies the record
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

impl PyTrackerCore {
    #[allow(clippy::too_many_arguments)]
    fn record_parts(
        &self,
        py: Python<'_>,
        method: MethodArg,
        session: &Bound<'_, PySession>,
        t0_ns: u64,
        rid: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        result: Option<&Bound<'_, PyAny>>,
        error: Option<(i64, String)>,
        host_span: Option<(u128, u64)>,
    ) -> PyResult<()> {
        let (started_at, duration) = self.clock.since(t0_ns);
        let host_span = host_span.map(|(trace, span)| TraceParent {
            trace_id: trace.to_be_bytes(),
            parent_span_id: span.to_be_bytes(),
            flags: 1,
        });
        let method = match method {
            MethodArg::Name(name) => Method::from_name(&name),
            MethodArg::Code(code) => Method::from_code(code).ok_or_else(|| {
                tracking_error(py, &CoreError::invalid("method", format!("unknown method code {code}")))
            })?,
        };
        let key = session_of(session).key();
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
        Ok(())
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
        Ok(PyTrackerCore { inner, clock: Clock::new(py)? })
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

    /// The connection closed.
    fn close_session(&self, session: &Bound<'_, PySession>) {
        self.inner.close_session(session_of(session));
    }

    /// Record a request that returned `result`, or failed with `error` (`(code, message)`, the
    /// JSON-RPC error the client got): the request path, see the module docs. `host_span`: the
    /// process's active OpenTelemetry span for the request (`(trace_id, span_id)`), whose child the
    /// event's span becomes.
    #[pyo3(signature = (method, session, t0_ns, request_id, params, result, error = None, host_span = None, /))]
    #[allow(clippy::too_many_arguments)]
    fn record(
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
    ) -> PyResult<()> {
        let result = error.is_none().then_some(result);
        self.record_parts(py, method, session, t0_ns, request_id, params, result, error, host_span)
    }

    /// Deliver everything recorded so far, waiting at most `timeout_seconds`.
    fn flush(&self, py: Python<'_>, timeout_seconds: f64) -> PyResult<()> {
        let d = seconds(py, timeout_seconds)?;
        py.detach(|| self.inner.flush(d)).map_err(|e| tracking_error(py, &e))
    }

    /// Stop recording, deliver what is queued within `timeout_seconds`, stop the threads.
    fn shutdown(&self, py: Python<'_>, timeout_seconds: f64) -> PyResult<()> {
        let d = seconds(py, timeout_seconds)?;
        py.detach(|| self.inner.shutdown(d)).map_err(|e| tracking_error(py, &e))
    }

    /// The counters, as the core's JSON text (`Stats::to_json`).
    fn stats_json(&self, py: Python<'_>) -> String {
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
    Ok(())
}
