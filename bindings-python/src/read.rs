//! The tools that ask a server for Python (`mcplens::tool::ServerCall`: the read, the completion):
//! their settings and one call, sans-IO. `mcplens.Catalog.call_tool` performs it with the `mcp`
//! SDK; every rule is the core's.

use mcplens::discovery::{Outcome, SdkFailure};
use mcplens::tool::{self, CompleteConfig, ReadConfig, ServerCall};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::{duration, error, instant, json_text, tool_error, McplensError, PyCatalog, PyToolSpec};

/// The read tool's settings: `any_uri` (read URIs the server did not list, default False),
/// `max_output_chars` (the output cap, 1,000 to 10,000,000, default 100,000), `timeout` (seconds,
/// up to 600, default 30).
#[pyclass(name = "ReadConfig", module = "mcplens._core", frozen)]
pub(crate) struct PyReadConfig {
    pub(crate) inner: ReadConfig,
}

getters! { PyReadConfig, |s| {
    any_uri: bool = s.inner.any_uri;
    max_output_chars: usize = s.inner.max_output_chars;
    timeout: f64 = s.inner.timeout.as_secs_f64();
}}

#[pymethods]
impl PyReadConfig {
    #[new]
    #[pyo3(signature = (*, any_uri = false, max_output_chars = 100_000, timeout = 30.0))]
    fn new(py: Python<'_>, any_uri: bool, max_output_chars: usize, timeout: f64) -> PyResult<Self> {
        let inner = ReadConfig { any_uri, max_output_chars, timeout: duration(timeout).unwrap_or_default() };
        inner.validate().map_err(|e| error::<McplensError>(py, e.to_string(), e.code().as_str(), None, None))?;
        Ok(PyReadConfig { inner })
    }

    fn __repr__(&self) -> String {
        let c = self.inner;
        format!(
            "ReadConfig(any_uri={}, max_output_chars={}, timeout={:?})",
            if c.any_uri { "True" } else { "False" },
            c.max_output_chars,
            c.timeout.as_secs_f64()
        )
    }
}

/// The completion tool's settings: `max_output_chars` (the output cap, 1,000 to 100,000, default
/// 10,000), `timeout` (seconds, up to 600, default 10).
#[pyclass(name = "CompleteConfig", module = "mcplens._core", frozen)]
pub(crate) struct PyCompleteConfig {
    pub(crate) inner: CompleteConfig,
}

getters! { PyCompleteConfig, |s| {
    max_output_chars: usize = s.inner.max_output_chars;
    timeout: f64 = s.inner.timeout.as_secs_f64();
}}

#[pymethods]
impl PyCompleteConfig {
    #[new]
    #[pyo3(signature = (*, max_output_chars = 10_000, timeout = 10.0))]
    fn new(py: Python<'_>, max_output_chars: usize, timeout: f64) -> PyResult<Self> {
        let inner = CompleteConfig { max_output_chars, timeout: duration(timeout).unwrap_or_default() };
        inner.validate().map_err(|e| error::<McplensError>(py, e.to_string(), e.code().as_str(), None, None))?;
        Ok(PyCompleteConfig { inner })
    }

    fn __repr__(&self) -> String {
        let c = self.inner;
        format!("CompleteConfig(max_output_chars={}, timeout={:?})", c.max_output_chars, c.timeout.as_secs_f64())
    }
}

/// One model call of a tool that asks a server (`ReadMcpResourceTool`,
/// `CompleteMcpResourceTemplateTool`), validated against the catalog: send `method` with `params`
/// over `server`'s session, wait at most `remaining()`, then `finish` with what happened.
#[pyclass(name = "ToolCall", module = "mcplens._core", frozen)]
struct PyToolCall {
    inner: ServerCall,
}

getters! { PyToolCall, |s| {
    /// The server to ask.
    server: String = s.inner.server().to_owned();
    /// The JSON-RPC method (`"resources/read"`, `"completion/complete"`).
    method: &'static str = s.inner.method();
}}

#[pymethods]
impl PyToolCall {
    /// Validates the model's `arguments` (a dict, its JSON text) to tool `name` against `catalog`
    /// with `config` (a `ReadConfig` or `CompleteConfig` for that tool; default: the catalog's);
    /// raises `ToolError`.
    #[new]
    #[pyo3(signature = (catalog, name, arguments, *, config = None, now = None))]
    fn new(
        py: Python<'_>,
        catalog: &PyCatalog,
        name: &str,
        arguments: &Bound<'_, PyAny>,
        config: Option<&Bound<'_, PyAny>>,
        now: Option<f64>,
    ) -> PyResult<Self> {
        let now = instant(py, now)?;
        let json = model_json(py, arguments)?;
        let mut calls = tool::CallConfig { read: catalog.read, complete: catalog.complete };
        if let Some(config) = config {
            if let Ok(read) = config.cast::<PyReadConfig>() {
                calls.read = read.get().inner;
            } else {
                calls.complete = config.cast::<PyCompleteConfig>()?.get().inner;
            }
        }
        py.detach(|| ServerCall::new(catalog.lock().catalog(), name, &json, &calls, now))
            .map(|inner| PyToolCall { inner })
            .map_err(|e| tool_error(py, &e, None))
    }

