//! The tracker API: [`Tracker`] (the request path, sessions, flush, shutdown, stats), built from
//! one [`TrackerConfig`] and the host's [`Hooks`]. The worker thread (`worker.rs`) builds events;
//! each exporter has a thread (`exporter.rs`) driving its sans-IO [`ExportQueue`](crate::tracking::ExportQueue).

use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::exporter::run_exporter;
use super::jsonl::JsonlExporter;
use super::shared::{lock, Shared, Slot};
use super::worker::run_builder;
use crate::tracking::pipeline::build::{
    BuildConfig, EventBuilder, Operation, Payload, SessionInfo, SessionKey, StringHook,
};
use crate::tracking::pipeline::caps::PayloadLimits;
use crate::tracking::pipeline::config::JsonlConfig;
use crate::tracking::pipeline::config::{ExporterConfig, IdentifyLimits, TrackerConfig};
use crate::tracking::pipeline::event::{Identity, PeerInfo, Projection, Transport};
use crate::tracking::pipeline::export::{Batch, CallbackExporter, ExportPolicy, Exporter};
use crate::tracking::pipeline::ids::IdGen;
use crate::tracking::pipeline::queue::{encode, encoded_len, Bytes, Parts, Staging};
use crate::tracking::pipeline::sessions::IdentifyState;
use crate::tracking::EventHook;
use crate::tracking::{ExportError, TrackingError};

/// A session (one client connection) as the tracker knows it. Cheap to clone; pass its
/// [`key`](Session::key) in each [`Operation`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Session {
    key: SessionKey,
    id: Arc<str>,
}

impl Session {
    /// The key to put in [`Operation::session`].
    pub fn key(&self) -> SessionKey {
        self.key
    }

    /// The `ses_…` id its events carry (none on requests of a sessionless revision).
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Counters of one exporter.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExporterStats {
    /// The exporter's name (see [`TrackerConfig::names`]).
    pub name: String,
    /// Events delivered.
    pub exported: u64,
    /// Events dropped: its queue was full (oldest first), or shutdown's deadline passed first.
    pub dropped: u64,
    /// Events given up on: a permanent error, a panic, or every retry failed.
    pub failed: u64,
    /// Events it does not take (the agentcat API's event types, see `docs/tracking.md`).
    pub skipped: u64,
    /// Events waiting or being sent.
    pub pending: u64,
}

/// Counters of a tracker: the one `stats()` shape of every language (camelCase JSON:
/// [`Stats::to_json`]). Once [`Tracker::flush`] has returned `Ok`, for every exporter:
/// `recorded = dropped + filtered + redactionFailed + queued + exported + dropped' + failed +
/// skipped + pending` (primed: the exporter's own counters), with `queued = pending = 0`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Operations accepted by `record` (a disabled tracker accepts none).
    pub recorded: u64,
    /// Operations dropped before becoming events: the request-path queue was full (oldest
    /// first), or `record` was called after shutdown.
    pub dropped: u64,
    /// Events the event hook dropped (`None`).
    pub filtered: u64,
    /// Events dropped because a redaction hook failed or panicked.
    pub redaction_failed: u64,
    /// Events that went on without the identity they waited for (identify failed, or a bound
    /// passed); they are exported as usual.
    pub unidentified: u64,
    /// Operations waiting to become events (queued, being built, or held for identify).
    pub queued: u64,
    /// Per exporter, in configuration order.
    pub exporters: Vec<ExporterStats>,
}

impl Stats {
    /// The counters of the exporter with this name.
    pub fn exporter(&self, name: &str) -> Option<&ExporterStats> {
        self.exporters.iter().find(|e| e.name == name)
    }

    /// The counters of a tracker that has recorded nothing, with these exporters.
    pub fn zero(names: &[String]) -> Stats {
        Stats {
            exporters: names.iter().map(|n| ExporterStats { name: n.clone(), ..ExporterStats::default() }).collect(),
            ..Stats::default()
        }
    }

