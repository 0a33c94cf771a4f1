//! Python binding for mcplens: the native module `mcplens._core`.
//!
//! Every rule is the core's. This crate converts values (pages in as JSON text, listings out as
//! typed objects), maps the core's errors to Python exception classes, and reads the monotonic
//! clock when the caller passes no `now`. The `mcp` SDK glue lives in `python/mcplens/`.
#![forbid(unsafe_code)]

/// A class's read-only properties, one line each: `name: Type = expr;`, `expr` reading the object
/// as `s` (doc comments allowed). Their own `#[pymethods]` block (pyo3's `multiple-pymethods`):
/// the class's other methods stay in an ordinary block.
macro_rules! getters {
    ($class:ty, |$s:ident| { $($(#[$m:meta])* $name:ident: $ret:ty = $e:expr;)* }) => {
        #[pymethods]
        impl $class {
            $( $(#[$m])* #[getter] fn $name(&self) -> $ret { let $s = self; $e } )*
        }
    };
}

mod cli;
mod convert;
mod read;
mod refresher;
mod template;
mod tracking;

use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use mcplens::catalog::{self, Reason, Refresher, ServerStatus};
use mcplens::discovery::{self, Annotations, Item, Limits, ListKind, Listing, Outcome, Pager};
use mcplens::error::{parse_wire_name, wire_name, InvalidArgument};
use mcplens::tool;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

pyo3::create_exception!(
    mcplens._core,
    McplensError,
    PyException,
    "Base class of every mcplens error: `.code` (stable snake_case code) and `.server` (or None)."
);
pyo3::create_exception!(
    mcplens._core,
    DiscoveryError,
    McplensError,
    "A traversal failed (`malformed_result`, `deadline`, `server_error`, ...); `.rpc_code` for `server_error`."
);

pyo3::create_exception!(
    mcplens._core,
    CatalogError,
    McplensError,
    "A catalog operation was refused (`unknown_server`, `invalid_argument`)."
);
pyo3::create_exception!(
    mcplens._core,
    ToolError,
    McplensError,
    "The listing tool refused its input (`unknown_server`, `invalid_argument`, `output_too_large`)."
);

/// Builds an exception of class `T` carrying `code`, `server` and `rpc_code` as attributes, so
/// `pickle` and `repr` work as for any Python exception (`args == (message,)`).
fn error<T: pyo3::PyTypeInfo>(
    py: Python<'_>,
    message: String,
    code: &str,
    server: Option<&str>,
    rpc_code: Option<i64>,
) -> PyErr {
    let err = PyErr::new::<T, _>(message);
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", code)?;
        value.setattr("server", server)?;
        value.setattr("rpc_code", rpc_code)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

fn discovery_error(py: Python<'_>, e: &discovery::DiscoveryError) -> PyErr {
    error::<DiscoveryError>(py, e.to_string(), e.code().as_str(), Some(e.server()), e.rpc_code())
}

fn catalog_error(py: Python<'_>, e: &catalog::CatalogError) -> PyErr {
    error::<CatalogError>(py, e.to_string(), e.code().as_str(), e.server(), e.rpc_code())
}

/// `server`: the error's, else the name the input asked for, when it asked for one.
fn tool_error(py: Python<'_>, e: &tool::ToolError, server: Option<&str>) -> PyErr {
    error::<ToolError>(py, e.to_string(), e.code().as_str(), e.server().or(server), e.rpc_code())
}

/// Seconds → whole nanoseconds, rounded (so millisecond values convert exactly); `None` when
/// negative or not finite.
fn duration(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_nanos((secs * 1e9).round() as u64))
}

/// `now` in seconds (any monotonic epoch) → `Duration`; `None` reads `time.monotonic()`.
fn instant(py: Python<'_>, now: Option<f64>) -> PyResult<Duration> {
    let secs = match now {
        Some(s) => s,
        None => py.import("time")?.call_method0("monotonic")?.extract()?,
    };
    duration(secs).ok_or_else(|| {
        error::<McplensError>(
            py,
            "now must be a finite, non-negative number of seconds".into(),
            "invalid_argument",
            None,
            None,
        )
    })
}

/// JSON text a host hands over: `str`, or UTF-8 `bytes` (`None`: not UTF-8, so not JSON text).
fn json_text<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Some(s.to_str()?));
    }
    match value.cast::<PyBytes>() {
        Ok(b) => Ok(std::str::from_utf8(b.as_bytes()).ok()),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err("expected JSON text (str or bytes)")),
    }
}

fn pythonize<'py, T: serde::Serialize + ?Sized>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(PyErr::from)
}

