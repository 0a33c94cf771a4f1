//! Server-side operation tracking: every tracked MCP request becomes an [`Event`], built, redacted
//! and capped off the request path and exported to a JSONL file (default), OTLP/HTTP (feature
//! `otlp`), an MCPcat-compatible API (feature `mcpcat`) or a host callback.
//!
//! ```text
//! host wrapper (request path) → Tracker::record(raw parts) → bounded byte queue → worker thread:
//!   build event → redact → cap payloads → per-exporter bounded queue → exporter thread: batch → send
//! ```
//!
//! Two module trees:
//! - `pipeline` — the pure rules, usable without threads: the event model, [`EventBuilder`]
//!   (extract, [`redact`], hook, [`caps`]), the staging queue's record format, the identify
//!   holds, the [`ExportQueue`] machine, the configuration and the wire formats (OTLP requests,
//!   MCPcat bodies). Nothing there spawns, reads a clock, or touches a file or socket: time comes in.
//! - `runtime` — the [`Tracker`]: its threads, the clock, and the exporters' file and HTTP I/O,
//!   driving the pipeline.
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

use crate::error::ErrorCode;
use std::time::Duration;

mod pipeline;
mod runtime;

pub use pipeline::{caps, config, export_queue, host, ids, redact};

/// Exporters: the [`Exporter`](export::Exporter) trait and what it is given (the pipeline's), and
/// the exporters that write files or send HTTP (the runtime's).
pub mod export {
    pub use super::pipeline::config::{JsonlConfig, DEFAULT_JSONL_PATH};
    #[cfg(feature = "mcpcat")]
    pub use super::pipeline::config::{McpcatConfig, DEFAULT_BASE_URL};
    pub use super::pipeline::export::{Batch, CallbackExporter, ExportItem, ExportPolicy, Exporter};
    #[cfg(feature = "mcpcat")]
    pub use super::pipeline::mcpcat::{body_json, ACCEPTED_EVENT_TYPES};
    #[cfg(feature = "otlp")]
    pub use super::pipeline::{config::OtlpConfig, otlp::DURATION_BUCKETS};
    pub use super::runtime::jsonl::JsonlExporter;
    #[cfg(feature = "mcpcat")]
    pub use super::runtime::mcpcat::McpcatExporter;
    #[cfg(feature = "otlp")]
    pub use super::runtime::otlp::{OtlpMetricsExporter, OtlpTracesExporter};
}

/// The longest wait a receiver's `Retry-After` can impose on one retry (a flush cuts it short,
/// a shutdown's deadline ends it).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

pub use export::{Batch, CallbackExporter, ExportItem, ExportPolicy, Exporter, JsonlConfig, JsonlExporter};
#[cfg(feature = "mcpcat")]
pub use export::{McpcatConfig, McpcatExporter};
#[cfg(feature = "otlp")]
pub use export::{OtlpConfig, OtlpMetricsExporter, OtlpTracesExporter};
pub use pipeline::answered::{Answered, Held, AFTER_RESPONSE, ANSWERED_MAX};
pub use pipeline::build::{
    string_hook, BuildConfig, Built, EventBuilder, EventHook, NotBuilt, Operation, Payload, RequestId, RpcError,
    SessionInfo, SessionKey, StringHook, Tokens, WriteJson,
};
pub use pipeline::caps::PayloadLimits;
pub use pipeline::config::{CallbackConfig, ExporterConfig, IdentifyLimits, TrackerConfig, EXIT_TIMEOUT};
pub use pipeline::event::{
    is_sessionless, write_str as write_json_str, ErrorInfo, ErrorKind, Event, Identity, Json, Method, PeerInfo,
    Projection, Transport, Truncation, TruncationReason, INVALID_METHOD_NAME, MAX_METHOD_NAME, OTHER_METHOD_CODE,
    SCHEMA_VERSION, SESSIONLESS_SINCE,
};
pub use pipeline::export_queue::{ExportQueue, QueueCounts};
pub use runtime::clock::{WallClock, REANCHOR};
pub use runtime::tracker::{
    exit_pending_any, flush_at_exit, flush_at_exit_blocking, ExporterStats, Hooks, Session, Stats, Tracker,
    TrackerBuilder,
};

