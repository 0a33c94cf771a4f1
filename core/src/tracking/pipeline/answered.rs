//! Recording after the response: the requests a host's `track()` saw answered are held (the clock
//! read, the params and result referenced, not copied) and handed to the [`Tracker`] later, so
//! that reading and serializing them is not between the handler's return and the response.
//!
//! The rule, the same for every host:
//! - A request is held when its handler returned or raised, with its duration already measured.
//! - Held requests are recorded **in the order they were held** (a failure is held like a result:
//!   it never overtakes a request answered before it).
//! - They are recorded in one pass, at the first of: the host's "after the response" moment
//!   ([`Held::Schedule`] asks for it once per pass), [`ANSWERED_MAX`] held (a loop that never
//!   yields: the pass runs at once, [`Held::RecordNow`]), or anything that reads or ends what they
//!   feed — `flush`, `shutdown`, `stats`, a session's close, the process's exit.
//!
//! "After the response", per host (each performs [`Held::Schedule`] with its own event loop):
//! - Node: the check phase of the turn that sent it (`setImmediate`): the SDK has written the
//!   response to its transport by then.
//! - Python (asyncio and trio): [`AFTER_RESPONSE`] after the first request of the pass was held
//!   (`loop.call_later`; trio, a system task sleeping as long). The SDKs hand a response to their
//!   write stream only after a checkpoint, and over stdio a worker thread writes it: a callback
//!   queued for the next turn would run before the response is out. A pass that waits a
//!   millisecond runs after it on every transport, and each request still carries the duration
//!   measured when its handler returned.
//!
//! [`Tracker`]: crate::tracking::Tracker

use std::time::Duration;

/// Answered requests held at most; the one that reaches it records the pass at once.
pub const ANSWERED_MAX: usize = 64;

/// How long after the first held request a Python host records the pass (see the module docs).
pub const AFTER_RESPONSE: Duration = Duration::from_millis(1);

/// What the host does after [`Answered::hold`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// The first request of a pass: arrange [`Answered::take`] at the "after the response" moment.
    Schedule,
    /// A pass is already arranged: nothing to do.
    Wait,
    /// [`ANSWERED_MAX`] are held: record the pass now ([`Answered::take`]).
    RecordNow,
}

/// The held requests of one tracker (the host's own values: references to its objects).
#[derive(Debug)]
pub struct Answered<T> {
    held: Vec<T>,
    scheduled: bool,
}

impl<T> Default for Answered<T> {
    fn default() -> Self {
        Self { held: Vec::new(), scheduled: false }
    }
}

impl<T> Answered<T> {
    /// A request answered (or failed): held until the pass records it.
    pub fn hold(&mut self, request: T) -> Held {
        self.held.push(request);
        if self.held.len() >= ANSWERED_MAX {
            Held::RecordNow
        } else if self.scheduled {
            Held::Wait
        } else {
            self.scheduled = true;
            Held::Schedule
        }
    }

    /// The pass: every held request, in the order held, to record now. A pass arranged earlier and
    /// run after this one finds nothing (and the next hold arranges a new one). The next pass's
    /// room is made here, once, rather than grown on the handler's path.
    pub fn take(&mut self) -> Vec<T> {
        self.scheduled = false;
        if self.held.is_empty() {
            return Vec::new();
        }
        std::mem::replace(&mut self.held, Vec::with_capacity(ANSWERED_MAX))
    }

    /// How many are held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether none are held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_is_arranged_per_batch_and_records_in_order() {
        let mut a = Answered::default();
        assert_eq!(a.hold(1), Held::Schedule);
        assert_eq!(a.hold(2), Held::Wait);
        assert_eq!(a.take(), vec![1, 2]);
        assert!(a.take().is_empty(), "a pass arranged earlier finds nothing");
        assert_eq!(a.hold(3), Held::Schedule, "the next hold arranges a new pass");
    }

    #[test]
    fn a_loop_that_never_yields_records_at_the_bound() {
        let mut a = Answered::default();
        let actions: Vec<Held> = (0..ANSWERED_MAX).map(|i| a.hold(i)).collect();
        assert_eq!(actions[0], Held::Schedule);
        assert!(actions[1..ANSWERED_MAX - 1].iter().all(|h| *h == Held::Wait));
        assert_eq!(actions[ANSWERED_MAX - 1], Held::RecordNow);
        assert_eq!(a.take(), (0..ANSWERED_MAX).collect::<Vec<_>>());
        assert!(a.is_empty());
    }
}
