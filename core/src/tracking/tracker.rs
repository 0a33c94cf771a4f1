//! The driver: [`Tracker`] (request path), its builder thread (events) and one thread per exporter.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::build::{BuildConfig, EventBuilder, NotBuilt, Operation, Payload, SessionInfo, SessionKey};
use super::caps::PayloadLimits;
use super::event::{Identity, PeerInfo, Transport};
use super::export::{
    classify, Batch, CallbackExporter, ExportItem, ExportPolicy, Exporter, JsonlConfig, JsonlExporter,
};
use super::ids::{derive_session_id, unix_nanos, IdGen};
use super::queue::{encode, encoded_len, Bytes, Drained, Parts, Staging};
use super::TrackingError;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

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

    /// The `ses_…` id its events carry.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Counters of one exporter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExporterStats {
    /// The exporter's name.
    pub name: String,
    /// Events delivered.
    pub exported: u64,
    /// Events dropped: its queue was full (oldest first), or shutdown's deadline passed first.
    pub dropped: u64,
    /// Events given up on: a permanent error, or every retry failed.
    pub failed: u64,
    /// Events waiting or being sent.
    pub pending: u64,
}

/// Counters of a tracker. Once [`Tracker::flush`] has returned `Ok`, for every exporter:
/// `recorded = dropped + filtered + redaction_failed + queued + exported + dropped' + failed + pending`
/// (primed: the exporter's own counters), with `queued = pending = 0`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
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
    /// Operations waiting to become events.
    pub queued: u64,
    /// Per exporter, in configuration order.
    pub exporters: Vec<ExporterStats>,
}

impl Stats {
    /// The counters of the exporter with this name.
    pub fn exporter(&self, name: &str) -> Option<&ExporterStats> {
        self.exporters.iter().find(|e| e.name == name)
    }
}

#[derive(Debug, Default)]
struct Signal {
    wake: bool,
    flush_gen: u64,
    stop: bool,
}

#[derive(Debug, Default)]
struct SlotState {
    items: VecDeque<Arc<ExportItem>>,
    /// Every record numbered below this has been dispatched to this exporter (or never will be).
    dispatched_upto: u64,
    /// Every record numbered below this is settled here (exported, dropped, failed or not an event).
    done_upto: u64,
    in_flight: u64,
    /// Send without waiting for a full batch while the front item is numbered below this.
    flush_upto: u64,
    /// Bumped on every flush, to cut a backoff short.
    flush_gen: u64,
    stop: bool,
    deadline: Option<Instant>,
    exited: bool,
}

struct Slot {
    name: String,
    state: Mutex<SlotState>,
    cv: Condvar,
    exported: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
    /// Of `dropped`: given up because shutdown's deadline passed.
    abandoned: AtomicU64,
}

#[derive(Debug)]
struct SessionEntry {
    info: Arc<SessionInfo>,
    /// Removed once every record numbered below this has been built.
    closed_at: Option<u64>,
}

#[derive(Debug, Default)]
struct Sessions {
    map: HashMap<u64, SessionEntry>,
    order: VecDeque<u64>,
}

/// Exported items handed back to the builder thread, which allocated them, to be freed there:
/// it frees one just before building each event, so that the allocator serves the new event from
/// the old one's memory on the same thread instead of every block crossing threads (a block freed
/// on another thread costs the builder far more to get back than one it freed itself). Bounded by
/// [`Shared::recycle_max`] (what the exporter queues may hold); when it is full, or once the
/// builder has exited, exporters free items themselves. Once no operation has arrived for
/// [`RECYCLE_LINGER`], the builder frees whatever is left.
#[derive(Debug, Default)]
struct Recycle {
    items: Vec<Arc<ExportItem>>,
    closed: bool,
}

/// How long handed-back items may wait for new events to reuse their memory.
const RECYCLE_LINGER: Duration = Duration::from_secs(1);

/// An exporter is done with these items: hand them to the builder thread if it takes them.
fn give_back(shared: &Shared, batch: &mut Vec<Arc<ExportItem>>) {
    {
        let mut r = lock(&shared.recycle);
        if !r.closed {
            let n = shared.recycle_max.saturating_sub(r.items.len()).min(batch.len());
            r.items.extend(batch.drain(..n));
            shared.recycled.store(r.items.len(), Ordering::Relaxed);
        }
    }
    batch.clear();
}

/// The builder takes what exporters handed back, once it has used up the last take.
fn take_back(shared: &Shared, dead: &mut Vec<Arc<ExportItem>>) {
    if dead.is_empty() && shared.recycled.load(Ordering::Relaxed) > 0 {
        let mut r = lock(&shared.recycle);
        std::mem::swap(&mut r.items, dead);
        shared.recycled.store(0, Ordering::Relaxed);
    }
}

/// Free one handed-back event (dropping references until one is the last).
fn free_one(dead: &mut Vec<Arc<ExportItem>>) {
    while let Some(item) = dead.pop() {
        if Arc::try_unwrap(item).is_ok() {
            break;
        }
    }
}

