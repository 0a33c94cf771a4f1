//! Python binding for mcplens (module `mcplens._core`). Skeleton: the PyO3 module lands with the Python package issue.

/// The version of the core this binding is built against.
pub fn core_version() -> &'static str {
    mcplens::VERSION
}
