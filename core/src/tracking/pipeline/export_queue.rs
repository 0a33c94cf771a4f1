//! The per-exporter export queue (sans-IO): batching, retry with backoff and jitter, the
//! `Retry-After` floor, flush and the shutdown deadline, and the counters, as one state machine.
//! It never reads a clock, sleeps, spawns or sends: time is passed in, the batch to send comes out
//! of [`poll_batch`](ExportQueue::poll_batch), the exporter's answer goes back in through
//! [`on_result`](ExportQueue::on_result), and [`poll_timeout`](ExportQueue::poll_timeout) says when
//! to poll again. The tracker's exporter threads only drive it; its tests never sleep.
//!
//! Call order, per exporter:
//! ```text
//! push(seq, item, now)* · set_dispatched(upto) · flush(upto, now) · stop(deadline)   (any time)
//! loop { poll_batch(now) → Some(batch) → export(batch) → on_result(result, now)
//!        | None → wait until poll_timeout() or new input }                           (until is_finished())
//! ```
//!
//! Rules:
//! - **Batching.** A batch is at most `max_events`, taken from the front (oldest first) once the
//!   queue holds `max_events`, or its oldest item has waited `max_delay`, or no item has come for
//!   `max_idle` (batching only under load: a lone event goes out within `max_idle`), or a flush
//!   covers the oldest item, or the queue is stopping. One batch is out at a time.
//! - **Bound.** At most `max_queued` items wait; pushing past it drops the oldest (counted).
//! - **Retries.** A failed batch's undelivered rest is retried after `b = initial · 2^(n-1)`
//!   (capped at `max_backoff`), waiting uniformly in `[b/2, b]` (the crate's one retry rule,
//!   [`crate::backoff`], in whole milliseconds), and at least the receiver's
//!   `Retry-After` (at most [`MAX_RETRY_AFTER`](crate::tracking::MAX_RETRY_AFTER)). A permanent error, or the
//!   `max_attempts`-th failure, counts the rest as failed.
//! - **Flush** sends partial batches at once and cuts a backoff short when the retried batch holds
//!   an item the flush covers.
//! - **Deadline.** Once stopped, batches go without waiting for the delay; past the deadline,
//!   whatever is still queued or waiting for a retry is dropped (counted as `dropped` and
//!   `abandoned`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::export::ExportPolicy;
use crate::backoff::SplitMix64;
use crate::tracking::ExportError;

/// The counters of one export queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueCounts {
    /// Items delivered.
    pub exported: u64,
    /// Items dropped: the queue was full (oldest first), or the shutdown deadline passed.
    pub dropped: u64,
    /// Of `dropped`: given up because the shutdown deadline passed.
    pub abandoned: u64,
    /// Items given up on: a permanent error, or every attempt failed.
    pub failed: u64,
    /// Items the exporter does not take (see [`Exporter::accepts`](crate::tracking::Exporter::accepts)).
    pub skipped: u64,
}

#[derive(Debug)]
struct Entry<T> {
    seq: u64,
    at: Instant,
    item: T,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No batch out.
    Idle,
    /// A batch is with the exporter.
    Sending,
    /// The rest of a failed batch waits for its retry.
    Backoff { until: Instant },
}

/// One exporter's queue (see the module docs). `T` is what a batch carries (cheap to clone:
/// the tracker uses `Arc<ExportItem>`).
#[derive(Debug)]
pub struct ExportQueue<T> {
    policy: ExportPolicy,
    items: VecDeque<Entry<T>>,
    /// The batch out, or waiting for its retry (front first).
    flight: Vec<Entry<T>>,
    state: State,
    attempt: u32,
    flush_upto: u64,
    dispatched_upto: u64,
    deadline: Option<Instant>,
    counts: QueueCounts,
    rng: SplitMix64,
}

impl<T: Clone> ExportQueue<T> {
    /// An empty queue; `rng` draws the backoff jitter.
    pub fn new(policy: ExportPolicy, rng: SplitMix64) -> ExportQueue<T> {
        ExportQueue {
            policy,
            items: VecDeque::new(),
            flight: Vec::new(),
            state: State::Idle,
            attempt: 0,
            flush_upto: 0,
            dispatched_upto: 0,
            deadline: None,
            counts: QueueCounts::default(),
            rng,
        }
    }

