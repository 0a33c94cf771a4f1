//! Sessions: the registry of open connections (what the worker knows about each), and the
//! identify hold (sans-IO): while a session's identify hook runs, its records wait in the core, at
//! most `identify.maxRecords` per session and `identify.timeoutMs` from the start of the call;
//! past either bound, or when the hook fails, they go on without an identity and are counted.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use super::build::SessionInfo;
use super::config::IdentifyLimits;

/// Most sessions whose details are kept; beyond it the oldest are forgotten (their events still
/// carry the right `sessionId`, derived from the key, but lose client details).
pub(crate) const MAX_SESSIONS: usize = 100_000;

/// Where a session's identify hook stands, as the worker reads it. `unidentified` counts the
/// records of a session that went on without the identity they waited for: held past a bound,
/// or of a session whose hook failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum IdentifyState {
    /// Not asked, or answered (the identity, if any, is in the session's info).
    #[default]
    Settled,
    /// The hook runs since this instant: records wait.
    Pending(Instant),
    /// The hook failed: what waited goes on without an identity (counted).
    Failed,
}

#[derive(Debug)]
pub(crate) struct SessionEntry {
    pub info: Arc<SessionInfo>,
    pub identify: IdentifyState,
    /// Removed once every record numbered below this has been built.
    pub closed_at: Option<u64>,
}

/// The open sessions, by key (under the tracker's sessions lock).
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    pub map: HashMap<u64, SessionEntry>,
    order: VecDeque<u64>,
}

impl Sessions {
    pub fn open(&mut self, key: u64, info: SessionInfo) {
        self.map.insert(key, SessionEntry { info: Arc::new(info), identify: IdentifyState::Settled, closed_at: None });
        self.order.push_back(key);
        while self.map.len() > MAX_SESSIONS {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
    }

    /// The session's info and identify state.
    pub fn get(&self, key: u64) -> Option<(Arc<SessionInfo>, IdentifyState)> {
        self.map.get(&key).map(|e| (e.info.clone(), e.identify))
    }

    /// Forget closed sessions whose records are all built (`end`: the records built so far),
    /// except those `keep` says still have records waiting.
    pub fn forget_closed(&mut self, end: u64, keep: impl Fn(u64) -> bool) {
        if !self.map.iter().any(|(k, e)| e.closed_at.is_some_and(|c| c <= end) && !keep(*k)) {
            return;
        }
        self.map.retain(|k, e| e.closed_at.is_none_or(|c| c > end) || keep(*k));
        let Sessions { map, order } = self;
        order.retain(|k| map.contains_key(k));
    }
}

/// One record waiting: its number and its bytes (as the request-path queue encoded it).
pub(crate) type HeldRecord = (u64, Vec<u8>);

#[derive(Debug)]
enum Hold {
    /// Records wait for the hook since `since`.
    Waiting { since: Instant, records: Vec<HeldRecord> },
    /// A bound passed while the hook still runs: records go on without an identity (counted).
    GaveUp,
}

/// What to do with a record offered to the hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Offered {
    /// Build it now; `unidentified`: it went on without the identity it waited for (count it).
    Build { unidentified: bool },
    /// It waits (the hold keeps its bytes).
    Held,
    /// Build these earlier records first, then this one; `unidentified` for all of them.
    Release { records: Vec<HeldRecord>, unidentified: bool },
}

/// Records released by [`IdentifyHolds::poll`]: `(session key, records, unidentified)`.
pub(crate) type Released = (u64, Vec<HeldRecord>, bool);

/// The identify hold (sans-IO; the worker passes the time and each session's state).
#[derive(Debug)]
pub(crate) struct IdentifyHolds {
    limits: IdentifyLimits,
    /// Most records held over all sessions.
    max_total: usize,
    holds: HashMap<u64, Hold>,
    total: usize,
}

impl IdentifyHolds {
    pub fn new(limits: IdentifyLimits, max_total: usize) -> IdentifyHolds {
        IdentifyHolds { limits, max_total: max_total.max(1), holds: HashMap::new(), total: 0 }
    }

    fn take(&mut self, key: u64, then: Option<Hold>) -> Vec<HeldRecord> {
        let old = match then {
            Some(h) => self.holds.insert(key, h),
            None => self.holds.remove(&key),
        };
        match old {
            Some(Hold::Waiting { records, .. }) => {
                self.total -= records.len();
                records
            }
            _ => Vec::new(),
        }
    }

