//! The worker thread: takes the request-path queue's records in one swap, builds their events
//! (holding a session's records while its identify hook runs, see `sessions.rs`), and hands them
//! to every exporter's queue. It also frees exported events (see `Recycle` in `shared.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::shared::{lock, take_back, Shared, RECYCLE_LINGER};
use crate::tracking::pipeline::build::{EventBuilder, NotBuilt, SessionInfo};
use crate::tracking::pipeline::export::ExportItem;
use crate::tracking::pipeline::ids::unix_nanos;
use crate::tracking::pipeline::queue::{decode, session_of, Drained};
use crate::tracking::pipeline::sessions::{HeldRecord, IdentifyHolds, IdentifyState, Offered};

/// Free one handed-back event (dropping references until one is the last).
fn free_one(dead: &mut Vec<Arc<ExportItem>>) {
    while let Some(item) = dead.pop() {
        if Arc::try_unwrap(item).is_ok() {
            break;
        }
    }
}

/// How often the worker looks at the request-path queue while records come, at most (a queue
/// half full wakes it at once, and a batch falling due on an export queue, see `dispatch`); after
/// a round without records, the next record wakes it (see `run_builder`). With the export queue's
/// `maxIdleMs`, a lone event is exported within about 40 ms of its record: a host may end its
/// server soon after the last answer. Under load it was every 5 ms: each round's wake-up cost more
/// than the few records it built (the tracked proxy's worker took about 4.7 µs of CPU per relayed
/// call at 5 ms, 3 µs at 20 ms).
const IDLE: Duration = Duration::from_millis(20);

/// The worker's state between rounds.
struct Worker {
    shared: Arc<Shared>,
    builder: EventBuilder,
    holds: IdentifyHolds,
    /// Session info read this round (the registry is read once per session per round).
    cache: HashMap<u64, (Arc<SessionInfo>, IdentifyState)>,
    items: Vec<(u64, Arc<ExportItem>)>,
    dead: Vec<Arc<ExportItem>>,
    /// The earliest instant a batch falls due by its delays on an export queue (see `dispatch`).
    export_due: Option<Instant>,
}

impl Worker {
    fn session(&mut self, key: u64) -> (Arc<SessionInfo>, IdentifyState) {
        if let Some(s) = self.cache.get(&key) {
            return s.clone();
        }
        let s = self.shared.sessions().get(key).unwrap_or_else(|| {
            (
                Arc::new(SessionInfo { id: self.shared.session_id_for_key(key), ..SessionInfo::default() }),
                IdentifyState::Settled,
            )
        });
        self.cache.insert(key, s.clone());
        s
    }

    /// Build one record's event (numbered `seq`), now.
    fn build(&mut self, seq: u64, rec: &[u8], info: &SessionInfo, unidentified: bool) {
        let Some(op) = decode(rec) else { return };
        // Free an exported event before allocating this one (see `Recycle`).
        take_back(&self.shared, &mut self.dead);
        free_one(&mut self.dead);
        if unidentified {
            self.shared.count_unidentified();
        }
        match self.builder.build(&op, info) {
            Ok(built) => self.items.push((
                seq,
                Arc::new(ExportItem {
                    started_unix_nanos: unix_nanos(op.started_at),
                    duration: op.duration,
                    event: built.event,
                    json: built.json,
                    tokens: built.tokens,
                    under_host_span: built.under_host_span,
                }),
            )),
            Err(NotBuilt::Filtered) => {
                self.shared.count_filtered();
            }
            Err(NotBuilt::HookFailed(_)) => {
                self.shared.count_redaction_failed();
            }
        }
    }

    /// Build records released from the hold (their session's info as it is now).
    fn build_released(&mut self, key: u64, records: Vec<HeldRecord>, unidentified: bool) {
        let (info, _) = self.session(key);
        for (seq, rec) in records {
            self.build(seq, &rec, &info, unidentified);
        }
    }

    /// One record from the queue: built now, or held for its session's identify.
    fn offer(&mut self, seq: u64, rec: &[u8], now: Instant) {
        let key = session_of(rec).0;
        let (info, state) = self.session(key);
        match self.holds.offer(key, state, seq, rec, now) {
            Offered::Held => {}
            Offered::Build { unidentified } => self.build(seq, rec, &info, unidentified),
            Offered::Release { records, unidentified } => {
                self.build_released(key, records, unidentified);
                self.build(seq, rec, &info, unidentified);
            }
        }
    }

    /// Publish what the hold keeps (read by `stats` and `flush`).
    fn publish_holds(&self) {
        self.shared.publish_holds(self.holds.len(), self.holds.min_seq());
    }