    /// As JSON text (what Python's and Node's `stats()` return, parsed).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// What the host supplies besides the [`TrackerConfig`]: its hooks and functions.
#[derive(Default)]
pub struct Hooks {
    /// The string hook (Python's and Node's `redact`), all strings of one event per call.
    pub redact_strings: Option<StringHook>,
    /// The event hook.
    pub redact_event: Option<EventHook>,
    /// One exporter per `callback` entry of the configuration, in order.
    pub callbacks: Vec<Box<dyn Exporter>>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("redact_strings", &self.redact_strings.is_some())
            .field("redact_event", &self.redact_event.is_some())
            .field("callbacks", &self.callbacks.len())
            .finish()
    }
}

struct Handle {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.shared.enabled() {
            let _ = shutdown(&self.shared, &self.threads, self.shared.config().drop_timeout);
        }
    }
}

/// The tracker: records operations on the request path and exports events off it.
///
/// Call order: [`Tracker::start`] (or [`Tracker::builder`] … [`build`](TrackerBuilder::build)) →
/// per connection [`open_session`](Tracker::open_session) (then, with an identify hook,
/// [`begin_identify`](Tracker::begin_identify) … [`resolve_identity`](Tracker::resolve_identity) or
/// [`identify_failed`](Tracker::identify_failed); after `initialize`
/// [`set_session_client`](Tracker::set_session_client)) → per request [`record`](Tracker::record) →
/// [`close_session`](Tracker::close_session); at the end [`shutdown`](Tracker::shutdown) (dropping
/// the last clone shuts down with the drop timeout). [`flush`](Tracker::flush) and
/// [`stats`](Tracker::stats) any time.
///
/// `record` copies the raw parts into a preallocated buffer under a short lock and returns: no JSON
/// building, redaction, serialization of JSON text or I/O on the caller's thread. A worker thread
/// builds the events; each exporter has its own thread. No signal handlers, nothing printed.
#[derive(Clone)]
pub struct Tracker {
    inner: Arc<Handle>,
}

impl fmt::Debug for Tracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracker").field("enabled", &self.inner.shared.enabled()).finish_non_exhaustive()
    }
}

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Scratch kept per thread between calls; a larger one (after a big payload) is released.
const SCRATCH_KEEP: usize = 1 << 20;

fn direct<'a>(p: &Payload<'a>) -> Bytes<'a> {
    match *p {
        Payload::Json(s) => Bytes::Json(s.as_bytes()),
        Payload::Omitted(n) => Bytes::Omitted(n),
        _ => Bytes::None,
    }
}

impl Tracker {
    /// A builder with the defaults (JSONL to `./mcplens-events.jsonl` unless exporters are added).
    pub fn builder() -> TrackerBuilder {
        TrackerBuilder::default()
    }

    /// A tracker that records nothing and starts no thread (`enable_tracing = false`).
    pub fn disabled() -> Tracker {
        Tracker::disabled_for(TrackerConfig { enable_tracing: false, ..TrackerConfig::default() }, Vec::new())
    }

    fn disabled_for(config: TrackerConfig, names: Vec<String>) -> Tracker {
        let seed = config.seed.unwrap_or_else(|| super::entropy(0));
        let shared = Arc::new(Shared::new(config, names, Vec::new(), seed, false));
        Tracker { inner: Arc::new(Handle { shared, threads: Mutex::new(Vec::new()) }) }
    }

