//! Server-side operation tracking: every tracked MCP request becomes an [`Event`], built, redacted
//! and capped off the request path and exported to a JSONL file (default), OTLP/HTTP (feature
//! `otlp`), an MCPcat-compatible API (feature `mcpcat`) or a host callback.
//!
//! ```text
//! host wrapper (request path) → Tracker::record(raw parts) → bounded byte queue → worker thread:
//!   build event → redact → cap payloads → per-exporter bounded queue → exporter thread: batch → send
//! ```
//!
//! Pure parts, usable without threads: [`EventBuilder`] (with [`redact`] and [`caps`]), the id and
//! time helpers in [`ids`]. Drivers: [`Tracker`] and the [`export`]ers.
//!
//! ```
//! use std::time::{Duration, SystemTime};
//! use mcplens::tracking::{Method, Operation, Payload, RequestId, Tracker};
//!
//! let dir = std::env::temp_dir().join(format!("mcplens-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let tracker = Tracker::builder()
//!     .server("notes", Some("1.0.0"))
//!     .jsonl(mcplens::tracking::JsonlConfig::new(dir.join("events.jsonl")))
//!     .build()?;
//! let session = tracker.open_session(None, None); // one per connection
//!
//! // In the request handler: timestamps, method, id, params and result as the host has them.
//! let started = SystemTime::now();
//! let result = r#"{"contents":[{"uri":"note://1","text":"hello"}]}"#;
//! tracker.record(&Operation {
//!     request_id: RequestId::Number(1),
//!     params: Payload::Json(r#"{"uri":"note://1"}"#),
//!     result: Payload::Json(result),
//!     ..Operation::new(session.key(), Method::ResourcesRead, started, Duration::from_micros(80))
//! });
//!
//! tracker.flush(Duration::from_secs(5))?;
//! assert_eq!(tracker.stats().exporter("jsonl").unwrap().exported, 1);
//! tracker.shutdown(Duration::from_secs(5))?;
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), mcplens::tracking::TrackingError>(())
//! ```

use std::time::Duration;

mod build;
pub mod caps;
mod event;
pub mod export;
pub mod ids;
mod queue;
pub mod redact;
mod scan;
mod tracker;

/// The longest wait a receiver's `Retry-After` can impose on one retry (a flush cuts it short,
/// a shutdown's deadline ends it).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

pub use build::{
    BuildConfig, Built, EventBuilder, EventHook, NotBuilt, Operation, Payload, RequestId, RpcError, SessionInfo,
    SessionKey, StringHook, WriteJson,
};
pub use caps::PayloadLimits;
pub use event::{
    ErrorInfo, Event, Identity, Json, Method, PeerInfo, Transport, Truncation, TruncationReason, SCHEMA_VERSION,
};
pub use export::{Batch, CallbackExporter, ExportItem, ExportPolicy, Exporter, JsonlConfig, JsonlExporter};
#[cfg(feature = "mcpcat")]
pub use export::{McpcatConfig, McpcatExporter};
#[cfg(feature = "otlp")]
pub use export::{OtlpConfig, OtlpMetricsExporter, OtlpTracesExporter};
pub use tracker::{ExporterStats, Session, Stats, Tracker, TrackerBuilder};

/// Tracking errors. Codes are stable (see `docs/errors.md`, "Tracking").
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackingError {
    /// An option is invalid (bad URL, zero-sized queue, duplicate exporter name, …).
    #[error("invalid tracking option: {reason}")]
    InvalidArgument {
        /// What is wrong.
        reason: String,
    },
    /// A file or thread operation failed.
    #[error("tracking I/O failed ({what}): {source}")]
    Io {
        /// What was being done (names the file, never its content).
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `flush` or `shutdown` ran out of time with events still undelivered.
    #[error("{pending} events still undelivered after {} ms", waited.as_millis())]
    Timeout {
        /// Events not yet exported, dropped or failed.
        pending: u64,
        /// How long the call waited.
        waited: Duration,
    },
    /// An exporter could not deliver (returned by exporters; counted, never raised by `record`).
    #[error("exporter \"{exporter}\" failed: {message}")]
    Export {
        /// The exporter.
        exporter: String,
        /// What failed (an HTTP status, an I/O error kind; never a URL, header or payload).
        message: String,
        /// Whether to retry after a backoff.
        retryable: bool,
        /// How many events at the front of the batch were delivered anyway.
        delivered: usize,
        /// How long the receiver asked to wait before the retry (HTTP `Retry-After`); the worker
        /// waits at least this long (at most [`MAX_RETRY_AFTER`]).
        retry_after: Option<Duration>,
    },
    /// A user redaction hook failed (returned by hooks; the event is dropped and counted).
    #[error("redaction hook failed: {message}")]
    Hook {
        /// The hook's message.
        message: String,
    },
}

impl TrackingError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> &'static str {
        match self {
            TrackingError::InvalidArgument { .. } => "invalid_argument",
            TrackingError::Io { .. } => "io_error",
            TrackingError::Timeout { .. } => "timeout",
            TrackingError::Export { .. } => "export_failed",
            TrackingError::Hook { .. } => "hook_failed",
        }
    }

    /// An exporter failure worth retrying, with `delivered` events of the batch already delivered.
    pub fn retryable(exporter: impl Into<String>, message: impl Into<String>, delivered: usize) -> TrackingError {
        TrackingError::Export {
            exporter: exporter.into(),
            message: message.into(),
            retryable: true,
            delivered,
            retry_after: None,
        }
    }

    /// An exporter failure not worth retrying.
    pub fn permanent(exporter: impl Into<String>, message: impl Into<String>, delivered: usize) -> TrackingError {
        TrackingError::Export {
            exporter: exporter.into(),
            message: message.into(),
            retryable: false,
            delivered,
            retry_after: None,
        }
    }

    /// A hook failure.
    pub fn hook(message: impl Into<String>) -> TrackingError {
        TrackingError::Hook { message: message.into() }
    }
}