/// A stable error code the host passes back (a failure it got from this package).
fn error_code(py: Python<'_>, server: &str, code: &str) -> PyResult<mcplens::ErrorCode> {
    code.parse().map_err(|_| {
        let _ = code; // host text: never echoed
        let message = "invalid argument: `code` must be one of mcplens' error codes (ERROR_CODES)".to_owned();
        let server = (!server.is_empty()).then_some(server);
        error::<McplensError>(py, message, "invalid_argument", server, None)
    })
}

/// The core's `invalid_argument` about a caller's argument, as an exception of class `T`.
fn invalid<T: pyo3::PyTypeInfo>(py: Python<'_>, e: &InvalidArgument) -> PyErr {
    error::<T>(py, e.to_string(), "invalid_argument", e.server.as_deref(), None)
}

/// The SDK's facts from their wire names (`discovery::SdkFailure::from_wire`).
fn sdk_failure(
    py: Python<'_>,
    server: &str,
    kind: &str,
    code: Option<f64>,
    connection_held: Option<bool>,
) -> PyResult<discovery::SdkFailure> {
    discovery::SdkFailure::from_wire(kind, code, connection_held).ok_or_else(|| {
        let why = "`kind` must be \"error_answer\", \"sdk_error\", \"schema_refused\" or \"lost\"";
        invalid::<DiscoveryError>(py, &InvalidArgument::new(server, why))
    })
}

/// The server's JSON-RPC error code in what the SDK reported (`SdkFailure::rpc_code`): `None`
/// when the failure is not one (the transport's, a malformed answer).
#[pyfunction]
#[pyo3(signature = (kind, code = None, connection_held = None))]
fn sdk_rpc_code(py: Python<'_>, kind: &str, code: Option<f64>, connection_held: Option<bool>) -> PyResult<Option<i64>> {
    Ok(sdk_failure(py, "", kind, code, connection_held)?.rpc_code())
}

/// Bounds on one traversal (defaults: 100 pages, 10,000 items, 1,000,000 bytes, 60 s; repeated
/// cursors by protocol era; cursors up to 65,536 bytes).
#[pyclass(name = "Limits", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
struct PyLimits {
    inner: Limits,
}

getters! { PyLimits, |s| {
    max_pages: u32 = s.inner.max_pages;
    max_items: usize = s.inner.max_items;
    max_bytes: usize = s.inner.max_bytes;
    deadline_seconds: f64 = s.inner.deadline.as_secs_f64();
    /// `"by_era"` (default: fail before 2026-07-28, follow on it), `"fail"` or `"follow"`.
    repeated_cursors: String = wire_name(s.inner.repeated_cursors);
    max_cursor_bytes: usize = s.inner.max_cursor_bytes;
}}

