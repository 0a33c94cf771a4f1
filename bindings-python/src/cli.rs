//! The `mcplens` command of the Python package: the console script and `python -m mcplens` call
//! `cli_main`, the same command line as the `mcplens` binary (`mcplens_cli::run`).

use pyo3::prelude::*;

/// Runs the `mcplens` command line with `argv` (the program name first) and returns its exit
/// code, without the GIL.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| mcplens_cli::run(argv))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cli_main, m)?)
}