    /// Hand the built events to every exporter queue, and wake the exporters whose batch is due:
    /// a full one, a flush, or one whose delay has passed. Each exporter thread leaves its queue's
    /// delays to this round (see `exporter.rs`): the earliest one still ahead is kept in
    /// `export_due`, when the next round comes at the latest.
    fn dispatch(&mut self, end_seq: u64, flushing: bool, now: Instant) {
        self.export_due = None;
        for slot in self.shared.slots() {
            let mut st = lock(&slot.state);
            for (seq, item) in &self.items {
                if slot.accepts(&item.event.method) {
                    st.queue.push(*seq, Arc::clone(item), now);
                } else {
                    st.queue.skip();
                }
            }
            st.queue.set_dispatched(end_seq);
            if flushing {
                st.queue.flush(end_seq, now);
            }
            let at_once = st.queue.timer_timeout().is_some_and(|at| at <= now);
            let due = st.queue.batch_timeout();
            drop(st);
            match due {
                Some(at) if at > now => self.export_due = Some(self.export_due.map_or(at, |d| d.min(at))),
                Some(_) => slot.cv.notify_all(),
                None if at_once || flushing => slot.cv.notify_all(),
                None => {}
            }
        }
        self.items.clear();
    }
}

pub(crate) fn run_builder(shared: Arc<Shared>, builder: EventBuilder, initial_capacity: usize) {
    let limits = shared.config().identify_limits();
    let max_held = shared.config().queue_capacity;
    let mut w = Worker {
        shared: shared.clone(),
        builder,
        holds: IdentifyHolds::new(limits, max_held),
        cache: HashMap::new(),
        items: Vec::new(),
        dead: Vec::new(),
        export_due: None,
    };
    let mut spare: Vec<u8> = Vec::with_capacity(initial_capacity);
    let mut seen_flush = 0u64;
    let mut last_work = Instant::now();
    // Records came in the last round: look again within IDLE. Otherwise the next record wakes the
    // worker, and it sleeps until then or its next deadline (an identify's wait, a batch due, the
    // end of RECYCLE_LINGER): an idle tracker does not wake at all.
    let mut busy = false;
    let mut lingering = false;
    loop {
        let now = Instant::now();
        let until = [w.holds.poll_timeout(), w.export_due, lingering.then(|| last_work + RECYCLE_LINGER)]
            .into_iter()
            .flatten()
            .min()
            .map(|at| at.saturating_duration_since(now));
        let wait = if busy { Some(until.map_or(IDLE, |d| d.min(IDLE))) } else { until };
        let (stop, flush_gen, identified) = shared.wait_for_work(wait, !busy, seen_flush);
        let flushing = flush_gen != seen_flush;
        seen_flush = flush_gen;

        let drained: Drained = shared.take_staged(std::mem::take(&mut spare));
        let now = Instant::now();
        w.cache.clear();
        // Sessions whose identify answered or whose wait ran out, first (their records are older).
        if identified || w.holds.poll_timeout().is_some_and(|t| t <= now) || stop {
            let sessions = shared.sessions();
            let state_of = |k: u64| sessions.get(k).map_or(IdentifyState::Settled, |(_, s)| s);
            let released = w.holds.poll(now, state_of);
            drop(sessions);
            for (key, records, unidentified) in released {
                w.build_released(key, records, unidentified);
            }
        }
        if drained.count > 0 {
            let first_seq = drained.end_seq - drained.count as u64;
            for (i, rec) in drained.records().enumerate() {
                w.offer(first_seq + i as u64, rec, now);
            }
        }
        if stop && shared.staged() == 0 {
            // Shutting down: nothing waits for identify any more.
            for (key, records, unidentified) in w.holds.release_all() {
                w.build_released(key, records, unidentified);
            }
        }
        // Exporters first, then the hold's watermark, then the builder's (see `Shared::settled`).
        w.dispatch(drained.end_seq, flushing, now);
        w.publish_holds();
        shared.built_upto(drained.end_seq);
        // Forget closed sessions once all their records are built.
        if drained.count > 0 {
            let holds = &w.holds;
            shared.sessions().forget_closed(drained.end_seq, |k| holds.holds(k));
        }
        shared.notify_progress();

        // Idle for a while: free what was handed back instead of keeping it for new events.
        busy = drained.count > 0;
        if busy {
            last_work = now;
            lingering = true;
        } else if now.duration_since(last_work) >= RECYCLE_LINGER {
            w.dead.clear();
            take_back(&shared, &mut w.dead);
            w.dead.clear();
            lingering = false;
        }
        let mut buf = drained.buf;
        buf.clear();
        if buf.capacity() > 4 * initial_capacity.max(1) {
            buf.shrink_to(initial_capacity);
        }
        spare = buf;

        if stop && shared.staged() == 0 && w.holds.len() == 0 {
            break;
        }
    }
    shared.builder_exits(&mut w.dead);
    w.dead.clear();
}
