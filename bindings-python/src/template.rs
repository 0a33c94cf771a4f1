//! RFC 6570 templates (`mcplens::template`), `Catalog.match_uri` and the listing tools' input for
//! Python. Values cross as Python objects read in order (`dict` order is the associative array's
//! order); every rule is the core's.

use mcplens::template::{self, Json, Values};
use mcplens::tool;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::{error, pythonize, tool_error, McplensError};

pyo3::create_exception!(
    mcplens._core,
    TemplateError,
    McplensError,
    "A URI template or its values were refused (`invalid_uri_template`, `invalid_value`, `prefix_on_composite`, \
     `output_too_large`, `invalid_argument`, `match_limit`)."
);

fn template_error(py: Python<'_>, e: &template::TemplateError) -> PyErr {
    error::<TemplateError>(py, e.to_string(), e.code().as_str(), None, None)
}

/// Each variable of `template`: `{"name", "operator", "explode", "prefix"}`, in order of appearance.
#[pyfunction]
fn variables<'py>(py: Python<'py>, template: &str) -> PyResult<Bound<'py, PyAny>> {
    let vars = template::variables(template).map_err(|e| template_error(py, &e))?;
    pythonize(py, &vars)
}

/// Expands `template` (RFC 6570 level 4) with `values`: a mapping of str, int, float, list and
/// dict values (`None` = undefined).
#[pyfunction]
fn expand(py: Python<'_>, template: &str, values: &Bound<'_, PyAny>) -> PyResult<String> {
    let json: Json = pythonize::depythonize(values).map_err(|_| {
        let e = template::TemplateError::InvalidValue {
            variable: None,
            reason: "the values must be a dict of strings, numbers, lists and dicts",
        };
        template_error(py, &e)
    })?;
    let values = Values::from_ordered_json(json).map_err(|e| template_error(py, &e))?;
    template::expand(template, &values).map_err(|e| template_error(py, &e))
}

/// The values under which `template` expands to `uri` (str, list or dict each), or None.
#[pyfunction]
fn matches<'py>(py: Python<'py>, template: &str, uri: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    let found = template::matches(template, uri).map_err(|e| template_error(py, &e))?;
    found.map(|v| pythonize(py, &v)).transpose()
}

/// The model's input for either listing tool: a dict, its JSON text, or None.
pub(crate) fn tool_input(py: Python<'_>, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<tool::Input> {
    let input = match arguments {
        None => Ok(tool::Input::default()),
        Some(a) => match a.cast::<PyString>() {
            Ok(text) => tool::Input::from_json(text.to_str()?),
            Err(_) => match pythonize::depythonize::<serde_json::Value>(a) {
                Ok(value) => tool::Input::from_value(value),
                Err(_) => Err(tool::not_json()),
            },
        },
    };
    input.map_err(|e| tool_error(py, &e, None))
}

/// `Catalog.match_uri`: `{"matches": [{"server", "uri_template", "name", "values"}], "skipped": n}`.
pub(crate) fn match_uri<'py>(
    py: Python<'py>,
    machine: &mcplens::catalog::SharedRefresher,
    uri: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let found = py.detach(|| machine.lock().catalog().match_uri(uri)).map_err(|e| template_error(py, &e))?;
    let matches = PyList::empty(py);
    for m in &found.matches {
        let d = PyDict::new(py);
        d.set_item("server", &*m.server)?;
        d.set_item("uri_template", &*m.uri_template)?;
        d.set_item("name", &*m.name)?;
        d.set_item("values", pythonize(py, &m.values)?)?;
        matches.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("matches", matches)?;
    out.set_item("skipped", found.skipped)?;
    Ok(out.into_any())
}

/// Adds the template functions and `TemplateError` to `mcplens._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TemplateError", m.py().get_type::<TemplateError>())?;
    m.add_function(wrap_pyfunction!(variables, m)?)?;
    m.add_function(wrap_pyfunction!(expand, m)?)?;
    m.add_function(wrap_pyfunction!(matches, m)?)?;
    Ok(())
}
