//! Exporter threads: each drives its exporter's [`ExportQueue`] (the rules are there), performing
//! its actions: wait until [`poll_timeout`](ExportQueue::poll_timeout), call
//! [`Exporter::export`] with what [`poll_batch`](ExportQueue::poll_batch) gives, hand the answer
//! back through [`on_result`](ExportQueue::on_result). A panic is an [`ExportError::panicked`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

use super::event::Method;
use super::export::{Batch, ExportItem, ExportPolicy, Exporter};
use super::export_queue::ExportQueue;
use super::ids::IdGen;
use super::tracker::{lock, Shared};
use super::worker::give_back;
use super::ExportError;
use crate::backoff::SplitMix64;

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

pub(crate) fn run_exporter(shared: Arc<Shared>, slot: Arc<Slot>, mut exporter: Box<dyn Exporter>) {
    let mut st = lock(&slot.state);
    loop {
        let before = st.queue.pending();
        if let Some(batch) = st.queue.poll_batch(Instant::now()) {
            drop(st);
            let result = catch_unwind(AssertUnwindSafe(|| exporter.export(&Batch::new(&batch))))
                .unwrap_or_else(|_| Err(ExportError::panicked()));
            lock(&slot.state).queue.on_result(result, Instant::now());
            // After `on_result`: the queue no longer holds these, so the worker frees them.
            let mut batch = batch;
            give_back(&shared, &mut batch);
            shared.notify_progress();
            st = lock(&slot.state);
            continue;
        }
        if st.queue.pending() != before {
            // The deadline passed: what was left is counted as dropped.
            drop(st);
            shared.notify_progress();
            st = lock(&slot.state);
            continue;
        }
        if st.closed && st.queue.is_finished() {
            drop(st);
            let _ = catch_unwind(AssertUnwindSafe(|| exporter.shutdown()));
            lock(&slot.state).exited = true;
            shared.notify_progress();
            return;
        }
        st = match st.queue.poll_timeout() {
            Some(at) => {
                let now = Instant::now();
                if at <= now {
                    continue;
                }
                slot.cv.wait_timeout(st, at - now).unwrap_or_else(PoisonError::into_inner).0
            }
            None => slot.cv.wait(st).unwrap_or_else(PoisonError::into_inner),
        };
    }
}