    /// Start a tracker: check the configuration, open the exporters (a JSONL file that cannot be
    /// opened fails here), start the worker and exporter threads. `hooks.callbacks` holds one
    /// exporter per `callback` entry of the configuration, in order. With `enableTracing: false`
    /// the configuration is still checked, but nothing is opened or started.
    pub fn start(config: TrackerConfig, mut hooks: Hooks) -> Result<Tracker, TrackingError> {
        config.check()?;
        let names = config.names()?;
        let entries = config.exporters_or_default();
        let wanted = entries.iter().filter(|e| matches!(e, ExporterConfig::Callback { .. })).count();
        if wanted != hooks.callbacks.len() {
            return Err(TrackingError::invalid(
                "exporters",
                format!("{wanted} callback exporters configured, {} functions given", hooks.callbacks.len()),
            ));
        }
        if !config.enable_tracing {
            return Ok(Tracker::disabled_for(config, names));
        }
        let mut exporters: Vec<Box<dyn Exporter>> = Vec::new();
        let mut callbacks = hooks.callbacks.drain(..);
        for entry in entries {
            match entry {
                ExporterConfig::Jsonl { config: c, .. } => exporters.push(Box::new(JsonlExporter::open(c)?)),
                #[cfg(feature = "otlp")]
                ExporterConfig::Otlp { config: c, .. } => {
                    if c.traces {
                        exporters.push(Box::new(super::otlp::OtlpTracesExporter::new(c.clone())?));
                    }
                    if c.metrics {
                        exporters.push(Box::new(super::otlp::OtlpMetricsExporter::new(c)?));
                    }
                }
                #[cfg(feature = "mcpcat")]
                ExporterConfig::Mcpcat { config: mut c, .. } => {
                    c.sdk_language = config.sdk_language.clone();
                    exporters.push(Box::new(super::mcpcat::McpcatExporter::new(c)?));
                }
                ExporterConfig::Callback { .. } => {
                    // Counted above: one function per entry.
                    if let Some(f) = callbacks.next() {
                        exporters.push(super::timed::exporter(f, config.callback_timeout)?);
                    }
                }
            }
        }
        drop(callbacks);
        let host_hooks = wanted > 0 || hooks.redact_strings.is_some() || hooks.redact_event.is_some();
        let seed = config.seed.unwrap_or_else(|| super::entropy(1));
        let mut rng = IdGen::seeded(seed ^ 0x0E59_0127);
        let slots: Vec<Arc<Slot>> = names
            .iter()
            .zip(&exporters)
            .map(|(n, e)| Arc::new(Slot::new(n, e.as_ref(), config.export, &mut rng)))
            .collect();
        let build = BuildConfig {
            capture_parameters: config.capture_parameters,
            capture_responses: config.capture_responses,
            capture_resource_text: config.capture_resource_text,
            builtin_redaction: config.builtin_redaction,
            limits: config.limits,
            server: config.server.clone(),
            redact_string: hooks
                .redact_strings
                .take()
                .map(|h| super::timed::string_hook(h, config.hook_timeout))
                .transpose()?,
            redact_event: hooks.redact_event.take(),
            estimate_tokens: exporters.iter().any(|e| e.needs_tokens()),
        };
        let initial = Staging::initial_capacity(config.queue_bytes);
        let shared = Arc::new(Shared::new(config, names, slots.clone(), seed, host_hooks));
        let builder = EventBuilder::new(build, IdGen::seeded(seed));
        let mut threads = Vec::new();
        let spawn_err = |e| TrackingError::Io { what: "starting a tracking thread".to_owned(), source: e };
        for (exporter, slot) in exporters.into_iter().zip(slots) {
            let sh = shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("mcplens-export-{}", slot.name))
                .spawn(move || run_exporter(sh, slot, exporter))
                .map_err(spawn_err)?;
            threads.push(t);
        }
        let sh = shared.clone();
        let t = std::thread::Builder::new()
            .name("mcplens-tracker".to_owned())
            .spawn(move || run_builder(sh, builder, initial))
            .map_err(spawn_err)?;
        threads.push(t);
        let inner = Arc::new(Handle { shared, threads: Mutex::new(threads) });
        let mut live = lock(&LIVE);
        live.retain(|h| h.strong_count() > 0);
        live.push(Arc::downgrade(&inner));
        Ok(Tracker { inner })
    }

    /// Whether this tracker records anything.
    pub fn is_enabled(&self) -> bool {
        self.inner.shared.enabled()
    }

    /// The configuration it runs with (every default filled in).
    pub fn config(&self) -> &TrackerConfig {
        self.inner.shared.config()
    }

    /// Its exporters' names, in order (as in [`Stats::exporters`]).
    pub fn exporter_names(&self) -> &[String] {
        self.inner.shared.names()
    }

    /// Record one operation (the request path). Returns whether it was queued (false when the
    /// tracker is disabled). Never blocks on I/O or on an exporter; when the queue is full the
    /// oldest operation waiting is dropped and counted.
    pub fn record(&self, op: &Operation<'_>) -> bool {
        let s = &*self.inner.shared;
        if !s.enabled() {
            return false;
        }
        // Responses not captured: what the projection keeps goes on as JSON text (a `tools/call`
        // result's `isError`, passed alone by hosts; the builder reads it and keeps no response).
        let result = match (op.method.result_projection(s.capture_responses()), op.result) {
            (Projection::Whole, result) => result,
            (Projection::Keys(_), result @ Payload::Json(_)) => result,
            _ => Payload::None,
        };
        let owned = |p: &Payload<'_>| matches!(p, Payload::Value(_) | Payload::Serialize(_));
        if owned(&op.params) || owned(&op.meta) || owned(&result) {
            SCRATCH.with(|cell| match cell.try_borrow_mut() {
                Ok(mut scratch) => {
                    self.push_serialized(op, result, &mut scratch);
                    if scratch.capacity() > SCRATCH_KEEP {
                        *scratch = Vec::new();
                    }
                }
                Err(_) => self.push_serialized(op, result, &mut Vec::new()),
            });
        } else {
            let parts = Parts { params: direct(&op.params), meta: direct(&op.meta), result: direct(&result) };
            self.push(op, parts);
        }
        true
    }

    fn push_serialized(&self, op: &Operation<'_>, result: Payload<'_>, scratch: &mut Vec<u8>) {
        scratch.clear();
        let mut ranges = [(0usize, 0usize); 3];
        for (i, p) in [op.params, op.meta, result].iter().enumerate() {
            let start = scratch.len();
            let ok = match p {
                Payload::Value(v) => serde_json::to_writer(&mut *scratch, v).is_ok(),
                Payload::Serialize(w) => w.write_json(scratch).is_ok(),
                _ => true,
            };
            if !ok {
                scratch.truncate(start);
            }
            ranges[i] = (start, scratch.len());
        }
        let scratch: &[u8] = scratch;
        fn resolve<'x>(p: &Payload<'x>, scratch: &'x [u8], (a, b): (usize, usize)) -> Bytes<'x> {
            match p {
                Payload::Value(_) | Payload::Serialize(_) if b > a => Bytes::Json(&scratch[a..b]),
                Payload::Value(_) | Payload::Serialize(_) => Bytes::None,
                other => direct(other),
            }
        }
        let parts = Parts {
            params: resolve(&op.params, scratch, ranges[0]),
            meta: resolve(&op.meta, scratch, ranges[1]),
            result: resolve(&result, scratch, ranges[2]),
        };
        self.push(op, parts);
    }

    fn push(&self, op: &Operation<'_>, mut parts: Parts<'_>) {
        let s = &*self.inner.shared;
        // Keep one record within half the queue: payloads past the budget are left out (and listed).
        let mut budget = s.payload_budget();
        for b in [&mut parts.params, &mut parts.meta, &mut parts.result] {
            if let Bytes::Json(j) = *b {
                if j.len() > budget {
                    *b = Bytes::Omitted(j.len() as u64);
                } else {
                    budget -= j.len();
                }
            }
        }
        let len = encoded_len(op, &parts);
        s.push_record(len, |out| encode(out, len, op, &parts));
    }

    /// Open a session for a new connection. With the transport's session id (`Mcp-Session-Id`),
    /// the `ses_…` id is derived from it (the same id every time, salted with the project:
    /// [`TrackerConfig::session_id_for`]); without one, a fresh id is minted (from the seed, when
    /// the configuration has one).
    pub fn open_session(&self, transport_session_id: Option<&str>, transport: Option<Transport>) -> Session {
        let s = &*self.inner.shared;
        let key = s.next_session_key();
        let id = match (transport_session_id, s.config().seed) {
            (Some(t), _) => s.config().session_id_for(t),
            (None, Some(seed)) => IdGen::seeded(seed ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15)).session_id(),
            (None, None) => IdGen::seeded(super::entropy(key)).session_id(),
        };
        if s.enabled() {
            let info = SessionInfo { id: id.clone(), transport, ..SessionInfo::default() };
            s.sessions().open(key, info);
        }
        Session { key: SessionKey(key), id: id.into() }
    }

    /// The open session with this key (for hosts that pass only keys across their boundary, as
    /// Node does); `None` once it is forgotten, and on a disabled tracker.
    pub fn session(&self, key: SessionKey) -> Option<Session> {
        let sessions = self.inner.shared.sessions();
        sessions.map.get(&key.0).map(|e| Session { key, id: e.info.id.as_str().into() })
    }

    fn update_session(&self, session: &Session, f: impl FnOnce(&mut SessionInfo, &mut IdentifyState)) {
        let s = &*self.inner.shared;
        if !s.enabled() {
            return;
        }
        let mut sessions = s.sessions();
        if let Some(e) = sessions.map.get_mut(&session.key.0) {
            f(Arc::make_mut(&mut e.info), &mut e.identify);
        }
    }

    /// The client's `clientInfo` and the negotiated protocol version (after `initialize`).
    pub fn set_session_client(&self, session: &Session, client: Option<PeerInfo>, protocol_version: Option<&str>) {
        self.update_session(session, |i, _| {
            if client.is_some() {
                i.client = client;
            }
            if let Some(v) = protocol_version {
                i.protocol_version = Some(v.to_owned());
            }
        });
    }

    /// The host starts its identify hook for this session: the session's records recorded from
    /// now on wait in the core (at most `identify.maxRecords`, `identify.timeoutMs`) until
    /// [`resolve_identity`](Tracker::resolve_identity) or [`identify_failed`](Tracker::identify_failed).
    /// A request never waits for it.
    pub fn begin_identify(&self, session: &Session) {
        let now = Instant::now();
        self.update_session(session, |_, state| *state = IdentifyState::Pending(now));
    }

    /// The identify hook answered: `identity` (or nobody) for the session's waiting and later
    /// records.
    pub fn resolve_identity(&self, session: &Session, identity: Option<Identity>) {
        self.update_session(session, |info, state| {
            if identity.is_some() {
                info.identity = identity;
            }
            *state = IdentifyState::Settled;
        });
        self.inner.shared.identify_answered();
    }

    /// Who is behind the session: [`resolve_identity`](Tracker::resolve_identity) with `identity`.
    pub fn identify(&self, session: &Session, identity: Identity) {
        self.resolve_identity(session, Some(identity));
    }

    /// The identify hook answered with `answer` (JSON text; see [`host::identity`](crate::tracking::pipeline::host::identity)):
    /// nobody (`null`), an identity, or, for anything else, a failure.
    pub fn resolve_identity_json(&self, session: &Session, answer: &str) {
        match crate::tracking::pipeline::host::identity(answer) {
            Ok(identity) => self.resolve_identity(session, identity),
            Err(()) => self.identify_failed(session),
        }
    }

    /// The identify hook failed: the waiting records go on without an identity (counted as
    /// `unidentified`).
    pub fn identify_failed(&self, session: &Session) {
        self.update_session(session, |_, state| *state = IdentifyState::Failed);
        self.inner.shared.identify_answered();
    }

    /// The connection closed. Operations already recorded keep its details.
    pub fn close_session(&self, session: &Session) {
        let s = &*self.inner.shared;
        if !s.enabled() {
            return;
        }
        let upto = s.next_seq();
        let mut sessions = s.sessions();
        if let Some(e) = sessions.map.get_mut(&session.key.0) {
            e.closed_at = Some(upto);
        }
    }

    /// Wait until every operation recorded before this call is exported, dropped, failed or
    /// skipped by every exporter (and counted), at most `timeout`. Partial batches are sent at
    /// once and a backoff in progress is cut short; records waiting for identify are waited for
    /// (within its bounds). `Err(Timeout)` says how many events are still pending.
    pub fn flush(&self, timeout: Duration) -> Result<(), TrackingError> {
        let s = &self.inner.shared;
        if !s.enabled() {
            return Ok(());
        }
        let deadline = deadline_after(timeout);
        let target = s.next_seq();
        s.request_flush();
        if s.wait_progress(deadline, || s.settled(target)) {
            Ok(())
        } else {
            Err(TrackingError::Timeout { pending: s.pending(), waited: timeout })
        }
    }

    /// Stop accepting operations, deliver what is queued within `timeout`, stop the threads.
    /// What is still undelivered at the deadline is dropped (counted) as the exporters give up;
    /// records still waiting for identify go on without it. `Err(Timeout)` says how many events
    /// were pending then. Idempotent.
    pub fn shutdown(&self, timeout: Duration) -> Result<(), TrackingError> {
        shutdown(&self.inner.shared, &self.inner.threads, timeout)
    }

    /// The counters (a disabled tracker's: all zero, its exporters listed).
    pub fn stats(&self) -> Stats {
        let s = &self.inner.shared;
        if !s.enabled() {
            return Stats::zero(s.names());
        }
        let (recorded, dropped) = s.recorded_and_dropped();
        let (filtered, redaction_failed, unidentified) = s.build_counts();
        let exporters = s
            .slots()
            .iter()
            .map(|slot| {
                let st = lock(&slot.state);
                let c = st.queue.counts();
                ExporterStats {
                    name: slot.name.clone(),
                    exported: c.exported,
                    dropped: c.dropped,
                    failed: c.failed,
                    skipped: c.skipped,
                    pending: st.queue.pending(),
                }
            })
            .collect();
        Stats { recorded, dropped, filtered, redaction_failed, unidentified, queued: s.queued(), exporters }
    }
}

