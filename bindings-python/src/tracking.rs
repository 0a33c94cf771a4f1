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

use mcplens::tracking::{
    write_json_str as write_str, Batch, ExportError, Exporter, Hooks, Identity, Method, Operation, Payload, PeerInfo,
    RequestId, RpcError, Session, Tracker, TrackerConfig, TrackingError as CoreError, Transport, WallClock,
};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use serde_json::{json, Value};

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
    crate::duration(secs).ok_or_else(|| {
        tracking_error(py, &CoreError::invalid("timeout_seconds", "must be a finite, non-negative number of seconds"))
    })
}

// ---------------------------------------------------------------------------------------------
// Exporters: plain values made in `mcplens._tracking` (`_spec`: their entry in the core's
// configuration; a callback exporter's `callback` too). The core checks them.

/// The callback exporter: one Python call per batch, with the GIL taken only for that call.
struct CallbackSink {
    callback: Py<PyAny>,
}

impl Exporter for CallbackSink {
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        let text = batch.to_json_array();
        Python::attach(|py| -> PyResult<()> {
            let events = py.import(intern!(py, "json"))?.call_method1(intern!(py, "loads"), (text,))?;
            self.callback.call1(py, (events,))?;
            Ok(())
        })
        .map_err(|e| {
            // Counted as failed, not retried: the callback may have seen part of the batch.
            let kind = Python::attach(|py| e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default());
            ExportError::permanent(format!("the callback raised {kind}"), 0)
        })
    }
}

type Callbacks = Vec<Box<dyn Exporter>>;

/// The exporters' entries (for the core's configuration) and the callbacks, in order.
fn exporter_specs(py: Python<'_>, exporters: &[Bound<'_, PyAny>]) -> PyResult<(Vec<Value>, Callbacks)> {
    let mut specs = Vec::new();
    let mut callbacks: Callbacks = Vec::new();
    for e in exporters {
        let mut text = String::new();
        write_value(py, &mut text, &e.getattr(intern!(py, "_spec"))?, 0, None);
        let spec: Value =
            serde_json::from_str(&text).map_err(|_| PyTypeError::new_err("an exporter's spec must be JSON"))?;
        if spec["type"] == "callback" {
            callbacks.push(Box::new(CallbackSink { callback: e.getattr(intern!(py, "callback"))?.unbind() }));
        }
        specs.push(spec);
    }
    Ok((specs, callbacks))
}

/// The core's configuration from the glue's options (TrackerConfig names; `None` left out) and
/// exporters. Every check is the core's.
fn tracker_config(
    py: Python<'_>,
    exporters: &[Bound<'_, PyAny>],
    options: &Bound<'_, PyDict>,
    extra: Value,
) -> PyResult<(TrackerConfig, Callbacks)> {
    let (specs, callbacks) = exporter_specs(py, exporters)?;
    let mut text = String::new();
    write_value(py, &mut text, options.as_any(), 0, None);
    let mut map = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => m,
        _ => return Err(PyTypeError::new_err("tracker options must be a dict")),
    };
    map.retain(|_, v| !v.is_null());
    if !specs.is_empty() {
        map.insert("exporters".into(), Value::Array(specs));
    }
    if let Value::Object(extra) = extra {
        map.extend(extra.into_iter().filter(|(_, v)| !v.is_null()));
    }
    let config = TrackerConfig::from_json(&Value::Object(map).to_string()).map_err(|e| tracking_error(py, &e))?;
    Ok((config, callbacks))
}

