//! Bounded-memory summaries for the report's capped tables.
//!
//! - [`Durations`]: a row's durations, kept exactly while there are at most [`EXACT_MAX`], and
//!   always in a [`Sketch`]: logarithmic buckets (relative accuracy [`ACCURACY`], the DDSketch
//!   bucketing). A percentile read from it is the nearest-rank percentile of `events summary`
//!   (the ⌈q·n⌉-th smallest value) to within ±1 %: the exact value lies in the bucket whose
//!   representative is returned.
//! - [`TopTable`]: the Space-Saving algorithm (Metwally, Agrawal, El Abbadi 2005) over at most
//!   `cap` keys. While no more than `cap` distinct keys have been seen, every row is exact. After
//!   that a new key takes the slot of the key with the smallest count; the evicted key's events go
//!   to the "rest", and the newcomer's row records that up to `before` of its earlier events may be
//!   in the rest. Every key seen more than `events / cap` times is guaranteed a row.

use std::collections::{BTreeSet, HashMap};

/// Relative accuracy of [`Sketch`] percentiles.
pub const ACCURACY: f64 = 0.01;

/// Durations in logarithmic buckets: `v` goes to bucket `⌈ln v / ln γ⌉`, γ = (1+α)/(1−α).
#[derive(Debug, Clone, Default)]
pub struct Sketch {
    /// Values ≤ 0 (reported as 0).
    zeros: u64,
    /// Index of `counts[0]`.
    offset: i32,
    counts: Vec<u32>,
    n: u64,
}

fn gamma_ln() -> f64 {
    ((1.0 + ACCURACY) / (1.0 - ACCURACY)).ln()
}

impl Sketch {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        self.n += 1;
        if v <= 0.0 || !v.is_finite() {
            self.zeros += 1;
            return;
        }
        let i = (v.ln() / gamma_ln()).ceil() as i32;
        self.bump(i, 1);
    }

    fn bump(&mut self, i: i32, by: u32) {
        if self.counts.is_empty() {
            self.offset = i;
            self.counts.push(0);
        } else if i < self.offset {
            let grow = (self.offset - i) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.offset = i;
        } else if (i - self.offset) as usize >= self.counts.len() {
            self.counts.resize((i - self.offset) as usize + 1, 0);
        }
        let slot = &mut self.counts[(i - self.offset) as usize];
        *slot = slot.saturating_add(by);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Sketch) {
        self.n += other.n;
        self.zeros += other.zeros;
        for (k, &c) in other.counts.iter().enumerate() {
            if c > 0 {
                self.bump(other.offset + k as i32, c);
            }
        }
    }

    /// Values added.
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The nearest-rank `q` percentile (q in (0, 1]), within ±[`ACCURACY`]; `None` when empty.
    pub fn percentile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        if rank <= self.zeros {
            return Some(0.0);
        }
        let mut seen = self.zeros;
        let g = gamma_ln().exp();
        for (k, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                let i = self.offset + k as i32;
                return Some(2.0 * g.powi(i) / (g + 1.0));
            }
        }
        None
    }
}

/// A row keeps its durations exactly up to this many (then only in its [`Sketch`]).
pub const EXACT_MAX: usize = 256;

/// Durations of a row: exact while there are at most [`EXACT_MAX`], else within ±[`ACCURACY`].
#[derive(Debug, Clone)]
pub struct Durations {
    exact: Option<Vec<f64>>,
    sketch: Sketch,
}

impl Default for Durations {
    fn default() -> Durations {
        Durations { exact: Some(Vec::new()), sketch: Sketch::default() }
    }
}

impl Durations {
    /// Adds one duration.
    pub fn add(&mut self, v: f64) {
        self.sketch.add(v);
        if let Some(e) = &mut self.exact {
            if e.len() < EXACT_MAX {
                e.push(v);
            } else {
                self.exact = None;
            }
        }
    }