/// Every started tracker, weakly: what [`flush_at_exit`] delivers.
static LIVE: Mutex<Vec<std::sync::Weak<Handle>>> = Mutex::new(Vec::new());

/// The live trackers that recorded something since the last [`flush_at_exit`].
fn exit_pending() -> Vec<Tracker> {
    let live = lock(&LIVE).iter().filter_map(std::sync::Weak::upgrade).collect::<Vec<_>>();
    live.into_iter().filter(|h| h.shared.exit_pending()).map(|inner| Tracker { inner }).collect()
}

/// Whether [`flush_at_exit`] has anything to deliver (a host whose exit hook may fire more than
/// once, as Node's `beforeExit` does after asynchronous work, asks first and lets the process end).
pub fn exit_pending_any() -> bool {
    !exit_pending().is_empty()
}

/// What every host does when its process ends (Python `atexit`, Node `beforeExit`): each live
/// tracker delivers what it recorded since the last call, all of them within [`EXIT_TIMEOUT`]
/// together (what is still undelivered then stays counted as pending). Never panics or raises.
///
/// [`EXIT_TIMEOUT`]: crate::tracking::EXIT_TIMEOUT
pub fn flush_at_exit() {
    exit_flush(false);
}

/// [`flush_at_exit`] for a host that waits on the thread its hooks run on (Node's `exit` event,
/// and its signal listeners, block the JS thread): a tracker with a host hook (a redact hook or a
/// callback exporter) is not waited for, since its hooks cannot run until the wait ends; what it
/// has not delivered stays pending (counted). The trackers without one deliver as in
/// [`flush_at_exit`], within [`EXIT_TIMEOUT`] in all.
///
/// [`EXIT_TIMEOUT`]: crate::tracking::EXIT_TIMEOUT
pub fn flush_at_exit_blocking() {
    exit_flush(true);
}

