//! Crash images from a block write log, as CrashMonkey builds them.
//!
//! A flush splits the log into epochs. A power loss with a volatile write
//! cache keeps every write before the last completed flush and any subset
//! of the writes issued since, so an image is: every write of the epochs
//! before `k`, plus a subset of epoch `k`'s writes, applied in log order.
//! Small epochs are enumerated whole; larger ones by prefixes, all but one,
//! each alone, and seeded random subsets.
use crate::device::Entry;

/// A drive writes this much whole (a 4 KiB block: 4Kn drives, and the
/// atomic write unit of most SSDs); a longer write can stop between two.
pub const ATOMIC_BYTES: u64 = 4096;
/// An epoch of at most this many writes is enumerated exhaustively.
pub const EXHAUSTIVE_WRITES_MAX: usize = 8;
/// Random subsets drawn for a larger epoch.
pub const RANDOM_SUBSETS: usize = 24;

/// One crash image: the epoch it cuts, and which of that epoch's writes
/// (indices into the epoch) reached the medium.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cut {
    pub epoch: usize,
    pub kept: Vec<usize>,
}

impl Cut {
    pub fn describe(&self, epoch_len: usize) -> String {
        if self.kept.is_empty() {
            format!("epoch {}: none of its {epoch_len} writes", self.epoch)
        } else {
            let kept: Vec<String> = self.kept.iter().map(|i| i.to_string()).collect();
            format!("epoch {}: writes {{{}}} of {epoch_len}", self.epoch, kept.join(","))
        }
    }
}

/// The writes of the log, split at flushes: epoch `k` holds the writes
/// after flush `k` (epoch 0: before the first), each cut into its
/// `ATOMIC_BYTES` pieces.
pub fn epochs(log: &[Entry]) -> Vec<Vec<(u64, &[u8])>> {
    let mut out = vec![Vec::new()];
    for e in log {
        match e {
            Entry::Write { offset, data } => {
                let mut at = 0usize;
                while at < data.len() {
                    let here = *offset + at as u64;
                    let n = ((ATOMIC_BYTES - here % ATOMIC_BYTES) as usize).min(data.len() - at);
                    out.last_mut().unwrap().push((here, &data[at..at + n]));
                    at += n;
                }
            }
            Entry::Flush => out.push(Vec::new()),
        }
    }
    out
}

/// xorshift64*: a fixed sequence per workload, so a recording is repeatable.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn subsets(n: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    if n <= EXHAUSTIVE_WRITES_MAX {
        for mask in 0u32..(1 << n) {
            out.push((0..n).filter(|i| mask & (1 << i) != 0).collect());
        }
        return out;
    }
    for len in 0..=n {
        out.push((0..len).collect());
    }
    for skip in 0..n {
        out.push((0..n).filter(|&i| i != skip).collect());
        out.push(vec![skip]);
    }
    let mut draw = Draw(seed | 1);
    for _ in 0..RANDOM_SUBSETS {
        out.push((0..n).filter(|_| draw.next() & 1 == 1).collect());
    }
    out.sort();
    out.dedup();
    out
}

/// Every cut of the log: for each epoch, its chosen subsets. The whole of
/// epoch `k` is the empty cut of epoch `k + 1`, so only the last epoch lists
/// itself whole. At most `max` cuts, spread evenly over the epochs.
pub fn cuts(epochs: &[Vec<(u64, &[u8])>], seed: u64, max: usize) -> Vec<Cut> {
    let last = epochs.len() - 1;
    let mut per_epoch: Vec<Vec<Cut>> = epochs
        .iter()
        .enumerate()
        .map(|(k, writes)| {
            let n = writes.len();
            subsets(n, seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .into_iter()
                .filter(|s| k == last || s.len() < n)
                .map(|kept| Cut { epoch: k, kept })
                .collect()
        })
        .collect();
    let total: usize = per_epoch.iter().map(Vec::len).sum();
    if total > max {
        // Keep each epoch's boundary cuts (none, all but one) and thin the rest.
        let share = (max / per_epoch.len()).max(2);
        for cuts in &mut per_epoch {
            if cuts.len() > share {
                let step = cuts.len() as f64 / share as f64;
                let picked: Vec<Cut> = (0..share).map(|i| cuts[(i as f64 * step) as usize].clone()).collect();
                *cuts = picked;
            }
        }
    }
    per_epoch.into_iter().flatten().collect()
}

/// The writes a cut applies over the start state, in log order.
pub fn writes_of<'a>(epochs: &[Vec<(u64, &'a [u8])>], cut: &Cut) -> Vec<(u64, &'a [u8])> {
    let mut out: Vec<(u64, &[u8])> = epochs[..cut.epoch].iter().flatten().copied().collect();
    out.extend(cut.kept.iter().map(|&i| epochs[cut.epoch][i]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_epochs_are_enumerated_whole_and_boundaries_counted_once() {
        let log = vec![
            Entry::Write { offset: 0, data: vec![1] },
            Entry::Write { offset: 512, data: vec![2] },
            Entry::Flush,
            Entry::Write { offset: 1024, data: vec![3] },
        ];
        let e = epochs(&log);
        assert_eq!(e.len(), 2);
        let c = cuts(&e, 1, 1000);
        // Epoch 0: 4 subsets but not the whole (it is epoch 1's empty cut); epoch 1: 2.
        assert_eq!(c.len(), 3 + 2);
        assert_eq!(writes_of(&e, &Cut { epoch: 1, kept: vec![0] }).len(), 3);
    }

    #[test]
    fn large_epochs_are_sampled_within_the_bound() {
        let log: Vec<Entry> = (0..20).map(|i| Entry::Write { offset: i * 512, data: vec![1] }).collect();
        let e = epochs(&log);
        let all = cuts(&e, 7, 10_000);
        assert!(all.len() > 21 && all.len() < 100, "{}", all.len());
        assert!(all.contains(&Cut { epoch: 0, kept: vec![] }));
        assert!(cuts(&e, 7, 10).len() <= 10);
        assert_eq!(cuts(&e, 7, 10_000), all, "the same seed draws the same subsets");
    }
}