    fn merge(&mut self, other: &Durations) {
        self.sketch.merge(&other.sketch);
        self.exact = match (self.exact.take(), &other.exact) {
            (Some(mut a), Some(b)) if a.len() + b.len() <= EXACT_MAX => {
                a.extend_from_slice(b);
                Some(a)
            }
            _ => None,
        };
    }

    /// The nearest-rank `q` percentile and whether it is exact; `None` when empty.
    pub fn percentile(&self, q: f64) -> Option<(f64, bool)> {
        match &self.exact {
            Some(e) if e.is_empty() => None,
            Some(e) => {
                let mut e = e.clone();
                e.sort_unstable_by(f64::total_cmp);
                Some((crate::events::nearest_rank(&e, q), true))
            }
            None => self.sketch.percentile(q).map(|v| (v, false)),
        }
    }
}

/// One row of a [`TopTable`].
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// Events counted in this row (exact: since the key got its slot).
    pub count: u64,
    /// Of those, errors.
    pub errors: u64,
    /// Their durations.
    pub durations: Durations,
    /// A second count the caller keeps per key (sessions, for clients).
    pub extra: u64,
    /// Events of this key that may have been counted in the rest before it got its slot
    /// (Space-Saving's overestimate; 0 while the table never overflowed).
    pub before: u64,
}

impl Row {
    fn absorb(&mut self, other: &Row) {
        self.count += other.count;
        self.errors += other.errors;
        self.extra += other.extra;
        self.durations.merge(&other.durations);
    }
}

/// At most `cap` keys with their [`Row`]; the rest summed (see the module docs).
#[derive(Debug, Clone)]
pub struct TopTable {
    cap: usize,
    keys: HashMap<String, usize>,
    slots: Vec<(String, Row)>,
    /// (count + before, slot): the eviction order.
    order: BTreeSet<(u64, usize)>,
    /// Events of evicted keys.
    evicted: Row,
    evictions: u64,
}

/// A finished table: the top rows and the rest summed.
#[derive(Debug, Clone)]
pub struct Top {
    /// The rows shown, by count (then key) descending.
    pub rows: Vec<(String, Row)>,
    /// Everything else: keys not shown, and events of evicted keys.
    pub rest: Row,
    /// Distinct keys in `rest` (a lower bound when the table overflowed).
    pub rest_keys: u64,
    /// Keys the table lost to its cap (0: every count exact).
    pub evictions: u64,
    /// The table's cap.
    pub cap: usize,
}

impl TopTable {
    /// A table keeping at most `cap` keys (at least 1).
    pub fn new(cap: usize) -> TopTable {
        TopTable {
            cap: cap.max(1),
            keys: HashMap::new(),
            slots: Vec::new(),
            order: BTreeSet::new(),
            evicted: Row::default(),
            evictions: 0,
        }
    }

    /// Counts one more `extra` for `key` without counting an event: on its row, or on "all
    /// others" when the key is not (or no longer) in the table.
    pub fn add_extra(&mut self, key: &str) {
        match self.keys.get(key) {
            Some(&s) => self.slots[s].1.extra += 1,
            None => self.evicted.extra += 1,
        }
    }

    /// The row of `key`, counting one more event (`count` is incremented; the caller fills in the
    /// rest).
    pub fn hit(&mut self, key: &str) -> &mut Row {
        let slot = match self.keys.get(key) {
            Some(&s) => s,
            None if self.slots.len() < self.cap => {
                self.slots.push((key.to_owned(), Row::default()));
                self.keys.insert(key.to_owned(), self.slots.len() - 1);
                self.order.insert((0, self.slots.len() - 1));
                self.slots.len() - 1
            }
            None => {
                let (weight, s) = self.order.pop_first().expect("a full table has slots");
                let (old_key, old) = std::mem::take(&mut self.slots[s]);
                self.keys.remove(&old_key);
                self.evicted.absorb(&old);
                self.evictions += 1;
                self.slots[s] = (key.to_owned(), Row { before: weight, ..Row::default() });
                self.keys.insert(key.to_owned(), s);
                self.order.insert((weight, s));
                s
            }
        };
        let row = &mut self.slots[slot].1;
        self.order.remove(&(row.count + row.before, slot));
        row.count += 1;
        self.order.insert((row.count + row.before, slot));
        row
    }

