//! Exporter threads: each drives its exporter's [`ExportQueue`] (the rules are there), performing
//! its actions: wait until [`poll_timeout`](ExportQueue::poll_timeout), call
//! [`Exporter::export`] with what [`poll_batch`](ExportQueue::poll_batch) gives, hand the answer
//! back through [`on_result`](ExportQueue::on_result). A panic is an [`ExportError::panicked`].
//!
//! While the worker runs, it watches the queue's [`batch_timeout`](ExportQueue::batch_timeout)
//! (it pushes every item, so only it moves that instant) and wakes this thread when a batch falls
//! due; this thread sleeps only until its [`timer_timeout`](ExportQueue::timer_timeout) (a
//! backoff's end, the deadline). Under a steady load an item comes every few milliseconds and
//! the idle delay moves with each: a thread that slept until it woke about 50 times a second to
//! find nothing due. Right after a batch, and once the worker has exited, it keeps the whole
//! [`poll_timeout`](ExportQueue::poll_timeout) itself (the worker may have looked while the
//! batch was out).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use super::shared::{give_back, lock, Shared, Slot};
use crate::tracking::pipeline::export::{Batch, Exporter};
#[cfg(doc)]
use crate::tracking::pipeline::export_queue::ExportQueue;
use crate::tracking::ExportError;

pub(crate) fn run_exporter(shared: Arc<Shared>, slot: Arc<Slot>, mut exporter: Box<dyn Exporter>) {
    let mut st = lock(&slot.state);
    let mut after_batch = false;
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
            after_batch = true;
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
        let timeout = if st.closed || after_batch { st.queue.poll_timeout() } else { st.queue.timer_timeout() };
        after_batch = false;
        st = match timeout {
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