fn exit_flush(blocking: bool) {
    let deadline = deadline_after(crate::tracking::EXIT_TIMEOUT);
    for t in exit_pending() {
        let s = &t.inner.shared;
        if blocking && s.host_hooks() {
            continue;
        }
        s.mark_exit_flushed();
        let _ = t.flush(deadline.saturating_duration_since(Instant::now()));
    }
}

/// `timeout` from now; a timeout past what `Instant` can hold waits without bound (never panics).
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or_else(|| now + Duration::from_secs(1 << 40))
}

fn shutdown(
    shared: &Arc<Shared>,
    threads: &Mutex<Vec<JoinHandle<()>>>,
    timeout: Duration,
) -> Result<(), TrackingError> {
    if !shared.enabled() {
        return Ok(());
    }
    let deadline = deadline_after(timeout);
    let abandoned_before = shared.abandoned();
    shared.close(deadline);
    let finished = shared.wait_progress(deadline, || shared.all_exited());
    // Join the threads that are done; the others (stuck in a long request) end on their own.
    let mut ts = lock(threads);
    let mut still = Vec::new();
    for t in ts.drain(..) {
        if t.is_finished() {
            let _ = t.join();
        } else {
            still.push(t);
        }
    }
    *ts = still;
    let abandoned = shared.abandoned() - abandoned_before;
    let left = shared.pending();
    if finished && left == 0 && abandoned == 0 {
        Ok(())
    } else {
        Err(TrackingError::Timeout { pending: left + abandoned, waited: timeout })
    }
}

