//! Every tree a crash could leave: a crash's choices, enumerated.
//!
//! A crash with torn writes makes one choice per dirty sector it could keep
//! (`Disk::crash` asks `keep_sector` once for each, in a fixed order). Here
//! the disk is cloned and crashed once per combination of those choices, and
//! each distinct resulting tree is kept: the set of states the file-system
//! model allows at this moment. `seedfall crash-states` collects it at every
//! moment of a run; the conformance check of docs/disk.md compares it with
//! what a real file system left.
use super::{Disk, TreeEntry};
use crate::vtime::VTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A moment with at most this many choices is enumerated whole (2^n crashes).
pub const CHOICES_EXHAUSTIVE_MAX: u32 = 12;
/// Crashes tried at a moment with more choices: every choice alone, every
/// choice left out alone, none, all, and the rest drawn (a fixed sequence).
pub const SAMPLED_CRASHES_MAX: usize = 4096;
/// Bound on the distinct trees kept per disk.
pub const TREES_MAX: usize = 100_000;

/// One tree a crash could leave, with the first moment it could.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashTree {
    pub entries: Vec<TreeEntry>,
    /// The disk's operation count and the virtual time at that moment.
    pub first_op: u64,
    pub first_ns: u64,
}

/// What a disk could have been left as, over the moments looked at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashStates {
    /// Moments looked at (the start, after every host call that touched the
    /// disk, before each fsync takes effect, the end).
    pub moments: u64,
    /// Moments with more choices than `CHOICES_EXHAUSTIVE_MAX`: sampled.
    pub sampled_moments: u64,
    /// Most choices any one moment had.
    pub choices_max: u32,
    /// Distinct trees past `TREES_MAX`, not kept.
    pub trees_dropped: u64,
    /// By `tree_key`.
    pub trees: BTreeMap<String, CrashTree>,
}

/// One line naming a tree: paths, sizes and digests.
pub fn tree_key(entries: &[TreeEntry]) -> String {
    if entries.is_empty() {
        return "(empty)".into();
    }
    entries
        .iter()
        .map(|e| if e.dir { format!("{}/", e.path) } else { format!("{} {} {}", e.path, e.size, e.hash.as_deref().unwrap_or("-")) })
        .collect::<Vec<_>>()
        .join("; ")
}

/// xorshift64*, for the sampled choices: the same every run.
fn next(x: &mut u64) -> u64 {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

impl Disk {
    /// Adds every tree a crash at `now` could leave to `out`.
    pub fn crash_states(&self, now: VTime, out: &mut CrashStates) {
        let mut at = self.clone();
        at.tick(now);
        let mut n = 0u32;
        at.clone().crash(true, || {
            n += 1;
            false
        });
        out.moments += 1;
        out.choices_max = out.choices_max.max(n);
        let choices: Vec<Vec<bool>> = if n <= CHOICES_EXHAUSTIVE_MAX {
            (0u64..1 << n).map(|mask| (0..n).map(|i| mask & (1 << i) != 0).collect()).collect()
        } else {
            out.sampled_moments += 1;
            let n = n as usize;
            let mut c = vec![vec![false; n], vec![true; n]];
            for i in 0..n {
                c.push((0..n).map(|j| j == i).collect());
                c.push((0..n).map(|j| j != i).collect());
            }
            let mut x = 0x9e37_79b9_7f4a_7c15 ^ self.ops;
            while c.len() < SAMPLED_CRASHES_MAX {
                c.push((0..n).map(|_| next(&mut x) & 1 == 1).collect());
            }
            c
        };
        for choice in choices {
            let mut d = at.clone();
            let mut i = 0;
            d.crash(true, || {
                let keep = choice.get(i).copied().unwrap_or(false);
                i += 1;
                keep
            });
            let entries = d.tree();
            let key = tree_key(&entries);
            if out.trees.contains_key(&key) {
                continue;
            }
            if out.trees.len() >= TREES_MAX {
                out.trees_dropped += 1;
                continue;
            }
            out.trees.insert(key, CrashTree { entries, first_op: self.ops, first_ns: now.nanos() });
        }
    }
}