/// Most sessions whose details are kept; beyond it the oldest are forgotten (their events still
/// carry the right `sessionId`, derived from the key, but lose client details).
const MAX_SESSIONS: usize = 100_000;

struct StagingState {
    staging: Staging,
    closed: bool,
    in_worker: u64,
}

struct Shared {
    enabled: bool,
    capture_responses: bool,
    staging: Mutex<StagingState>,
    wake_pending: AtomicBool,
    signal: Mutex<Signal>,
    signal_cv: Condvar,
    sessions: Mutex<Sessions>,
    slots: Vec<Arc<Slot>>,
    progress: Mutex<()>,
    progress_cv: Condvar,
    filtered: AtomicU64,
    redaction_failed: AtomicU64,
    recycle: Mutex<Recycle>,
    /// `recycle.items.len()`, read without the lock.
    recycled: AtomicUsize,
    /// Most items in `recycle`: what the exporter queues may hold.
    recycle_max: usize,
    built_upto: AtomicU64,
    builder_exited: AtomicBool,
    next_session: AtomicU64,
    session_salt: u64,
    project_id: Option<String>,
    payload_budget: usize,
    policy: ExportPolicy,
}

impl Shared {
    fn notify_progress(&self) {
        let _g = lock(&self.progress);
        self.progress_cv.notify_all();
    }

    /// Wait on the progress condition until `done()` or `deadline`.
    fn wait_progress(&self, deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
        let mut g = lock(&self.progress);
        loop {
            if done() {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            // Re-check at least every 50 ms: progress is also made without a notification under
            // this lock (counters updated by other threads).
            let wait = (deadline - now).min(Duration::from_millis(50));
            g = self.progress_cv.wait_timeout(g, wait).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    fn session_id_for_key(&self, key: u64) -> String {
        derive_session_id(&format!("mcplens-session-{key}-{:016x}", self.session_salt), None)
    }
}

struct Handle {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    drop_timeout: Duration,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.shared.enabled {
            let _ = shutdown(&self.shared, &self.threads, self.drop_timeout);
        }
    }
}

/// The tracker: records operations on the request path and exports events off it.
///
/// Call order: [`Tracker::builder`] … [`build`](TrackerBuilder::build) → per connection
/// [`open_session`](Tracker::open_session) (then [`set_session_client`](Tracker::set_session_client)
/// after `initialize`) → per request [`record`](Tracker::record) → [`close_session`](Tracker::close_session);
/// at the end [`shutdown`](Tracker::shutdown) (dropping the last clone shuts down with the drop
/// timeout). [`flush`](Tracker::flush) and [`stats`](Tracker::stats) any time.
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
        f.debug_struct("Tracker").field("enabled", &self.inner.shared.enabled).finish_non_exhaustive()
    }
}

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Scratch kept per thread between calls; a larger one (after a big payload) is released.
const SCRATCH_KEEP: usize = 1 << 20;

impl Tracker {
    /// A builder with the defaults (JSONL to `./mcplens-events.jsonl` unless exporters are added).
    pub fn builder() -> TrackerBuilder {
        TrackerBuilder::default()
    }

    /// A tracker that records nothing and starts no thread (`enable_tracing = false`).
    pub fn disabled() -> Tracker {
        Tracker::disabled_for(None)
    }

    fn disabled_for(project_id: Option<String>) -> Tracker {
        let shared = Arc::new(Shared {
            enabled: false,
            capture_responses: false,
            staging: Mutex::new(StagingState { staging: Staging::new(1, 4096), closed: true, in_worker: 0 }),
            wake_pending: AtomicBool::new(false),
            signal: Mutex::new(Signal::default()),
            signal_cv: Condvar::new(),
            sessions: Mutex::new(Sessions::default()),
            slots: Vec::new(),
            progress: Mutex::new(()),
            progress_cv: Condvar::new(),
            filtered: AtomicU64::new(0),
            redaction_failed: AtomicU64::new(0),
            recycle: Mutex::new(Recycle::default()),
            recycled: AtomicUsize::new(0),
            recycle_max: 0,
            built_upto: AtomicU64::new(0),
            builder_exited: AtomicBool::new(true),
            next_session: AtomicU64::new(1),
            session_salt: IdGen::from_entropy(0).next_u64(),
            project_id,
            payload_budget: 0,
            policy: ExportPolicy::default(),
        });
        Tracker { inner: Arc::new(Handle { shared, threads: Mutex::new(Vec::new()), drop_timeout: Duration::ZERO }) }
    }

    /// Whether this tracker records anything.
    pub fn is_enabled(&self) -> bool {
        self.inner.shared.enabled
    }