#[pymethods]
impl PyLimits {
    #[new]
    #[pyo3(signature = (
        *, max_pages = 100, max_items = 10_000, max_bytes = 1_000_000, deadline_seconds = 60.0,
        repeated_cursors = "by_era", max_cursor_bytes = 65_536
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        max_pages: u32,
        max_items: usize,
        max_bytes: usize,
        deadline_seconds: f64,
        repeated_cursors: &str,
        max_cursor_bytes: usize,
    ) -> PyResult<Self> {
        let invalid =
            |why: &str| error::<McplensError>(py, format!("invalid limits: {why}"), "invalid_argument", None, None);
        let deadline = duration(deadline_seconds)
            .ok_or_else(|| invalid("deadline_seconds must be a finite, non-negative number"))?;
        let repeated_cursors =
            parse_wire_name("", "repeated_cursors", repeated_cursors).map_err(|e| invalid(&e.reason))?;
        let inner = Limits { max_pages, max_items, max_bytes, deadline, repeated_cursors, max_cursor_bytes };
        inner.validate().map_err(|why| invalid(&why.to_string()))?;
        Ok(PyLimits { inner })
    }

    fn __repr__(&self) -> String {
        format!(
            "Limits(max_pages={}, max_items={}, max_bytes={}, deadline_seconds={:?}, repeated_cursors={:?}, \
             max_cursor_bytes={})",
            self.inner.max_pages,
            self.inner.max_items,
            self.inner.max_bytes,
            self.inner.deadline.as_secs_f64(),
            wire_name(self.inner.repeated_cursors),
            self.inner.max_cursor_bytes,
        )
    }
}

/// The next request a host must send.
#[pyclass(name = "Request", module = "mcplens._core", frozen)]
struct PyRequest {
    inner: discovery::Request,
}

getters! { PyRequest, |s| {
    /// The JSON-RPC method.
    method: &'static str = s.inner.method;
    /// The exact cursor to send back (`None` on page 1).
    cursor: Option<&str> = s.inner.cursor.as_deref();
}}

#[pymethods]
impl PyRequest {
    /// The request's `params`: `None` on page 1 (send no `params` key), else `{"cursor": ...}`.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner.cursor.as_deref().map(|c| pythonize(py, &serde_json::json!({ "cursor": c }))).transpose()
    }

    /// The request's `params` as compact JSON text, or `None`.
    fn params_json(&self) -> Option<String> {
        self.inner.params_json()
    }

    fn __repr__(&self) -> String {
        let page = if self.inner.cursor.is_some() { "next page" } else { "first page" };
        format!("<Request {} ({page})>", self.inner.method)
    }
}

/// The sans-IO pager: `next_request()` → send it → `accept_*()` → … → `finish()`.
#[pyclass(name = "Pager", module = "mcplens._core")]
struct PyPager {
    inner: Option<Pager>,
    server: String,
}

impl PyPager {
    fn pager(&mut self, py: Python<'_>) -> PyResult<&mut Pager> {
        let server = &self.server;
        self.inner.as_mut().ok_or_else(|| {
            let e =
                discovery::DiscoveryError::InvalidState { server: server.clone(), reason: "finish was already called" };
            discovery_error(py, &e)
        })
    }

    fn accept(&mut self, py: Python<'_>, outcome: Outcome<'_>, now: Option<f64>) -> PyResult<()> {
        let now = instant(py, now)?;
        let pager = self.pager(py)?;
        pager.accept(outcome, now).map_err(|e| discovery_error(py, &e))
    }
}

getters! { PyPager, |s| {
    /// `"resources"` or `"resource_templates"`.
    kind: String = wire_name(s.inner.as_ref().map_or(ListKind::Resources, Pager::kind));
    server: &str = &s.server;
    /// True once the traversal has finished or failed.
    is_done: bool = s.inner.as_ref().is_none_or(Pager::is_done);
}}

#[pymethods]
impl PyPager {
    #[new]
    #[pyo3(signature = (kind, server, *, resources_capability = true, limits = None, now = None, protocol_version = ""))]
    fn new(
        py: Python<'_>,
        kind: &str,
        server: String,
        resources_capability: bool,
        limits: Option<PyRef<'_, PyLimits>>,
        now: Option<f64>,
        protocol_version: &str,
    ) -> PyResult<Self> {
        let kind = parse_wire_name(&server, "kind", kind).map_err(|e| invalid::<McplensError>(py, &e))?;
        let limits = limits.map(|l| l.inner).unwrap_or_default();
        let now = instant(py, now)?;
        let pager =
            Pager::new(kind, server.clone(), resources_capability, limits, now).map_err(|e| discovery_error(py, &e))?;
        Ok(PyPager { inner: Some(pager.with_protocol_version(protocol_version)), server })
    }

