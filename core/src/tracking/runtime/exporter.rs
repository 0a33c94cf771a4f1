//! Exporter threads: each drives its exporter's [`ExportQueue`] (the rules are there), performing
//! its actions: wait until [`poll_timeout`](ExportQueue::poll_timeout), call
//! [`Exporter::export`] with what [`poll_batch`](ExportQueue::poll_batch) gives, hand the answer
//! back through [`on_result`](ExportQueue::on_result). A panic is an [`ExportError::panicked`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use super::shared::{give_back, lock, Shared, Slot};
use crate::tracking::pipeline::export::{Batch, Exporter};
use crate::tracking::ExportError;

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