    /// Queue an item (record number `seq`); returns how many were dropped to make room (oldest
    /// first). Items are kept in `seq` order.
    pub fn push(&mut self, seq: u64, item: T, now: Instant) -> usize {
        let entry = Entry { seq, at: now, item };
        match self.items.back() {
            Some(last) if last.seq > seq => {
                let at = self.items.partition_point(|e| e.seq < seq);
                self.items.insert(at, entry);
            }
            _ => self.items.push_back(entry),
        }
        let over = self.items.len().saturating_sub(self.policy.max_queued.max(1));
        if over > 0 {
            self.items.drain(..over);
            self.counts.dropped += over as u64;
        }
        over
    }

    /// Count an item the exporter does not take.
    pub fn skip(&mut self) {
        self.counts.skipped += 1;
    }

    /// Every record numbered below `upto` has been offered to this queue, or never will be.
    pub fn set_dispatched(&mut self, upto: u64) {
        self.dispatched_upto = self.dispatched_upto.max(upto);
    }

    /// Send what holds records numbered below `upto` without waiting for a full batch, and cut
    /// a backoff short if the batch it holds does.
    pub fn flush(&mut self, upto: u64, now: Instant) {
        self.flush_upto = self.flush_upto.max(upto);
        if let State::Backoff { until } = self.state {
            if self.flight.first().is_some_and(|e| e.seq < upto) && until > now {
                self.state = State::Backoff { until: now };
            }
        }
    }

    /// Stop: send everything without waiting for the delay; give up on what is left at `deadline`.
    pub fn stop(&mut self, deadline: Instant) {
        self.deadline = Some(self.deadline.map_or(deadline, |d| d.min(deadline)));
    }

    fn stopping(&self) -> bool {
        self.deadline.is_some()
    }

    fn past_deadline(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }

    /// Drop (count) everything still queued or waiting for a retry.
    fn abandon(&mut self) {
        let n = (self.items.len() + if self.state == State::Sending { 0 } else { self.flight.len() }) as u64;
        self.items.clear();
        if self.state != State::Sending {
            self.flight.clear();
            self.state = State::Idle;
        }
        self.counts.dropped += n;
        self.counts.abandoned += n;
    }

    /// The next batch to send now, if one is due (see the module docs). At most one is out at a
    /// time: the next comes after [`on_result`](ExportQueue::on_result).
    pub fn poll_batch(&mut self, now: Instant) -> Option<Vec<T>> {
        if self.state == State::Sending {
            return None;
        }
        if self.past_deadline(now) {
            self.abandon();
            return None;
        }
        match self.state {
            State::Backoff { until } if now >= until => {}
            State::Backoff { .. } => return None,
            _ => {
                let front = self.items.front()?;
                let newest = self.items.back().map_or(front.at, |e| e.at);
                let due = self.items.len() >= self.policy.max_events
                    || now >= front.at + self.policy.max_delay
                    || now >= newest + self.policy.max_idle
                    || front.seq < self.flush_upto
                    || self.stopping();
                if !due {
                    return None;
                }
                let n = self.items.len().min(self.policy.max_events.max(1));
                self.flight.extend(self.items.drain(..n));
            }
        }
        self.state = State::Sending;
        Some(self.flight.iter().map(|e| e.item.clone()).collect())
    }

    /// The exporter's answer for the batch [`poll_batch`](ExportQueue::poll_batch) gave out.
    pub fn on_result(&mut self, result: Result<(), ExportError>, now: Instant) {
        if self.state != State::Sending {
            return;
        }
        let err = match result {
            Ok(()) => {
                self.counts.exported += self.flight.len() as u64;
                self.flight.clear();
                self.attempt = 0;
                self.state = State::Idle;
                return;
            }
            Err(e) => e,
        };
        let delivered = err.delivered.min(self.flight.len());
        self.counts.exported += delivered as u64;
        self.flight.drain(..delivered);
        self.attempt += 1;
        if self.flight.is_empty() || !err.retryable || self.attempt >= self.policy.max_attempts.max(1) {
            self.counts.failed += self.flight.len() as u64;
            self.flight.clear();
            self.attempt = 0;
            self.state = State::Idle;
            return;
        }
        let jittered = self.policy.schedule().delay(self.attempt, &mut self.rng);
        let floor = err.retry_after.unwrap_or(Duration::ZERO).min(crate::tracking::MAX_RETRY_AFTER);
        self.state = State::Backoff { until: now + jittered.max(floor) };
        if self.past_deadline(now) {
            self.abandon();
        }
    }