    /// Record one operation (the request path). Returns whether it was queued (false when the
    /// tracker is disabled). Never blocks on I/O or on an exporter; when the queue is full the
    /// oldest operation waiting is dropped and counted.
    pub fn record(&self, op: &Operation<'_>) -> bool {
        let s = &*self.inner.shared;
        if !s.enabled {
            return false;
        }
        let result = if s.capture_responses { op.result } else { Payload::None };
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
        let mut budget = s.payload_budget;
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
        let wake = {
            let mut st = lock(&s.staging);
            if st.closed {
                st.staging.reject();
                false
            } else {
                st.staging.push(len, |out| encode(out, len, op, &parts));
                st.staging.past_half()
            }
        };
        if wake && !s.wake_pending.swap(true, Ordering::AcqRel) {
            let mut sig = lock(&s.signal);
            sig.wake = true;
            s.signal_cv.notify_one();
        }
    }

    /// Open a session for a new connection. With the transport's session id (`Mcp-Session-Id`),
    /// the `ses_…` id is derived from it (the same id every time); without one, a fresh id is minted.
    pub fn open_session(&self, transport_session_id: Option<&str>, transport: Option<Transport>) -> Session {
        let s = &*self.inner.shared;
        let key = s.next_session.fetch_add(1, Ordering::Relaxed);
        let id = match transport_session_id {
            Some(t) => derive_session_id(t, s.project_id.as_deref()),
            None => IdGen::from_entropy(key).session_id(),
        };
        if s.enabled {
            let mut sessions = lock(&s.sessions);
            let info = SessionInfo { id: id.clone(), transport, ..SessionInfo::default() };
            sessions.map.insert(key, SessionEntry { info: Arc::new(info), closed_at: None });
            sessions.order.push_back(key);
            while sessions.map.len() > MAX_SESSIONS {
                match sessions.order.pop_front() {
                    Some(old) => {
                        sessions.map.remove(&old);
                    }
                    None => break,
                }
            }
        }
        Session { key: SessionKey(key), id: id.into() }
    }

    fn update_session(&self, session: &Session, f: impl FnOnce(&mut SessionInfo)) {
        let s = &*self.inner.shared;
        if !s.enabled {
            return;
        }
        let mut sessions = lock(&s.sessions);
        if let Some(e) = sessions.map.get_mut(&session.key.0) {
            f(Arc::make_mut(&mut e.info));
        }
    }

    /// The client's `clientInfo` and the negotiated protocol version (after `initialize`).
    pub fn set_session_client(&self, session: &Session, client: Option<PeerInfo>, protocol_version: Option<&str>) {
        self.update_session(session, |i| {
            if client.is_some() {
                i.client = client;
            }
            if let Some(v) = protocol_version {
                i.protocol_version = Some(v.to_owned());
            }
        });
    }

    /// Who is behind the session (from the host's identify hook); carried by its later events.
    pub fn identify(&self, session: &Session, identity: Identity) {
        self.update_session(session, |i| i.identity = Some(identity));
    }

    /// The connection closed. Operations already recorded keep its details.
    pub fn close_session(&self, session: &Session) {
        let s = &*self.inner.shared;
        if !s.enabled {
            return;
        }
        let upto = lock(&s.staging).staging.seq();
        let mut sessions = lock(&s.sessions);
        if let Some(e) = sessions.map.get_mut(&session.key.0) {
            e.closed_at = Some(upto);
        }
    }

    /// Wait until every operation recorded before this call is exported, dropped or failed, at
    /// most `timeout`. Partial batches are sent at once and a backoff in progress is cut short.
    /// `Err(Timeout)` says how many events are still pending.
    pub fn flush(&self, timeout: Duration) -> Result<(), TrackingError> {
        let s = &self.inner.shared;
        if !s.enabled {
            return Ok(());
        }
        let deadline = Instant::now() + timeout;
        let target = lock(&s.staging).staging.seq();
        {
            let mut sig = lock(&s.signal);
            sig.flush_gen += 1;
            s.signal_cv.notify_one();
        }
        let done = s.wait_progress(deadline, || settled(s, target));
        if done {
            Ok(())
        } else {
            Err(TrackingError::Timeout { pending: pending(s), waited: timeout })
        }
    }

    /// Stop accepting operations, deliver what is queued within `timeout`, stop the threads.
    /// What is still undelivered at the deadline is dropped (counted) as the exporters give up;
    /// `Err(Timeout)` says how many events were pending then. Idempotent.
    pub fn shutdown(&self, timeout: Duration) -> Result<(), TrackingError> {
        shutdown(&self.inner.shared, &self.inner.threads, timeout)
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        let s = &self.inner.shared;
        let (recorded, dropped, queued) = {
            let st = lock(&s.staging);
            (st.staging.recorded(), st.staging.dropped(), st.staging.live() as u64 + st.in_worker)
        };
        let exporters = s
            .slots
            .iter()
            .map(|slot| {
                let pending = {
                    let st = lock(&slot.state);
                    st.items.len() as u64 + st.in_flight
                };
                ExporterStats {
                    name: slot.name.clone(),
                    exported: slot.exported.load(Ordering::Acquire),
                    dropped: slot.dropped.load(Ordering::Acquire),
                    failed: slot.failed.load(Ordering::Acquire),
                    pending,
                }
            })
            .collect();
        Stats {
            recorded,
            dropped,
            filtered: s.filtered.load(Ordering::Acquire),
            redaction_failed: s.redaction_failed.load(Ordering::Acquire),
            queued,
            exporters,
        }
    }
}