    /// The request's params, as a dict.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let params: serde_json::Value = serde_json::from_str(&self.inner.params_json()).expect("the core writes JSON");
        crate::pythonize(py, &params)
    }

    /// The request's params as compact JSON text.
    fn params_json(&self) -> String {
        self.inner.params_json()
    }

    /// Seconds the host may still wait for the answer.
    #[pyo3(signature = (now = None))]
    fn remaining(&self, py: Python<'_>, now: Option<f64>) -> PyResult<f64> {
        Ok(self.inner.remaining(instant(py, now)?).as_secs_f64())
    }

    /// The model's output for what became of the request — `"page"` (the result's JSON text, `str`
    /// or UTF-8 `bytes`), `"timeout"`, or what the SDK reported instead (classified by the core:
    /// `"error_answer"` or `"sdk_error"` with the code as `value`, `"schema_refused"`, `"lost"`) —
    /// or raises `ToolError`.
    #[pyo3(signature = (outcome, value = None))]
    fn finish(&self, py: Python<'_>, outcome: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        let outcome = match (outcome, value) {
            ("page", Some(v)) => json_text(v)?.map_or(Outcome::Malformed, Outcome::Page),
            ("timeout", _) => Outcome::TimedOut,
            (kind, v) => {
                let code = v.map(|v| v.extract::<f64>()).transpose()?;
                let failure = SdkFailure::from_wire(self.inner.server(), kind, code, None);
                failure.map_err(|e| crate::invalid::<crate::ToolError>(py, &e))?.outcome()
            }
        };
        py.detach(|| self.inner.finish(outcome)).map_err(|e| tool_error(py, &e, None))
    }

    fn __repr__(&self) -> String {
        format!("<ToolCall {} server={:?}>", self.inner.method(), self.inner.server())
    }
}

/// Does the resource tool `name` ask a server (a `ToolCall`)? The listings do not.
#[pyfunction]
fn asks_server(name: &str) -> bool {
    ServerCall::asks_server(name)
}

/// The spec of the resource tool named `name`; `None` for any other name.
#[pyfunction]
fn tool_spec(name: &str) -> Option<PyToolSpec> {
    tool::spec_of(name).map(|inner| PyToolSpec { inner })
}

/// Every resource tool's spec, in the core's order (`mcplens::tool::specs`): what an adapter
/// registers.
#[pyfunction]
fn tool_specs() -> Vec<PyToolSpec> {
    tool::specs().into_iter().map(|inner| PyToolSpec { inner }).collect()
}

/// The model's arguments (a dict, its JSON text) as JSON text; the core's refusal
/// (`mcplens::tool::not_json`) when they cannot be JSON.
fn model_json(py: Python<'_>, arguments: &Bound<'_, PyAny>) -> PyResult<String> {
    match arguments.cast::<PyString>() {
        Ok(text) => Ok(text.to_str()?.to_owned()),
        Err(_) => pythonize::depythonize::<serde_json::Value>(arguments)
            .map(|v| v.to_string())
            .map_err(|_| tool_error(py, &tool::not_json(), None)),
    }
}

/// The servers a call of the resource tool `name` with `arguments` must see current before it
/// answers (`mcplens::tool::current_before`): `Catalog.call_tool` makes them current first.
#[pyfunction]
#[pyo3(signature = (catalog, name, arguments = None))]
fn current_before(
    py: Python<'_>,
    catalog: &PyCatalog,
    name: &str,
    arguments: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<String>> {
    // Input that cannot be JSON reads nothing (the tool then refuses it).
    let Ok(json) = arguments.filter(|a| !a.is_none()).map_or_else(|| Ok("null".to_owned()), |a| model_json(py, a))
    else {
        return Ok(Vec::new());
    };
    Ok(py.detach(|| tool::current_before(catalog.lock().catalog(), name, &json)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(current_before, m)?)?;
    m.add_function(wrap_pyfunction!(asks_server, m)?)?;
    m.add_class::<PyReadConfig>()?;
    m.add_class::<PyCompleteConfig>()?;
    m.add_class::<PyToolCall>()?;
    for (constant, name) in [
        ("LIST_RESOURCE_TEMPLATES_TOOL", tool::NAME),
        ("LIST_RESOURCES_TOOL", tool::RESOURCES_NAME),
        ("READ_RESOURCE_TOOL", tool::read::NAME),
        ("COMPLETE_TEMPLATE_TOOL", tool::complete::NAME),
    ] {
        m.add(constant, tool_spec(name))?;
    }
    m.add_function(wrap_pyfunction!(tool_spec, m)?)?;
    m.add_function(wrap_pyfunction!(tool_specs, m)?)?;
    Ok(())
}