    /// The next request to send, or `None` when the traversal is over (call `finish()`).
    fn next_request(&mut self) -> Option<PyRequest> {
        self.inner.as_mut()?.next_request().map(|inner| PyRequest { inner })
    }

    /// Seconds left for the whole traversal at `now`: the timeout for the in-flight request.
    #[pyo3(signature = (now = None))]
    fn remaining(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<f64> {
        let now = instant(py, now)?;
        Ok(self.pager(py)?.remaining(now).as_secs_f64())
    }

    /// Feeds the JSON-RPC `result` exactly as the server sent it (JSON text, `str` or UTF-8 `bytes`).
    #[pyo3(signature = (page, now = None))]
    fn accept_page(&mut self, py: Python<'_>, page: &Bound<'_, PyAny>, now: Option<f64>) -> PyResult<()> {
        let now = instant(py, now)?;
        let text = json_text(page)?;
        let pager = self.pager(py)?;
        let result = match text {
            Some(text) => py.detach(|| pager.accept(Outcome::Page(text), now)),
            None => pager.accept(Outcome::Malformed, now),
        };
        result.map_err(|e| discovery_error(py, &e))
    }

    /// Feeds the JSON-RPC `result` as the host's SDK parsed it (dicts, lists, strings, numbers,
    /// booleans, `None`), read in place by the same rules as its JSON text. `False`: nothing was
    /// applied, as the page holds a value JSON text carries otherwise (a lone surrogate, an integer
    /// past 64 bits, a non-finite float, another type): hand its text to `accept_page`.
    #[pyo3(signature = (page, now = None))]
    fn accept_page_parsed(&mut self, py: Python<'_>, page: &Bound<'_, PyAny>, now: Option<f64>) -> PyResult<bool> {
        let now = instant(py, now)?;
        self.pager(py)?.accept_parsed(convert::values::Values::of(page), now).map_err(|e| discovery_error(py, &e))
    }

    /// Feeds what the SDK reported for a request that brought no result, as facts the core
    /// classifies (`SdkFailure`): `kind` `"error_answer"` (the server's error answer; `code` its
    /// code), `"sdk_error"` (the SDK's protocol error with `code`; `connection_held` when the host
    /// can tell), `"schema_refused"` or `"lost"` (anything else the SDK raised).
    #[pyo3(signature = (kind, code = None, connection_held = None, now = None))]
    fn accept_failure(
        &mut self,
        py: Python<'_>,
        kind: &str,
        code: Option<f64>,
        connection_held: Option<bool>,
        now: Option<f64>,
    ) -> PyResult<()> {
        let failure = sdk_failure(py, &self.server, kind, code, connection_held)?;
        self.accept(py, failure.outcome(), now)
    }

    /// Feeds a JSON-RPC error response (only the code is kept: the message is server text).
    #[pyo3(signature = (code, now = None))]
    fn accept_rpc_error(&mut self, py: Python<'_>, code: i64, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::RpcError { code }, now)
    }

    /// The transport failed (closed, send error, decode error).
    #[pyo3(signature = (now = None))]
    fn accept_transport_error(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::Transport, now)
    }

    /// The host's timeout on the in-flight request (given `remaining()`) fired.
    #[pyo3(signature = (now = None))]
    fn accept_timeout(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::TimedOut, now)
    }

    /// The host's typed client refused the result's shape.
    #[pyo3(signature = (now = None))]
    fn accept_malformed(&mut self, py: Python<'_>, now: Option<f64>) -> PyResult<()> {
        self.accept(py, Outcome::Malformed, now)
    }

    /// What the traversal has counted so far (also after a failure).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner {
            Some(p) => pythonize(py, p.diagnostics()),
            None => Ok(PyDict::new(py).into_any()),
        }
    }

    /// The listing of a complete traversal; raises the error that ended a failed one.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyListing> {
        self.pager(py)?;
        let pager = self.inner.take().expect("checked above");
        let listing = pager.finish().map_err(|e| discovery_error(py, &e))?;
        PyListing::new(py, listing)
    }

    fn __repr__(&self) -> String {
        format!("<Pager {} server={:?} done={}>", self.kind(), self.server, self.is_done())
    }
}