fn direct<'a>(p: &Payload<'a>) -> Bytes<'a> {
    match *p {
        Payload::Json(s) => Bytes::Json(s.as_bytes()),
        Payload::Omitted(n) => Bytes::Omitted(n),
        _ => Bytes::None,
    }
}

/// Whether every record numbered below `target` is settled everywhere.
fn settled(s: &Shared, target: u64) -> bool {
    if s.builder_exited.load(Ordering::Acquire) {
        return s.slots.iter().all(|slot| lock(&slot.state).exited);
    }
    if s.built_upto.load(Ordering::Acquire) < target {
        return false;
    }
    s.slots.iter().all(|slot| {
        let st = lock(&slot.state);
        st.done_upto >= target || st.exited
    })
}

fn pending(s: &Shared) -> u64 {
    let queued = {
        let st = lock(&s.staging);
        st.staging.live() as u64 + st.in_worker
    };
    queued
        + s.slots
            .iter()
            .map(|slot| {
                let st = lock(&slot.state);
                st.items.len() as u64 + st.in_flight
            })
            .max()
            .unwrap_or(0)
}

fn shutdown(
    shared: &Arc<Shared>,
    threads: &Mutex<Vec<JoinHandle<()>>>,
    timeout: Duration,
) -> Result<(), TrackingError> {
    if !shared.enabled {
        return Ok(());
    }
    let deadline = Instant::now() + timeout;
    let abandoned_before: u64 = shared.slots.iter().map(|s| s.abandoned.load(Ordering::Acquire)).sum();
    lock(&shared.staging).closed = true;
    for slot in &shared.slots {
        lock(&slot.state).deadline = Some(deadline);
    }
    {
        let mut sig = lock(&shared.signal);
        sig.stop = true;
        shared.signal_cv.notify_one();
    }
    let finished = shared.wait_progress(deadline, || {
        shared.builder_exited.load(Ordering::Acquire) && shared.slots.iter().all(|slot| lock(&slot.state).exited)
    });
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
    let abandoned: u64 =
        shared.slots.iter().map(|s| s.abandoned.load(Ordering::Acquire)).sum::<u64>() - abandoned_before;
    let left = pending(shared);
    if finished && left == 0 && abandoned == 0 {
        Ok(())
    } else {
        Err(TrackingError::Timeout { pending: left + abandoned, waited: timeout })
    }
}

// ---------------------------------------------------------------------------------------------
// The builder thread.

const MIN_IDLE: Duration = Duration::from_millis(5);
const MAX_IDLE: Duration = Duration::from_millis(100);