/// Checks the options as the core will (when `Tracker(...)` is constructed). Returns whether
/// tracing is enabled and the counters of a tracker that has recorded nothing (JSON text).
#[pyfunction]
fn check_tracker_options(
    py: Python<'_>,
    exporters: Vec<Bound<'_, PyAny>>,
    options: &Bound<'_, PyDict>,
) -> PyResult<(bool, String)> {
    let (config, _) = tracker_config(py, &exporters, options, Value::Null)?;
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
            let key_ok = match k.cast::<PyString>() {
                Ok(ks) => {
                    if only.is_some_and(|o| !ks.to_str().is_ok_and(|s| o.contains(&s))) {
                        continue;
                    }
                    if !first {
                        out.push(',');
                    }
                    write_pystr(out, ks);
                    true
                }
                Err(_) if only.is_some() => continue,
                Err(_) => match k.str() {
                    Ok(ks) => {
                        if !first {
                            out.push(',');
                        }
                        write_pystr(out, &ks);
                        true
                    }
                    Err(_) => false,
                },
            };
            if key_ok {
                first = false;
                out.push(':');
                write_value(py, out, &x, depth + 1, None);
            }
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
                            if !first {
                                out.push(',');
                            }
                            first = false;
                            write_pystr(out, k);
                            out.push(':');
                            write_value(py, out, &x, depth + 1, None);
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

/// A `tools/call` result's `isError` (for when the result itself is not captured): on a dict, a
/// model (`isError` in mcp 1.x, `is_error` in 2.x) or a root model around one.
fn result_is_error(py: Python<'_>, result: &Bound<'_, PyAny>) -> bool {
    if let Ok(d) = result.cast::<PyDict>() {
        return d.get_item(intern!(py, "isError")).ok().flatten().is_some_and(|x| x.is_truthy().unwrap_or(false));
    }
    let inner = match result.getattr(intern!(py, "root")) {
        Ok(r) => r,
        Err(_) => result.clone(),
    };
    for attr in [intern!(py, "isError"), intern!(py, "is_error")] {
        if let Ok(x) = inner.getattr(attr) {
            return x.is_truthy().unwrap_or(false);
        }
    }
    false
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

fn json_payload(text: &str) -> Payload<'_> {
    if text.is_empty() {
        Payload::None
    } else {
        Payload::Json(text)
    }
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

impl PyTrackerCore {
    #[allow(clippy::too_many_arguments)]
    fn record_parts(
        &self,
        py: Python<'_>,
        method: u8,
        session: &Bound<'_, PySession>,
        t0_ns: u64,
        rid: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        result: Option<&Bound<'_, PyAny>>,
        error: Option<(i64, &str)>,
    ) -> PyResult<()> {
        let (started_at, duration) = self.clock.since(t0_ns);
        let Some(method) = Method::from_code(method) else {
            return Err(tracking_error(py, &CoreError::invalid("method", format!("unknown method code {method}"))));
        };
        let key = session_of(session).key();
        let config = self.inner.config();
        let (capture_parameters, capture_responses) = (config.capture_parameters, config.capture_responses);
        let write = |buf: &mut String| {
            buf.clear();
            if !params.is_none() {
                let only = (!capture_parameters).then(|| method.params_read());
                write_value(py, buf, params, 0, only);
            }
            let p_end = buf.len();
            let mut tool_error = false;
            if let Some(r) = result {
                if capture_responses {
                    if !r.is_none() {
                        write_value(py, buf, r, 0, None);
                    }
                } else if method == Method::ToolsCall {
                    tool_error = result_is_error(py, r);
                }
            }
            let (params_text, result_text) = buf.split_at(p_end);
            let rid = request_id(rid);
            let tracker = &self.inner;
            // `Operation` is not `Send` (it may hold a `dyn WriteJson`): built inside.
            let record = || {
                tracker.record(&Operation {
                    request_id: rid,
                    params: json_payload(params_text),
                    result: json_payload(result_text),
                    error: error.map(|(code, message)| RpcError { code, message }),
                    tool_error,
                    ..Operation::new(key, method, started_at, duration)
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

getters! { PyTrackerCore, |s| {
    /// Whether anything is recorded (`enable_tracing`).
    enabled: bool = s.inner.is_enabled();
    /// The exporters' names, in order.
    exporter_names: Vec<String> = s.inner.exporter_names().to_vec();
}}

#[pymethods]
impl PyTrackerCore {
    /// `exporters` and `options` as `mcplens.Tracker` got them (options under the core's
    /// `TrackerConfig` names); the server's info; the `redact` hook; a fixed `seed` (vectors).
    #[new]
    #[pyo3(signature = (exporters, options, *, server_name = None, server_version = None, redact = None, seed = None))]
    fn new(
        py: Python<'_>,
        exporters: Vec<Bound<'_, PyAny>>,
        options: &Bound<'_, PyDict>,
        server_name: Option<String>,
        server_version: Option<String>,
        redact: Option<Bound<'_, PyAny>>,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let v = py.version_info();
        let extra = json!({
            "server": server_name.map(|n| json!({"name": n, "version": server_version})),
            "seed": seed,
            // What agentcat's own Python SDK sends as `sdk_language`.
            "sdkLanguage": format!("Python {}.{}", v.major, v.minor),
        });
        let (config, callbacks) = tracker_config(py, &exporters, options, extra)?;
        let mut hooks = Hooks { callbacks, ..Hooks::default() };
        if let Some(hook) = redact {
            if !hook.is_callable() {
                return Err(PyTypeError::new_err("redact must be a callable: fn(text: str) -> str"));
            }
            hooks.redact_strings = Some(redact_hook(hook.unbind()));
        }
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

    /// The identify hook answered: a mapping `{"id", "name", "data"}` or None (nobody). Anything
    /// else counts as a failure.
    fn resolve_identity(&self, py: Python<'_>, session: &Bound<'_, PySession>, identity: &Bound<'_, PyAny>) {
        let s = session_of(session);
        if identity.is_none() {
            return self.inner.resolve_identity(s, None);
        }
        let text = |k: &str| -> Option<String> {
            let v = identity.get_item(k).ok().filter(|v| !v.is_none())?;
            v.str().ok().map(|s| s.to_string_lossy().into_owned())
        };
        if !identity.is_instance_of::<PyDict>() && identity.getattr(intern!(py, "keys")).is_err() {
            return self.inner.identify_failed(s);
        }
        let data = identity.get_item("data").ok().filter(|d| !d.is_none()).and_then(|d| {
            let mut buf = String::new();
            write_value(py, &mut buf, &d, 0, None);
            serde_json::from_str::<Value>(&buf).ok()
        });
        self.inner.resolve_identity(s, Some(Identity { id: text("id"), name: text("name"), data }));
    }

    /// The identify hook failed: the waiting records go on without an identity (counted).
    fn identify_failed(&self, session: &Bound<'_, PySession>) {
        self.inner.identify_failed(session_of(session));
    }

    /// The connection closed.
    fn close_session(&self, session: &Bound<'_, PySession>) {
        self.inner.close_session(session_of(session));
    }

    /// Record a request that returned `result` (the request path; see the module docs).
    #[pyo3(signature = (method, session, t0_ns, request_id, params, result, /))]
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        py: Python<'_>,
        method: u8,
        session: &Bound<'_, PySession>,
        t0_ns: u64,
        request_id: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.record_parts(py, method, session, t0_ns, request_id, params, Some(result), None)
    }

    /// Record a request that failed with JSON-RPC error `code`.
    #[pyo3(signature = (method, session, t0_ns, request_id, params, code, message, /))]
    #[allow(clippy::too_many_arguments)]
    fn record_error(
        &self,
        py: Python<'_>,
        method: u8,
        session: &Bound<'_, PySession>,
        t0_ns: u64,
        request_id: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        code: i64,
        message: &str,
    ) -> PyResult<()> {
        self.record_parts(py, method, session, t0_ns, request_id, params, None, Some((code, message)))
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

/// Adds the tracking classes to `mcplens._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TrackingError", py.get_type::<TrackingError>())?;
    py.get_type::<TrackingError>().setattr("pending", py.None())?;
    py.get_type::<TrackingError>().setattr("option", py.None())?;
    m.add_class::<PySession>()?;
    m.add_class::<PyTrackerCore>()?;
    m.add_function(wrap_pyfunction!(check_tracker_options, m)?)?;
    let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    m.add("TRACKED_METHODS", PyTuple::new(py, names)?)?;
    m.add("DEFAULT_AGENTCAT_BASE_URL", mcplens::tracking::export::DEFAULT_BASE_URL)?;
    m.add("DEFAULT_JSONL_PATH", mcplens::tracking::export::DEFAULT_JSONL_PATH)?;
    m.add("EXIT_TIMEOUT_SECONDS", mcplens::tracking::EXIT_TIMEOUT.as_secs_f64())?;
    Ok(())
}