/// A complete, projected, sanitized listing of one server.
#[pyclass(name = "Listing", module = "mcplens._core", frozen)]
struct PyListing {
    inner: Listing,
    items: Py<PyTuple>,
}

impl PyListing {
    fn new(py: Python<'_>, inner: Listing) -> PyResult<Self> {
        let items = inner.items.iter().map(|item| item_object(py, item)).collect::<PyResult<Vec<_>>>()?;
        let items = PyTuple::new(py, items)?.unbind();
        Ok(PyListing { inner, items })
    }
}

fn item_object<'py>(py: Python<'py>, item: &Item) -> PyResult<Bound<'py, PyAny>> {
    Ok(match item {
        Item::Template(t) => Bound::new(py, PyResourceTemplate { inner: t.clone() })?.into_any(),
        Item::Resource(r) => Bound::new(py, PyResource { inner: r.clone() })?.into_any(),
    })
}

getters! { PyListing, |s| {
    /// `"resources"` or `"resource_templates"`.
    kind: String = wire_name(s.inner.kind);
    server: &str = &s.inner.server;
    /// `"listed"`, `"no_capability"` or `"method_not_found"`.
    support: String = wire_name(s.inner.support);
    ttl_ms: Option<u64> = s.inner.ttl_ms;
    cache_scope: Option<&str> = s.inner.cache_scope.as_deref();
}}

#[pymethods]
impl PyListing {
    /// The items, in server order.
    #[getter]
    fn items(&self, py: Python<'_>) -> Py<PyTuple> {
        self.items.clone_ref(py)
    }

    /// What the traversal counted (camelCase keys, as the core reports them).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.diagnostics)
    }

    /// The listing as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    /// The listing as compact JSON text.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    fn __len__(&self) -> usize {
        self.inner.items.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.items.bind(py).as_any().try_iter().map(Bound::into_any)
    }

    fn __repr__(&self) -> String {
        let (kind, server, n, support) = (self.kind(), &self.inner.server, self.inner.items.len(), self.support());
        format!("<Listing {kind} server={server:?} items={n} support={support}>")
    }
}

/// The kept annotations of an item.
#[pyclass(name = "Annotations", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
struct PyAnnotations {
    inner: Annotations,
}

getters! { PyAnnotations, |s| {
    priority: Option<f64> = s.inner.priority;
    last_modified: Option<&str> = s.inner.last_modified.as_deref();
}}