    /// When to poll again without new input: the oldest item's batch delay or the newest one's
    /// idle delay, the end of a backoff, or the deadline, whichever is first; `None` while a batch
    /// is out or nothing waits. An instant in the past means now. It is the earlier of
    /// [`batch_timeout`](ExportQueue::batch_timeout) and [`timer_timeout`](ExportQueue::timer_timeout).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.batch_timeout(), self.timer_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When the items waiting fall due by their delays alone (the oldest item's batch delay, the
    /// newest one's idle delay, whichever is first): `None` while a batch is out or backs off,
    /// nothing waits, or they are due now for another reason (see
    /// [`timer_timeout`](ExportQueue::timer_timeout)). A push or a flush can only bring it
    /// forward or make it moot, so whoever pushes can watch it for the queue's driver.
    pub fn batch_timeout(&self) -> Option<Instant> {
        if self.state != State::Idle || self.due_at_once() {
            return None;
        }
        let front = self.items.front()?;
        let newest = self.items.back().map_or(front.at, |e| e.at);
        // Not stopping (that is due at once): no deadline to weigh.
        Some((front.at + self.policy.max_delay).min(newest + self.policy.max_idle))
    }

    /// The rest of [`poll_timeout`](ExportQueue::poll_timeout): the end of a backoff, or the
    /// deadline, or the oldest item's arrival when the items are due at once (the queue holds a
    /// full batch, a flush covers the oldest, or the queue is stopping).
    pub fn timer_timeout(&self) -> Option<Instant> {
        let next = match self.state {
            State::Sending => return None,
            State::Backoff { until } => Some(until),
            State::Idle if self.due_at_once() => self.items.front().map(|front| front.at),
            State::Idle => None,
        };
        match (next, self.deadline) {
            (Some(n), Some(d)) => Some(n.min(d)),
            (n, _) => n,
        }
    }

    fn due_at_once(&self) -> bool {
        self.items.front().is_some_and(|front| {
            self.items.len() >= self.policy.max_events || front.seq < self.flush_upto || self.stopping()
        })
    }

    /// Every record numbered below this is settled here: exported, dropped, failed, skipped, or
    /// never an event.
    pub fn done_upto(&self) -> u64 {
        let front = self.items.front().map(|e| e.seq);
        let flight = self.flight.first().map(|e| e.seq);
        [front, flight].into_iter().flatten().fold(self.dispatched_upto, u64::min)
    }

    /// Items waiting or being sent.
    pub fn pending(&self) -> u64 {
        (self.items.len() + self.flight.len()) as u64
    }

    /// Stopped, and nothing left to send or to wait for.
    pub fn is_finished(&self) -> bool {
        self.stopping() && self.items.is_empty() && self.flight.is_empty() && self.state == State::Idle
    }

    /// The counters.
    pub fn counts(&self) -> QueueCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> ExportPolicy {
        ExportPolicy {
            max_events: 3,
            max_delay: Duration::from_millis(100),
            max_idle: Duration::from_millis(100),
            max_queued: 5,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(1),
            max_attempts: 3,
        }
    }

    fn ms(t0: Instant, n: u64) -> Instant {
        t0 + Duration::from_millis(n)
    }

    fn queue() -> (ExportQueue<u64>, Instant) {
        (ExportQueue::new(policy(), SplitMix64::new(1)), Instant::now())
    }

    #[test]
    fn a_quiet_queue_sends_after_the_idle_delay_and_a_busy_one_batches() {
        let policy = ExportPolicy { max_events: 100, max_queued: 100, max_idle: Duration::from_millis(20), ..policy() };
        let t0 = Instant::now();
        let mut q: ExportQueue<u32> = ExportQueue::new(policy, SplitMix64::new(1));
        q.push(0, 0, t0);
        assert_eq!(q.poll_timeout(), Some(ms(t0, 20)), "the newest item's idle delay");
        assert_eq!(q.poll_batch(ms(t0, 19)), None);
        assert_eq!(q.poll_batch(ms(t0, 20)), Some(vec![0]), "alone: out once nothing came for 20 ms");
        q.on_result(Ok(()), ms(t0, 20));
        // Under load (an item every 10 ms) the batch grows until the oldest waited max_delay.
        for i in 1..=10u32 {
            q.push(u64::from(i), i, ms(t0, 20 + 10 * u64::from(i)));
            assert_eq!(q.poll_batch(ms(t0, 20 + 10 * u64::from(i))), None, "still coming: batching");
        }
        assert_eq!(q.poll_timeout(), Some(ms(t0, 130)), "the oldest's delay (100 ms) comes first");
        assert_eq!(q.poll_batch(ms(t0, 130)), Some((1..=10).collect::<Vec<_>>()));
    }

