//! The crate's one source of jitter and its one retry rule, shared by the catalog's
//! [`Refresher`](crate::catalog::refresher::Refresher) and the tracker's export queues. Sans-IO:
//! the caller keeps the generator and the failure count; nothing here reads a clock.
//!
//! **The rule.** After the `n`-th consecutive failure (`n ≥ 1`) the ceiling is
//! `c = min(max, base · 2ⁿ⁻¹)` in whole milliseconds (at least 1), and the wait is drawn uniformly
//! from `[c − ⌊c/2⌋, c]` ("equal jitter"): retries of many clients spread over half the window,
//! and the schedule still doubles (a retry never comes sooner than half its step). The draw is
//! `c − ⌊c/2⌋ + r mod (⌊c/2⌋ + 1)` with `r` the next [`SplitMix64`] output, so a seed fixes every
//! wait (`tests/vectors/refresher` pins it through the refresher; the export queue's tests
//! through the tracker).

use std::time::Duration;

/// A small, fast generator (SplitMix64): jitter and ids, never secrets. Seeded by the host (OS
/// randomness) or a test (a constant).
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator with this seed.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The retry schedule: a first step and a cap (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first failure's ceiling.
    pub base: Duration,
    /// The largest ceiling.
    pub max: Duration,
}

impl Backoff {
    /// The ceiling after the `failures`-th consecutive failure, in milliseconds (at least 1).
    pub fn ceiling_ms(&self, failures: u32) -> u64 {
        let doublings = failures.saturating_sub(1).min(63);
        let base = u64::try_from(self.base.as_millis()).unwrap_or(u64::MAX);
        let max = u64::try_from(self.max.as_millis()).unwrap_or(u64::MAX);
        base.saturating_mul(1u64 << doublings).min(max).max(1)
    }

    /// The wait after the `failures`-th consecutive failure, drawn from `rng`.
    pub fn delay(&self, failures: u32, rng: &mut SplitMix64) -> Duration {
        let c = self.ceiling_ms(failures);
        let half = c / 2;
        Duration::from_millis(c - half + rng.next_u64() % (half + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_outputs() {
        // The reference implementation's first outputs for seed 0 (Vigna's splitmix64.c).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn the_wait_is_in_the_upper_half_of_a_doubling_ceiling() {
        let b = Backoff { base: Duration::from_millis(1000), max: Duration::from_millis(4000) };
        assert_eq!([1, 2, 3, 4, 40].map(|n| b.ceiling_ms(n)), [1000, 2000, 4000, 4000, 4000]);
        let mut rng = SplitMix64::new(3);
        for n in 1..=6 {
            let c = b.ceiling_ms(n);
            for _ in 0..200 {
                let ms = b.delay(n, &mut rng).as_millis() as u64;
                assert!((c - c / 2..=c).contains(&ms), "{ms} outside [{}, {c}]", c - c / 2);
            }
        }
    }

    #[test]
    fn tiny_and_huge_schedules_do_not_overflow() {
        let mut rng = SplitMix64::new(1);
        let zero = Backoff { base: Duration::ZERO, max: Duration::ZERO };
        assert_eq!(zero.delay(1, &mut rng), Duration::from_millis(1));
        let huge = Backoff { base: Duration::MAX, max: Duration::MAX };
        assert_eq!(huge.ceiling_ms(u32::MAX), u64::MAX);
        assert!(huge.delay(u32::MAX, &mut rng) >= Duration::from_millis(u64::MAX / 2));
    }
}