/// Options for a [`Tracker`], converted into one [`TrackerConfig`] and the [`Hooks`]. Defaults:
/// those of [`TrackerConfig::default`] (enabled; parameters and responses captured,
/// `resources/read` text not; built-in redaction on; caps of [`PayloadLimits::default`]; queue of
/// 10,000 operations / 64 MiB; batches of 512, or 1 s under load, or 20 ms after the last event; JSONL to `./mcplens-events.jsonl` when no
/// exporter is added).
#[derive(Default)]
pub struct TrackerBuilder {
    config: TrackerConfig,
    hooks: Hooks,
}

impl fmt::Debug for TrackerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrackerBuilder").field("config", &self.config).field("hooks", &self.hooks).finish()
    }
}

impl TrackerBuilder {
    /// Start from this configuration (exporters and hooks added later are appended).
    pub fn config(mut self, config: TrackerConfig) -> Self {
        self.config = config;
        self
    }

    /// `false`: [`build`](TrackerBuilder::build) returns a disabled tracker (`enable_tracing = False`).
    pub fn enabled(mut self, on: bool) -> Self {
        self.config.enable_tracing = on;
        self
    }

    /// The server's `serverInfo`.
    pub fn server(mut self, name: impl Into<String>, version: Option<&str>) -> Self {
        self.config.server = Some(PeerInfo::new(name, version));
        self
    }

