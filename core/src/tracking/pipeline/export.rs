//! What an exporter is given and what it answers: [`ExportItem`], [`Batch`], the [`Exporter`]
//! trait and its [`ExportPolicy`]. The exporters that do I/O are the runtime's
//! (`runtime::{jsonl, otlp, mcpcat}`); each runs on its own thread with its own bounded queue,
//! batches (at most `max_events` events or `max_delay`), and retries with exponential backoff and
//! jitter; a slow or dead exporter never blocks `record` or another exporter.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::backoff::Backoff;
use crate::millis;

use super::build::Tokens;
use super::event::{Event, Method};
use crate::tracking::ExportError;

/// Which methods' events an exporter takes ([`Exporter::accepts`], asked once per known method and
/// once for every [`Method::Other`], with an empty name): what the runtime keeps of the answers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepts(u64);

impl Accepts {
    /// The exporter's answers, asked now.
    pub fn of(exporter: &dyn Exporter) -> Accepts {
        let other = Method::Other(Box::from(""));
        let bits =
            Method::ALL.iter().chain([&other]).filter(|m| exporter.accepts(m)).fold(0, |acc, m| acc | Accepts::bit(m));
        Accepts(bits)
    }

    /// Whether the exporter takes events of this method.
    pub fn contains(self, method: &Method) -> bool {
        self.0 & Accepts::bit(method) != 0
    }

    /// Bit `code` for a known method, bit 63 for every [`Method::Other`].
    fn bit(method: &Method) -> u64 {
        1 << u32::from(method.code()).min(63)
    }
}

/// One built event as exporters see it.
#[derive(Debug)]
pub struct ExportItem {
    pub(crate) started_unix_nanos: u64,
    pub(crate) duration: Duration,
    pub(crate) event: Event,
    pub(crate) json: String,
    pub(crate) tokens: Option<Tokens>,
    /// Its span is a child of the host's own span (`INTERNAL` in OTLP).
    pub(crate) under_host_span: bool,
}

impl ExportItem {
    /// The event.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Its JSON (camelCase, compact, no newline).
    pub fn json(&self) -> &str {
        &self.json
    }

    /// When the request started, in nanoseconds since the Unix epoch.
    pub fn started_unix_nanos(&self) -> u64 {
        self.started_unix_nanos
    }

    /// How long it took (nanosecond resolution, unlike `durationMs`).
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// The token estimate of the request and its result (when an exporter needs it).
    pub fn tokens(&self) -> Option<Tokens> {
        self.tokens
    }

    /// An item for tests of custom exporters.
    pub fn new(event: Event, started_unix_nanos: u64, duration: Duration) -> ExportItem {
        let json = serde_json::to_string(&event).unwrap_or_default();
        ExportItem { started_unix_nanos, duration, event, json, tokens: None, under_host_span: false }
    }

    /// Whether its span is a child of the host's own span ([`Operation::host_span`](crate::tracking::Operation::host_span)).
    pub fn under_host_span(&self) -> bool {
        self.under_host_span
    }

    /// The item as a child of the host's own span (tests of custom exporters).
    pub fn with_host_span(mut self) -> ExportItem {
        self.under_host_span = true;
        self
    }

    /// An item with a token estimate, for tests of custom exporters.
    pub fn with_tokens(mut self, tokens: Tokens) -> ExportItem {
        self.tokens = Some(tokens);
        self
    }
}

/// A batch of events handed to an exporter (at most the batch size, in record order).
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    items: &'a [Arc<ExportItem>],
}

impl<'a> Batch<'a> {
    /// A batch over these items.
    pub fn new(items: &'a [Arc<ExportItem>]) -> Batch<'a> {
        Batch { items }
    }

    /// How many events.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items.
    pub fn items(&self) -> &'a [Arc<ExportItem>] {
        self.items
    }

    /// The events.
    pub fn events(&self) -> impl Iterator<Item = &'a Event> + 'a {
        self.items.iter().map(|i| &i.event)
    }