fn run_builder(shared: Arc<Shared>, mut builder: EventBuilder, initial_capacity: usize) {
    let mut spare: Vec<u8> = Vec::with_capacity(initial_capacity);
    let mut idle = MIN_IDLE;
    let mut seen_flush = 0u64;
    let mut cache: HashMap<u64, Arc<SessionInfo>> = HashMap::new();
    let mut items: Vec<Arc<ExportItem>> = Vec::new();
    let mut dead: Vec<Arc<ExportItem>> = Vec::new();
    let mut last_work = Instant::now();
    loop {
        let (stop, flush_gen) = {
            let mut sig = lock(&shared.signal);
            if !sig.wake && !sig.stop && sig.flush_gen == seen_flush {
                sig = shared.signal_cv.wait_timeout(sig, idle).unwrap_or_else(PoisonError::into_inner).0;
            }
            sig.wake = false;
            (sig.stop, sig.flush_gen)
        };
        shared.wake_pending.store(false, Ordering::Release);
        let flushing = flush_gen != seen_flush;
        seen_flush = flush_gen;

        let drained: Drained = {
            let mut st = lock(&shared.staging);
            let d = st.staging.swap(std::mem::take(&mut spare));
            st.in_worker = d.count as u64;
            d
        };
        let now = Instant::now();
        if drained.count > 0 {
            cache.clear();
            let mut last: Option<(u64, Arc<SessionInfo>)> = None;
            let first_seq = drained.end_seq - drained.count as u64;
            for (i, rec) in drained.records().enumerate() {
                let Some(op) = super::queue::decode(rec) else { continue };
                // Free an exported event before allocating this one (see `Recycle`).
                take_back(&shared, &mut dead);
                free_one(&mut dead);
                let key = op.session.0;
                // Consecutive operations of one session (the common case) skip the map.
                let session = match &last {
                    Some((k, info)) if *k == key => info.clone(),
                    _ => {
                        let info = match cache.get(&key) {
                            Some(info) => info.clone(),
                            None => {
                                let info = match lock(&shared.sessions).map.get(&key) {
                                    Some(e) => e.info.clone(),
                                    None => Arc::new(SessionInfo {
                                        id: shared.session_id_for_key(key),
                                        ..SessionInfo::default()
                                    }),
                                };
                                cache.insert(key, info.clone());
                                info
                            }
                        };
                        last = Some((key, info.clone()));
                        info
                    }
                };
                match builder.build(&op, &session) {
                    Ok(built) => items.push(Arc::new(ExportItem {
                        seq: first_seq + i as u64,
                        enqueued: now,
                        started_unix_nanos: unix_nanos(op.started_at),
                        duration: op.duration,
                        event: built.event,
                        json: built.json,
                    })),
                    Err(NotBuilt::Filtered) => {
                        shared.filtered.fetch_add(1, Ordering::AcqRel);
                    }
                    Err(NotBuilt::HookFailed(_)) => {
                        shared.redaction_failed.fetch_add(1, Ordering::AcqRel);
                    }
                }
            }
        }
        dispatch(&shared, &mut items, drained.end_seq, flushing);
        lock(&shared.staging).in_worker = 0;
        shared.built_upto.store(drained.end_seq, Ordering::Release);
        // Forget closed sessions once all their records are built.
        if drained.count > 0 {
            let mut sessions = lock(&shared.sessions);
            if sessions.map.values().any(|e| e.closed_at.is_some_and(|c| c <= drained.end_seq)) {
                let end = drained.end_seq;
                sessions.map.retain(|_, e| e.closed_at.is_none_or(|c| c > end));
                let Sessions { map, order } = &mut *sessions;
                order.retain(|k| map.contains_key(k));
            }
        }
        shared.notify_progress();

        // Idle for a while: free what was handed back instead of keeping it for new events.
        if drained.count > 0 {
            last_work = now;
        } else if now.duration_since(last_work) >= RECYCLE_LINGER {
            dead.clear();
            take_back(&shared, &mut dead);
            dead.clear();
        }
        let mut buf = drained.buf;
        buf.clear();
        if buf.capacity() > 4 * initial_capacity.max(1) {
            buf.shrink_to(initial_capacity);
        }
        spare = buf;
        idle = if drained.count > 0 { MIN_IDLE } else { (idle * 2).min(MAX_IDLE) };

        if stop && lock(&shared.staging).staging.live() == 0 {
            break;
        }
    }
    {
        let mut r = lock(&shared.recycle);
        r.closed = true;
        dead.append(&mut r.items);
    }
    dead.clear();
    for slot in &shared.slots {
        let mut st = lock(&slot.state);
        st.stop = true;
        slot.cv.notify_all();
    }
    shared.builder_exited.store(true, Ordering::Release);
    shared.notify_progress();
}

fn dispatch(shared: &Shared, items: &mut Vec<Arc<ExportItem>>, end_seq: u64, flushing: bool) {
    let max_queued = shared.policy.max_queued.max(1);
    let last = shared.slots.len().saturating_sub(1);
    for (n, slot) in shared.slots.iter().enumerate() {
        let mut st = lock(&slot.state);
        let was_empty = st.items.is_empty();
        if n == last {
            st.items.extend(items.drain(..));
        } else {
            st.items.extend(items.iter().cloned());
        }
        let over = st.items.len().saturating_sub(max_queued);
        if over > 0 {
            st.items.drain(..over);
            slot.dropped.fetch_add(over as u64, Ordering::AcqRel);
        }
        st.dispatched_upto = end_seq;
        if st.items.is_empty() && st.in_flight == 0 {
            st.done_upto = end_seq;
        }
        if flushing {
            st.flush_upto = end_seq;
            st.flush_gen += 1;
        }
        if flushing || (was_empty && !st.items.is_empty()) || st.items.len() >= shared.policy.max_events {
            slot.cv.notify_all();
        }
    }
    items.clear();
}

// ---------------------------------------------------------------------------------------------
// Exporter threads.