    /// The project id (salts the derivation of session ids; default: the first agentcat
    /// exporter's).
    pub fn project_id(mut self, id: impl Into<String>) -> Self {
        self.config.project_id = Some(id.into());
        self
    }

    /// Keep request `params` in events (default true).
    pub fn capture_parameters(mut self, on: bool) -> Self {
        self.config.capture_parameters = on;
        self
    }

    /// Keep results in events (default true; `capture_responses = False`). When off, results are
    /// not even copied on the request path; set [`Operation::tool_error`] for tool errors.
    pub fn capture_responses(mut self, on: bool) -> Self {
        self.config.capture_responses = on;
        self
    }

    /// Keep the text of `resources/read` contents (default false). Blobs are never kept.
    pub fn capture_resource_text(mut self, on: bool) -> Self {
        self.config.capture_resource_text = on;
        self
    }

    /// Apply the built-in redaction rules (default true).
    pub fn builtin_redaction(mut self, on: bool) -> Self {
        self.config.builtin_redaction = on;
        self
    }

    /// Payload caps.
    pub fn limits(mut self, limits: PayloadLimits) -> Self {
        self.config.limits = limits;
        self
    }

    /// Bounds of the request-path queue: operations and bytes (defaults 10,000 and 64 MiB). A
    /// payload larger than half the byte bound is left out of its event (listed in `truncated`).
    pub fn queue(mut self, max_events: usize, max_bytes: usize) -> Self {
        self.config.queue_capacity = max_events;
        self.config.queue_bytes = max_bytes;
        self
    }