    /// A record of session `key` (number `seq`, bytes `rec`), whose identify stands at `state`.
    pub fn offer(&mut self, key: u64, state: IdentifyState, seq: u64, rec: &[u8], now: Instant) -> Offered {
        let Some(hold) = self.holds.get_mut(&key) else {
            return match state {
                IdentifyState::Pending(since) if now < since + self.limits.timeout => {
                    self.holds.insert(key, Hold::Waiting { since, records: vec![(seq, rec.to_vec())] });
                    self.total += 1;
                    self.overflowed(key)
                }
                IdentifyState::Pending(_) => {
                    self.holds.insert(key, Hold::GaveUp);
                    Offered::Build { unidentified: true }
                }
                // The hook failed: every record of the session goes on without an identity.
                IdentifyState::Failed => Offered::Build { unidentified: true },
                IdentifyState::Settled => Offered::Build { unidentified: false },
            };
        };
        match (hold, state) {
            (Hold::Waiting { records, .. }, IdentifyState::Pending(since)) if now < since + self.limits.timeout => {
                records.push((seq, rec.to_vec()));
                self.total += 1;
                self.overflowed(key)
            }
            (Hold::Waiting { .. }, IdentifyState::Pending(_)) => {
                Offered::Release { records: self.take(key, Some(Hold::GaveUp)), unidentified: true }
            }
            (Hold::Waiting { .. }, s) => {
                Offered::Release { records: self.take(key, None), unidentified: s == IdentifyState::Failed }
            }
            (Hold::GaveUp, IdentifyState::Pending(_)) => Offered::Build { unidentified: true },
            (Hold::GaveUp, s) => {
                self.holds.remove(&key);
                Offered::Build { unidentified: s == IdentifyState::Failed }
            }
        }
    }

    /// After a push: past the per-session or total bound, the session's records go on.
    fn overflowed(&mut self, key: u64) -> Offered {
        let n = match self.holds.get(&key) {
            Some(Hold::Waiting { records, .. }) => records.len(),
            _ => 0,
        };
        if n <= self.limits.max_records && self.total <= self.max_total {
            return Offered::Held;
        }
        let mut records = self.take(key, Some(Hold::GaveUp));
        // The record just offered is the last one: the caller builds it after the others.
        records.pop();
        Offered::Release { records, unidentified: true }
    }

    /// Records to release now: sessions whose hook answered (`state_of` is no longer pending),
    /// and sessions whose wait passed the timeout (unidentified).
    pub fn poll(&mut self, now: Instant, state_of: impl Fn(u64) -> IdentifyState) -> Vec<Released> {
        let mut out = Vec::new();
        let keys: Vec<u64> = self.holds.keys().copied().collect();
        for key in keys {
            let state = state_of(key);
            match (self.holds.get(&key), state) {
                (Some(Hold::Waiting { since, .. }), IdentifyState::Pending(_))
                    if now >= *since + self.limits.timeout =>
                {
                    out.push((key, self.take(key, Some(Hold::GaveUp)), true));
                }
                (Some(Hold::Waiting { .. }), IdentifyState::Pending(_)) => {}
                (Some(Hold::Waiting { .. }), s) => out.push((key, self.take(key, None), s == IdentifyState::Failed)),
                (Some(Hold::GaveUp), IdentifyState::Pending(_)) => {}
                (Some(Hold::GaveUp), _) => {
                    self.holds.remove(&key);
                }
                (None, _) => {}
            }
        }
        out
    }

    /// Everything held, unidentified (shutdown).
    pub fn release_all(&mut self) -> Vec<Released> {
        let keys: Vec<u64> = self.holds.keys().copied().collect();
        keys.into_iter().map(|k| (k, self.take(k, None), true)).filter(|(_, r, _)| !r.is_empty()).collect()
    }