#[pymethods]
impl PyAnnotations {
    /// `("user", "assistant")` subset, or None.
    #[getter]
    fn audience<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        self.inner.audience.as_ref().map(|a| PyTuple::new(py, a.iter().map(wire_name))).transpose()
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("Annotations({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

fn annotations(a: &Option<Annotations>) -> Option<PyAnnotations> {
    a.as_ref().map(|a| PyAnnotations { inner: a.clone() })
}

/// A projected, sanitized resource template (`resources/templates/list`).
#[pyclass(name = "ResourceTemplate", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
struct PyResourceTemplate {
    inner: discovery::ResourceTemplate,
}

getters! { PyResourceTemplate, |s| {
    uri_template: &str = &s.inner.uri_template;
    name: &str = &s.inner.name;
    title: Option<&str> = s.inner.title.as_deref();
    description: Option<&str> = s.inner.description.as_deref();
    mime_type: Option<&str> = s.inner.mime_type.as_deref();
    annotations: Option<PyAnnotations> = annotations(&s.inner.annotations);
    server: &str = &s.inner.server;
}}

#[pymethods]
impl PyResourceTemplate {
    /// The item as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("ResourceTemplate({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

/// A projected, sanitized concrete resource (`resources/list`).
#[pyclass(name = "Resource", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
struct PyResource {
    inner: discovery::Resource,
}

getters! { PyResource, |s| {
    uri: &str = &s.inner.uri;
    name: &str = &s.inner.name;
    title: Option<&str> = s.inner.title.as_deref();
    description: Option<&str> = s.inner.description.as_deref();
    mime_type: Option<&str> = s.inner.mime_type.as_deref();
    size: Option<u64> = s.inner.size;
    annotations: Option<PyAnnotations> = annotations(&s.inner.annotations);
    server: &str = &s.inner.server;
}}

#[pymethods]
impl PyResource {
    /// The item as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("Resource({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

/// A failed refresh as the catalog keeps it: a stable code and mcplens' own message.
#[pyclass(name = "Failure", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
struct PyFailure {
    inner: catalog::Failure,
}

getters! { PyFailure, |s| {
    code: &str = s.inner.code.as_str();
    message: &str = &s.inner.message;
}}

#[pymethods]
impl PyFailure {
    fn __repr__(&self) -> String {
        format!("Failure(code={:?}, message={:?})", self.inner.code, self.inner.message)
    }
}

/// A snapshot of one server's catalog entry.
#[pyclass(name = "ServerStatus", module = "mcplens._core", frozen, eq)]
#[derive(Clone, PartialEq)]
struct PyServerStatus {
    inner: ServerStatus,
}

getters! { PyServerStatus, |s| {
    server: &str = &s.inner.server;
    /// `"unknown"`, `"ok"`, `"unsupported"`, `"outdated"`, `"failed"` or `"stale"`.
    status: String = wire_name(s.inner.status);
    /// Commits so far (0 = never).
    generation: u64 = s.inner.generation;
    /// The last failure, kept until the next successful commit.
    last_error: Option<PyFailure> = s.inner.last_error.clone().map(|inner| PyFailure { inner });
    /// Cached resources.
    resources: usize = s.inner.resources;
    /// Cached templates.
    templates: usize = s.inner.templates;
    /// True while a refresh is running.
    refreshing: bool = s.inner.refreshing;
}}

#[pymethods]
impl PyServerStatus {
    /// The snapshot as a dict with wire (camelCase) keys.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    fn __repr__(&self) -> String {
        format!("ServerStatus({})", serde_json::to_string(&self.inner).unwrap_or_default())
    }
}

fn parse_reason(py: Python<'_>, server: &str, reason: &str) -> PyResult<Reason> {
    parse_wire_name(server, "reason", reason).map_err(|e| invalid::<CatalogError>(py, &e))
}

/// The per-server catalog: what its refresh machine (`mcplens._core.Refresher`, one per catalog)
/// keeps, and the reads every host answers from. `now` is seconds on any monotonic clock
/// (default: `time.monotonic()`). `mcplens.Catalog` drives it over `mcp` sessions.
#[pyclass(name = "Catalog", module = "mcplens._core", frozen, subclass)]
struct PyCatalog {
    /// The one machine that owns the catalog's state; `Refresher` shares it (one driver).
    machine: Arc<catalog::SharedRefresher>,
    limits: Option<PyLimits>,
    /// The read tool's settings.
    read: tool::ReadConfig,
}

impl PyCatalog {
    fn lock(&self) -> MutexGuard<'_, Refresher> {
        // No Python code runs under it, so it never waits on the GIL.
        self.machine.lock()
    }
}

getters! { PyCatalog, |s| {
    /// Catalog-wide change counter: compare it with the last value seen to learn of a change.
    generation: u64 = s.lock().catalog().generation();
    /// The bounds of every traversal a refresh runs (None: the defaults).
    limits: Option<PyLimits> = s.limits.clone();
    /// The read tool's settings.
    read: read::PyReadConfig = read::PyReadConfig { inner: s.read };
}}

#[pymethods]
impl PyCatalog {
    #[new]
    #[pyo3(signature = (limits = None, *, refresh = None, read = None))]
    fn new(
        limits: Option<PyRef<'_, PyLimits>>,
        refresh: Option<PyRef<'_, refresher::PyRefreshConfig>>,
        read: Option<PyRef<'_, read::PyReadConfig>>,
    ) -> Self {
        let config = refresh.map(|r| r.inner).unwrap_or_default();
        PyCatalog {
            machine: Arc::new(catalog::SharedRefresher::new(config)),
            limits: limits.map(|l| l.clone()),
            read: read.map(|r| r.inner).unwrap_or_default(),
        }
    }

    /// The resource tools to offer the model now: all three while a server declares `resources`.
    fn visible_tools(&self) -> Vec<&'static str> {
        self.lock().catalog().visible_tools().to_vec()
    }

    /// The registered servers, in registration order.
    fn servers(&self) -> Vec<String> {
        self.lock().catalog().servers()
    }

    /// `server`'s status at `now`; `CatalogError` `unknown_server` for a server never added.
    #[pyo3(signature = (server, now = None))]
    fn status(&self, py: Python<'_>, server: &str, now: Option<f64>) -> PyResult<PyServerStatus> {
        let now = instant(py, now)?;
        let status = self.lock().catalog().status(server, now);
        status.map(|inner| PyServerStatus { inner }).map_err(|e| catalog_error(py, &e))
    }

    /// Would a request for a current listing of `server` traverse at `now` (no pair yet, outdated
    /// by list_changed, or its `ttlMs` ran out)? A failed server is answered from the catalog.
    #[pyo3(signature = (server, now = None))]
    fn needs_refresh(&self, py: Python<'_>, server: &str, now: Option<f64>) -> PyResult<bool> {
        let now = instant(py, now)?;
        Ok(self.lock().catalog().needs_refresh(server, now))
    }

    /// Cached templates: every server's in registration order, or one server's.
    #[pyo3(signature = (server = None))]
    fn templates(&self, py: Python<'_>, server: Option<&str>) -> PyResult<Vec<PyResourceTemplate>> {
        let templates = self.lock().catalog().templates(server).map_err(|e| catalog_error(py, &e))?;
        Ok(templates.into_iter().map(|inner| PyResourceTemplate { inner }).collect())
    }

    /// Cached resources: every server's in registration order, or one server's.
    #[pyo3(signature = (server = None))]
    fn resources(&self, py: Python<'_>, server: Option<&str>) -> PyResult<Vec<PyResource>> {
        let resources = self.lock().catalog().resources(server).map_err(|e| catalog_error(py, &e))?;
        Ok(resources.into_iter().map(|inner| PyResource { inner }).collect())
    }

    /// Answers `ListMcpResourceTemplatesTool`: `arguments` is the model's input (a dict, its JSON
    /// text, or None). Returns the compact JSON output; raises `ToolError` (`unknown_server`,
    /// `invalid_argument`, `output_too_large`: never truncated).
    #[pyo3(signature = (arguments = None))]
    fn call_list_templates_tool(&self, py: Python<'_>, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        self.call_listing_tool(py, tool::NAME, arguments)
    }

    /// Answers `ListMcpResourcesTool`, the concrete-resources twin (same input, paging, failures, cap).
    #[pyo3(signature = (arguments = None))]
    fn call_list_resources_tool(&self, py: Python<'_>, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        self.call_listing_tool(py, tool::RESOURCES_NAME, arguments)
    }

    /// Answers either listing tool by `name` (`invalid_argument` for any other name).
    #[pyo3(signature = (name, arguments = None))]
    fn call_listing_tool(&self, py: Python<'_>, name: &str, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        let input = template::tool_input(py, arguments)?;
        py.detach(|| tool::render_listing(self.lock().catalog(), name, &input))
            .map_err(|e| tool_error(py, &e, input.server.as_deref()))
    }

    /// Every cached template `uri` fits: `{"matches": [{"server", "uri_template", "name", "values"}],
    /// "skipped": n}`, most specific first (see `docs/templates.md`).
    fn match_uri<'py>(&self, py: Python<'py>, uri: &str) -> PyResult<Bound<'py, PyAny>> {
        template::match_uri(py, &self.machine, uri)
    }

    fn __repr__(&self) -> String {
        format!("<Catalog servers={:?}>", self.servers())
    }
}