    /// Batching, per-exporter queue bound and retry policy.
    pub fn export_policy(mut self, policy: ExportPolicy) -> Self {
        self.config.export = policy;
        self
    }

    /// How long records wait for identify (defaults 1,000 records, 5 s).
    pub fn identify_limits(mut self, limits: IdentifyLimits) -> Self {
        self.config.identify_max_records = limits.max_records;
        self.config.identify_timeout = limits.timeout;
        self
    }

    /// How long dropping the last clone waits for delivery (default 2 s).
    pub fn drop_timeout(mut self, timeout: Duration) -> Self {
        self.config.drop_timeout = timeout;
        self
    }

    /// A fixed seed for event, span, trace and minted session ids (tests).
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = Some(seed);
        self
    }

    /// The user string hook (after the built-in rules).
    pub fn redact_strings(mut self, f: impl Fn(&str) -> Result<String, TrackingError> + Send + Sync + 'static) -> Self {
        self.hooks.redact_strings = Some(crate::tracking::pipeline::build::string_hook(f));
        self
    }

    /// The user event hook (`Ok(None)` drops the event).
    pub fn redact_events(
        mut self,
        f: impl Fn(crate::tracking::Event) -> Result<Option<crate::tracking::Event>, TrackingError> + Send + Sync + 'static,
    ) -> Self {
        self.hooks.redact_event = Some(Arc::new(f));
        self
    }

    /// Add a JSONL file exporter (named `jsonl`, then `jsonl-2`, …).
    pub fn jsonl(mut self, config: JsonlConfig) -> Self {
        self.config.exporters.push(ExporterConfig::jsonl(config));
        self
    }

    /// Add the OTLP exporters: `otlp` (spans) and `otlp-metrics` (the duration histogram), each
    /// only if enabled in the configuration.
    #[cfg(feature = "otlp")]
    pub fn otlp(mut self, config: crate::tracking::pipeline::config::OtlpConfig) -> Self {
        self.config.exporters.push(ExporterConfig::Otlp { name: None, config });
        self
    }

    /// Add the agentcat-compatible API exporter (named `mcpcat`).
    #[cfg(feature = "mcpcat")]
    pub fn mcpcat(mut self, config: crate::tracking::pipeline::config::McpcatConfig) -> Self {
        self.config.exporters.push(ExporterConfig::Mcpcat { name: None, config });
        self
    }

    /// Add a custom exporter.
    pub fn exporter(mut self, name: impl Into<String>, exporter: impl Exporter) -> Self {
        self.config.exporters.push(ExporterConfig::callback(Some(name.into())));
        self.hooks.callbacks.push(Box::new(exporter));
        self
    }

    /// Add a callback exporter: `f(batch)` on the exporter's thread.
    pub fn callback(
        self,
        name: impl Into<String>,
        f: impl FnMut(&Batch<'_>) -> Result<(), ExportError> + Send + 'static,
    ) -> Self {
        self.exporter(name, CallbackExporter(f))
    }

    /// The configuration so far.
    pub fn peek(&self) -> &TrackerConfig {
        &self.config
    }

    /// Start the tracker ([`Tracker::start`]).
    pub fn build(self) -> Result<Tracker, TrackingError> {
        Tracker::start(self.config, self.hooks)
    }
}