    /// When the first wait ends.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.holds
            .values()
            .filter_map(|h| match h {
                Hold::Waiting { since, .. } => Some(*since + self.limits.timeout),
                Hold::GaveUp => None,
            })
            .min()
    }

    /// The lowest record number held.
    pub fn min_seq(&self) -> Option<u64> {
        self.holds
            .values()
            .filter_map(|h| match h {
                Hold::Waiting { records, .. } => records.first().map(|r| r.0),
                Hold::GaveUp => None,
            })
            .min()
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether session `key` has records held.
    pub fn holds(&self, key: u64) -> bool {
        matches!(self.holds.get(&key), Some(Hold::Waiting { .. }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn holds(max_records: usize) -> (IdentifyHolds, Instant) {
        let limits = IdentifyLimits { max_records, timeout: Duration::from_secs(5) };
        (IdentifyHolds::new(limits, 10_000), Instant::now())
    }

    fn seqs(r: &[HeldRecord]) -> Vec<u64> {
        r.iter().map(|x| x.0).collect()
    }

    #[test]
    fn records_wait_until_identify_answers() {
        let (mut h, t0) = holds(10);
        let pending = IdentifyState::Pending(t0);
        assert_eq!(h.offer(1, pending, 0, b"a", t0), Offered::Held);
        assert_eq!(h.offer(1, pending, 1, b"b", t0), Offered::Held);
        assert_eq!(h.offer(2, IdentifyState::Settled, 2, b"c", t0), Offered::Build { unidentified: false });
        assert_eq!((h.len(), h.min_seq(), h.poll_timeout()), (2, Some(0), Some(t0 + Duration::from_secs(5))));
        assert!(h.poll(t0, |_| pending).is_empty());
        let out = h.poll(t0 + Duration::from_millis(1), |_| IdentifyState::Settled);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0, seqs(&out[0].1), out[0].2), (1, vec![0, 1], false));
        assert_eq!(h.len(), 0);
    }

    #[test]
    fn an_answer_seen_with_the_next_record_releases_the_earlier_ones_first() {
        let (mut h, t0) = holds(10);
        assert_eq!(h.offer(1, IdentifyState::Pending(t0), 0, b"a", t0), Offered::Held);
        match h.offer(1, IdentifyState::Failed, 1, b"b", t0) {
            Offered::Release { records, unidentified } => assert_eq!((seqs(&records), unidentified), (vec![0], true)),
            other => panic!("{other:?}"),
        }
        assert_eq!(h.offer(1, IdentifyState::Failed, 2, b"c", t0), Offered::Build { unidentified: true }, "counted");
        assert_eq!(h.offer(2, IdentifyState::Settled, 3, b"d", t0), Offered::Build { unidentified: false });
    }

    #[test]
    fn past_the_record_bound_they_go_on_unidentified() {
        let (mut h, t0) = holds(2);
        let p = IdentifyState::Pending(t0);
        assert_eq!(h.offer(1, p, 0, b"a", t0), Offered::Held);
        assert_eq!(h.offer(1, p, 1, b"b", t0), Offered::Held);
        match h.offer(1, p, 2, b"c", t0) {
            Offered::Release { records, unidentified } => {
                assert_eq!((seqs(&records), unidentified), (vec![0, 1], true))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(h.offer(1, p, 3, b"d", t0), Offered::Build { unidentified: true }, "still pending: counted");
        assert_eq!(h.offer(1, IdentifyState::Settled, 4, b"e", t0), Offered::Build { unidentified: false });
    }

    #[test]
    fn past_the_timeout_they_go_on_unidentified() {
        let (mut h, t0) = holds(10);
        let p = IdentifyState::Pending(t0);
        assert_eq!(h.offer(1, p, 0, b"a", t0), Offered::Held);
        let late = t0 + Duration::from_secs(5);
        let out = h.poll(late, |_| p);
        assert_eq!((seqs(&out[0].1), out[0].2), (vec![0], true));
        assert_eq!(h.poll_timeout(), None);
        // A session whose identify started more than the timeout ago never holds.
        let (mut h, t0) = holds(10);
        let old = IdentifyState::Pending(t0);
        assert_eq!(h.offer(3, old, 0, b"a", t0 + Duration::from_secs(6)), Offered::Build { unidentified: true });
    }

    #[test]
    fn shutdown_releases_everything() {
        let (mut h, t0) = holds(10);
        h.offer(1, IdentifyState::Pending(t0), 0, b"a", t0);
        h.offer(2, IdentifyState::Pending(t0), 1, b"b", t0);
        let mut all = h.release_all();
        all.sort_by_key(|r| r.0);
        assert_eq!(
            all.iter().map(|r| (r.0, seqs(&r.1), r.2)).collect::<Vec<_>>(),
            [(1, vec![0], true), (2, vec![1], true)]
        );
        assert_eq!(h.len(), 0);
    }
}
