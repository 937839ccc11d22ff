//! A set of sector numbers kept as runs: `[start, end)` ranges.
//!
//! A file's dirty sectors come in long runs: a preallocation or a truncate
//! dirties every sector of a 64 MiB segment at once (131,072 of 512 bytes),
//! and a `BTreeSet<u64>` paid a node insert for each one, at every restart
//! of the node that does it (etcd's WAL). As runs, a range costs one entry,
//! and walks over the set can take a run whole where every sector of it
//! would be treated alike.
//!
//! Invariant (`check`): runs are non-empty, disjoint and not adjacent (two
//! runs that touch are one), and `len` is the sum of their lengths.
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SectorSet {
    /// start -> end (exclusive).
    runs: BTreeMap<u64, u64>,
    len: u64,
}

impl SectorSet {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.runs.clear();
        self.len = 0;
    }

    /// The run holding `s`, if any.
    fn run_of(&self, s: u64) -> Option<(u64, u64)> {
        self.runs.range(..=s).next_back().map(|(&a, &b)| (a, b)).filter(|&(_, b)| s < b)
    }

    pub fn contains(&self, s: u64) -> bool {
        self.run_of(s).is_some()
    }

    pub fn insert(&mut self, s: u64) {
        self.insert_range(s, s + 1);
    }

    /// Adds the sectors `[lo, hi)`, merging with the runs they touch.
    pub fn insert_range(&mut self, lo: u64, hi: u64) {
        if hi <= lo {
            return;
        }
        let (mut a, mut b) = (lo, hi);
        // A run that starts before `lo` and reaches it.
        if let Some((&s, &e)) = self.runs.range(..=lo).next_back() {
            if e >= lo {
                a = s;
                b = b.max(e);
            }
        }
        // Runs that start inside `[a, b]` are swallowed.
        let inside: Vec<(u64, u64)> = self.runs.range(a..=b).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in inside {
            self.runs.remove(&s);
            self.len -= e - s;
            b = b.max(e);
        }
        self.runs.insert(a, b);
        self.len += b - a;
        self.check();
    }

    pub fn remove(&mut self, s: u64) {
        self.remove_range(s, s + 1);
    }

    /// Takes the sectors `[lo, hi)` out.
    pub fn remove_range(&mut self, lo: u64, hi: u64) {
        if hi <= lo {
            return;
        }
        let mut hit: Vec<(u64, u64)> = self.runs.range(lo..hi).map(|(&s, &e)| (s, e)).collect();
        if let Some((s, e)) = self.runs.range(..lo).next_back().map(|(&s, &e)| (s, e)) {
            if e > lo {
                hit.push((s, e));
            }
        }
        for (s, e) in hit {
            self.runs.remove(&s);
            self.len -= e - s;
            if s < lo {
                self.runs.insert(s, lo);
                self.len += lo - s;
            }
            if e > hi {
                self.runs.insert(hi, e);
                self.len += e - hi;
            }
        }
        self.check();
    }

    /// The runs, in order, as `[start, end)`.
    pub fn runs(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.runs.iter().map(|(&s, &e)| (s, e))
    }

    /// The runs cut to `[lo, hi)`, in order.
    pub fn runs_in(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let first = self.run_of(lo).map_or(lo, |(s, _)| s);
        self.runs.range(first..hi.max(first)).map(move |(&s, &e)| (s.max(lo), e.min(hi))).filter(|&(s, e)| s < e)
    }

    /// Every sector, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs().flat_map(|(s, e)| s..e)
    }

    /// Every sector of `[lo, hi)` in the set, in order.
    pub fn iter_in(&self, lo: u64, hi: u64) -> impl Iterator<Item = u64> + '_ {
        self.runs_in(lo, hi).flat_map(|(s, e)| s..e)
    }

    /// Walks every run: tests only, since a file can hold many runs and
    /// the release build keeps debug assertions.
    fn check(&self) {
        if cfg!(test) {
            let mut total = 0;
            let mut last_end = None;
            for (&s, &e) in &self.runs {
                assert!(s < e, "an empty run {s}..{e}");
                assert!(last_end.is_none_or(|l| l < s), "runs touch or overlap at {s}");
                total += e - s;
                last_end = Some(e);
            }
            assert_eq!(total, self.len, "the count is the runs' lengths");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn matches_a_set_of_sectors() {
        let mut set = SectorSet::default();
        let mut want = BTreeSet::new();
        let mut next = super::super::walk(11);
        for step in 0..5000 {
            let (lo, w) = (next(200), next(30));
            match next(5) {
                0 | 1 => {
                    set.insert_range(lo, lo + w);
                    want.extend(lo..lo + w);
                }
                2 => {
                    set.insert(lo);
                    want.insert(lo);
                }
                3 => {
                    set.remove_range(lo, lo + w);
                    want.retain(|s| !(lo..lo + w).contains(s));
                }
                _ => {
                    set.remove(lo);
                    want.remove(&lo);
                }
            }
            assert_eq!(set.len(), want.len(), "step {step}");
            assert!(set.iter().eq(want.iter().copied()), "step {step}");
            let (a, b) = (next(220), next(220));
            assert!(set.iter_in(a, b).eq(want.range(a..b.max(a)).copied()), "step {step}: {a}..{b}");
            assert_eq!(set.contains(a), want.contains(&a), "step {step}");
            if next(50) == 0 {
                set.clear();
                want.clear();
            }
        }
    }

    #[test]
    fn a_range_is_one_run() {
        let mut set = SectorSet::default();
        set.insert_range(10, 131_082);
        set.insert(9);
        set.insert(131_082);
        assert_eq!(set.runs().collect::<Vec<_>>(), vec![(9, 131_083)]);
        assert_eq!(set.len(), 131_074);
        set.remove(100);
        assert_eq!(set.runs().collect::<Vec<_>>(), vec![(9, 100), (101, 131_083)]);
    }
}