    /// The `n` rows with the largest counts, and the rest summed.
    pub fn top(&self, n: usize) -> Top {
        let mut rows: Vec<(String, Row)> = self.slots.clone();
        rows.sort_by(|a, b| (b.1.count + b.1.before).cmp(&(a.1.count + a.1.before)).then_with(|| a.0.cmp(&b.0)));
        let mut rest = self.evicted.clone();
        let mut rest_keys = self.evictions;
        for (_, r) in rows.iter().skip(n) {
            rest.absorb(r);
            rest_keys += 1;
        }
        rows.truncate(n);
        Top { rows, rest, rest_keys, evictions: self.evictions, cap: self.cap }
    }

    /// Distinct keys with a row now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(mut v: Vec<f64>, q: f64) -> f64 {
        v.sort_by(f64::total_cmp);
        crate::events::nearest_rank(&v, q)
    }

    #[test]
    fn sketch_percentiles_are_within_the_bound_of_nearest_rank() {
        let mut s = Sketch::default();
        let mut all = Vec::new();
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v = ((x >> 33) as f64 / (1u64 << 31) as f64) * 500.0 + 0.001;
            s.add(v);
            all.push(v);
        }
        for q in [0.5, 0.95, 0.99, 1.0, 0.0001] {
            let (e, a) = (exact(all.clone(), q), s.percentile(q).unwrap());
            assert!((a - e).abs() <= ACCURACY * e, "q={q}: exact {e}, sketch {a}");
        }
        let mut m = Sketch::default();
        m.add(0.0);
        m.merge(&s);
        assert_eq!(m.count(), 20_001);
        assert_eq!(m.percentile(0.00001), Some(0.0));
    }

    #[test]
    fn durations_are_exact_up_to_the_bound() {
        let mut d = Durations::default();
        assert_eq!(d.percentile(0.5), None);
        for i in 1..=EXACT_MAX {
            d.add(i as f64);
        }
        assert_eq!(d.percentile(0.5), Some((128.0, true)));
        let mut more = d.clone();
        more.add(1000.0);
        let (v, exact) = more.percentile(0.5).unwrap();
        assert!(!exact && (v - 129.0).abs() <= ACCURACY * 129.0, "{v}");
        let mut merged = Durations::default();
        merged.add(5.0);
        merged.merge(&Durations::default());
        assert_eq!(merged.percentile(1.0), Some((5.0, true)));
        merged.merge(&d);
        assert!(!merged.percentile(1.0).unwrap().1, "over the bound after a merge");
    }

    #[test]
    fn top_table_is_exact_under_its_cap_and_bounded_over_it() {
        let mut t = TopTable::new(3);
        for k in ["a", "b", "a", "c", "a", "b"] {
            t.hit(k).errors += u64::from(k == "b");
        }
        let top = t.top(2);
        assert_eq!(top.rows.iter().map(|(k, r)| (k.as_str(), r.count)).collect::<Vec<_>>(), [("a", 3), ("b", 2)]);
        assert_eq!((top.rest.count, top.rest_keys, top.evictions), (1, 1, 0));
        assert_eq!(top.rows[1].1.errors, 2);
        // Overflow: "d" takes the smallest slot ("c", 1) and records that 1 event may be in the rest.
        t.hit("d");
        let top = t.top(10);
        let d = top.rows.iter().find(|(k, _)| k == "d").unwrap();
        assert_eq!((d.1.count, d.1.before), (1, 1));
        assert_eq!((top.rest.count, top.evictions), (1, 1));
        let total: u64 = top.rows.iter().map(|(_, r)| r.count).sum::<u64>() + top.rest.count;
        assert_eq!(total, 7, "every event is in a row or in the rest");
        // A heavy key arriving late is kept.
        for _ in 0..10 {
            t.hit("z");
        }
        assert!(t.top(1).rows[0].0 == "z");
        assert_eq!(t.len(), 3);
    }
}