fn run_exporter(shared: Arc<Shared>, slot: Arc<Slot>, mut exporter: Box<dyn Exporter>) {
    let policy = shared.policy;
    let mut rng = IdGen::from_entropy(Arc::as_ptr(&slot) as u64);
    let mut batch: Vec<Arc<ExportItem>> = Vec::with_capacity(policy.max_events);
    loop {
        let upto;
        {
            let mut st = lock(&slot.state);
            loop {
                if st.items.is_empty() {
                    if st.stop {
                        drop(st);
                        let _ = catch_unwind(AssertUnwindSafe(|| exporter.shutdown()));
                        let mut st = lock(&slot.state);
                        st.exited = true;
                        st.done_upto = st.dispatched_upto;
                        drop(st);
                        shared.notify_progress();
                        return;
                    }
                    st = slot.cv.wait(st).unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                let front = &st.items[0];
                let due = front.enqueued + policy.max_delay;
                let flushing = front.seq < st.flush_upto;
                let now = Instant::now();
                if st.items.len() >= policy.max_events || now >= due || flushing || st.stop {
                    break;
                }
                st = slot.cv.wait_timeout(st, due - now).unwrap_or_else(PoisonError::into_inner).0;
            }
            let n = st.items.len().min(policy.max_events.max(1));
            batch.extend(st.items.drain(..n));
            st.in_flight = n as u64;
            upto = if st.items.is_empty() { st.dispatched_upto } else { batch[n - 1].seq + 1 };
        }
        deliver(&slot, exporter.as_mut(), &batch, &policy, &mut rng);
        give_back(&shared, &mut batch);
        {
            let mut st = lock(&slot.state);
            st.in_flight = 0;
            st.done_upto = st.done_upto.max(upto);
            if st.items.is_empty() {
                st.done_upto = st.done_upto.max(st.dispatched_upto);
            }
            if st.stop && st.deadline.is_some_and(|d| Instant::now() >= d) && !st.items.is_empty() {
                // Shutdown's deadline passed: give up on the rest.
                let n = st.items.len() as u64;
                st.items.clear();
                abandon(&slot, n);
                st.done_upto = st.dispatched_upto;
            }
        }
        shared.notify_progress();
    }
}

fn abandon(slot: &Slot, n: u64) {
    slot.dropped.fetch_add(n, Ordering::AcqRel);
    slot.abandoned.fetch_add(n, Ordering::AcqRel);
}

fn deliver(
    slot: &Slot,
    exporter: &mut dyn Exporter,
    batch: &[Arc<ExportItem>],
    policy: &ExportPolicy,
    rng: &mut IdGen,
) {
    let mut start = 0;
    let mut attempt = 0u32;
    let mut seen_flush = lock(&slot.state).flush_gen;
    while start < batch.len() {
        let rest = &batch[start..];
        {
            let st = lock(&slot.state);
            if st.stop && st.deadline.is_some_and(|d| Instant::now() >= d) {
                abandon(slot, rest.len() as u64);
                return;
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| exporter.export(&Batch::new(rest))))
            .unwrap_or_else(|_| Err(TrackingError::Hook { message: "the exporter panicked".to_owned() }));
        let err = match outcome {
            Ok(()) => {
                slot.exported.fetch_add(rest.len() as u64, Ordering::AcqRel);
                return;
            }
            Err(e) => e,
        };
        let (retry, delivered, retry_after) = classify(&err);
        let delivered = delivered.min(rest.len());
        slot.exported.fetch_add(delivered as u64, Ordering::AcqRel);
        start += delivered;
        if start >= batch.len() {
            return;
        }
        attempt += 1;
        let left = (batch.len() - start) as u64;
        if !retry || attempt >= policy.max_attempts.max(1) {
            slot.failed.fetch_add(left, Ordering::AcqRel);
            return;
        }
        // Back off: uniformly in [b/2, b], or longer when the receiver said Retry-After (bounded);
        // a flush cuts it short, shutdown's deadline ends it.
        let b = policy.backoff(attempt);
        let wait =
            (b / 2 + rng.jitter(b - b / 2)).max(retry_after.unwrap_or(Duration::ZERO).min(super::MAX_RETRY_AFTER));
        let until = Instant::now() + wait;
        let mut st = lock(&slot.state);
        loop {
            let now = Instant::now();
            if st.stop && st.deadline.is_some_and(|d| now >= d) {
                abandon(slot, left);
                return;
            }
            if st.flush_gen != seen_flush {
                seen_flush = st.flush_gen;
                break;
            }
            if now >= until {
                break;
            }
            let mut wake_at = until;
            if let (true, Some(d)) = (st.stop, st.deadline) {
                wake_at = wake_at.min(d);
            }
            st = slot
                .cv
                .wait_timeout(st, wake_at.saturating_duration_since(now))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Configuration.

enum PendingExporter {
    Jsonl(JsonlConfig),
    #[cfg(feature = "otlp")]
    Otlp(String, super::export::OtlpConfig),
    #[cfg(feature = "mcpcat")]
    Mcpcat(String, super::export::McpcatConfig),
    Custom(String, Box<dyn Exporter>),
}

/// Options for a [`Tracker`]. Defaults: enabled; parameters and responses captured,
/// `resources/read` text not; built-in redaction on; caps of [`PayloadLimits::default`]; queue
/// of 10,000 operations / 64 MiB; batches of 512 or 1 s; JSONL to `./mcplens-events.jsonl` when
/// no exporter is added.
pub struct TrackerBuilder {
    enabled: bool,
    build: BuildConfig,
    project_id: Option<String>,
    max_queue_events: usize,
    max_queue_bytes: usize,
    policy: ExportPolicy,
    exporters: Vec<PendingExporter>,
    drop_timeout: Duration,
    seed: Option<u64>,
}

impl Default for TrackerBuilder {
    fn default() -> Self {
        TrackerBuilder {
            enabled: true,
            build: BuildConfig::default(),
            project_id: None,
            max_queue_events: 10_000,
            max_queue_bytes: 64 * 1024 * 1024,
            policy: ExportPolicy::default(),
            exporters: Vec::new(),
            drop_timeout: Duration::from_secs(2),
            seed: None,
        }
    }
}

impl fmt::Debug for TrackerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrackerBuilder")
            .field("enabled", &self.enabled)
            .field("build", &self.build)
            .field("max_queue_events", &self.max_queue_events)
            .field("max_queue_bytes", &self.max_queue_bytes)
            .field("policy", &self.policy)
            .field("exporters", &self.exporters.len())
            .finish_non_exhaustive()
    }
}

impl TrackerBuilder {
    /// `false`: [`build`](TrackerBuilder::build) returns [`Tracker::disabled`] (`enable_tracing = False`).
    pub fn enabled(mut self, on: bool) -> Self {
        self.enabled = on;
        self
    }

    /// The server's `serverInfo`.
    pub fn server(mut self, name: impl Into<String>, version: Option<&str>) -> Self {
        self.build.server = Some(PeerInfo::new(name, version));
        self
    }

    /// The project id (MCPcat `project_id`; also salts the derivation of session ids).
    pub fn project_id(mut self, id: impl Into<String>) -> Self {
        self.project_id = Some(id.into());
        self
    }

    /// Keep request `params` in events (default true).
    pub fn capture_parameters(mut self, on: bool) -> Self {
        self.build.capture_parameters = on;
        self
    }

    /// Keep results in events (default true; `capture_responses = False`). When off, results are
    /// not even copied on the request path; set [`Operation::tool_error`] for tool errors.
    pub fn capture_responses(mut self, on: bool) -> Self {
        self.build.capture_responses = on;
        self
    }

    /// Keep the text of `resources/read` contents (default false). Blobs are never kept.
    pub fn capture_resource_text(mut self, on: bool) -> Self {
        self.build.capture_resource_text = on;
        self
    }

    /// Apply the built-in redaction rules (default true).
    pub fn builtin_redaction(mut self, on: bool) -> Self {
        self.build.builtin_redaction = on;
        self
    }

    /// Payload caps.
    pub fn limits(mut self, limits: PayloadLimits) -> Self {
        self.build.limits = limits;
        self
    }

    /// Bounds of the request-path queue: operations and bytes (defaults 10,000 and 64 MiB). A
    /// payload larger than half the byte bound is left out of its event (listed in `truncated`).
    pub fn queue(mut self, max_events: usize, max_bytes: usize) -> Self {
        self.max_queue_events = max_events;
        self.max_queue_bytes = max_bytes;
        self
    }

    /// Batching, per-exporter queue bound and retry policy.
    pub fn export_policy(mut self, policy: ExportPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How long dropping the last clone waits for delivery (default 2 s).
    pub fn drop_timeout(mut self, timeout: Duration) -> Self {
        self.drop_timeout = timeout;
        self
    }

    /// A fixed seed for event, span and trace ids (tests).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The user string hook (after the built-in rules).
    pub fn redact_strings(mut self, f: impl Fn(&str) -> Result<String, TrackingError> + Send + Sync + 'static) -> Self {
        self.build.redact_string = Some(Arc::new(f));
        self
    }

    /// The user event hook (`Ok(None)` drops the event).
    pub fn redact_events(
        mut self,
        f: impl Fn(super::Event) -> Result<Option<super::Event>, TrackingError> + Send + Sync + 'static,
    ) -> Self {
        self.build.redact_event = Some(Arc::new(f));
        self
    }

    /// Add a JSONL file exporter (named `jsonl`).
    pub fn jsonl(mut self, config: JsonlConfig) -> Self {
        self.exporters.push(PendingExporter::Jsonl(config));
        self
    }

    /// Add the OTLP exporters: `otlp` (spans) and `otlp-metrics` (the duration histogram), each
    /// only if enabled in the configuration.
    #[cfg(feature = "otlp")]
    pub fn otlp(mut self, config: super::export::OtlpConfig) -> Self {
        self.exporters.push(PendingExporter::Otlp("otlp".to_owned(), config));
        self
    }

    /// Add the MCPcat-compatible API exporter (named `mcpcat`).
    #[cfg(feature = "mcpcat")]
    pub fn mcpcat(mut self, config: super::export::McpcatConfig) -> Self {
        self.exporters.push(PendingExporter::Mcpcat("mcpcat".to_owned(), config));
        self
    }

    /// Add a custom exporter.
    pub fn exporter(mut self, name: impl Into<String>, exporter: impl Exporter) -> Self {
        self.exporters.push(PendingExporter::Custom(name.into(), Box::new(exporter)));
        self
    }

    /// Add a callback exporter: `f(batch)` on the exporter's thread.
    pub fn callback(
        self,
        name: impl Into<String>,
        f: impl FnMut(&Batch<'_>) -> Result<(), TrackingError> + Send + 'static,
    ) -> Self {
        self.exporter(name, CallbackExporter(f))
    }

    fn check(&self) -> Result<(), TrackingError> {
        let bad = |reason: &str| Err(TrackingError::InvalidArgument { reason: reason.to_owned() });
        if self.max_queue_events == 0 {
            return bad("the queue must hold at least one operation");
        }
        if self.max_queue_bytes < 4096 {
            return bad("the queue must hold at least 4096 bytes");
        }
        if self.policy.max_events == 0 || self.policy.max_queued == 0 {
            return bad("batches and exporter queues must hold at least one event");
        }
        if self.build.limits.max_string_bytes < 64 {
            return bad("the string cap must be at least 64 bytes");
        }
        if self.build.limits.max_event_bytes < 4096 {
            return bad("the event cap must be at least 4096 bytes");
        }
        if self.build.limits.max_breadth == 0 {
            return bad("the breadth cap must be at least 1");
        }
        Ok(())
    }

    /// Start the tracker: open the exporters (a JSONL file that cannot be opened or a bad URL
    /// fails here), start the worker and exporter threads.
    pub fn build(self) -> Result<Tracker, TrackingError> {
        if !self.enabled {
            return Ok(Tracker::disabled_for(self.project_id));
        }
        self.check()?;
        let mut pending = self.exporters;
        if pending.is_empty() {
            pending.push(PendingExporter::Jsonl(JsonlConfig::default()));
        }
        let mut exporters: Vec<(String, Box<dyn Exporter>)> = Vec::new();
        for p in pending {
            match p {
                PendingExporter::Jsonl(c) => exporters.push(("jsonl".to_owned(), Box::new(JsonlExporter::open(c)?))),
                #[cfg(feature = "otlp")]
                PendingExporter::Otlp(name, c) => {
                    if c.traces {
                        exporters
                            .push((name.clone(), Box::new(super::export::OtlpTracesExporter::new(&name, c.clone())?)));
                    }
                    if c.metrics {
                        let m = format!("{name}-metrics");
                        exporters.push((m.clone(), Box::new(super::export::OtlpMetricsExporter::new(&m, c)?)));
                    }
                }
                #[cfg(feature = "mcpcat")]
                PendingExporter::Mcpcat(name, c) => {
                    exporters.push((name.clone(), Box::new(super::export::McpcatExporter::new(&name, c)?)))
                }
                PendingExporter::Custom(name, e) => exporters.push((name, e)),
            }
        }
        for (i, (name, _)) in exporters.iter().enumerate() {
            if exporters[..i].iter().any(|(n, _)| n == name) {
                return Err(TrackingError::InvalidArgument { reason: format!("two exporters are named \"{name}\"") });
            }
        }
        let slots: Vec<Arc<Slot>> = exporters
            .iter()
            .map(|(name, _)| {
                Arc::new(Slot {
                    name: name.clone(),
                    state: Mutex::new(SlotState::default()),
                    cv: Condvar::new(),
                    exported: AtomicU64::new(0),
                    dropped: AtomicU64::new(0),
                    failed: AtomicU64::new(0),
                    abandoned: AtomicU64::new(0),
                })
            })
            .collect();
        let seed = self.seed.unwrap_or_else(|| IdGen::from_entropy(1).next_u64());
        let shared = Arc::new(Shared {
            enabled: true,
            capture_responses: self.build.capture_responses,
            staging: Mutex::new(StagingState {
                staging: Staging::new(self.max_queue_events, self.max_queue_bytes),
                closed: false,
                in_worker: 0,
            }),
            wake_pending: AtomicBool::new(false),
            signal: Mutex::new(Signal::default()),
            signal_cv: Condvar::new(),
            sessions: Mutex::new(Sessions::default()),
            slots: slots.clone(),
            progress: Mutex::new(()),
            progress_cv: Condvar::new(),
            filtered: AtomicU64::new(0),
            redaction_failed: AtomicU64::new(0),
            recycle: Mutex::new(Recycle::default()),
            recycled: AtomicUsize::new(0),
            recycle_max: (self.policy.max_queued.max(1) + self.policy.max_events.max(1)).saturating_mul(slots.len()),
            built_upto: AtomicU64::new(0),
            builder_exited: AtomicBool::new(false),
            next_session: AtomicU64::new(1),
            session_salt: IdGen::seeded(seed ^ 0x5E55_1011).next_u64(),
            project_id: self.project_id,
            payload_budget: self.max_queue_bytes / 2,
            policy: self.policy,
        });
        let builder = EventBuilder::new(self.build, IdGen::seeded(seed));
        let initial = Staging::initial_capacity(self.max_queue_bytes);
        let mut threads = Vec::new();
        let spawn_err = |e| TrackingError::Io { what: "starting a tracking thread".to_owned(), source: e };
        for ((_, exporter), slot) in exporters.into_iter().zip(slots) {
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
        Ok(Tracker {
            inner: Arc::new(Handle { shared, threads: Mutex::new(threads), drop_timeout: self.drop_timeout }),
        })
    }
}
