//! Python binding for mcplens: the native module `mcplens._core`.
//!
//! Every rule is the core's. This crate converts values (pages in as JSON text, listings out as
//! typed objects), maps the core's errors to Python exception classes, and reads the monotonic
//! clock when the caller passes no `now`. The `mcp` SDK glue lives in `python/mcplens/`.
//!
//! By area: `errors` (the exception classes, the core's errors mapped onto them),
//! `discovery_classes` (`Limits`, `Request`, `Pager`, `Listing` and its items), `catalog_classes`
//! (`Catalog`, `ServerStatus`, `Failure`, `ToolSpec`), `refresher`, `read` (the read tool),
//! `template`, `tracking`, `cli`, and `convert` (the converters written for speed); this file holds
//! the shared helpers (time, JSON text) and the module's registration.
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

mod catalog_classes;
mod cli;
mod convert;
mod discovery_classes;
mod errors;
mod read;
mod refresher;
mod template;
mod tracking;

use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use mcplens::catalog::{self, Paging, PairTraversal, Reason, Refresher, ServerStatus};
use mcplens::discovery::{self, Annotations, Item, Limits, ListKind, Listing, Outcome, Pager};
use mcplens::error::{parse_wire_name, wire_name, InvalidArgument};
use mcplens::tool;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

use self::catalog_classes::*;
use self::discovery_classes::*;
use self::errors::*;

/// Seconds → whole nanoseconds, rounded (so millisecond values convert exactly); `None` when
/// negative or not finite.
pub(crate) fn duration(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_nanos((secs * 1e9).round() as u64))
}

/// `now` in seconds (any monotonic epoch) → `Duration`; `None` reads `time.monotonic()`.
pub(crate) fn instant(py: Python<'_>, now: Option<f64>) -> PyResult<Duration> {
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
pub(crate) fn json_text<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a str>> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Some(s.to_str()?));
    }
    match value.cast::<PyBytes>() {
        Ok(b) => Ok(std::str::from_utf8(b.as_bytes()).ok()),
        Err(_) => Err(pyo3::exceptions::PyTypeError::new_err("expected JSON text (str or bytes)")),
    }
}

pub(crate) fn pythonize<'py, T: serde::Serialize + ?Sized>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(PyErr::from)
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