/// Tracking errors. Codes are stable (see `docs/errors.md`, "Tracking").
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackingError {
    /// An option is invalid (bad URL, zero-sized queue, duplicate exporter name, …).
    #[error("invalid tracking option `{option}`: {reason}")]
    InvalidArgument {
        /// The option, as a path into [`TrackerConfig`]'s JSON (`queueCapacity`,
        /// `exporters[1].endpoint`): stable, for programs.
        option: String,
        /// What is wrong (names the bound; never a header value or an API key).
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
    /// A user hook failed (returned by hooks; the event is dropped and counted).
    #[error("redaction hook failed: {message}")]
    Hook {
        /// The hook's message.
        message: String,
    },
}

impl TrackingError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            TrackingError::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            TrackingError::Io { .. } => ErrorCode::IoError,
            TrackingError::Timeout { .. } => ErrorCode::Timeout,
            TrackingError::Hook { .. } => ErrorCode::HookFailed,
        }
    }

    /// An invalid option (`option`: its path in the configuration's JSON).
    pub fn invalid(option: impl Into<String>, reason: impl Into<String>) -> TrackingError {
        TrackingError::InvalidArgument { option: option.into(), reason: reason.into() }
    }

    /// A hook failure.
    pub fn hook(message: impl Into<String>) -> TrackingError {
        TrackingError::Hook { message: message.into() }
    }

    /// The option an `invalid_argument` error names.
    pub fn option(&self) -> Option<&str> {
        match self {
            TrackingError::InvalidArgument { option, .. } => Some(option),
            _ => None,
        }
    }
}

/// Why an exporter could not deliver a batch: returned by [`Exporter::export`], counted by the
/// tracker (retried or given up), never raised to the request path. Apart from
/// [`TrackingError`]: it is an exporter's answer, not an error of a tracker call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExportError {
    kind: ExportErrorKind,
    /// What failed (an HTTP status, an I/O error kind; never a URL, header or payload).
    pub message: String,
    /// Whether to retry the rest after a backoff.
    pub retryable: bool,
    /// How many events at the front of the batch were delivered anyway.
    pub delivered: usize,
    /// How long the receiver asked to wait before the retry (HTTP `Retry-After`); the queue
    /// waits at least this long (at most [`MAX_RETRY_AFTER`]).
    pub retry_after: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExportErrorKind {
    Failed,
    Panicked,
}

impl ExportError {
    /// A failure worth retrying, with `delivered` events of the batch already delivered.
    pub fn retryable(message: impl Into<String>, delivered: usize) -> ExportError {
        ExportError {
            kind: ExportErrorKind::Failed,
            message: message.into(),
            retryable: true,
            delivered,
            retry_after: None,
        }
    }

    /// A failure not worth retrying (the rest of the batch counts as failed).
    pub fn permanent(message: impl Into<String>, delivered: usize) -> ExportError {
        ExportError {
            kind: ExportErrorKind::Failed,
            message: message.into(),
            retryable: false,
            delivered,
            retry_after: None,
        }
    }

    /// The exporter panicked (not retried: the batch counts as failed).
    pub fn panicked() -> ExportError {
        ExportError {
            kind: ExportErrorKind::Panicked,
            message: "the exporter panicked".to_owned(),
            retryable: false,
            delivered: 0,
            retry_after: None,
        }
    }

    /// With the receiver's `Retry-After`.
    pub fn with_retry_after(mut self, wait: Option<Duration>) -> ExportError {
        self.retry_after = wait;
        self
    }

    /// The stable code: `export_failed`, or `exporter_panicked`.
    pub fn code(&self) -> ErrorCode {
        match self.kind {
            ExportErrorKind::Failed => ErrorCode::ExportFailed,
            ExportErrorKind::Panicked => ErrorCode::ExporterPanicked,
        }
    }
}
