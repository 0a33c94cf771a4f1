//! The tracking runtime: the [`Tracker`](tracker::Tracker)'s threads, the clock, and the
//! exporters' file and HTTP I/O. It drives the [pipeline](crate::tracking::pipeline) and owns no rule of
//! its own.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) mod clock;
pub(crate) mod exporter;
#[cfg(any(feature = "otlp", feature = "mcpcat"))]
pub(crate) mod http;
pub(crate) mod jsonl;
#[cfg(feature = "mcpcat")]
pub(crate) mod mcpcat;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
pub(crate) mod shared;
pub(crate) mod timed;
pub(crate) mod tracker;
pub(crate) mod worker;

/// A seed from process randomness: the standard library's per-process random keys, the clock, the
/// process id and a caller-chosen salt (ids must be unique, not secret).
pub(crate) fn entropy(salt: u64) -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(salt);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    h.write_u64(nanos);
    h.write_u32(std::process::id());
    h.finish()
}
