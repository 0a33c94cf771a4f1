//! The tracking pipeline: pure rules. No module here spawns a thread, reads a clock, or touches a
//! file or socket; times and randomness come in as arguments (the runtime passes them).

pub mod answered;
pub(crate) mod build;
pub mod caps;
pub mod config;
pub(crate) mod event;
pub(crate) mod export;
pub mod export_queue;
pub mod host;
pub mod ids;
#[cfg(feature = "mcpcat")]
pub(crate) mod mcpcat;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
pub(crate) mod queue;
pub mod redact;
pub(crate) mod scan;
pub(crate) mod sessions;