/// A resource tool's spec, from the core: the same text in every language.
#[pyclass(name = "ToolSpec", module = "mcplens._core", frozen)]
struct PyToolSpec {
    inner: tool::ToolSpec,
}

getters! { PyToolSpec, |s| {
    name: &'static str = s.inner.name;
    description: &'static str = s.inner.description;
    /// Hosts that load rarely used tools on demand should defer this one.
    deferred: bool = s.inner.deferred;
}}

#[pymethods]
impl PyToolSpec {
    /// The JSON schema of the input (a fresh dict on each access).
    #[getter]
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.input_schema)
    }

    /// The input schema in the strict form (every property required; optional ones also `null`).
    #[getter]
    fn strict_input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.strict_input_schema)
    }

    /// MCP tool annotations (`readOnlyHint: true`; a fresh dict on each access).
    #[getter]
    fn annotations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner.annotations)
    }

    /// The spec with wire (camelCase) keys: `name`, `description`, `inputSchema`, `strictInputSchema`, `annotations`, `deferred`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pythonize(py, &self.inner)
    }

    /// The spec as compact JSON text (byte-identical in every language).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    fn __repr__(&self) -> String {
        format!("<ToolSpec {}>", self.inner.name)
    }
}

/// Does a server's `capabilities` object (JSON text) declare `resources`?
#[pyfunction]
fn has_resources_capability(capabilities_json: &str) -> bool {
    discovery::has_resources_capability(capabilities_json)
}

