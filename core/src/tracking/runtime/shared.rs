//! The state the tracker's threads share: the request-path staging queue, the worker's signal,
//! the session registry, each exporter's slot (its [`ExportQueue`]), the counters, and the pool
//! of exported items handed back to the worker ([`Recycle`]). The tracker (`tracker.rs`), the
//! worker (`worker.rs`) and the exporter threads (`exporter.rs`) each use it; it uses none of
//! them.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::backoff::SplitMix64;
use crate::tracking::pipeline::config::TrackerConfig;
use crate::tracking::pipeline::event::Method;
use crate::tracking::pipeline::export::{Accepts, ExportItem, ExportPolicy, Exporter};
use crate::tracking::pipeline::export_queue::ExportQueue;
use crate::tracking::pipeline::ids::IdGen;
use crate::tracking::pipeline::queue::{Drained, Staging};
use crate::tracking::pipeline::sessions::Sessions;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct Signal {
    wake: bool,
    flush_gen: u64,
    stop: bool,
    /// A session's identify answered: the worker looks at what it holds.
    identified: bool,
}

struct StagingState {
    staging: Staging,
    closed: bool,
    in_worker: u64,
    /// The worker sleeps until a record comes (it had nothing to do and no deadline): the next
    /// push wakes it. Kept with the queue, so a push and the worker's look at the queue before
    /// it sleeps are ordered by the one lock.
    worker_asleep: bool,
}

/// What the tracker's threads share. Its fields are private: each thread reaches them through
/// the methods below, which keep the invariants (the staging queue's `closed` flag with its
/// pushes, the wake flag with the worker's signal, the watermarks in the order
/// [`settled`](Shared::settled) reads them).
pub(crate) struct Shared {
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
    unidentified: AtomicU64,
    /// Records held for identify, and the lowest number among them (`u64::MAX`: none).
    held: AtomicU64,
    min_held: AtomicU64,
    recycle: Mutex<Recycle>,
    /// `recycle.items.len()`, read without the lock.
    recycled: AtomicUsize,
    /// Most items in `recycle`: what the exporter queues may hold.
    recycle_max: usize,
    built_upto: AtomicU64,
    builder_exited: AtomicBool,
    next_session: AtomicU64,
    session_salt: u64,
    payload_budget: usize,
    config: TrackerConfig,
    names: Vec<String>,
    /// `recorded` when [`flush_at_exit`] last flushed this tracker.
    exit_flushed: AtomicU64,
    /// A host hook (a redact hook or a callback exporter) runs on the host's side: an exit flush
    /// that holds the host's thread ([`flush_at_exit_blocking`]) cannot wait for this tracker.
    host_hooks: bool,
}

