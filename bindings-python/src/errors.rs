//! The exception classes and the mapping of the core's errors onto them.

use crate::*;

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
pub(crate) fn error<T: pyo3::PyTypeInfo>(
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

pub(crate) fn discovery_error(py: Python<'_>, e: &discovery::DiscoveryError) -> PyErr {
    error::<DiscoveryError>(py, e.to_string(), e.code().as_str(), Some(e.server()), e.rpc_code())
}

pub(crate) fn catalog_error(py: Python<'_>, e: &catalog::CatalogError) -> PyErr {
    error::<CatalogError>(py, e.to_string(), e.code().as_str(), e.server(), e.rpc_code())
}

/// `server`: the error's, else the name the input asked for, when it asked for one.
pub(crate) fn tool_error(py: Python<'_>, e: &tool::ToolError, server: Option<&str>) -> PyErr {
    error::<ToolError>(py, e.to_string(), e.code().as_str(), e.server().or(server), e.rpc_code())
}

/// The core's `invalid_argument` about a caller's argument, as an exception of class `T`.
pub(crate) fn invalid<T: pyo3::PyTypeInfo>(py: Python<'_>, e: &InvalidArgument) -> PyErr {
    error::<T>(py, e.to_string(), "invalid_argument", e.server.as_deref(), None)
}

/// The `CatalogError` (`invalid_argument`) of a misuse (`"session_not_entered"`,
/// `"not_an_sdk_client"`) about `server`: the core's message.
#[pyfunction]
#[pyo3(signature = (misuse, server = None))]
pub(crate) fn misuse(py: Python<'_>, misuse: &str, server: Option<&str>) -> PyResult<Py<PyAny>> {
    let m = parse_wire_name(server.unwrap_or(""), "misuse", misuse).map_err(|e| invalid::<McplensError>(py, &e))?;
    let e = InvalidArgument::misuse(server.unwrap_or(""), m);
    Ok(invalid::<CatalogError>(py, &e).into_value(py).into_any())
}