/// Is a client initialized (its server's capabilities as JSON text; None or "null": not yet), and
/// does its server declare `resources`? `DiscoveryError` `invalid_argument` when not initialized.
#[pyfunction]
#[pyo3(signature = (server, capabilities_json))]
fn initialized(py: Python<'_>, server: &str, capabilities_json: Option<&str>) -> PyResult<bool> {
    discovery::initialized(server, capabilities_json).map_err(|e| discovery_error(py, &e))
}

/// The `CatalogError` (`invalid_argument`) of a misuse (`"session_not_entered"`,
/// `"not_an_sdk_client"`, `"foreign_listing"`) about `server`: the core's message.
#[pyfunction]
#[pyo3(signature = (misuse, server = None))]
fn misuse(py: Python<'_>, misuse: &str, server: Option<&str>) -> PyResult<Py<PyAny>> {
    let m = parse_wire_name(server.unwrap_or(""), "misuse", misuse).map_err(|e| invalid::<McplensError>(py, &e))?;
    let e = InvalidArgument::misuse(server.unwrap_or(""), m);
    Ok(invalid::<CatalogError>(py, &e).into_value(py).into_any())
}

/// The native module `mcplens._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", mcplens::VERSION)?;
    let codes: Vec<&str> = mcplens::ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    m.add("ERROR_CODES", pyo3::types::PyTuple::new(py, codes)?)?;
    m.add("McplensError", py.get_type::<McplensError>())?;
    m.add("DiscoveryError", py.get_type::<DiscoveryError>())?;
    m.add("CatalogError", py.get_type::<CatalogError>())?;
    m.add("ToolError", py.get_type::<ToolError>())?;
    // Class-level defaults, so an instance raised by Python code has every attribute too.
    let base = py.get_type::<McplensError>();
    base.setattr("server", py.None())?;
    base.setattr("rpc_code", py.None())?;
    m.add_class::<PyLimits>()?;
    m.add_class::<PyRequest>()?;
    m.add_class::<PyPager>()?;
    m.add_class::<PyListing>()?;
    m.add_class::<PyAnnotations>()?;
    m.add_class::<PyResourceTemplate>()?;
    m.add_class::<PyResource>()?;
    m.add_class::<PyCatalog>()?;
    m.add_class::<PyFailure>()?;
    m.add_class::<PyServerStatus>()?;
    m.add_class::<PyToolSpec>()?;
    m.add_function(wrap_pyfunction!(has_resources_capability, m)?)?;
    m.add_function(wrap_pyfunction!(initialized, m)?)?;
    m.add_function(wrap_pyfunction!(misuse, m)?)?;
    m.add_function(wrap_pyfunction!(sdk_rpc_code, m)?)?;
    cli::register(m)?;
    read::register(m)?;
    template::register(m)?;
    refresher::register(m)?;
    tracking::register(m)?;
    Ok(())
}