    #[test]
    fn the_poll_timeout_is_a_batch_delay_or_a_timer_never_both() {
        // The worker watches `batch_timeout` for the exporter thread (only a push moves it); the
        // thread sleeps until `timer_timeout`. Together they are `poll_timeout`, at every step.
        let (mut q, t0) = queue();
        let both = |q: &ExportQueue<u64>| (q.batch_timeout(), q.timer_timeout(), q.poll_timeout());
        assert_eq!(both(&q), (None, None, None), "nothing waits");
        q.push(0, 0, t0);
        q.push(1, 1, ms(t0, 30));
        assert_eq!(both(&q), (Some(ms(t0, 100)), None, Some(ms(t0, 100))), "the oldest's delay");
        q.push(2, 2, ms(t0, 40));
        assert_eq!(both(&q), (None, Some(t0), Some(t0)), "a full batch is due at once: a timer");
        let batch = q.poll_batch(ms(t0, 40)).unwrap();
        assert_eq!((batch, both(&q)), (vec![0, 1, 2], (None, None, None)), "while it is out");
        q.push(3, 3, ms(t0, 50));
        q.on_result(Err(ExportError::retryable("down", 0)), ms(t0, 60));
        let Some(until) = q.timer_timeout() else { panic!("a backoff is a timer") };
        assert_eq!((q.batch_timeout(), q.poll_timeout()), (None, Some(until)), "items behind a backoff wait for it");
        assert_eq!(q.poll_batch(until), Some(vec![0, 1, 2]));
        q.on_result(Ok(()), until);
        assert_eq!(both(&q), (Some(ms(t0, 150)), None, Some(ms(t0, 150))), "the rest: its own delays again");
        q.flush(4, until);
        assert_eq!(both(&q), (None, Some(ms(t0, 50)), Some(ms(t0, 50))), "a flush makes it due at once");
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.stop(ms(t0, 500));
        assert_eq!(both(&q), (None, Some(t0), Some(t0)), "stopping: due at once");
    }

    #[test]
    fn batches_when_full_or_after_the_delay() {
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.push(1, 1, t0);
        assert_eq!(q.poll_batch(ms(t0, 99)), None, "neither full nor due");
        assert_eq!(q.poll_timeout(), Some(ms(t0, 100)));
        assert_eq!(q.poll_batch(ms(t0, 100)), Some(vec![0, 1]));
        assert_eq!(q.poll_batch(ms(t0, 100)), None, "one batch out at a time");
        q.on_result(Ok(()), ms(t0, 101));
        for i in 2..6 {
            q.push(i, i, ms(t0, 102));
        }
        assert_eq!(q.poll_batch(ms(t0, 102)), Some(vec![2, 3, 4]), "full: at once");
        q.on_result(Ok(()), ms(t0, 103));
        assert_eq!(q.counts().exported, 5);
        assert_eq!(q.pending(), 1);
    }

    #[test]
    fn drops_the_oldest_past_the_bound() {
        let (mut q, t0) = queue();
        let dropped: usize = (0..8).map(|i| q.push(i, i, t0)).sum();
        assert_eq!(dropped, 3);
        assert_eq!(q.counts().dropped, 3);
        assert_eq!(q.poll_batch(t0), Some(vec![3, 4, 5]));
    }

    #[test]
    fn retries_with_backoff_then_gives_up() {
        let (mut q, t0) = queue();
        for i in 0..3 {
            q.push(i, i, t0);
        }
        assert_eq!(q.poll_batch(t0), Some(vec![0, 1, 2]));
        q.on_result(Err(ExportError::retryable("down", 1)), t0);
        assert_eq!(q.counts().exported, 1);
        // First backoff: uniformly in [100, 200] ms.
        let until = q.poll_timeout().unwrap();
        assert!(until >= ms(t0, 100) && until <= ms(t0, 200), "{:?}", until - t0);
        assert_eq!(q.poll_batch(until - Duration::from_nanos(1)), None);
        assert_eq!(q.poll_batch(until), Some(vec![1, 2]), "the undelivered rest");
        q.on_result(Err(ExportError::retryable("down", 0)), until);
        let second = q.poll_timeout().unwrap() - until;
        assert!(second >= Duration::from_millis(200) && second <= Duration::from_millis(400), "{second:?}");
        let at = q.poll_timeout().unwrap();
        assert_eq!(q.poll_batch(at), Some(vec![1, 2]));
        q.on_result(Err(ExportError::retryable("down", 0)), at);
        assert_eq!((q.counts().failed, q.pending()), (2, 0), "the third attempt was the last");
        assert_eq!(q.done_upto(), 0, "nothing dispatched beyond yet");
        q.set_dispatched(3);
        assert_eq!(q.done_upto(), 3);
    }

