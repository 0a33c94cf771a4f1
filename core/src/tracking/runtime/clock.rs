//! From a host's monotonic readings to an operation's wall-clock start and duration.
//!
//! A binding's request path reads one monotonic clock (nanoseconds on any epoch: Python's
//! `time.perf_counter_ns()`) when a request starts and when it ends. [`WallClock`] turns the two
//! readings into the `(started_at, duration)` of an [`Operation`](crate::tracking::Operation): the offset
//! between wall and monotonic time is read once, then again whenever [`REANCHOR`] has passed on the
//! monotonic clock, so a stepped system clock is followed within that time while the request path
//! reads the wall clock once per `REANCHOR` at most. Time is passed in; nothing here reads a clock.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a wall-clock offset is used before it is read again (monotonic time).
pub const REANCHOR: Duration = Duration::from_secs(10);

/// The monotonic → wall-clock mapping of one tracker (shared by the threads that record).
#[derive(Debug)]
pub struct WallClock {
    /// Unix time minus monotonic time, in ns.
    offset: AtomicI64,
    /// The monotonic reading from which the offset is read again.
    next_anchor: AtomicU64,
    /// Set by [`WallClock::freeze`] (test vectors): every span starts here (Unix ns) …
    frozen_start: AtomicI64,
    /// … and lasts this long (ns).
    frozen_duration: AtomicU64,
}

fn unix_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

fn offset(mono_ns: u64, wall: SystemTime) -> i64 {
    unix_ns(wall).saturating_sub(i64::try_from(mono_ns).unwrap_or(i64::MAX))
}

impl WallClock {
    /// Anchored on a monotonic reading and the wall clock read at the same moment.
    pub fn new(mono_ns: u64, wall: SystemTime) -> WallClock {
        WallClock {
            offset: AtomicI64::new(offset(mono_ns, wall)),
            next_anchor: AtomicU64::new(mono_ns.saturating_add(REANCHOR.as_nanos() as u64)),
            frozen_start: AtomicI64::new(i64::MIN),
            frozen_duration: AtomicU64::new(0),
        }
    }

    /// `(started_at, duration)` of an operation that started at monotonic `t0_ns` and ended at
    /// `now_ns`. `wall` reads the wall clock; it is called only when the offset is re-read.
    pub fn span(&self, t0_ns: u64, now_ns: u64, wall: impl FnOnce() -> SystemTime) -> (SystemTime, Duration) {
        let frozen = self.frozen_start.load(Ordering::Relaxed);
        if frozen != i64::MIN {
            let start = UNIX_EPOCH + Duration::from_nanos(u64::try_from(frozen).unwrap_or(0));
            return (start, Duration::from_nanos(self.frozen_duration.load(Ordering::Relaxed)));
        }
        if now_ns >= self.next_anchor.load(Ordering::Relaxed) {
            self.next_anchor.store(now_ns.saturating_add(REANCHOR.as_nanos() as u64), Ordering::Relaxed);
            self.offset.store(offset(now_ns, wall()), Ordering::Relaxed);
        }
        let start = i64::try_from(t0_ns).unwrap_or(i64::MAX).saturating_add(self.offset.load(Ordering::Relaxed));
        let started_at = u64::try_from(start).map_or(UNIX_EPOCH, |n| UNIX_EPOCH + Duration::from_nanos(n));
        (started_at, Duration::from_nanos(now_ns.saturating_sub(t0_ns)))
    }

    /// Every span from now on starts at `started_unix_ns` and lasts `duration_ns` (test vectors).
    pub fn freeze(&self, started_unix_ns: i64, duration_ns: u64) {
        self.frozen_duration.store(duration_ns, Ordering::Relaxed);
        self.frozen_start.store(started_unix_ns, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: u64 = 1_000_000_000;

    fn unix(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn maps_monotonic_readings_onto_the_anchor_wall_time() {
        let clock = WallClock::new(5 * SEC, unix(1_000));
        let never = || -> SystemTime { panic!("the wall clock is not read before REANCHOR") };
        assert_eq!(clock.span(6 * SEC, 6 * SEC + 250, never), (unix(1_001), Duration::from_nanos(250)));
        // A reading before the anchor (a request that started earlier) maps back as well.
        assert_eq!(clock.span(4 * SEC, 5 * SEC, never), (unix(999), Duration::from_secs(1)));
        // An end before the start (cannot happen on one monotonic clock) is a zero duration.
        assert_eq!(clock.span(7 * SEC, 6 * SEC, never).1, Duration::ZERO);
    }

    #[test]
    fn rereads_the_wall_clock_once_per_reanchor() {
        let clock = WallClock::new(0, unix(1_000));
        let reanchor = REANCHOR.as_nanos() as u64;
        let mut reads = 0;
        // The system clock was stepped forward by 60 s: seen at the first span past REANCHOR.
        let (start, _) = clock.span(reanchor, reanchor, || {
            reads += 1;
            unix(1_000 + 60) + REANCHOR
        });
        assert_eq!((start, reads), (unix(1_070), 1));
        let (start, _) = clock.span(reanchor + SEC, reanchor + SEC, || panic!("read again too soon"));
        assert_eq!(start, unix(1_071));
    }

    #[test]
    fn a_wall_time_before_the_epoch_is_clamped_to_it() {
        let clock = WallClock::new(10 * SEC, unix(5));
        assert_eq!(clock.span(0, 10 * SEC, SystemTime::now).0, UNIX_EPOCH);
    }

    #[test]
    fn freeze_fixes_every_span() {
        let clock = WallClock::new(0, unix(1_000));
        clock.freeze(1_767_323_045_000_000_000, 1_500_000);
        let want = (UNIX_EPOCH + Duration::from_nanos(1_767_323_045_000_000_000), Duration::from_micros(1_500));
        assert_eq!(clock.span(SEC, 2 * SEC, SystemTime::now), want);
    }
}