    /// The events' JSON lines.
    pub fn json_lines(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.items.iter().map(|i| i.json.as_str())
    }

    /// The events as one JSON array (for hosts that take a batch as text).
    pub fn to_json_array(&self) -> String {
        let mut s = String::with_capacity(2 + self.items.iter().map(|i| i.json.len() + 1).sum::<usize>());
        s.push('[');
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&item.json);
        }
        s.push(']');
        s
    }
}

/// A destination for events. Called on the exporter's own thread, one batch at a time.
///
/// Return `Ok(())` when the whole batch is delivered. On failure return an [`ExportError`] with
/// `delivered` = how many events at the front of the batch were delivered anyway and
/// `retryable` = whether to try the rest again after a backoff. A panic counts the batch as
/// failed (code `exporter_panicked`).
pub trait Exporter: Send + 'static {
    /// Deliver a batch.
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError>;

    /// Whether events of this method go to this exporter (asked once per method when the tracker
    /// starts, and once for every [`Method::Other`], with an empty name); the others are counted
    /// as `skipped` (default: all go).
    fn accepts(&self, method: &Method) -> bool {
        let _ = method;
        true
    }

    /// Whether this exporter needs the token estimate ([`ExportItem::tokens`]; default no).
    fn needs_tokens(&self) -> bool {
        false
    }

    /// Called once when the tracker shuts down, after the last batch.
    fn shutdown(&mut self) {}
}

/// An exporter made of a closure: `f(batch)`; the host callback that bindings and tests use.
pub struct CallbackExporter<F>(pub F);

impl<F> Exporter for CallbackExporter<F>
where
    F: FnMut(&Batch<'_>) -> Result<(), ExportError> + Send + 'static,
{
    fn export(&mut self, batch: &Batch<'_>) -> Result<(), ExportError> {
        (self.0)(batch)
    }
}

/// Batching and retry policy (per exporter). In [`TrackerConfig`](crate::tracking::TrackerConfig) JSON:
/// `{"maxEvents", "maxDelayMs", "maxIdleMs", "maxQueued", "initialBackoffMs", "maxBackoffMs", "maxAttempts"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ExportPolicy {
    /// Most events per batch (default 512).
    pub max_events: usize,
    /// Longest an event waits for a batch to fill under load (default 1 s).
    #[serde(rename = "maxDelayMs", with = "millis")]
    pub max_delay: Duration,
    /// A batch goes once no event has come for this long (default 20 ms): batching only under
    /// load, and a lone event is exported within it (a host may kill its server soon after).
    #[serde(rename = "maxIdleMs", with = "millis")]
    pub max_idle: Duration,
    /// Most events waiting per exporter; when full the oldest are dropped and counted (default 10,000).
    pub max_queued: usize,
    /// First backoff after a failure (default 200 ms); doubles per attempt, with jitter.
    #[serde(rename = "initialBackoffMs", with = "millis")]
    pub initial_backoff: Duration,
    /// Longest backoff (default 30 s).
    #[serde(rename = "maxBackoffMs", with = "millis")]
    pub max_backoff: Duration,
    /// Attempts per batch before it is counted as failed (default 8; about 1 minute of retrying).
    pub max_attempts: u32,
}

impl Default for ExportPolicy {
    fn default() -> Self {
        ExportPolicy {
            max_events: 512,
            max_delay: Duration::from_secs(1),
            max_idle: Duration::from_millis(20),
            max_queued: 10_000,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(30),
            max_attempts: 8,
        }
    }
}

impl ExportPolicy {
    /// The retry schedule: `initial · 2^(attempt-1)`, at most `max_backoff`, waited with the
    /// crate's one jitter rule ([`crate::backoff`]: uniformly in `[b/2, b]`).
    pub fn schedule(&self) -> Backoff {
        Backoff { base: self.initial_backoff, max: self.max_backoff }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let p = ExportPolicy::default().schedule();
        assert_eq!([1, 2, 5, 40].map(|n| p.ceiling_ms(n)), [200, 400, 3200, 30_000]);
    }
}