    #[test]
    fn permanent_errors_and_panics_are_not_retried() {
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.flush(1, t0);
        assert_eq!(q.poll_batch(t0), Some(vec![0]));
        q.on_result(Err(ExportError::panicked()), t0);
        assert_eq!(q.counts().failed, 1);
        assert_eq!(q.poll_timeout(), None);
    }

    #[test]
    fn retry_after_is_a_floor_and_bounded() {
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.flush(1, t0);
        q.poll_batch(t0).unwrap();
        q.on_result(Err(ExportError::retryable("429", 0).with_retry_after(Some(Duration::from_secs(30)))), t0);
        assert_eq!(q.poll_timeout(), Some(t0 + Duration::from_secs(30)));
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.flush(1, t0);
        q.poll_batch(t0).unwrap();
        q.on_result(Err(ExportError::retryable("429", 0).with_retry_after(Some(Duration::from_secs(9_999)))), t0);
        assert_eq!(q.poll_timeout(), Some(t0 + crate::tracking::MAX_RETRY_AFTER));
    }

    #[test]
    fn flush_sends_partial_batches_and_cuts_a_backoff_short() {
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.push(5, 5, t0);
        q.flush(1, ms(t0, 1));
        assert_eq!(q.poll_timeout(), Some(t0), "due now");
        assert_eq!(q.poll_batch(ms(t0, 1)), Some(vec![0, 5]));
        q.on_result(Err(ExportError::retryable("down", 0)), ms(t0, 2));
        assert!(q.poll_batch(ms(t0, 3)).is_none(), "backing off");
        q.flush(1, ms(t0, 3));
        assert_eq!(q.poll_batch(ms(t0, 3)), Some(vec![0, 5]), "a flush that covers the batch cuts the wait");
        q.on_result(Ok(()), ms(t0, 4));
        q.set_dispatched(6);
        assert_eq!(q.done_upto(), 6);
    }

    #[test]
    fn the_deadline_abandons_what_is_left() {
        let (mut q, t0) = queue();
        for i in 0..4 {
            q.push(i, i, t0);
        }
        q.stop(ms(t0, 50));
        assert_eq!(q.poll_batch(t0), Some(vec![0, 1, 2]), "stopping: no batch delay");
        q.on_result(Err(ExportError::retryable("down", 0)), ms(t0, 10));
        // The backoff would end after the deadline: the deadline is the next poll.
        assert_eq!(q.poll_timeout(), Some(ms(t0, 50)));
        assert_eq!(q.poll_batch(ms(t0, 50)), None);
        assert_eq!(q.counts().dropped, 4);
        assert_eq!(q.counts().abandoned, 4);
        assert!(q.is_finished());
    }

    #[test]
    fn a_result_after_the_deadline_abandons_the_rest() {
        let (mut q, t0) = queue();
        q.push(0, 0, t0);
        q.push(1, 1, t0);
        q.stop(ms(t0, 5));
        q.poll_batch(t0).unwrap();
        q.on_result(Err(ExportError::retryable("slow", 1)), ms(t0, 9));
        let c = q.counts();
        assert_eq!((c.exported, c.abandoned, c.failed), (1, 1, 0));
        assert!(q.is_finished());
    }

    #[test]
    fn items_stay_in_record_order_and_bound_done_upto() {
        let (mut q, t0) = queue();
        q.push(7, 7, t0);
        q.push(9, 9, t0);
        q.push(3, 3, t0); // released late (held for identify)
        q.set_dispatched(10);
        assert_eq!(q.done_upto(), 3);
        q.flush(10, t0);
        assert_eq!(q.poll_batch(t0), Some(vec![3, 7, 9]));
        assert_eq!(q.done_upto(), 3, "in flight");
        q.on_result(Ok(()), t0);
        assert_eq!(q.done_upto(), 10);
        q.skip();
        assert_eq!(q.counts().skipped, 1);
    }
}