impl Shared {
    /// The state of a tracker with these exporter slots; `seed` salts the ids of forgotten
    /// sessions, `host_hooks` says whether a hook runs on the host's side.
    pub fn new(
        config: TrackerConfig,
        names: Vec<String>,
        slots: Vec<Arc<Slot>>,
        seed: u64,
        host_hooks: bool,
    ) -> Shared {
        let enabled = config.enable_tracing;
        let policy = config.export;
        Shared {
            enabled,
            capture_responses: config.capture_responses,
            staging: Mutex::new(StagingState {
                staging: if enabled {
                    Staging::new(config.queue_capacity, config.queue_bytes)
                } else {
                    Staging::new(1, 4096)
                },
                closed: !enabled,
                in_worker: 0,
                worker_asleep: false,
            }),
            wake_pending: AtomicBool::new(false),
            signal: Mutex::new(Signal::default()),
            signal_cv: Condvar::new(),
            sessions: Mutex::new(Sessions::default()),
            recycle_max: (policy.max_queued.max(1) + policy.max_events.max(1)).saturating_mul(slots.len()),
            slots,
            progress: Mutex::new(()),
            progress_cv: Condvar::new(),
            filtered: AtomicU64::new(0),
            redaction_failed: AtomicU64::new(0),
            unidentified: AtomicU64::new(0),
            held: AtomicU64::new(0),
            min_held: AtomicU64::new(u64::MAX),
            recycle: Mutex::new(Recycle::default()),
            recycled: AtomicUsize::new(0),
            built_upto: AtomicU64::new(0),
            builder_exited: AtomicBool::new(!enabled),
            next_session: AtomicU64::new(1),
            session_salt: IdGen::seeded(seed ^ 0x5E55_1011).next_u64(),
            payload_budget: config.queue_bytes / 2,
            names,
            config,
            exit_flushed: AtomicU64::new(0),
            host_hooks,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn capture_responses(&self) -> bool {
        self.capture_responses
    }

    pub fn config(&self) -> &TrackerConfig {
        &self.config
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn slots(&self) -> &[Arc<Slot>] {
        &self.slots
    }

    /// The bytes one record's payloads may take (half the queue's byte bound).
    pub fn payload_budget(&self) -> usize {
        self.payload_budget
    }

    /// Whether a hook runs on the host's side (an exit flush that holds the host's thread
    /// cannot wait for this tracker).
    pub fn host_hooks(&self) -> bool {
        self.host_hooks
    }

    /// The request path: queue one record of `len` bytes (`write` fills it), or count it
    /// dropped once the queue is closed; the worker is woken once the queue is half full, or by
    /// the first record after it went to sleep with nothing to do.
    pub fn push_record(&self, len: usize, write: impl FnOnce(&mut Vec<u8>)) {
        let wake = {
            let mut st = lock(&self.staging);
            if st.closed {
                st.staging.reject();
                false
            } else {
                st.staging.push(len, write);
                st.staging.past_half() || std::mem::take(&mut st.worker_asleep)
            }
        };
        if wake && !self.wake_pending.swap(true, Ordering::AcqRel) {
            self.wake_worker(|sig| sig.wake = true);
        }
    }

    /// A new session's key.
    pub fn next_session_key(&self) -> u64 {
        self.next_session.fetch_add(1, Ordering::Relaxed)
    }

    /// The session registry.
    pub fn sessions(&self) -> MutexGuard<'_, Sessions> {
        lock(&self.sessions)
    }

    /// The number the next record will get (every record before it is numbered below).
    pub fn next_seq(&self) -> u64 {
        lock(&self.staging).staging.seq()
    }

    /// Records accepted, and records dropped by the request-path queue.
    pub fn recorded_and_dropped(&self) -> (u64, u64) {
        let st = lock(&self.staging);
        (st.staging.recorded(), st.staging.dropped())
    }

    /// Events filtered by the event hook, dropped by a failed redaction, and gone on without
    /// their identity.
    pub fn build_counts(&self) -> (u64, u64, u64) {
        (
            self.filtered.load(Ordering::Acquire),
            self.redaction_failed.load(Ordering::Acquire),
            self.unidentified.load(Ordering::Acquire),
        )
    }

    pub fn count_filtered(&self) {
        self.filtered.fetch_add(1, Ordering::AcqRel);
    }

    pub fn count_redaction_failed(&self) {
        self.redaction_failed.fetch_add(1, Ordering::AcqRel);
    }

    pub fn count_unidentified(&self) {
        self.unidentified.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether records came since the last exit flush of this tracker.
    pub fn exit_pending(&self) -> bool {
        self.exit_flushed.load(Ordering::Acquire) != self.recorded_and_dropped().0
    }

    /// An exit flush covers what is recorded now.
    pub fn mark_exit_flushed(&self) {
        self.exit_flushed.store(self.recorded_and_dropped().0, Ordering::Release);
    }

    /// The worker waits (at most `wait`, or without end) for a wake, a stop, an identify answer
    /// or a flush newer than `seen_flush` — and, `asleep`, for the next record (at once if one is
    /// queued); returns `(stop, flush generation, identified)`.
    pub fn wait_for_work(&self, wait: Option<Duration>, asleep: bool, seen_flush: u64) -> (bool, u64, bool) {
        let wait = if asleep {
            let mut st = lock(&self.staging);
            st.worker_asleep = st.staging.live() == 0 && !st.closed;
            if st.worker_asleep {
                wait
            } else {
                Some(Duration::ZERO)
            }
        } else {
            wait
        };
        let got = {
            let mut sig = lock(&self.signal);
            if !sig.wake && !sig.stop && !sig.identified && sig.flush_gen == seen_flush {
                sig = match wait {
                    Some(d) => self.signal_cv.wait_timeout(sig, d).unwrap_or_else(PoisonError::into_inner).0,
                    None => self.signal_cv.wait(sig).unwrap_or_else(PoisonError::into_inner),
                };
            }
            sig.wake = false;
            let identified = std::mem::take(&mut sig.identified);
            (sig.stop, sig.flush_gen, identified)
        };
        if asleep {
            lock(&self.staging).worker_asleep = false;
        }
        self.wake_pending.store(false, Ordering::Release);
        got
    }

    /// The worker takes every queued record (in one swap, `spare` becoming the new buffer).
    pub fn take_staged(&self, spare: Vec<u8>) -> Drained {
        let mut st = lock(&self.staging);
        let d = st.staging.swap(spare);
        st.in_worker = d.count as u64;
        d
    }

    /// Records queued and not yet taken by the worker.
    pub fn staged(&self) -> usize {
        lock(&self.staging).staging.live()
    }

    /// The worker publishes what it holds for identify: how many records, the lowest number.
    pub fn publish_holds(&self, held: usize, min_seq: Option<u64>) {
        self.held.store(held as u64, Ordering::Release);
        self.min_held.store(min_seq.unwrap_or(u64::MAX), Ordering::Release);
    }

    /// The worker built (or holds) every record numbered below `end_seq`.
    pub fn built_upto(&self, end_seq: u64) {
        lock(&self.staging).in_worker = 0;
        self.built_upto.store(end_seq, Ordering::Release);
    }

    /// The worker has exited: the recycle pool is closed (what it held goes to `dead`), every
    /// exporter learns that nothing more comes.
    pub fn builder_exits(&self, dead: &mut Vec<Arc<ExportItem>>) {
        {
            let mut r = lock(&self.recycle);
            r.closed = true;
            dead.append(&mut r.items);
        }
        for slot in &self.slots {
            lock(&slot.state).closed = true;
            slot.cv.notify_all();
        }
        self.builder_exited.store(true, Ordering::Release);
        self.notify_progress();
    }

    /// Whether the worker and every exporter thread have exited.
    pub fn all_exited(&self) -> bool {
        self.builder_exited.load(Ordering::Acquire) && self.slots.iter().all(|slot| lock(&slot.state).exited)
    }

    /// Stop accepting records, and let every exporter queue give up at `deadline`.
    pub fn close(&self, deadline: Instant) {
        lock(&self.staging).closed = true;
        for slot in &self.slots {
            lock(&slot.state).queue.stop(deadline);
            slot.cv.notify_all();
        }
        self.wake_worker(|sig| sig.stop = true);
    }

    /// Items the exporter queues gave up on at a shutdown's deadline, in all.
    pub fn abandoned(&self) -> u64 {
        self.slots.iter().map(|s| lock(&s.state).queue.counts().abandoned).sum()
    }

    pub fn notify_progress(&self) {
        let _g = lock(&self.progress);
        self.progress_cv.notify_all();
    }

    /// A session's identify answered: the worker looks at what it holds.
    pub fn identify_answered(&self) {
        self.wake_worker(|sig| sig.identified = true);
    }

    /// A flush: the worker hands partial batches on at once.
    pub fn request_flush(&self) {
        self.wake_worker(|sig| sig.flush_gen += 1);
    }

    fn wake_worker(&self, f: impl FnOnce(&mut Signal)) {
        let mut sig = lock(&self.signal);
        f(&mut sig);
        self.signal_cv.notify_one();
    }

    /// Wait on the progress condition until `done()` or `deadline`.
    pub fn wait_progress(&self, deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
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

    /// The id of a session the registry forgot (derived from its key).
    pub fn session_id_for_key(&self, key: u64) -> String {
        crate::tracking::pipeline::ids::derive_session_id(
            &format!("mcplens-session-{key}-{:016x}", self.session_salt),
            None,
        )
    }

    /// Whether every record numbered below `target` is settled everywhere. Reads the builder's
    /// watermark, then the identify hold's, then each exporter's: the worker writes them in the
    /// opposite order, so a record moving from one stage to the next is always seen in one.
    pub fn settled(&self, target: u64) -> bool {
        if self.builder_exited.load(Ordering::Acquire) {
            return self.slots.iter().all(|slot| lock(&slot.state).exited);
        }
        if self.built_upto.load(Ordering::Acquire) < target || self.min_held.load(Ordering::Acquire) < target {
            return false;
        }
        self.slots.iter().all(|slot| {
            let st = lock(&slot.state);
            st.queue.done_upto() >= target || st.exited
        })
    }

    pub fn queued(&self) -> u64 {
        let st = lock(&self.staging);
        st.staging.live() as u64 + st.in_worker + self.held.load(Ordering::Acquire)
    }

    pub fn pending(&self) -> u64 {
        self.queued() + self.slots.iter().map(|slot| lock(&slot.state).queue.pending()).max().unwrap_or(0)
    }
}

pub(crate) struct SlotState {
    pub queue: ExportQueue<Arc<ExportItem>>,
    /// The worker has exited: nothing more will be pushed.
    pub closed: bool,
    /// The thread has exited.
    pub exited: bool,
}

/// One exporter as the worker and the tracker see it.
pub(crate) struct Slot {
    pub name: String,
    /// The methods whose events go to this exporter (the others are skipped).
    accepts: Accepts,
    pub state: Mutex<SlotState>,
    pub cv: Condvar,
}

impl Slot {
    pub fn new(name: &str, exporter: &dyn Exporter, policy: ExportPolicy, rng: &mut IdGen) -> Slot {
        let accepts = Accepts::of(exporter);
        Slot {
            name: name.to_owned(),
            accepts,
            state: Mutex::new(SlotState {
                queue: ExportQueue::new(policy, SplitMix64::new(rng.next_u64())),
                closed: false,
                exited: false,
            }),
            cv: Condvar::new(),
        }
    }

    /// Whether events of this method go to this exporter.
    pub fn accepts(&self, method: &Method) -> bool {
        self.accepts.contains(method)
    }
}

/// Exported items handed back to the worker, which allocated them, to be freed there: it frees
/// one just before building each event, so that the allocator serves the new event from the old
/// one's memory on the same thread instead of every block crossing threads (a block freed on
/// another thread costs the worker far more to get back than one it freed itself). Bounded by
/// `Shared::recycle_max` (what the exporter queues may hold); when it is full, or once the worker
/// has exited, exporters free items themselves. Once no operation has arrived for
/// [`RECYCLE_LINGER`], the worker frees whatever is left.
#[derive(Debug, Default)]
struct Recycle {
    items: Vec<Arc<ExportItem>>,
    closed: bool,
}

/// How long handed-back items may wait for new events to reuse their memory.
pub(crate) const RECYCLE_LINGER: Duration = Duration::from_secs(1);

/// An exporter is done with these items: hand them to the worker if it takes them.
pub(crate) fn give_back(shared: &Shared, batch: &mut Vec<Arc<ExportItem>>) {
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

/// The worker takes what exporters handed back, once it has used up the last take.
pub(crate) fn take_back(shared: &Shared, dead: &mut Vec<Arc<ExportItem>>) {
    if dead.is_empty() && shared.recycled.load(Ordering::Relaxed) > 0 {
        let mut r = lock(&shared.recycle);
        std::mem::swap(&mut r.items, dead);
        shared.recycled.store(0, Ordering::Relaxed);
    }
}
