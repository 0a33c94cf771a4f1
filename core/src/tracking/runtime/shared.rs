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
use crate::tracking::pipeline::export::{ExportItem, ExportPolicy, Exporter};
use crate::tracking::pipeline::export_queue::ExportQueue;
use crate::tracking::pipeline::ids::IdGen;
use crate::tracking::pipeline::queue::Staging;
use crate::tracking::pipeline::sessions::Sessions;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
pub(crate) struct Signal {
    pub wake: bool,
    pub flush_gen: u64,
    pub stop: bool,
    /// A session's identify answered: the worker looks at what it holds.
    pub identified: bool,
}

pub(crate) struct StagingState {
    pub staging: Staging,
    pub closed: bool,
    pub in_worker: u64,
}

pub(crate) struct Shared {
    pub enabled: bool,
    pub capture_responses: bool,
    pub staging: Mutex<StagingState>,
    pub wake_pending: AtomicBool,
    pub signal: Mutex<Signal>,
    pub signal_cv: Condvar,
    pub sessions: Mutex<Sessions>,
    pub slots: Vec<Arc<Slot>>,
    pub progress: Mutex<()>,
    pub progress_cv: Condvar,
    pub filtered: AtomicU64,
    pub redaction_failed: AtomicU64,
    pub unidentified: AtomicU64,
    /// Records held for identify, and the lowest number among them (`u64::MAX`: none).
    pub held: AtomicU64,
    pub min_held: AtomicU64,
    pub recycle: Mutex<Recycle>,
    /// `recycle.items.len()`, read without the lock.
    pub recycled: AtomicUsize,
    /// Most items in `recycle`: what the exporter queues may hold.
    pub recycle_max: usize,
    pub built_upto: AtomicU64,
    pub builder_exited: AtomicBool,
    pub next_session: AtomicU64,
    pub session_salt: u64,
    pub payload_budget: usize,
    pub config: TrackerConfig,
    pub names: Vec<String>,
    /// `recorded` when [`flush_at_exit`] last flushed this tracker.
    pub exit_flushed: AtomicU64,
    /// A host hook (a redact hook or a callback exporter) runs on the host's side: an exit flush
    /// that holds the host's thread ([`flush_at_exit_blocking`]) cannot wait for this tracker.
    pub host_hooks: bool,
}

impl Shared {
    pub fn notify_progress(&self) {
        let _g = lock(&self.progress);
        self.progress_cv.notify_all();
    }

    pub fn wake_worker(&self, f: impl FnOnce(&mut Signal)) {
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
    /// Bit `m` set: events of method code `m` go to this exporter (else they are skipped).
    accepts: u64,
    pub state: Mutex<SlotState>,
    pub cv: Condvar,
}

impl Slot {
    pub fn new(name: &str, exporter: &dyn Exporter, policy: ExportPolicy, rng: &mut IdGen) -> Slot {
        let accepts = Method::ALL.iter().filter(|m| exporter.accepts(**m)).fold(0u64, |acc, m| acc | 1 << (*m as u8));
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
    pub fn accepts(&self, method: Option<Method>) -> bool {
        method.is_none_or(|m| self.accepts & (1 << (m as u8)) != 0)
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
pub(crate) struct Recycle {
    pub items: Vec<Arc<ExportItem>>,
    pub closed: bool,
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
