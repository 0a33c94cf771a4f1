//! The version of this crate (and of every mcplens package: one version for all).

/// The version of this crate (and of every mcplens package: one version for all).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
