//! Node binding for mcplens (napi-rs). Skeleton: the napi module lands with the Node package issue.

/// The version of the core this binding is built against.
pub fn core_version() -> &'static str {
    mcplens::VERSION
}
